// xc-bench: benchmarks of xcomm, run under a launcher like any xcomm program
// (`xcrun -n 8 xc-bench comm`). One subcommand per family of measurements;
// each is a function over the command line that follows its name. It uses
// the public header only, so it measures exactly what applications get.
//
//   comm      world start-up (xc_init), xc_comm_split and xc_comm_split_groups
//   pingpong  point-to-point latency and bandwidth between ranks 0 and 1
//
// Timing rules, for every subcommand: CLOCK_MONOTONIC; a barrier before each
// timed step so every rank starts it together; a step's time is the slowest
// rank's (allreduce MAX), because a collective is over only when its last
// rank is done; rank 0 alone prints.

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "xcomm.h"

namespace {

const char *g_prog = "xc-bench";
int g_rank = -1;

[[noreturn]] void die(const char *call, xc_result_t rc) {
  fprintf(stderr, "%s: rank %d: %s failed: %s (%s)\n", g_prog, g_rank, call, xc_strerror(rc), xc_last_error());
  exit(1);
}

#define BENCH_CHECK(call)                      \
  do {                                         \
    xc_result_t bench_rc_ = (call);            \
    if (bench_rc_ != XC_SUCCESS) die(#call, bench_rc_); \
  } while (0)

double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

// The slowest rank's value.
double max_over_ranks(double local, xc_comm_t comm) {
  BENCH_CHECK(xc_allreduce(XC_IN_PLACE, &local, 1, XC_FLOAT64, XC_MAX, comm));
  return local;
}

struct Stats {
  double min = 0, avg = 0, max = 0;
  size_t count = 0;
};

Stats summarize(const std::vector<double> &samples) {
  Stats s;
  if (samples.empty()) return s;
  s.count = samples.size();
  s.min = *std::min_element(samples.begin(), samples.end());
  s.max = *std::max_element(samples.begin(), samples.end());
  double sum = 0;
  for (double v : samples) sum += v;
  s.avg = sum / static_cast<double>(samples.size());
  return s;
}

// "-r 20" and "-r20" alike; a positive int or a usage error.
bool parse_count(const char *text, int min, int *out) {
  if (!text || !*text) return false;
  char *end = nullptr;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || *end || v < min || v > 1000000) return false;
  *out = static_cast<int>(v);
  return true;
}

// ---- comm ------------------------------------------------------------------

constexpr int kCommGroups = 4;

void comm_usage(FILE *to) {
  fprintf(to,
          "usage: %s comm [-r REPEAT] [-w WARMUP]\n"
          "\n"
          "Times, under a launcher (xcrun -n N %s comm):\n"
          "  init          xc_init of the world, once (each rank's own wall time; the max is shown)\n"
          "  split         xc_comm_split of the world into %d groups (color = rank %% %d)\n"
          "  split_groups  xc_comm_split_groups making the same %d groups from explicit lists\n"
          "Each split is repeated REPEAT times (default 20) after WARMUP untimed ones\n"
          "(default 1), with a barrier before each and the children freed after it.\n"
          "A repetition counts as its slowest rank's time; the line shows the\n"
          "min/avg/max of those over the repetitions, in microseconds.\n",
          g_prog, g_prog, kCommGroups, kCommGroups, kCommGroups);
}

void print_line(const char *op, int ranks, int groups, const Stats &s) {
  printf("  %-13s %6d %7d %7zu %12.1f %12.1f %12.1f\n", op, ranks, groups, s.count, s.min, s.avg, s.max);
}

int run_comm(int argc, char **argv) {
  int repeat = 20, warmup = 1;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    int *target = nullptr;
    const char *value = nullptr;
    if (a == "-h" || a == "--help") {
      comm_usage(stdout);
      return 0;
    }
    if (a.rfind("-r", 0) == 0) target = &repeat;
    if (a.rfind("-w", 0) == 0) target = &warmup;
    if (!target) {
      fprintf(stderr, "%s comm: unknown argument '%s'\n", g_prog, argv[i]);
      comm_usage(stderr);
      return 2;
    }
    value = a.size() > 2 ? argv[i] + 2 : (i + 1 < argc ? argv[++i] : nullptr);
    if (!parse_count(value, target == &repeat ? 1 : 0, target)) {
      fprintf(stderr, "%s comm: %s needs a %s count, got '%s'\n", g_prog, a.substr(0, 2).c_str(),
              target == &repeat ? "positive" : "non-negative", value ? value : "");
      return 2;
    }
  }

  // World start-up: every rank's own xc_init, from call to return. It
  // includes waiting for the last rank to reach the rendezvous.
  xc_comm_t world = nullptr;
  double t0 = now_us();
  xc_result_t rc = xc_init(nullptr, &world);
  double init_us = now_us() - t0;
  if (rc != XC_SUCCESS) die("xc_init", rc);
  int size = 0;
  BENCH_CHECK(xc_comm_rank(world, &g_rank));
  BENCH_CHECK(xc_comm_size(world, &size));
  Stats init = summarize({max_over_ranks(init_us, world)});

  // The same partition both ways: group g holds the ranks r with r % 4 == g,
  // in rank order (fewer groups when there are fewer ranks).
  const int groups = std::min(kCommGroups, size);
  std::vector<int> group_sizes(static_cast<size_t>(groups), 0), members;
  for (int g = 0; g < groups; ++g)
    for (int r = g; r < size; r += kCommGroups) {
      members.push_back(r);
      ++group_sizes[static_cast<size_t>(g)];
    }

  auto time_splits = [&](bool explicit_groups) {
    std::vector<double> samples;
    for (int it = 0; it < warmup + repeat; ++it) {
      xc_comm_t child = nullptr;
      BENCH_CHECK(xc_barrier(world));
      double start = now_us();
      if (explicit_groups)
        BENCH_CHECK(xc_comm_split_groups(world, groups, group_sizes.data(), members.data(), nullptr, &child));
      else
        BENCH_CHECK(xc_comm_split(world, g_rank % kCommGroups, g_rank, nullptr, &child));
      double took = now_us() - start;
      double slowest = max_over_ranks(took, world);
      if (it >= warmup) samples.push_back(slowest);
      BENCH_CHECK(xc_comm_free(child));
    }
    return summarize(samples);
  };
  Stats split = time_splits(false);
  Stats split_groups = time_splits(true);

  if (g_rank == 0) {
    printf("# xc-bench comm: %d ranks, %d repetitions after %d warm-up; microseconds, slowest rank of each\n", size,
           repeat, warmup);
    printf("# %-13s %6s %7s %7s %12s %12s %12s\n", "op", "ranks", "groups", "count", "min", "avg", "max");
    print_line("init", size, 1, init);
    print_line("split", size, groups, split);
    print_line("split_groups", size, groups, split_groups);
    fflush(stdout);
  }
  BENCH_CHECK(xc_comm_free(world));
  return 0;
}

// ---- pingpong ------------------------------------------------------------------

void pingpong_usage(FILE *to) {
  fprintf(to,
          "usage: %s pingpong [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-n ITERS] [-w WARMUP]\n"
          "\n"
          "Rank 0 sends a message to rank 1, which sends it back; the time shown is\n"
          "half a round trip (one way), bandwidth = bytes / one-way time. Sizes go\n"
          "from MINBYTES (default 8) to MAXBYTES (default 64M) times FACTOR (default 4);\n"
          "ITERS round trips (default 1000, at most 100 MB moved per size) after WARMUP\n"
          "(default 5). K/M/G suffixes are powers of 1024. Each size's last message is\n"
          "checked byte for byte. Other ranks wait in a barrier.\n",
          g_prog);
}

bool parse_bytes(const char *text, size_t *out) {
  if (!text || !*text) return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text) return false;
  switch (*end) {
    case 'K': case 'k': v <<= 10; ++end; break;
    case 'M': case 'm': v <<= 20; ++end; break;
    case 'G': case 'g': v <<= 30; ++end; break;
    default: break;
  }
  if (*end) return false;
  *out = static_cast<size_t>(v);
  return true;
}

int run_pingpong(int argc, char **argv) {
  size_t min_bytes = 8, max_bytes = 64u << 20;
  int factor = 4, iters = 1000, warmup = 5;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      pingpong_usage(stdout);
      return 0;
    }
    const char *value = i + 1 < argc ? argv[++i] : nullptr;
    bool ok = (a == "-b" && parse_bytes(value, &min_bytes)) || (a == "-e" && parse_bytes(value, &max_bytes)) ||
              (a == "-f" && parse_count(value, 2, &factor)) || (a == "-n" && parse_count(value, 1, &iters)) ||
              (a == "-w" && parse_count(value, 0, &warmup));
    if (!ok) {
      fprintf(stderr, "%s pingpong: bad argument '%s %s'\n", g_prog, a.c_str(), value ? value : "");
      pingpong_usage(stderr);
      return 2;
    }
  }
  xc_comm_t world = nullptr;
  int size = 0;
  BENCH_CHECK(xc_init(nullptr, &world));
  BENCH_CHECK(xc_comm_rank(world, &g_rank));
  BENCH_CHECK(xc_comm_size(world, &size));
  if (size < 2) {
    fprintf(stderr, "%s pingpong: needs at least 2 ranks (xcrun -n 2 %s pingpong)\n", g_prog, g_prog);
    return 2;
  }
  std::vector<unsigned char> buf(max_bytes), expect(max_bytes);
  if (g_rank == 0) {
    const char *large = getenv("XC_SHM_LARGE");
    printf("# xc-bench pingpong: ranks 0 <-> 1 of %d, XC_SHM_LARGE=%s\n", size, large ? large : "(default)");
    printf("# %12s %8s %12s %10s %7s\n", "size(B)", "iters", "time(us)", "GB/s", "#wrong");
  }
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= static_cast<size_t>(factor)) {
    int n = static_cast<int>(std::min<size_t>(static_cast<size_t>(iters), std::max<size_t>(10, (100u << 20) / std::max<size_t>(bytes, 1))));
    for (size_t i = 0; i < bytes; ++i) expect[i] = static_cast<unsigned char>(i * 31 + bytes);
    BENCH_CHECK(xc_barrier(world));
    double start = 0;
    for (int it = -warmup; it < n; ++it) {
      if (it == 0) start = now_us();
      if (g_rank == 0) {
        if (it == n - 1) memcpy(buf.data(), expect.data(), bytes);
        BENCH_CHECK(xc_send(buf.data(), bytes, XC_UINT8, 1, 0, world));
        BENCH_CHECK(xc_recv(buf.data(), bytes, XC_UINT8, 1, 0, world, nullptr));
      } else if (g_rank == 1) {
        BENCH_CHECK(xc_recv(buf.data(), bytes, XC_UINT8, 0, 0, world, nullptr));
        BENCH_CHECK(xc_send(buf.data(), bytes, XC_UINT8, 0, 0, world));
      }
    }
    double one_way = (now_us() - start) / (2.0 * n);
    size_t wrong = 0;
    if (g_rank <= 1)
      for (size_t i = 0; i < bytes; ++i) wrong += buf[i] != expect[i];
    double all_wrong = static_cast<double>(wrong);
    BENCH_CHECK(xc_allreduce(XC_IN_PLACE, &all_wrong, 1, XC_FLOAT64, XC_SUM, world));
    if (g_rank == 0)
      printf("  %12zu %8d %12.2f %10.3f %7.0f\n", bytes, n, one_way, static_cast<double>(bytes) / one_way * 1e-3,
             all_wrong);
    if (bytes > max_bytes / static_cast<size_t>(factor)) break;
  }
  fflush(stdout);
  BENCH_CHECK(xc_comm_free(world));
  return 0;
}

// ---- subcommands ---------------------------------------------------------------

struct Subcommand {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

const Subcommand kSubcommands[] = {
    {"comm", "time world start-up, xc_comm_split and xc_comm_split_groups", run_comm},
    {"pingpong", "point-to-point latency and bandwidth between ranks 0 and 1", run_pingpong},
};

void usage(FILE *to) {
  fprintf(to, "usage: %s SUBCOMMAND [OPTIONS]   (run it under a launcher, e.g. xcrun -n 8 %s comm)\n\n", g_prog,
          g_prog);
  fprintf(to, "subcommands:\n");
  for (const Subcommand &s : kSubcommands) fprintf(to, "  %-9s %s\n", s.name, s.summary);
  fprintf(to, "\n'%s SUBCOMMAND -h' describes one.\n", g_prog);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(stdout);
    return 0;
  }
  for (const Subcommand &s : kSubcommands)
    if (cmd == s.name) return s.run(argc - 2, argv + 2);
  fprintf(stderr, "%s: unknown subcommand '%s'\n\n", g_prog, argv[1]);
  usage(stderr);
  return 2;
}
