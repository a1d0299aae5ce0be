/* xc_comm_free reports a closing barrier that timed out (it returned
   success and only logged at WARN). Rank 0 frees c (timeout 300 ms) while
   the other ranks do not: they block in a receive on the world until rank
   0's free has returned, so rank 0's barrier can only time out. Rank 0
   must get XC_ERR_TIMEOUT naming the closing barrier, and c must be freed
   anyway (a later call sees a freed handle). The others then abort and
   free c (no barrier after an abort) and the world still works. */
#include "mp_test.h"

int main(void) {
  xc_comm_t w = NULL, c = NULL;
  int me = 0, n = 0;
  MP_CHECK(xc_init(NULL, &w));
  MP_CHECK(xc_comm_rank(w, &me));
  MP_CHECK(xc_comm_size(w, &n));
  mp_rank = me;
  MP_ASSERT(n >= 2, "needs 2 ranks or more (%d)", n);
  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.timeout_ms = 300;
  MP_CHECK(xc_comm_split(w, 0, me, &cfg, &c));
  MP_CHECK(xc_barrier(c));

  int token = 0;
  if (me == 0) {
    MP_EXPECT_ERR(xc_comm_free(c), XC_ERR_TIMEOUT);
    printf("  xc_comm_free while the others never free -> \"%s\"\n", xc_last_error());
    MP_ASSERT(strstr(xc_last_error(), "closing barrier") != NULL, "message does not name the barrier: %s",
              xc_last_error());
    int r = -1;
    MP_EXPECT_ERR(xc_comm_rank(c, &r), XC_ERR_INVALID_USAGE); /* freed all the same */
    MP_EXPECT_ERR(xc_comm_free(c), XC_ERR_INVALID_USAGE);
    token = 1;
    for (int p = 1; p < n; ++p) MP_CHECK(xc_send(&token, 1, XC_INT32, p, 9, w));
  } else {
    MP_CHECK(xc_recv(&token, 1, XC_INT32, 0, 9, w, NULL)); /* after rank 0's free returned */
    MP_ASSERT(token == 1, "token %d", token);
    MP_CHECK(xc_comm_abort(c));
    MP_CHECK(xc_comm_free(c));
  }
  int64_t x = me + 1, sum = 0;
  MP_CHECK(xc_allreduce(&x, &sum, 1, XC_INT64, XC_SUM, w));
  MP_ASSERT(sum == (int64_t)n * (n + 1) / 2, "allreduce sum %lld", (long long)sum);
  MP_CHECK(xc_comm_free(w));
  if (me == 0) printf("free_timeout: OK\n");
  return 0;
}
