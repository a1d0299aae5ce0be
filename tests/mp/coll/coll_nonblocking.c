/* Non-blocking and grouped collectives: every op's i-form started one after
   the other on one communicator (each with its own buffers), waited for in
   reverse order, then every result checked; and the same ops issued between
   xc_group_start and xc_group_end (blocking calls only start there).

     coll_nonblocking

   Ops that answer "not built yet" (probed once, blocking) are left out with a
   line saying so. Exit 1 on a wrong result, 0 otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_ops.h"

/* The batches: each runs every built op with these parameters. */
typedef struct {
  xc_dtype_t dtype;
  int redop; /* for the ops that reduce */
  int in_place;
  size_t count;
} batch_t;
static const batch_t kBatches[] = {
    {XC_INT32, XC_SUM, 0, 33},
    {XC_FLOAT16, XC_AVG, 1, 1001},
    {XC_UINT8, XC_BXOR, 1, 7},
    {XC_INT64, XC_MAX, 0, 0},
    {XC_FLOAT32, XC_SUM, 0, 20000}, /* 80 KB: past the 64 KiB thresholds */
};

static xc_comm_t g_comm;
static int g_rank, g_nranks;
static uint64_t g_salt;

static const ct_dtype *dtype_of(xc_dtype_t t) {
  size_t i;
  for (i = 0; i < ct_num_dtypes; ++i)
    if (ct_dtypes[i].dtype == t) return &ct_dtypes[i];
  return NULL;
}

static void init_run(ct_run *r, const ct_op *op, const batch_t *b, int index) {
  memset(r, 0, sizeof *r);
  r->comm = g_comm;
  r->c.op = op->name;
  r->c.dt = dtype_of(b->dtype);
  r->c.redop = (op->flags & CT_REDUCES) ? b->redop : CT_COPY;
  r->c.in_place = (op->flags & CT_ONE_BUFFER) ? 1 : b->in_place;
  r->c.root = (op->flags & CT_ROOTED) ? index % g_nranks : -1; /* roots differ between ops */
  r->c.count = b->count;
  r->c.rank = g_rank;
  r->c.nranks = g_nranks;
  r->c.seed = mp_seed();
  r->c.salt = ++g_salt;
}

/* Whether op is built: one blocking call of one element. */
static int probe(const ct_op *op) {
  batch_t b = {XC_INT32, XC_SUM, 0, 1};
  ct_run r;
  xc_result_t rc;
  init_run(&r, op, &b, 0);
  op->prepare(&r);
  rc = op->start(&r, NULL);
  if (rc != XC_SUCCESS && !ct_not_built(rc)) ct_fail_call(&r.c, op->name, rc);
  if (rc == XC_SUCCESS) op->check(&r);
  ct_free_run(&r);
  return rc == XC_SUCCESS;
}

static void run_nonblocking(const int *built, const batch_t *b) {
  ct_run runs[32];
  xc_request_t reqs[32];
  size_t k;
  int n = 0, i;
  for (k = 0; k < ct_num_ops; ++k) {
    xc_result_t rc;
    if (!built[k]) continue;
    init_run(&runs[n], &ct_ops[k], b, n);
    ct_ops[k].prepare(&runs[n]);
    rc = ct_ops[k].start(&runs[n], &reqs[n]);
    if (rc != XC_SUCCESS) ct_fail_call(&runs[n].c, "start (non-blocking)", rc);
    ++n;
  }
  for (i = n - 1; i >= 0; --i) {
    xc_status_t st;
    xc_result_t rc = xc_wait(&reqs[i], &st);
    if (rc != XC_SUCCESS) ct_fail_call(&runs[i].c, "xc_wait (reverse order)", rc);
    MP_ASSERT(reqs[i] == NULL, "xc_wait left the request of %s set", runs[i].c.op);
  }
  for (i = 0; i < n; ++i) {
    const ct_op *op = ct_find_op(runs[i].c.op);
    op->check(&runs[i]);
    ct_free_run(&runs[i]);
  }
}

static void run_grouped(const int *built, const batch_t *b) {
  ct_run runs[32];
  size_t k;
  int n = 0, i;
  xc_result_t rc;
  MP_CHECK(xc_group_start());
  for (k = 0; k < ct_num_ops; ++k) {
    if (!built[k]) continue;
    init_run(&runs[n], &ct_ops[k], b, n + 1);
    ct_ops[k].prepare(&runs[n]);
    rc = ct_ops[k].start(&runs[n], NULL);
    if (rc != XC_SUCCESS) ct_fail_call(&runs[n].c, "start (in a group)", rc);
    ++n;
  }
  rc = xc_group_end();
  if (rc != XC_SUCCESS) {
    fprintf(stderr, "[rank %d] FAIL xc_group_end over %d ops -> %s (%s)\n", g_rank, n, xc_strerror(rc), xc_last_error());
    exit(1);
  }
  for (i = 0; i < n; ++i) {
    const ct_op *op = ct_find_op(runs[i].c.op);
    op->check(&runs[i]);
    ct_free_run(&runs[i]);
  }
}

int main(void) {
  int built[32] = {0}, nbuilt = 0;
  size_t k, bi;
  double failures;
  MP_CHECK(xc_init(NULL, &g_comm));
  MP_CHECK(xc_comm_rank(g_comm, &g_rank));
  MP_CHECK(xc_comm_size(g_comm, &g_nranks));
  mp_rank = g_rank;
  if (g_rank == 0) printf("coll_nonblocking: %d ranks, seed 0x%llx\n", g_nranks, (unsigned long long)mp_seed());
  for (k = 0; k < ct_num_ops; ++k) {
    built[k] = probe(&ct_ops[k]);
    nbuilt += built[k];
    if (!built[k] && g_rank == 0) printf("coll_nonblocking: %s: not built yet, left out\n", ct_ops[k].name);
  }
  for (bi = 0; bi < sizeof kBatches / sizeof kBatches[0]; ++bi) {
    run_nonblocking(built, &kBatches[bi]);
    run_grouped(built, &kBatches[bi]);
  }
  failures = (double)ct_failures;
  MP_CHECK(xc_allreduce(XC_IN_PLACE, &failures, 1, XC_FLOAT64, XC_SUM, g_comm));
  MP_CHECK(xc_comm_free(g_comm));
  if (failures > 0) {
    if (g_rank == 0) printf("coll_nonblocking: FAILED: %.0f wrong elements over all ranks\n", failures);
    return 1;
  }
  if (g_rank == 0)
    printf("coll_nonblocking: %d ops x %zu batches passed, non-blocking (reverse waits) and grouped\n", nbuilt,
           sizeof kBatches / sizeof kBatches[0]);
  return 0;
}
