/* Redistribution of device memory (the emulated device, or a GPU under
   XC_DEVICE=cuda; exit 77 without one): placement pairs on a 1-D mesh of
   every rank (S0->S1, R->S0, S1->R, P->R, P->S0), [S0,S1]->[S1,S0] on a 2x2
   mesh at 4 ranks, and a block-cyclic pair, each checked element by element
   against the seeded global array. Each plan runs three times in the
   blocking form (stream-ordered on the stream bound to the collectives,
   then xc_stream_synchronize) and twice non-blocking (xc_wait), with new
   data every time. Also: a second run of a plan while one is in flight is
   refused; a mix of host and device buffers is XC_ERR_UNSUPPORTED on every
   rank; a device allreduce enqueued after a redistribution on the same
   stream sees the redistributed data. With no stream bound the runs go to
   the default stream: the non-blocking form again. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "dev_mem.h"
#include "redist_util.h"

static uint64_t g_case;
static xc_stream_t g_stream;
static int g_unbound;  /* no stream bound: the non-blocking form only (on the default stream) */

/* What rank q's partial copy (of r_size, 1-D mesh) holds of element i. */
static double share(size_t i, int q) {
  if (q > 0) return kval(g_case, i, q);
  double v = gval(g_case, i);
  for (int j = 1; j < r_size; ++j) v -= kval(g_case, i, j);
  return v;
}

/* Every enqueued run done, and no error on the stream or the communicator. */
static void sync_ok(const char *what) {
  xc_result_t rc = xc_stream_synchronize(g_stream), err = XC_SUCCESS;
  MP_ASSERT(rc == XC_SUCCESS, "%s: xc_stream_synchronize -> %s (%s)", what, xc_strerror(rc), xc_last_error());
  MP_CHECK(xc_comm_get_async_error(r_world, &err));
  MP_ASSERT(err == XC_SUCCESS, "%s: asynchronous error %s", what, xc_strerror(err));
}

/* One case: a plan, device buffers, and how to fill and check them. */
typedef struct {
  const char *name;
  xc_plan_t plan;
  size_t scount, dcount;
  void *din, *dout;
  double *hin, *hout;
  void (*fill)(const void *ctx, double *in);         /* the local src for g_case */
  double (*want)(const void *ctx, size_t k);         /* local dst element k for g_case */
  const void *ctx;
} dcase;

static void fresh(dcase *c) {
  ++g_case;
  c->fill(c->ctx, c->hin);
  dev_put(c->din, c->hin, c->scount * sizeof(double));
  dev_fill(c->dout, 0x7f, c->dcount * sizeof(double));
}

static void check(dcase *c, const char *form, int rep) {
  dev_get(c->hout, c->dout, c->dcount * sizeof(double));
  for (size_t k = 0; k < c->dcount; ++k) {
    double w = c->want(c->ctx, k);
    MP_ASSERT(c->hout[k] == w, "%s, %s run %d (case %llu): local element %zu is %g, expected %g", c->name, form, rep,
              (unsigned long long)g_case, k, c->hout[k], w);
  }
}

/* Plan reuse: three blocking runs, two non-blocking, new data each time. */
static void run_forms(dcase *c) {
  for (int rep = 0; rep < 3 && !g_unbound; ++rep) {
    fresh(c);
    MP_CHECK(xc_redistribute(c->plan, c->din, c->dout));
    sync_ok(c->name);
    check(c, "blocking", rep);
  }
  for (int rep = 0; rep < 2; ++rep) {
    fresh(c);
    xc_request_t req = NULL;
    MP_CHECK(xc_iredistribute(c->plan, c->din, c->dout, &req));
    MP_ASSERT(req != NULL, "%s: xc_iredistribute gave no request", c->name);
    MP_CHECK(xc_wait(&req, NULL));
    check(c, "non-blocking", rep);
  }
}

static void case_alloc(dcase *c) {
  c->din = dev_alloc(r_world, (c->scount + 1) * sizeof(double));
  c->dout = dev_alloc(r_world, (c->dcount + 1) * sizeof(double));
  c->hin = malloc((c->scount + 1) * sizeof(double));
  c->hout = malloc((c->dcount + 1) * sizeof(double));
  MP_ASSERT(c->hin && c->hout, "out of memory");
}

static void case_free(dcase *c) {
  MP_CHECK(xc_plan_free(c->plan));
  dev_free(r_world, c->din);
  dev_free(r_world, c->dout);
  free(c->hin);
  free(c->hout);
}

/* ---- mesh layouts ---- */

typedef struct {
  const size_t *shape;
  box_t sb, db;
  int partial;  /* src is Partial(sum) over the 1-D mesh */
  size_t dst_gi[4096];
} mesh_ctx;

static void mesh_fill(const void *p, double *in) {
  const mesh_ctx *m = p;
  FOR_BOX(m->sb, m->shape, gi, k, in[k] = m->partial ? share(gi, r_rank) : gval(g_case, gi));
}

static double mesh_want(const void *p, size_t k) {
  const mesh_ctx *m = p;
  return gval(g_case, m->dst_gi[k]);
}

/* A device allreduce enqueued behind a redistribution to Replicate on the
   same stream: it must add up the redistributed data, not what was there. */
static void ordering(dcase *c) {
  void *sum = dev_alloc(r_world, (c->dcount + 1) * sizeof(double));
  dev_fill(sum, 0x7f, c->dcount * sizeof(double));
  fresh(c);
  MP_CHECK(xc_redistribute(c->plan, c->din, c->dout));
  MP_CHECK(xc_allreduce(c->dout, sum, c->dcount, XC_FLOAT64, XC_SUM, r_world));
  sync_ok("ordering");
  dev_get(c->hout, sum, c->dcount * sizeof(double));
  for (size_t k = 0; k < c->dcount; ++k) {
    double w = (double)r_size * c->want(c->ctx, k);
    MP_ASSERT(c->hout[k] == w, "%s then allreduce: element %zu is %g, expected %g", c->name, k, c->hout[k], w);
  }
  dev_free(r_world, sum);
}

/* A second run while one is in flight is refused (rank 0's run waits for
   the others, which start later), and so is freeing the plan. */
static void busy(dcase *c) {
  if (r_size < 2) return;
  fresh(c);
  if (r_rank != 0) {
    struct timespec later = {0, 300 * 1000 * 1000};
    nanosleep(&later, NULL);
  }
  MP_CHECK(xc_redistribute(c->plan, c->din, c->dout));
  if (r_rank == 0) {
    xc_result_t rc = xc_redistribute(c->plan, c->din, c->dout);
    MP_ASSERT(rc == XC_ERR_INVALID_USAGE && strstr(xc_last_error(), "already running"),
              "second run in flight: %s (%s)", xc_strerror(rc), xc_last_error());
    xc_request_t req = NULL;
    rc = xc_iredistribute(c->plan, c->din, c->dout, &req);
    MP_ASSERT(rc == XC_ERR_INVALID_USAGE && req == NULL, "second non-blocking run in flight: %s", xc_strerror(rc));
    rc = xc_plan_free(c->plan);
    MP_ASSERT(rc == XC_ERR_INVALID_USAGE && strstr(xc_last_error(), "still running"), "free while running: %s (%s)",
              xc_strerror(rc), xc_last_error());
  }
  sync_ok("busy");
  check(c, "busy", 0);
}

/* Host and device buffers mixed: refused on every rank, alike, nothing enqueued. */
static void mixed(dcase *c) {
  xc_result_t rc = xc_redistribute(c->plan, c->hin, c->dout);
  MP_ASSERT(rc == XC_ERR_UNSUPPORTED && strstr(xc_last_error(), "sendbuf is host memory and recvbuf device memory"),
            "host src, device dst: %s (%s)", xc_strerror(rc), xc_last_error());
  same_everywhere(rc, xc_last_error());
  rc = xc_redistribute(c->plan, c->din, c->hout);
  MP_ASSERT(rc == XC_ERR_UNSUPPORTED && strstr(xc_last_error(), "sendbuf is device memory and recvbuf host memory"),
            "device src, host dst: %s (%s)", xc_strerror(rc), xc_last_error());
  same_everywhere(rc, xc_last_error());
  xc_request_t req = NULL;
  rc = xc_iredistribute(c->plan, c->hin, c->dout, &req);
  MP_ASSERT(rc == XC_ERR_UNSUPPORTED && req == NULL, "non-blocking, mixed: %s", xc_strerror(rc));
  same_everywhere(rc, xc_last_error());
}

static void mesh_case(const char *name, const size_t *shape, const int *mesh, int mnd, const int *spl,
                      const int *dpl, int extras) {
  static mesh_ctx m;
  dcase c;
  memset(&c, 0, sizeof c);
  c.name = name;
  m.shape = shape;
  m.sb = mbox(shape, 2, mesh, mnd, spl, r_rank);
  m.db = mbox(shape, 2, mesh, mnd, dpl, r_rank);
  m.partial = spl[0] == P;
  FOR_BOX(m.db, shape, gi, k, m.dst_gi[k] = gi);
  xc_layout_t src = make_placed(shape, 2, mesh, mnd, spl), dst = make_placed(shape, 2, mesh, mnd, dpl);
  MP_CHECK(xc_layout_local_count(src, &c.scount));
  MP_CHECK(xc_layout_local_count(dst, &c.dcount));
  MP_ASSERT(c.scount == box_volume(&m.sb) && c.dcount == box_volume(&m.db), "%s: local counts %zu %zu", name,
            c.scount, c.dcount);
  MP_CHECK(xc_redistribute_plan(src, dst, XC_FLOAT64, NULL, &c.plan));
  c.fill = mesh_fill;
  c.want = mesh_want;
  c.ctx = &m;
  case_alloc(&c);
  run_forms(&c);
  if (extras) {
    busy(&c);
    mixed(&c);
  }
  int all_r = 1;
  for (int k = 0; k < mnd; ++k) all_r &= dpl[k] == R;
  if (all_r) ordering(&c);
  case_free(&c);
  MP_CHECK(xc_layout_free(src));
  MP_CHECK(xc_layout_free(dst));
}

/* ---- block-cyclic (ScaLAPACK descriptors) ---- */

typedef struct {
  size_t rows, cols, mb, nb;
  int nprow, npcol, col_major;  /* local storage order */
} bc_t;

typedef struct {
  bc_t s, d;
  size_t slr, slc, dlr, dlc;
  size_t dst_gi[4096];
} bc_ctx;

/* Owner of (i, j) under b (row-major process grid, source process 0), and its local index. */
static int bc_owner(const bc_t *b, size_t i, size_t j, size_t lr, size_t lc, size_t *at) {
  size_t bi = i / b->mb, bj = j / b->nb;
  int p = (int)(bi % (size_t)b->nprow), q = (int)(bj % (size_t)b->npcol);
  size_t li = (bi / (size_t)b->nprow) * b->mb + i % b->mb, lj = (bj / (size_t)b->npcol) * b->nb + j % b->nb;
  *at = b->col_major ? li + lj * lr : li * lc + lj;
  return p * b->npcol + q;
}

static void bc_local(const bc_t *b, int rank, size_t *lr, size_t *lc) {
  *lr = *lc = 0;
  for (size_t i = 0; i < b->rows; ++i) *lr += (int)((i / b->mb) % (size_t)b->nprow) == rank / b->npcol;
  for (size_t j = 0; j < b->cols; ++j) *lc += (int)((j / b->nb) % (size_t)b->npcol) == rank % b->npcol;
}

static void bc_fill(const void *p, double *in) {
  const bc_ctx *x = p;
  size_t at;
  for (size_t i = 0; i < x->s.rows; ++i)
    for (size_t j = 0; j < x->s.cols; ++j)
      if (bc_owner(&x->s, i, j, x->slr, x->slc, &at) == r_rank) in[at] = gval(g_case, i * x->s.cols + j);
}

static double bc_want(const void *p, size_t k) {
  const bc_ctx *x = p;
  return gval(g_case, x->dst_gi[k]);
}

static xc_layout_t bc_layout(const bc_t *b) {
  xc_layout_t l;
  MP_CHECK(xc_layout_block_cyclic(r_world, b->rows, b->cols, b->mb, b->nb, b->nprow, b->npcol, 0, 0,
                                  XC_ORDER_ROW_MAJOR, b->col_major ? XC_ORDER_COL_MAJOR : XC_ORDER_ROW_MAJOR, &l));
  return l;
}

static void block_cyclic_case(void) {
  static bc_ctx x;
  x.s = (bc_t){11, 9, 2, 3, 1, r_size, 0};
  x.d = (bc_t){11, 9, 3, 2, r_size, 1, 1};
  bc_local(&x.s, r_rank, &x.slr, &x.slc);
  bc_local(&x.d, r_rank, &x.dlr, &x.dlc);
  size_t at;
  for (size_t i = 0; i < x.d.rows; ++i)
    for (size_t j = 0; j < x.d.cols; ++j)
      if (bc_owner(&x.d, i, j, x.dlr, x.dlc, &at) == r_rank) x.dst_gi[at] = i * x.d.cols + j;
  dcase c;
  memset(&c, 0, sizeof c);
  c.name = "block-cyclic 1xN (2x3) -> Nx1 (3x2, column-major)";
  xc_layout_t src = bc_layout(&x.s), dst = bc_layout(&x.d);
  MP_CHECK(xc_layout_local_count(src, &c.scount));
  MP_CHECK(xc_layout_local_count(dst, &c.dcount));
  MP_ASSERT(c.scount == x.slr * x.slc && c.dcount == x.dlr * x.dlc, "block-cyclic local counts %zu %zu", c.scount,
            c.dcount);
  MP_CHECK(xc_redistribute_plan(src, dst, XC_FLOAT64, NULL, &c.plan));
  c.fill = bc_fill;
  c.want = bc_want;
  c.ctx = &x;
  case_alloc(&c);
  run_forms(&c);
  case_free(&c);
  MP_CHECK(xc_layout_free(src));
  MP_CHECK(xc_layout_free(dst));
}

int main(void) {
  r_init();
  dev_setup(r_world);
  g_stream = dev_stream(r_world);
  MP_CHECK(xc_stream_bind(r_world, g_stream, XC_BIND_COLLECTIVES));
  size_t shape[2] = {7, 5};
  int line[1] = {r_size};
  static const struct {
    const char *name;
    int s, d;
  } pairs[] = {{"S0 -> S1", S0, S1}, {"R -> S0", R, S0}, {"S1 -> R", S1, R}, {"P -> R", P, R}, {"P -> S0", P, S0}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i)
    mesh_case(pairs[i].name, shape, line, 1, &pairs[i].s, &pairs[i].d, i == 0);
  if (r_size == 4) {
    int sq[2] = {2, 2}, a[2] = {S0, S1}, b[2] = {S1, S0};
    mesh_case("[S0, S1] -> [S1, S0] on 2x2", shape, sq, 2, a, b, 0);
  }
  block_cyclic_case();
  MP_CHECK(xc_stream_bind(r_world, NULL, XC_BIND_COLLECTIVES));
  MP_CHECK(xc_stream_destroy(g_stream));
  g_unbound = 1;
  mesh_case("S0 -> S1 on the default stream", shape, line, 1, &pairs[0].s, &pairs[0].d, 0);
  r_finish("redist_device");
  return 0;
}
