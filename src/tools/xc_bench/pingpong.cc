// xc-bench pingpong: point-to-point latency and bandwidth between ranks 0
// and 1 (blocking xc_send/xc_recv), the last message of each size checked.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench.h"

namespace xcb {

namespace {

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

}  // namespace

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

}  // namespace xcb
