// xc-bench pingpong: point-to-point latency and bandwidth between ranks 0
// and 1 (blocking xc_send/xc_recv), the last message of each size checked.
// -m device: the message buffer from xc_mem_alloc_device and the sends and
// receives enqueued on a stream bound to the peer; each size's round trips
// are enqueued back to back and timed up to one xc_stream_synchronize.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench.h"
#include "device_mem.h"

namespace xcb {

namespace {

void pingpong_usage(FILE *to) {
  fprintf(to,
          "usage: %s pingpong [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-n ITERS] [-w WARMUP]\n"
          "                   [-m host|device]\n"
          "\n"
          "Rank 0 sends a message to rank 1, which sends it back; the time shown is\n"
          "half a round trip (one way), bandwidth = bytes / one-way time. Sizes go\n"
          "from MINBYTES (default 8) to MAXBYTES (default 64M) times FACTOR (default 4);\n"
          "ITERS round trips (default 1000, at most 100 MB moved per size) after WARMUP\n"
          "(default 5). K/M/G suffixes are powers of 1024. Each size's last message is\n"
          "checked byte for byte. Other ranks wait in a barrier.\n"
          "-m device: the message lives in device memory (xc_mem_alloc_device; every\n"
          "message carries the checked bytes, and rank 1's buffer starts poisoned);\n"
          "the round trips of a size are enqueued on a stream, then one\n"
          "xc_stream_synchronize. XC_DEVICE=emulated runs it without a GPU (bytes\n"
          "checked, times not meaningful).\n",
          g_prog);
}

}  // namespace

int run_pingpong(int argc, char **argv) {
  size_t min_bytes = 8, max_bytes = 64u << 20;
  int factor = 4, iters = 1000, warmup = 5;
  std::string memory = "host";
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      pingpong_usage(stdout);
      return 0;
    }
    const char *value = i + 1 < argc ? argv[++i] : nullptr;
    bool ok = (a == "-b" && parse_bytes(value, &min_bytes)) || (a == "-e" && parse_bytes(value, &max_bytes)) ||
              (a == "-f" && parse_count(value, 2, &factor)) || (a == "-n" && parse_count(value, 1, &iters)) ||
              (a == "-w" && parse_count(value, 0, &warmup)) ||
              ((a == "-m" || a == "--memory") && value && (memory = value, memory == "host" || memory == "device"));
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
  const bool device = memory == "device";
  const bool active = g_rank <= 1;  // ranks 0 and 1 play; the others wait in the barrier
  std::vector<unsigned char> host_buf(device ? 0 : max_bytes), expect(max_bytes), stage(device ? max_bytes : 0);
  unsigned char *buf = host_buf.data();
  void *device_buf = nullptr;
  xc_stream_t stream = nullptr;
  if (device && active) {
    std::string why;
    if (!device_open(&why)) {
      fprintf(stderr, "%s pingpong: rank %d: -m device: %s\n", g_prog, g_rank, why.c_str());
      exit(1);
    }
    BENCH_CHECK(xc_mem_alloc_device(world, max_bytes, &device_buf));
    buf = static_cast<unsigned char *>(device_buf);
    BENCH_CHECK(xc_stream_create(world, &stream));
    BENCH_CHECK(xc_stream_bind(world, stream, 1 - g_rank));  // the ops with the peer
  }
  if (g_rank == 0) {
    const char *large = getenv("XC_SHM_LARGE");
    printf("# xc-bench pingpong: ranks 0 <-> 1 of %d, XC_SHM_LARGE=%s\n", size, large ? large : "(default)");
    if (device) {  // the floors' copy: the largest message size, as the loop below steps
      size_t largest = min_bytes;
      while (largest <= max_bytes / static_cast<size_t>(factor)) largest *= static_cast<size_t>(factor);
      printf("%s", device_header(device_buf, largest).c_str());
    }
    printf("# %12s %8s %12s %10s %7s\n", "size(B)", "iters", "time(us)", "GB/s", "#wrong");
  }
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= static_cast<size_t>(factor)) {
    int n = static_cast<int>(std::min<size_t>(static_cast<size_t>(iters), std::max<size_t>(10, (100u << 20) / std::max<size_t>(bytes, 1))));
    for (size_t i = 0; i < bytes; ++i) expect[i] = static_cast<unsigned char>(i * 31 + bytes);
    if (device && active) {  // rank 0 sends the checked bytes every time; rank 1 starts from poison
      if (g_rank == 1) memset(stage.data(), 0xA5, bytes);
      copy_to_device(buf, g_rank == 0 ? expect.data() : stage.data(), bytes);
    }
    BENCH_CHECK(xc_barrier(world));
    double start = 0;
    for (int it = -warmup; it < n; ++it) {
      if (it == 0) {
        if (stream) BENCH_CHECK(xc_stream_synchronize(stream));  // the warmup round trips
        start = now_us();
      }
      if (g_rank == 0) {
        if (it == n - 1 && !device) memcpy(buf, expect.data(), bytes);
        BENCH_CHECK(xc_send(buf, bytes, XC_UINT8, 1, 0, world));
        BENCH_CHECK(xc_recv(buf, bytes, XC_UINT8, 1, 0, world, nullptr));
      } else if (g_rank == 1) {
        BENCH_CHECK(xc_recv(buf, bytes, XC_UINT8, 0, 0, world, nullptr));
        BENCH_CHECK(xc_send(buf, bytes, XC_UINT8, 0, 0, world));
      }
    }
    if (stream) BENCH_CHECK(xc_stream_synchronize(stream));
    double one_way = (now_us() - start) / (2.0 * n);
    const unsigned char *got = buf;
    if (device && active) {
      copy_to_host(stage.data(), buf, bytes);
      got = stage.data();
    }
    size_t wrong = 0;
    if (active)
      for (size_t i = 0; i < bytes; ++i) wrong += got[i] != expect[i];
    double all_wrong = static_cast<double>(wrong);
    BENCH_CHECK(xc_allreduce(XC_IN_PLACE, &all_wrong, 1, XC_FLOAT64, XC_SUM, world));
    if (g_rank == 0)
      printf("  %12zu %8d %12.2f %10.3f %7.0f\n", bytes, n, one_way, static_cast<double>(bytes) / one_way * 1e-3,
             all_wrong);
    if (bytes > max_bytes / static_cast<size_t>(factor)) break;
  }
  fflush(stdout);
  BENCH_CHECK(xc_stream_destroy(stream));
  BENCH_CHECK(xc_mem_free(world, device_buf));
  BENCH_CHECK(xc_comm_free(world));
  return 0;
}

}  // namespace xcb
