/* The largest timeouts work: run with XC_TIMEOUT=9223372036854775807 (the
   largest the registry takes; meson.build), xc_init must not time out at
   once (it failed "timed out after 0 ms" when milliseconds were added to the
   clock without saturating). Then a communicator with config timeout_ms =
   UINT64_MAX, and on both every path that derives a deadline from the
   timeout: a blocking allreduce, a non-blocking one (its wait adds a grace),
   point-to-point with isend/irecv/waitall, a group, a split and a barrier. */
#include <stdlib.h>

#include "mp_test.h"

static void exercise(xc_comm_t c, const char *what) {
  int me = 0, n = 0;
  MP_CHECK(xc_comm_rank(c, &me));
  MP_CHECK(xc_comm_size(c, &n));
  int64_t x = me + 1, sum = 0;
  MP_CHECK(xc_allreduce(&x, &sum, 1, XC_INT64, XC_SUM, c));
  MP_ASSERT(sum == (int64_t)n * (n + 1) / 2, "%s: allreduce sum %lld", what, (long long)sum);
  xc_request_t req = NULL;
  int64_t isum = 0;
  MP_CHECK(xc_iallreduce(&x, &isum, 1, XC_INT64, XC_SUM, c, &req));
  MP_CHECK(xc_wait(&req, NULL));
  MP_ASSERT(isum == sum, "%s: iallreduce sum %lld", what, (long long)isum);
  int right = (me + 1) % n, left = (me + n - 1) % n;
  int32_t out = 100 + me, in = -1;
  xc_request_t reqs[2] = {NULL, NULL};
  MP_CHECK(xc_irecv(&in, 1, XC_INT32, left, 5, c, &reqs[0]));
  MP_CHECK(xc_isend(&out, 1, XC_INT32, right, 5, c, &reqs[1]));
  MP_CHECK(xc_waitall(2, reqs, NULL));
  MP_ASSERT(in == 100 + left, "%s: received %d from %d", what, (int)in, left);
  in = -1;
  MP_CHECK(xc_group_start());
  MP_CHECK(xc_recv(&in, 1, XC_INT32, left, 6, c, NULL));
  MP_CHECK(xc_send(&out, 1, XC_INT32, right, 6, c));
  MP_CHECK(xc_group_end());
  MP_ASSERT(in == 100 + left, "%s: grouped receive got %d from %d", what, (int)in, left);
  xc_comm_t half = NULL;
  MP_CHECK(xc_comm_split(c, me % 2, me, NULL, &half));
  MP_CHECK(xc_barrier(half));
  MP_CHECK(xc_comm_free(half));
  MP_CHECK(xc_barrier(c));
}

int main(void) {
  const char *t = getenv("XC_TIMEOUT");
  MP_ASSERT(t != NULL, "run with XC_TIMEOUT set (tests/mp/comm/meson.build)");
  xc_comm_t w = NULL;
  MP_CHECK(xc_init(NULL, &w));
  MP_CHECK(xc_comm_rank(w, &mp_rank));
  exercise(w, "world (XC_TIMEOUT)");

  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.timeout_ms = UINT64_MAX;
  xc_comm_t c = NULL;
  MP_CHECK(xc_comm_split(w, 0, mp_rank, &cfg, &c));
  exercise(c, "timeout_ms = UINT64_MAX");
  MP_CHECK(xc_comm_free(c));
  MP_CHECK(xc_comm_free(w));
  if (mp_rank == 0) printf("huge_timeout: OK with XC_TIMEOUT=%s and UINT64_MAX\n", t);
  return 0;
}
