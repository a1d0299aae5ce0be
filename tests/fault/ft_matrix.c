/* The quick collective matrix on any communicator (a shrunk or grown one):
   the tables and references of tests/mp/coll (coll_ops.h). */
#include <string.h>

#include "coll_ops.h"
#include "ft_util.h"

static const size_t kCounts[] = {0, 1, 7, 1001, 16411}; /* the last: > 64 KiB in 4- and 8-byte types */

size_t ft_matrix(xc_comm_t comm, uint64_t seed) {
  int rank, n, place, ri, nroots;
  size_t cases = 0, k, di, oi, ci, before = ct_failures;
  uint64_t salt = 0;
  double failures;
  FT_CHECK(xc_comm_rank(comm, &rank));
  FT_CHECK(xc_comm_size(comm, &n));
  for (k = 0; k < ct_num_ops; ++k) {
    const ct_op *op = &ct_ops[k];
    int roots[2] = {0, n - 1};
    nroots = (op->flags & CT_ROOTED) && n > 1 ? 2 : 1;
    if (!(op->flags & CT_ROOTED)) roots[0] = -1;
    for (di = 0; di < ct_num_dtypes; ++di) {
      const ct_dtype *dt = &ct_dtypes[di];
      size_t nredops = (op->flags & CT_REDUCES) ? ct_num_redops : 1;
      if (op->flags & CT_NO_DATA && di > 0) break;
      for (oi = 0; oi < nredops; ++oi) {
        int redop = (op->flags & CT_REDUCES) ? ct_redops[oi] : CT_COPY;
        if (redop != CT_COPY && !ct_redop_valid(redop, dt)) continue;
        for (place = 0; place < 2; ++place) {
          if ((op->flags & (CT_ONE_BUFFER | CT_NO_DATA)) && place == 1) break;
          for (ri = 0; ri < nroots; ++ri)
            for (ci = 0; ci < sizeof kCounts / sizeof kCounts[0]; ++ci) {
              ct_run r;
              xc_result_t rc;
              memset(&r, 0, sizeof r);
              r.comm = comm;
              r.c.op = op->name;
              r.c.dt = dt;
              r.c.redop = redop;
              r.c.in_place = (op->flags & CT_ONE_BUFFER) ? 1 : place;
              r.c.root = roots[ri];
              r.c.count = (op->flags & CT_NO_DATA) ? 0 : kCounts[ci];
              r.c.rank = rank;
              r.c.nranks = n;
              r.c.seed = seed;
              r.c.salt = ++salt;
              op->prepare(&r);
              rc = op->start(&r, NULL);
              if (rc != XC_SUCCESS) verdict_fail("matrix on %d ranks: %s -> %s (%s)", n, op->name, xc_strerror(rc), xc_last_error());
              op->check(&r);
              ct_free_run(&r);
              ++cases;
              if (op->flags & CT_NO_DATA) break;
            }
        }
      }
    }
  }
  /* The verdict is collective, so every rank ends alike. */
  failures = (double)(ct_failures - before);
  FT_CHECK(xc_allreduce(XC_IN_PLACE, &failures, 1, XC_FLOAT64, XC_SUM, comm));
  FT_EXPECT(failures == 0, "the collective matrix on %d ranks: %.0f wrong elements over all ranks", n, failures);
  return cases;
}
