// xc-bench comm: world start-up (xc_init), xc_comm_split and
// xc_comm_split_groups. Timing rules as everywhere in xc-bench: a barrier
// before each timed step, a step's time is its slowest rank's, rank 0 prints.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench.h"

namespace xcb {

namespace {

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

}  // namespace

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
  double init_us = 0;
  int size = 0;
  xc_comm_t world = timed_init(&init_us, &size);
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

}  // namespace xcb
