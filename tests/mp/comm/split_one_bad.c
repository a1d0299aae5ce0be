/* One rank passes a NULL output pointer to a communicator constructor
   (xc_comm_split, xc_comm_split_groups, xc_comm_dup) while the others pass
   valid arguments. As for a bad color on one rank, every rank must fail
   with XC_ERR_INVALID_ARGUMENT promptly (not wait for a timeout), and the
   parent must stay usable. Each case runs on a fresh child of the world
   whose timeout is 2 s, so a rank left waiting fails in bounded time. */
#define _POSIX_C_SOURCE 199309L
#include <time.h>

#include "comm_util.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { C_SPLIT, C_GROUPS, C_DUP, NCASES };
static const char *const case_names[NCASES] = {"xc_comm_split", "xc_comm_split_groups", "xc_comm_dup"};

int main(void) {
  cu_view_t w;
  cu_init("split_one_bad", &w);
  const int n = w.size, me = w.rank;
  int sizes[1] = {n}, ranks[CU_MAXR];
  for (int r = 0; r < n; ++r) ranks[r] = r;

  for (int k = 0; k < NCASES; ++k) {
    const int bad_ranks[2] = {0, n - 1};
    for (int b = 0; b < 2; ++b) {
      xc_config_t cfg = XC_CONFIG_INIT;
      cfg.timeout_ms = 2000;
      cu_view_t c = w;
      MP_CHECK(xc_comm_split(w.comm, 0, me, &cfg, &c.comm));
      xc_comm_t out = NULL;
      xc_comm_t *outp = me == bad_ranks[b] ? NULL : &out;
      double t0 = now_s();
      xc_result_t rc = XC_SUCCESS;
      switch (k) {
        case C_SPLIT: rc = xc_comm_split(c.comm, 0, me, NULL, outp); break;
        case C_GROUPS: rc = xc_comm_split_groups(c.comm, 1, sizes, ranks, NULL, outp); break;
        default: rc = xc_comm_dup(c.comm, outp); break;
      }
      double dt = now_s() - t0;
      printf("  %s, NULL out on rank %d: rank %d got %d after %.3f s: \"%s\"\n", case_names[k], bad_ranks[b], me,
             (int)rc, dt, xc_last_error());
      fflush(stdout);
      MP_ASSERT(rc == XC_ERR_INVALID_ARGUMENT && xc_last_error()[0] != '\0',
                "%s with NULL out on rank %d: rank %d got %d (%s), expected %d", case_names[k], bad_ranks[b], me,
                (int)rc, xc_last_error(), (int)XC_ERR_INVALID_ARGUMENT);
      MP_ASSERT(dt < 1.0, "%s with NULL out on rank %d: rank %d took %.3f s to fail", case_names[k], bad_ranks[b], me,
                dt);
      MP_ASSERT(out == NULL, "out written on failure");
      MP_CHECK(xc_barrier(w.comm));
      /* the parent is still in step */
      cu_check(&c, 1 + k, "parent after a failed constructor");
      MP_CHECK(xc_comm_free(c.comm));
    }
  }
  MP_CHECK(xc_comm_free(w.comm));
  if (me == 0) printf("split_one_bad: OK\n");
  return 0;
}
