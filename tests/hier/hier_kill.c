/* A rank killed during hierarchical allreduces: every survivor's allreduce
   must fail with XC_ERR_PEER_FAILED within seconds (its deadline is 20 s),
   not hang. The last rank SIGKILLs itself at the 20th op.
     hier_kill COUNT   (prints "survivor R: ..." once per survivor) */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "xcomm.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 16, i;
  xc_comm_t w;
  int r, s, it;
  float *v;
  if (xc_init(NULL, &w) != XC_SUCCESS) return 2;
  xc_comm_rank(w, &r);
  xc_comm_size(w, &s);
  v = (float *)malloc(n * sizeof *v);
  for (it = 0; it < 1000; ++it) {
    double t0;
    xc_result_t e;
    for (i = 0; i < n; ++i) v[i] = 1.0f;
    if (r == s - 1 && it == 20) raise(SIGKILL);
    t0 = now();
    e = xc_allreduce(XC_IN_PLACE, v, n, XC_FLOAT32, XC_SUM, w);
    if (e == XC_SUCCESS) {
      if (v[0] != (float)s) { printf("rank %d: wrong sum %g\n", r, (double)v[0]); return 1; }
      continue;
    }
    if (e != XC_ERR_PEER_FAILED || now() - t0 > 5.0) {
      printf("rank %d: op %d failed after %.2f s with %d: %s\n", r, it, now() - t0, (int)e, xc_last_error());
      return 1;
    }
    printf("survivor %d: op %d failed after %.3f s: %s\n", r, it, now() - t0, xc_last_error());
    fflush(stdout);
    return 0;
  }
  printf("rank %d: no op failed\n", r);
  return 1;
}
