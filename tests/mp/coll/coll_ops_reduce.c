/* Steps (coll_ops.h) of the reductions: reduce, allreduce, reduce_scatter(v),
   scan, exscan. Every rank's input element i is input index i; the expected
   element is the reduction over the contributing ranks of that index. */
#include "coll_ops.h"

#define N (r->c.nranks)
#define ME (r->c.rank)
#define ES (r->c.dt->size)

static void fill_input(ct_run *r, void *buf, size_t count) {
  size_t i;
  for (i = 0; i < count; ++i) ct_put(&r->c, buf, i, ME, i);
}

/* Input of in_n elements (in recvbuf when in place), output of out_n. */
static void prepare_inout(ct_run *r, size_t in_n, size_t out_n, int in_place, int has_output) {
  if (in_place) {
    r->recv_n = in_n > out_n ? in_n : out_n;
    r->recv = ct_alloc(&r->c, r->recv_n);
    fill_input(r, r->recv, in_n);
    return;
  }
  r->send_n = in_n;
  r->send = ct_alloc(&r->c, in_n);
  fill_input(r, r->send, in_n);
  ct_snapshot_send(r);
  if (has_output) {
    r->recv_n = out_n;
    r->recv = ct_alloc(&r->c, out_n);
  }
}

/* recvbuf[k] = reduction over ranks [lo, hi) of input index base + k. */
static void check_reduced(ct_run *r, int lo, int hi, size_t base, size_t n) {
  unsigned char want[8];
  size_t k;
  for (k = 0; k < n; ++k) {
    ct_expect(&r->c, lo, hi, base + k, want);
    ct_check_elem(&r->c, "recvbuf", r->recv, k, want);
  }
}

#define SEND(r) ((r)->c.in_place ? XC_IN_PLACE : (r)->send)
#define OP(r) ((xc_op_t)(r)->c.redop)

/* ---- reduce: in place only at the root; recvbuf NULL elsewhere ------------------ */
void reduce_prepare(ct_run *r) {
  int root = ME == r->c.root;
  prepare_inout(r, r->c.count, r->c.count, root && r->c.in_place, root);
}
xc_result_t reduce_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  const void *send = c->in_place && ME == c->root ? XC_IN_PLACE : r->send;
  return req ? xc_ireduce(send, r->recv, c->count, c->dt->dtype, OP(r), c->root, r->comm, req)
             : xc_reduce(send, r->recv, c->count, c->dt->dtype, OP(r), c->root, r->comm);
}
void reduce_check(ct_run *r) {
  if (ME == r->c.root) check_reduced(r, 0, N, 0, r->c.count);
  ct_check_send_unchanged(r);
}

/* ---- allreduce ------------------------------------------------------------------ */
void allreduce_prepare(ct_run *r) { prepare_inout(r, r->c.count, r->c.count, r->c.in_place, 1); }
xc_result_t allreduce_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  return req ? xc_iallreduce(SEND(r), r->recv, c->count, c->dt->dtype, OP(r), r->comm, req)
             : xc_allreduce(SEND(r), r->recv, c->count, c->dt->dtype, OP(r), r->comm);
}
void allreduce_check(ct_run *r) {
  check_reduced(r, 0, N, 0, r->c.count);
  ct_check_send_unchanged(r);
}

/* ---- reduce_scatter: rank p gets block p of the reduced n * count input ---------- */
/* In place the result lands at the start of recvbuf (as MPI's in-place form). */
void reduce_scatter_prepare(ct_run *r) {
  prepare_inout(r, (size_t)N * r->c.count, r->c.count, r->c.in_place, 1);
}
xc_result_t reduce_scatter_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  return req ? xc_ireduce_scatter(SEND(r), r->recv, c->count, c->dt->dtype, OP(r), r->comm, req)
             : xc_reduce_scatter(SEND(r), r->recv, c->count, c->dt->dtype, OP(r), r->comm);
}
void reduce_scatter_check(ct_run *r) {
  check_reduced(r, 0, N, (size_t)ME * r->c.count, r->c.count);
  if (!r->c.in_place) ct_check_poison(&r->c, "recvbuf (past the result)", r->recv, r->c.count, r->recv_n);
  ct_check_send_unchanged(r);
}

/* ---- reduce_scatterv: uneven blocks (zeros included), packed in rank order ------- */
static size_t rsv_offset(const ct_run *r, int rank) {
  size_t off = 0;
  int p;
  for (p = 0; p < rank; ++p) off += r->rcounts[p];
  return off;
}
void reduce_scatterv_prepare(ct_run *r) {
  int p;
  r->rcounts = ct_counts_array(N);
  for (p = 0; p < N; ++p) r->rcounts[p] = ct_vcount(r->c.count, p);
  prepare_inout(r, rsv_offset(r, N), r->rcounts[ME], r->c.in_place, 1);
}
xc_result_t reduce_scatterv_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  return req ? xc_ireduce_scatterv(SEND(r), r->recv, r->rcounts, c->dt->dtype, OP(r), r->comm, req)
             : xc_reduce_scatterv(SEND(r), r->recv, r->rcounts, c->dt->dtype, OP(r), r->comm);
}
void reduce_scatterv_check(ct_run *r) {
  check_reduced(r, 0, N, rsv_offset(r, ME), r->rcounts[ME]);
  ct_check_send_unchanged(r);
}

/* ---- scan / exscan: prefixes in rank order ---------------------------------------- */
void scan_prepare(ct_run *r) { prepare_inout(r, r->c.count, r->c.count, r->c.in_place, 1); }
xc_result_t scan_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  return req ? xc_iscan(SEND(r), r->recv, c->count, c->dt->dtype, OP(r), r->comm, req)
             : xc_scan(SEND(r), r->recv, c->count, c->dt->dtype, OP(r), r->comm);
}
void scan_check(ct_run *r) {
  check_reduced(r, 0, ME + 1, 0, r->c.count);
  ct_check_send_unchanged(r);
}

void exscan_prepare(ct_run *r) { prepare_inout(r, r->c.count, r->c.count, r->c.in_place, 1); }
xc_result_t exscan_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  return req ? xc_iexscan(SEND(r), r->recv, c->count, c->dt->dtype, OP(r), r->comm, req)
             : xc_exscan(SEND(r), r->recv, c->count, c->dt->dtype, OP(r), r->comm);
}
/* Rank 0's recvbuf is left untouched: poison, or (in place) its own input. */
void exscan_check(ct_run *r) {
  if (ME > 0) check_reduced(r, 0, ME, 0, r->c.count);
  else if (r->c.in_place) check_reduced(r, 0, 1, 0, r->c.count);
  else ct_check_poison(&r->c, "recvbuf (rank 0, must stay untouched)", r->recv, 0, r->c.count);
  ct_check_send_unchanged(r);
}
