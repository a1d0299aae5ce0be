// xc-bench shrink: what recovering from a failure costs, beside what a
// restart would (docs/fault-tolerance.md). Under `xcrun --keep-going -n N`:
// the last rank SIGKILLs itself right after a barrier; each survivor times,
// from the moment it left that barrier, its allreduce failing (detection),
// xc_comm_revoke + xc_comm_shrink, and the first allreduce on the child
// (which sets up the child's shared memory). One failure per job, so one
// sample per run: repeat the command for more. Each time is the slowest
// survivor's; the xc_init line is the same job's start-up, the cost of a
// restart without the process launch.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "bench.h"

namespace xcb {

namespace {

void shrink_usage(FILE *to) {
  fprintf(to,
          "usage: xcrun --keep-going -n N %s shrink\n"
          "\n"
          "The last rank is killed (SIGKILL) right after a barrier; the survivors time, in ms,\n"
          "from leaving that barrier (the slowest survivor's time is shown):\n"
          "  detect     their allreduce on the world fails (XC_ERR_PEER_FAILED or _REVOKED)\n"
          "  shrink     xc_comm_revoke + xc_comm_shrink (the agreement on who failed included)\n"
          "  first_op   the first allreduce on the child (sets up its shared memory)\n"
          "  total      the kill to a working shrunk communicator\n"
          "beside the job's own xc_init (a restart would pay it and a process launch) and an\n"
          "xc_comm_agree on the child without a failure. xcrun exits 137 (the victim's signal).\n",
          g_prog);
}

}  // namespace

int run_shrink(int argc, char **argv) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      shrink_usage(stdout);
      return 0;
    }
    fprintf(stderr, "%s shrink: unknown argument '%s'\n", g_prog, argv[i]);
    shrink_usage(stderr);
    return 2;
  }
  double init_us = 0;
  int size = 0;
  xc_comm_t world = timed_init(&init_us, &size);
  if (size < 2) {
    fprintf(stderr, "%s shrink: needs 2 ranks or more\n", g_prog);
    return 2;
  }
  double init_max = max_over_ranks(init_us, world);
  // Warm up the world's paths, so the failure meets an op already set up.
  double v[8] = {0};
  for (int i = 0; i < 5; ++i) BENCH_CHECK(xc_allreduce(XC_IN_PLACE, v, 8, XC_FLOAT64, XC_SUM, world));
  BENCH_CHECK(xc_barrier(world));
  if (g_rank == size - 1) kill(getpid(), SIGKILL);
  double t0 = now_us();
  xc_result_t rc = xc_allreduce(XC_IN_PLACE, v, 8, XC_FLOAT64, XC_SUM, world);
  double t_detect = now_us();
  if (rc != XC_ERR_PEER_FAILED && rc != XC_ERR_REVOKED) {
    fprintf(stderr, "%s shrink: rank %d: the allreduce after the kill returned %s\n", g_prog, g_rank, xc_strerror(rc));
    return 1;
  }
  BENCH_CHECK(xc_comm_revoke(world));
  xc_comm_t child = nullptr;
  BENCH_CHECK(xc_comm_shrink(world, nullptr, &child));
  double t_shrink = now_us();
  BENCH_CHECK(xc_allreduce(XC_IN_PLACE, v, 8, XC_FLOAT64, XC_SUM, child));
  double t_ok = now_us();
  int flag = 1;
  double t = now_us();
  BENCH_CHECK(xc_comm_agree(child, &flag));
  double agree_max = max_over_ranks(now_us() - t, child);
  double detect = max_over_ranks(t_detect - t0, child), shrink = max_over_ranks(t_shrink - t_detect, child),
         first = max_over_ranks(t_ok - t_shrink, child), total = max_over_ranks(t_ok - t0, child);
  int child_size = 0;
  BENCH_CHECK(xc_comm_size(child, &child_size));
  if (g_rank == 0) {
    printf("# xc-bench shrink: %d ranks, the last one killed; ms, slowest survivor\n", size);
    printf("# %6s %9s %9s %9s %9s %9s %9s\n", "ranks", "detect", "shrink", "first_op", "total", "xc_init", "agree");
    printf("  %6d %9.2f %9.2f %9.2f %9.2f %9.2f %9.3f\n", size, detect / 1e3, shrink / 1e3, first / 1e3, total / 1e3,
           init_max / 1e3, agree_max / 1e3);
  }
  if (child_size != size - 1) {
    fprintf(stderr, "%s shrink: the child has %d ranks, want %d\n", g_prog, child_size, size - 1);
    return 1;
  }
  BENCH_CHECK(xc_comm_free(child));
  BENCH_CHECK(xc_comm_free(world));
  return 0;
}

}  // namespace xcb
