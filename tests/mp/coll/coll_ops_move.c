/* Steps (coll_ops.h) of the collectives that only move data: barrier,
   broadcast, allgather(v), gather(v), scatter(v), alltoall(v). Rank s's
   element k is input index k; what rank s holds for peer d is ct_to(d, k). */
#include <stdlib.h>
#include <string.h>

#include "coll_ops.h"

#define N (r->c.nranks)
#define ME (r->c.rank)
#define ES (r->c.dt->size)
#define AT(buf, i) ((char *)(buf) + (size_t)(i) * ES)

/* The v-ops' receive layouts leave gaps: everything outside the blocks must
   stay poison. */
static void check_gaps(ct_run *r, const char *what, const void *buf, size_t extent, const size_t *counts,
                       const size_t *displs) {
  unsigned char *covered = (unsigned char *)calloc(extent ? extent : 1, 1);
  size_t i;
  int p;
  MP_ASSERT(covered != NULL, "out of memory");
  for (p = 0; p < N; ++p) memset(covered + displs[p], 1, counts[p]);
  for (i = 0; i < extent; ++i)
    if (!covered[i]) ct_check_poison(&r->c, what, buf, i, i + 1);
  free(covered);
}

/* ---- barrier ---------------------------------------------------------------- */
void barrier_prepare(ct_run *r) { (void)r; }
xc_result_t barrier_start(ct_run *r, xc_request_t *req) {
  return req ? xc_ibarrier(r->comm, req) : xc_barrier(r->comm);
}
void barrier_check(ct_run *r) { (void)r; }

/* ---- broadcast ---------------------------------------------------------------- */
void broadcast_prepare(ct_run *r) {
  size_t i;
  r->recv_n = r->c.count;
  r->recv = ct_alloc(&r->c, r->recv_n);
  if (ME == r->c.root)
    for (i = 0; i < r->c.count; ++i) ct_put(&r->c, r->recv, i, ME, i);
}
xc_result_t broadcast_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  return req ? xc_ibroadcast(r->recv, c->count, c->dt->dtype, c->root, r->comm, req)
             : xc_broadcast(r->recv, c->count, c->dt->dtype, c->root, r->comm);
}
void broadcast_check(ct_run *r) {
  unsigned char want[8];
  size_t i;
  for (i = 0; i < r->c.count; ++i) {
    ct_expect(&r->c, r->c.root, r->c.root + 1, i, want);
    ct_check_elem(&r->c, "buf", r->recv, i, want);
  }
}

/* ---- allgather / gather: block p of the output is rank p's input --------------- */
static void fill_own(ct_run *r, void *buf, size_t count) {
  size_t k;
  for (k = 0; k < count; ++k) ct_put(&r->c, buf, k, ME, k);
}

static void prepare_gather_like(ct_run *r, int has_output, int own_in_place) {
  size_t count = r->c.count;
  if (has_output) {
    r->recv_n = (size_t)N * count;
    r->recv = ct_alloc(&r->c, r->recv_n);
  }
  if (own_in_place) {
    fill_own(r, AT(r->recv, (size_t)ME * count), count);
  } else {
    r->send_n = count;
    r->send = ct_alloc(&r->c, count);
    fill_own(r, r->send, count);
    ct_snapshot_send(r);
  }
}

static void check_blocks(ct_run *r) {
  unsigned char want[8];
  size_t k, count = r->c.count;
  int p;
  for (p = 0; p < N; ++p)
    for (k = 0; k < count; ++k) {
      ct_expect(&r->c, p, p + 1, k, want);
      ct_check_elem(&r->c, "recvbuf", r->recv, (size_t)p * count + k, want);
    }
}

void allgather_prepare(ct_run *r) { prepare_gather_like(r, 1, r->c.in_place); }
xc_result_t allgather_start(ct_run *r, xc_request_t *req) {
  const void *send = r->c.in_place ? XC_IN_PLACE : r->send;
  return req ? xc_iallgather(send, r->recv, r->c.count, r->c.dt->dtype, r->comm, req)
             : xc_allgather(send, r->recv, r->c.count, r->c.dt->dtype, r->comm);
}
void allgather_check(ct_run *r) {
  check_blocks(r);
  ct_check_send_unchanged(r);
}

/* In place only at the root; elsewhere recvbuf is NULL (it matters only there). */
void gather_prepare(ct_run *r) {
  int root = ME == r->c.root;
  prepare_gather_like(r, root, root && r->c.in_place);
}
xc_result_t gather_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  const void *send = c->in_place && ME == c->root ? XC_IN_PLACE : r->send;
  return req ? xc_igather(send, r->recv, c->count, c->dt->dtype, c->root, r->comm, req)
             : xc_gather(send, r->recv, c->count, c->dt->dtype, c->root, r->comm);
}
void gather_check(ct_run *r) {
  if (ME == r->c.root) check_blocks(r);
  ct_check_send_unchanged(r);
}

/* ---- allgatherv / gatherv: uneven blocks at non-packed displacements ------------ */
static void prepare_gatherv_like(ct_run *r, int has_output, int own_in_place) {
  size_t mine = ct_vcount(r->c.count, ME);
  int p;
  if (has_output) {
    r->rcounts = ct_counts_array(N);
    r->rdispls = ct_counts_array(N);
    for (p = 0; p < N; ++p) r->rcounts[p] = ct_vcount(r->c.count, p);
    r->recv_n = ct_layout(r->rcounts, N, r->rdispls);
    r->recv = ct_alloc(&r->c, r->recv_n);
  }
  if (own_in_place) {
    fill_own(r, AT(r->recv, r->rdispls[ME]), mine);
  } else {
    r->send_n = mine;
    r->send = ct_alloc(&r->c, mine);
    fill_own(r, r->send, mine);
    ct_snapshot_send(r);
  }
}

static void check_vblocks(ct_run *r) {
  unsigned char want[8];
  size_t k;
  int p;
  for (p = 0; p < N; ++p)
    for (k = 0; k < r->rcounts[p]; ++k) {
      ct_expect(&r->c, p, p + 1, k, want);
      ct_check_elem(&r->c, "recvbuf", r->recv, r->rdispls[p] + k, want);
    }
  check_gaps(r, "recvbuf (gap between blocks)", r->recv, r->recv_n, r->rcounts, r->rdispls);
}

void allgatherv_prepare(ct_run *r) { prepare_gatherv_like(r, 1, r->c.in_place); }
xc_result_t allgatherv_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  const void *send = c->in_place ? XC_IN_PLACE : r->send;
  size_t mine = ct_vcount(c->count, ME);
  return req ? xc_iallgatherv(send, mine, r->recv, r->rcounts, r->rdispls, c->dt->dtype, r->comm, req)
             : xc_allgatherv(send, mine, r->recv, r->rcounts, r->rdispls, c->dt->dtype, r->comm);
}
void allgatherv_check(ct_run *r) {
  check_vblocks(r);
  ct_check_send_unchanged(r);
}

/* recvcounts and displs are NULL off the root (they matter only there). */
void gatherv_prepare(ct_run *r) {
  int root = ME == r->c.root;
  prepare_gatherv_like(r, root, root && r->c.in_place);
}
xc_result_t gatherv_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  const void *send = c->in_place && ME == c->root ? XC_IN_PLACE : r->send;
  size_t mine = ct_vcount(c->count, ME);
  return req ? xc_igatherv(send, mine, r->recv, r->rcounts, r->rdispls, c->dt->dtype, c->root, r->comm, req)
             : xc_gatherv(send, mine, r->recv, r->rcounts, r->rdispls, c->dt->dtype, c->root, r->comm);
}
void gatherv_check(ct_run *r) {
  if (ME == r->c.root) check_vblocks(r);
  ct_check_send_unchanged(r);
}

/* ---- scatter / scatterv: the root's block for rank p holds ct_to(p, k) ----------- */
/* In place, the root passes recvbuf = XC_IN_PLACE and its block stays in sendbuf. */
static int scatter_root_in_place(const ct_run *r) { return r->c.in_place && ME == r->c.root; }

void scatter_prepare(ct_run *r) {
  size_t count = r->c.count, k;
  int p;
  if (ME == r->c.root) {
    r->send_n = (size_t)N * count;
    r->send = ct_alloc(&r->c, r->send_n);
    for (p = 0; p < N; ++p)
      for (k = 0; k < count; ++k) ct_put(&r->c, r->send, (size_t)p * count + k, ME, ct_to(p, k));
    ct_snapshot_send(r);
  }
  if (!scatter_root_in_place(r)) {
    r->recv_n = count;
    r->recv = ct_alloc(&r->c, count);
  }
}
xc_result_t scatter_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  void *recv = scatter_root_in_place(r) ? (void *)XC_IN_PLACE : r->recv;
  return req ? xc_iscatter(r->send, recv, c->count, c->dt->dtype, c->root, r->comm, req)
             : xc_scatter(r->send, recv, c->count, c->dt->dtype, c->root, r->comm);
}
static void check_scattered(ct_run *r, size_t count) {
  unsigned char want[8];
  size_t k;
  if (!r->recv) return;
  for (k = 0; k < count; ++k) {
    ct_expect(&r->c, r->c.root, r->c.root + 1, ct_to(ME, k), want);
    ct_check_elem(&r->c, "recvbuf", r->recv, k, want);
  }
}
void scatter_check(ct_run *r) {
  check_scattered(r, r->c.count);
  ct_check_send_unchanged(r);
}

void scatterv_prepare(ct_run *r) {
  size_t k, mine = ct_vcount(r->c.count, ME);
  int p;
  if (ME == r->c.root) {
    r->scounts = ct_counts_array(N);
    r->sdispls = ct_counts_array(N);
    for (p = 0; p < N; ++p) r->scounts[p] = ct_vcount(r->c.count, p);
    r->send_n = ct_layout(r->scounts, N, r->sdispls);
    r->send = ct_alloc(&r->c, r->send_n);
    for (p = 0; p < N; ++p)
      for (k = 0; k < r->scounts[p]; ++k) ct_put(&r->c, r->send, r->sdispls[p] + k, ME, ct_to(p, k));
    ct_snapshot_send(r);
  }
  if (!scatter_root_in_place(r)) {
    r->recv_n = mine;
    r->recv = ct_alloc(&r->c, mine);
  }
}
xc_result_t scatterv_start(ct_run *r, xc_request_t *req) {
  const ct_case *c = &r->c;
  void *recv = scatter_root_in_place(r) ? (void *)XC_IN_PLACE : r->recv;
  size_t mine = ct_vcount(c->count, ME);
  return req ? xc_iscatterv(r->send, r->scounts, r->sdispls, recv, mine, c->dt->dtype, c->root, r->comm, req)
             : xc_scatterv(r->send, r->scounts, r->sdispls, recv, mine, c->dt->dtype, c->root, r->comm);
}
void scatterv_check(ct_run *r) {
  check_scattered(r, ct_vcount(r->c.count, ME));
  ct_check_send_unchanged(r);
}

/* ---- alltoall / alltoallv: rank s's data for d is ct_to(d, k) ------------------- */
void alltoall_prepare(ct_run *r) {
  size_t count = r->c.count, k;
  void *in;
  int p;
  r->recv_n = (size_t)N * count;
  r->recv = ct_alloc(&r->c, r->recv_n);
  if (r->c.in_place) {
    in = r->recv;
  } else {
    r->send_n = r->recv_n;
    in = r->send = ct_alloc(&r->c, r->send_n);
  }
  for (p = 0; p < N; ++p)
    for (k = 0; k < count; ++k) ct_put(&r->c, in, (size_t)p * count + k, ME, ct_to(p, k));
  if (!r->c.in_place) ct_snapshot_send(r);
}
xc_result_t alltoall_start(ct_run *r, xc_request_t *req) {
  const void *send = r->c.in_place ? XC_IN_PLACE : r->send;
  return req ? xc_ialltoall(send, r->recv, r->c.count, r->c.dt->dtype, r->comm, req)
             : xc_alltoall(send, r->recv, r->c.count, r->c.dt->dtype, r->comm);
}
void alltoall_check(ct_run *r) {
  unsigned char want[8];
  size_t k, count = r->c.count;
  int p;
  for (p = 0; p < N; ++p)
    for (k = 0; k < count; ++k) {
      ct_expect(&r->c, p, p + 1, ct_to(ME, k), want);
      ct_check_elem(&r->c, "recvbuf", r->recv, (size_t)p * count + k, want);
    }
  ct_check_send_unchanged(r);
}

/* Symmetric counts, so the in-place form (recvcounts/rdispls describe both
   directions) has the same data to move. */
void alltoallv_prepare(ct_run *r) {
  size_t k;
  int p;
  void *in;
  r->rcounts = ct_counts_array(N);
  r->rdispls = ct_counts_array(N);
  for (p = 0; p < N; ++p) r->rcounts[p] = ct_pair_count(r->c.count, p, ME);
  r->recv_n = ct_layout(r->rcounts, N, r->rdispls);
  r->recv = ct_alloc(&r->c, r->recv_n);
  if (r->c.in_place) {
    in = r->recv;
    for (p = 0; p < N; ++p)
      for (k = 0; k < r->rcounts[p]; ++k) ct_put(&r->c, in, r->rdispls[p] + k, ME, ct_to(p, k));
    return;
  }
  r->scounts = ct_counts_array(N);
  r->sdispls = ct_counts_array(N);
  for (p = 0; p < N; ++p) r->scounts[p] = ct_pair_count(r->c.count, ME, p);
  /* A different layout from the receive side: one more gap per block. */
  r->send_n = 2;
  for (p = 0; p < N; ++p) {
    r->sdispls[p] = r->send_n;
    r->send_n += r->scounts[p] + 2;
  }
  r->send = ct_alloc(&r->c, r->send_n);
  for (p = 0; p < N; ++p)
    for (k = 0; k < r->scounts[p]; ++k) ct_put(&r->c, r->send, r->sdispls[p] + k, ME, ct_to(p, k));
  ct_snapshot_send(r);
}
xc_result_t alltoallv_start(ct_run *r, xc_request_t *req) {
  const void *send = r->c.in_place ? XC_IN_PLACE : r->send;
  xc_dtype_t dt = r->c.dt->dtype;
  return req ? xc_ialltoallv(send, r->scounts, r->sdispls, r->recv, r->rcounts, r->rdispls, dt, r->comm, req)
             : xc_alltoallv(send, r->scounts, r->sdispls, r->recv, r->rcounts, r->rdispls, dt, r->comm);
}
void alltoallv_check(ct_run *r) {
  unsigned char want[8];
  size_t k;
  int p;
  for (p = 0; p < N; ++p)
    for (k = 0; k < r->rcounts[p]; ++k) {
      ct_expect(&r->c, p, p + 1, ct_to(ME, k), want);
      ct_check_elem(&r->c, "recvbuf", r->recv, r->rdispls[p] + k, want);
    }
  check_gaps(r, "recvbuf (gap between blocks)", r->recv, r->recv_n, r->rcounts, r->rdispls);
  ct_check_send_unchanged(r);
}
