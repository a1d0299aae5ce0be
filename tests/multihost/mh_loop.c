/* For the multihost fault tests: allreduce on the world in a loop until an
   op fails, which the test brings about (a rank killed, a link taken down).

     mh_loop SECONDS

   After the first allreduce, each rank prints "running rank R pid P" (the
   test waits for every rank's line before it strikes). When an op fails the
   rank prints "rank R: allreduce failed after N ops in T ms: <error>" on
   stderr and exits 3; no failure within SECONDS exits 4, so the test never
   hangs on a fault that went unnoticed. Each result is checked: exit 1 on a
   wrong value. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "xcomm.h"

enum { kCount = 1 << 16 }; /* 512 KiB of doubles: every op crosses the network */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  double limit = argc > 1 ? atof(argv[1]) : 60;
  static double v[kCount];
  xc_comm_t world;
  int rank = -1, size = 0;
  xc_result_t rc = xc_init(NULL, &world);
  if (rc != XC_SUCCESS) {
    fprintf(stderr, "xc_init failed: %s: %s\n", xc_strerror(rc), xc_last_error());
    return 2;
  }
  xc_comm_rank(world, &rank);
  xc_comm_size(world, &size);
  double start = now_s(), op_start = start;
  long ops = 0;
  while (now_s() - start < limit) {
    for (int i = 0; i < kCount; ++i) v[i] = rank + i % 7;
    op_start = now_s();
    rc = xc_allreduce(XC_IN_PLACE, v, kCount, XC_FLOAT64, XC_SUM, world);
    if (rc != XC_SUCCESS) {
      fprintf(stderr, "rank %d: allreduce failed after %ld ops in %.0f ms: %s: %s\n", rank, ops,
              1e3 * (now_s() - op_start), xc_strerror(rc), xc_last_error());
      fflush(stderr);
      _exit(3); /* without freeing the world: a dead peer must not make the exit wait */
    }
    double want = (double)size * (size - 1) / 2;
    for (int i = 0; i < kCount; ++i)
      if (v[i] != want + (double)size * (i % 7)) {
        fprintf(stderr, "rank %d: allreduce %ld: v[%d] = %g, want %g\n", rank, ops, i, v[i],
                want + (double)size * (i % 7));
        return 1;
      }
    if (ops++ == 0) {
      printf("running rank %d pid %d\n", rank, (int)getpid());
      fflush(stdout);
    }
  }
  fprintf(stderr, "rank %d: no op failed within %.0f s\n", rank, limit);
  return 4;
}
