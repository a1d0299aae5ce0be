/* The blocking collective matrix: for each op named on the command line
   (default: all), every dtype x every valid reduction x out-of-place and in
   place x several roots x the counts below, each result checked on every rank
   against the reference computed locally (coll_check.h).

     coll_matrix [--quick] [--max-bytes B] [--count C]... [--dtype NAME] [OP[,OP...]]...

   --quick: fewer counts and roots and no threshold counts (oversubscribed runs).
   --max-bytes: leave out counts whose n blocks exceed B bytes (an algorithm
   forced with XC_ALGO that has a size limit, e.g. shm_oneshot's staging).
   --count: one more count for every case (sizes beyond the usual ones: a
   pipeline's several steps, single copy's large in-place paths).
   --dtype: only this dtype (as the failure lines name it, e.g. float32): very
   large counts without every dtype's cost (tests/hier).
   Exit status: 0 all passed, 1 a result differed (each difference printed with
   op/dtype/redop/placement/root/count/rank/element), 77 (skipped) when every
   requested op answers "not built yet". XC_TEST_SEED replays another seed;
   XC_ALGO (the library's) forces an algorithm. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_ops.h"

/* ---- the size table ----------------------------------------------------------
   Counts every case runs at: empty, one element, odd and uneven sizes. */
static const size_t kCounts[] = {0, 1, 2, 7, 33, 1001};
static const size_t kQuickCounts[] = {0, 1, 7, 1001, 16411}; /* the last: > 64 KiB in 4- and 8-byte types */
/* The selector's thresholds in bytes (src/algo/selector.h: kAlltoallBruckMaxBytes,
   kShmOneShotMoveMaxBytes, kShmOneShotReduceMaxBytes, kShmOneShotRootReduceMaxBytes,
   kAllreduceRingMinBytes =
   kAllgatherRingMinBytes = kGatherLinearMinBytes = kReduceScatterRingMinBytes =
   kShmOneShotMaxBytes, kBroadcastScatterMinBytes =
   kReduceScatterGatherMinBytes). Each is met from one element below and one
   above, as a count of one rank's vector (T / size +- 1) and as a count of one
   block of n (T / (size * n) +- 1), since the selector measures either
   (selection_bytes). gatherv, scatterv and alltoallv meet the same bytes
   per rank: under one-shot each rank stages its own part up to them
   (shm_oneshot_limit) and publishes it for single copy above, and the
   uneven v-counts put ranks on both sides at once. These run with the
   dtypes and reduction below, at the last rank as root. */
static const size_t kThresholdBytes[] = {256, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 512 << 10};
static const xc_dtype_t kThresholdDtypes[] = {XC_INT32, XC_BFLOAT16};
/* ------------------------------------------------------------------------------ */

typedef struct {
  xc_comm_t comm;
  int rank, nranks, quick;
  size_t max_bytes; /* 0: no limit */
  size_t extra[4], nextra; /* --count */
  const char *only_dtype;  /* --dtype */
  uint64_t seed, salt;
  size_t cases;
} matrix_t;

enum { kRan, kNotBuilt };

static int run_case(matrix_t *m, const ct_op *op, const ct_dtype *dt, int redop, int in_place, int root, size_t count) {
  ct_run r;
  xc_result_t rc;
  if (m->max_bytes && count * dt->size * (size_t)m->nranks > m->max_bytes) return kRan;
  memset(&r, 0, sizeof r);
  r.comm = m->comm;
  r.c.op = op->name;
  r.c.dt = dt;
  r.c.redop = redop;
  r.c.in_place = in_place;
  r.c.root = root;
  r.c.count = count;
  r.c.rank = m->rank;
  r.c.nranks = m->nranks;
  r.c.seed = m->seed;
  r.c.salt = ++m->salt;
  op->prepare(&r);
  rc = op->start(&r, NULL);
  if (ct_not_built(rc)) {
    ct_free_run(&r);
    return kNotBuilt;
  }
  if (rc != XC_SUCCESS) ct_fail_call(&r.c, op->name, rc);
  op->check(&r);
  ct_free_run(&r);
  ++m->cases;
  return kRan;
}

static size_t add_count(size_t *list, size_t n, size_t v) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (list[i] == v) return n;
  list[n] = v;
  return n + 1;
}

/* One op over the whole matrix; kNotBuilt at its first call if it is not built. */
static int run_op(matrix_t *m, const ct_op *op) {
  const size_t *table = m->quick ? kQuickCounts : kCounts;
  size_t ntable = m->quick ? sizeof kQuickCounts / sizeof kQuickCounts[0] : sizeof kCounts / sizeof kCounts[0];
  size_t counts[sizeof kCounts / sizeof kCounts[0] + sizeof kQuickCounts / sizeof kQuickCounts[0] + 4], ncounts = 0;
  int roots[3], nroots = 0, i, place, ri;
  size_t di, oi, ci;
  if (op->flags & CT_NO_DATA) {
    ct_dtype none = {"-", XC_UINT8, 1, 1, 0};
    for (i = 0; i < 3; ++i)
      if (run_case(m, op, &none, CT_COPY, 0, -1, 0) == kNotBuilt) return kNotBuilt;
    return kRan;
  }
  for (ci = 0; ci < ntable; ++ci) ncounts = add_count(counts, ncounts, table[ci]);
  for (ci = 0; ci < m->nextra; ++ci) ncounts = add_count(counts, ncounts, m->extra[ci]);
  roots[nroots++] = (op->flags & CT_ROOTED) ? 0 : -1;
  if ((op->flags & CT_ROOTED) && m->nranks > 1) roots[nroots++] = m->nranks - 1;
  if ((op->flags & CT_ROOTED) && !m->quick && m->nranks > 2) roots[nroots++] = m->nranks / 2;

  for (di = 0; di < ct_num_dtypes; ++di) {
    const ct_dtype *dt = &ct_dtypes[di];
    size_t nredops = (op->flags & CT_REDUCES) ? ct_num_redops : 1;
    if (m->only_dtype && strcmp(dt->name, m->only_dtype) != 0) continue;
    for (oi = 0; oi < nredops; ++oi) {
      int redop = (op->flags & CT_REDUCES) ? ct_redops[oi] : CT_COPY;
      if (redop != CT_COPY && !ct_redop_valid(redop, dt)) continue;
      for (place = 0; place < 2; ++place) {
        int in_place = (op->flags & CT_ONE_BUFFER) ? 1 : place;
        if ((op->flags & CT_ONE_BUFFER) && place == 1) break;
        for (ri = 0; ri < nroots; ++ri)
          for (ci = 0; ci < ncounts; ++ci)
            if (run_case(m, op, dt, redop, in_place, roots[ri], counts[ci]) == kNotBuilt) return kNotBuilt;
      }
    }
  }
  if (m->quick) return kRan;

  /* Counts around the selector's thresholds. */
  for (di = 0; di < ct_num_dtypes; ++di) {
    const ct_dtype *dt = &ct_dtypes[di];
    size_t list[4 * (sizeof kThresholdBytes / sizeof kThresholdBytes[0])], n = 0, ti;
    int wanted = 0;
    for (ti = 0; ti < sizeof kThresholdDtypes / sizeof kThresholdDtypes[0]; ++ti) wanted |= kThresholdDtypes[ti] == dt->dtype;
    if (!wanted) continue;
    for (ti = 0; ti < sizeof kThresholdBytes / sizeof kThresholdBytes[0]; ++ti) {
      size_t whole = kThresholdBytes[ti] / dt->size, block = whole / (size_t)m->nranks;
      n = add_count(list, n, whole - 1);
      n = add_count(list, n, whole + 1);
      if (block > 1) n = add_count(list, n, block - 1);
      n = add_count(list, n, block + 1);
    }
    for (place = 0; place < 2; ++place) {
      int in_place = (op->flags & CT_ONE_BUFFER) ? 1 : place;
      if ((op->flags & CT_ONE_BUFFER) && place == 1) break;
      for (ci = 0; ci < n; ++ci)
        run_case(m, op, dt, (op->flags & CT_REDUCES) ? XC_SUM : CT_COPY, in_place,
                 (op->flags & CT_ROOTED) ? m->nranks - 1 : -1, list[ci]);
    }
  }
  return kRan;
}

static void select_ops(const char *list, int *selected) {
  while (*list) {
    char name[64];
    size_t len = strcspn(list, ",");
    const ct_op *op;
    MP_ASSERT(len < sizeof name, "op name too long in '%s'", list);
    memcpy(name, list, len);
    name[len] = '\0';
    op = ct_find_op(name);
    MP_ASSERT(op != NULL, "unknown op '%s'", name);
    selected[op - ct_ops] = 1;
    list += len + (list[len] == ',');
  }
}

int main(int argc, char **argv) {
  matrix_t m;
  int selected[32] = {0}, any = 0, ran = 0, i;
  size_t k;
  double failures;
  memset(&m, 0, sizeof m);
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) m.quick = 1;
    else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) m.max_bytes = strtoull(argv[++i], NULL, 0);
    else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc && m.nextra < 4) m.extra[m.nextra++] = strtoull(argv[++i], NULL, 0);
    else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) m.only_dtype = argv[++i];
    else select_ops(argv[i], selected), any = 1;
  }
  if (!any)
    for (k = 0; k < ct_num_ops; ++k) selected[k] = 1;

  MP_CHECK(xc_init(NULL, &m.comm));
  MP_CHECK(xc_comm_rank(m.comm, &m.rank));
  MP_CHECK(xc_comm_size(m.comm, &m.nranks));
  mp_rank = m.rank;
  m.seed = mp_seed();
  if (m.rank == 0) {
    const char *algo = getenv("XC_ALGO");
    printf("coll_matrix: %d ranks, seed 0x%llx%s%s%s\n", m.nranks, (unsigned long long)m.seed, m.quick ? ", quick" : "",
           algo ? ", XC_ALGO=" : "", algo ? algo : "");
  }
  for (k = 0; k < ct_num_ops; ++k) {
    size_t before = m.cases;
    if (!selected[k]) continue;
    if (run_op(&m, &ct_ops[k]) == kNotBuilt) {
      if (m.rank == 0) printf("coll_matrix: %s: not built yet, skipped (%s)\n", ct_ops[k].name, xc_last_error());
      continue;
    }
    ++ran;
    if (m.rank == 0) printf("coll_matrix: %s: %zu cases\n", ct_ops[k].name, m.cases - before);
  }
  /* The verdict is collective, so every rank exits alike. */
  failures = (double)ct_failures;
  MP_CHECK(xc_allreduce(XC_IN_PLACE, &failures, 1, XC_FLOAT64, XC_SUM, m.comm));
  MP_CHECK(xc_comm_free(m.comm));
  if (failures > 0) {
    if (m.rank == 0) printf("coll_matrix: FAILED: %.0f wrong elements over all ranks\n", failures);
    return 1;
  }
  if (m.rank == 0) printf("coll_matrix: %zu cases passed\n", m.cases);
  return ran ? 0 : 77;
}
