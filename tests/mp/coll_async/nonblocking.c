/* Non-blocking collectives: every kind; several started together on two
   communicators, then waited for in different orders (reverse, waitall, an
   xc_test loop, a rank-dependent order); blocking collectives issued behind
   pending ones on the same communicator; a communicator freed with an op in
   flight; v-op count arrays clobbered as soon as the start call returns. Every result is checked against a locally computed reference. */
#include <stdlib.h>

#include "async_util.h"

enum { kOps = 6 };
static const size_t kSum = 1000, kBcast = 5000, kGather = 300, kMax = 70000, kSmall = 3;

typedef struct {
  int32_t *sum_in, *sum_out, *gather_in, *gather_out, *small;
  double *bcast, *max;
} Bufs;

static void fill(Bufs *b, int t) {
  for (size_t i = 0; i < kSum; ++i) b->sum_in[i] = aval(t, a_rank, i);
  for (size_t i = 0; i < kBcast; ++i) b->bcast[i] = a_rank == a_size - 1 ? aval(t + 100, a_rank, i) : -1.0;
  for (size_t i = 0; i < kGather; ++i) b->gather_in[i] = aval(t + 200, a_rank, i);
  for (size_t i = 0; i < kMax; ++i) b->max[i] = aval(t + 300, a_rank, i);
  for (size_t i = 0; i < kSmall; ++i) b->small[i] = aval(t + 400, a_rank, i);
  memset(b->sum_out, 0, kSum * sizeof(int32_t));
  memset(b->gather_out, 0, kGather * (size_t)a_size * sizeof(int32_t));
}

static void check(const Bufs *b, int t) {
  for (size_t i = 0; i < kSum; ++i) {
    int32_t want = 0;
    for (int r = 0; r < a_size; ++r) want += aval(t, r, i);
    MP_ASSERT(b->sum_out[i] == want, "step %d: allreduce sum[%zu] = %d, want %d", t, i, b->sum_out[i], want);
  }
  for (size_t i = 0; i < kBcast; ++i)
    MP_ASSERT(b->bcast[i] == aval(t + 100, a_size - 1, i), "step %d: broadcast[%zu] = %g", t, i, b->bcast[i]);
  for (int r = 0; r < a_size; ++r)
    for (size_t i = 0; i < kGather; ++i)
      MP_ASSERT(b->gather_out[(size_t)r * kGather + i] == aval(t + 200, r, i), "step %d: allgather block %d [%zu]", t, r, i);
  for (size_t i = 0; i < kMax; ++i) {
    int32_t want = aval(t + 300, 0, i);
    for (int r = 1; r < a_size; ++r)
      if (aval(t + 300, r, i) > want) want = aval(t + 300, r, i);
    MP_ASSERT(b->max[i] == want, "step %d: allreduce max[%zu] = %g, want %d", t, i, b->max[i], want);
  }
  for (size_t i = 0; i < kSmall; ++i) {
    int32_t want = 0;
    for (int r = 0; r < a_size; ++r) want += aval(t + 400, r, i);
    MP_ASSERT(b->small[i] == want, "step %d: small allreduce[%zu] = %d, want %d", t, i, b->small[i], want);
  }
}

/* Start all six, alternating between the two communicators. */
static void start_all(Bufs *b, xc_comm_t world, xc_comm_t dup, xc_request_t *req) {
  MP_CHECK(xc_iallreduce(b->sum_in, b->sum_out, kSum, XC_INT32, XC_SUM, world, &req[0]));
  MP_CHECK(xc_ibroadcast(b->bcast, kBcast, XC_FLOAT64, a_size - 1, dup, &req[1]));
  MP_CHECK(xc_iallgather(b->gather_in, b->gather_out, kGather, XC_INT32, world, &req[2]));
  MP_CHECK(xc_iallreduce(XC_IN_PLACE, b->max, kMax, XC_FLOAT64, XC_MAX, dup, &req[3]));
  MP_CHECK(xc_ibarrier(world, &req[4]));
  MP_CHECK(xc_iallreduce(XC_IN_PLACE, b->small, kSmall, XC_INT32, XC_SUM, dup, &req[5]));
}

static void wait_round(int t, xc_request_t *req) {
  xc_status_t st[kOps];
  switch (t % 4) {
    case 0: /* reverse */
      for (int i = kOps - 1; i >= 0; --i) {
        MP_CHECK(xc_wait(&req[i], &st[i]));
        check_coll_status(&st[i]);
      }
      break;
    case 1:
      MP_CHECK(xc_waitall(kOps, req, st));
      for (int i = 0; i < kOps; ++i) check_coll_status(&st[i]);
      break;
    case 2: { /* poll with xc_test until everything is done */
      int left = kOps;
      while (left > 0) {
        for (int i = 0; i < kOps; ++i) {
          if (!req[i]) continue;
          int done = 0;
          MP_CHECK(xc_test(&req[i], &done, &st[i]));
          if (done) {
            MP_ASSERT(req[i] == NULL, "xc_test left a finished request");
            check_coll_status(&st[i]);
            --left;
          }
        }
      }
      break;
    }
    default: /* a different order on every rank */
      for (int k = 0; k < kOps; ++k) {
        int i = (k * 5 + a_rank) % kOps;
        MP_CHECK(xc_wait(&req[i], &st[i]));
        check_coll_status(&st[i]);
      }
  }
  for (int i = 0; i < kOps; ++i) MP_ASSERT(req[i] == NULL, "request %d not freed", i);
}


/* The rest of the set, started together and waited for in reverse: reduce,
   gather, scatter, alltoall, reduce_scatter, scan, exscan. */
static void more_kinds(xc_comm_t comm, int t) {
  enum { kMore = 7 };
  const size_t n = 257;
  size_t all = n * (size_t)a_size;
  int root = 1 % a_size;
  int32_t *in = malloc(all * sizeof(int32_t)), *red = calloc(n, sizeof(int32_t)), *gat = calloc(all, sizeof(int32_t));
  int32_t *sca = calloc(n, sizeof(int32_t)), *a2a = calloc(all, sizeof(int32_t)), *rs = calloc(n, sizeof(int32_t));
  int32_t *scan = calloc(n, sizeof(int32_t)), *exs = calloc(n, sizeof(int32_t));
  for (size_t i = 0; i < all; ++i) in[i] = aval(t, a_rank, i);
  xc_request_t req[kMore];
  MP_CHECK(xc_ireduce(in, red, n, XC_INT32, XC_SUM, root, comm, &req[0]));
  MP_CHECK(xc_igather(in, gat, n, XC_INT32, root, comm, &req[1]));
  MP_CHECK(xc_iscatter(in, sca, n, XC_INT32, root, comm, &req[2]));
  MP_CHECK(xc_ialltoall(in, a2a, n, XC_INT32, comm, &req[3]));
  MP_CHECK(xc_ireduce_scatter(in, rs, n, XC_INT32, XC_SUM, comm, &req[4]));
  MP_CHECK(xc_iscan(in, scan, n, XC_INT32, XC_SUM, comm, &req[5]));
  MP_CHECK(xc_iexscan(in, exs, n, XC_INT32, XC_SUM, comm, &req[6]));
  for (int i = kMore - 1; i >= 0; --i) MP_CHECK(xc_wait(&req[i], NULL));
  for (size_t i = 0; i < n; ++i) {
    int32_t sum = 0, pre = 0, blk = 0;
    for (int r = 0; r < a_size; ++r) {
      sum += aval(t, r, i);
      if (r < a_rank) pre += aval(t, r, i);
      blk += aval(t, r, (size_t)a_rank * n + i);
    }
    if (a_rank == root) MP_ASSERT(red[i] == sum, "step %d: ireduce[%zu] = %d, want %d", t, i, red[i], sum);
    MP_ASSERT(sca[i] == aval(t, root, (size_t)a_rank * n + i), "step %d: iscatter[%zu]", t, i);
    MP_ASSERT(rs[i] == blk, "step %d: ireduce_scatter[%zu] = %d, want %d", t, i, rs[i], blk);
    MP_ASSERT(scan[i] == pre + aval(t, a_rank, i), "step %d: iscan[%zu]", t, i);
    if (a_rank > 0) MP_ASSERT(exs[i] == pre, "step %d: iexscan[%zu] = %d, want %d", t, i, exs[i], pre);
    for (int r = 0; r < a_size; ++r) {
      MP_ASSERT(a2a[(size_t)r * n + i] == aval(t, r, (size_t)a_rank * n + i), "step %d: ialltoall block %d [%zu]", t, r, i);
      if (a_rank == root) MP_ASSERT(gat[(size_t)r * n + i] == aval(t, r, i), "step %d: igather block %d [%zu]", t, r, i);
    }
  }
  free(in);
  free(red);
  free(gat);
  free(sca);
  free(a2a);
  free(rs);
  free(scan);
  free(exs);
}

/* The count arrays of a non-blocking v-op need only live for the start
   call: they are clobbered and freed right after it, while the op waits in
   the queue behind a pending allreduce. Rank r sends r + i + 1 elements to
   rank i (alltoallv) and gathers r + 1 from rank r (allgatherv). */
static void v_arrays_during_call(xc_comm_t comm, int t) {
  size_t n = (size_t)a_size, k = 50000, send_all = 0, recv_all = 0, gat_all = 0;
  size_t *sc = malloc(n * sizeof(size_t)), *sd = malloc(n * sizeof(size_t));
  size_t *rc = malloc(n * sizeof(size_t)), *rd = malloc(n * sizeof(size_t));
  size_t *gc = malloc(n * sizeof(size_t)), *gd = malloc(n * sizeof(size_t));
  for (size_t i = 0; i < n; ++i) {
    sc[i] = (size_t)a_rank + i + 1, sd[i] = send_all, send_all += sc[i];
    rc[i] = i + (size_t)a_rank + 1, rd[i] = recv_all, recv_all += rc[i];
    gc[i] = i + 1, gd[i] = gat_all, gat_all += gc[i];
  }
  int32_t *in = malloc(send_all * sizeof(int32_t)), *out = calloc(recv_all, sizeof(int32_t));
  int32_t *mine = malloc(((size_t)a_rank + 1) * sizeof(int32_t)), *gat = calloc(gat_all, sizeof(int32_t));
  double *big = malloc(k * sizeof(double));
  for (size_t i = 0; i < send_all; ++i) in[i] = aval(t, a_rank, i);
  for (size_t i = 0; i <= (size_t)a_rank; ++i) mine[i] = aval(t + 1, a_rank, i);
  for (size_t i = 0; i < k; ++i) big[i] = aval(t + 2, a_rank, i);
  xc_request_t req[3];
  MP_CHECK(xc_iallreduce(XC_IN_PLACE, big, k, XC_FLOAT64, XC_MAX, comm, &req[0]));
  MP_CHECK(xc_ialltoallv(in, sc, sd, out, rc, rd, XC_INT32, comm, &req[1]));
  MP_CHECK(xc_iallgatherv(mine, (size_t)a_rank + 1, gat, gc, gd, XC_INT32, comm, &req[2]));
  for (size_t i = 0; i < n; ++i) sc[i] = sd[i] = rc[i] = rd[i] = gc[i] = gd[i] = (size_t)-1;
  free(sc), free(sd), free(rc), free(rd), free(gc), free(gd);
  MP_CHECK(xc_waitall(3, req, NULL));
  for (size_t from = 0, at = 0; from < n; ++from) {
    size_t their_first = 0; /* where rank `from` keeps our block: after blocks 0..a_rank-1 */
    for (size_t i = 0; i < (size_t)a_rank; ++i) their_first += from + i + 1;
    for (size_t i = 0; i < from + (size_t)a_rank + 1; ++i, ++at)
      MP_ASSERT(out[at] == aval(t, (int)from, their_first + i), "step %d: ialltoallv from %zu [%zu]", t, from, i);
  }
  for (size_t r = 0, at = 0; r < n; ++r)
    for (size_t i = 0; i <= r; ++i, ++at)
      MP_ASSERT(gat[at] == aval(t + 1, (int)r, i), "step %d: iallgatherv block %zu [%zu]", t, r, i);
  free(in), free(out), free(mine), free(gat), free(big);
}

int main(int argc, char **argv) {
  xc_comm_t world, dup;
  a_init(argc, argv, &world);
  MP_CHECK(xc_comm_dup(world, &dup));
  Bufs b;
  b.sum_in = malloc(kSum * sizeof(int32_t));
  b.sum_out = malloc(kSum * sizeof(int32_t));
  b.bcast = malloc(kBcast * sizeof(double));
  b.gather_in = malloc(kGather * sizeof(int32_t));
  b.gather_out = malloc(kGather * (size_t)a_size * sizeof(int32_t));
  b.max = malloc(kMax * sizeof(double));
  b.small = malloc(kSmall * sizeof(int32_t));

  for (int t = 0; t < 8; ++t) {
    xc_request_t req[kOps];
    fill(&b, t);
    start_all(&b, world, dup, req);
    wait_round(t, req);
    check(&b, t);
  }

  for (int t = 10; t < 12; ++t) more_kinds(t % 2 ? dup : world, t);
  for (int t = 13; t < 15; ++t) v_arrays_during_call(t % 2 ? dup : world, t);

  /* Blocking after non-blocking on the same communicator: queued behind, in order. */
  for (int t = 20; t < 23; ++t) {
    xc_request_t req[2];
    fill(&b, t);
    MP_CHECK(xc_iallreduce(b.sum_in, b.sum_out, kSum, XC_INT32, XC_SUM, world, &req[0]));
    MP_CHECK(xc_iallgather(b.gather_in, b.gather_out, kGather, XC_INT32, dup, &req[1]));
    MP_CHECK(xc_allreduce(XC_IN_PLACE, b.max, kMax, XC_FLOAT64, XC_MAX, world));
    MP_CHECK(xc_broadcast(b.bcast, kBcast, XC_FLOAT64, a_size - 1, dup));
    MP_CHECK(xc_allreduce(XC_IN_PLACE, b.small, kSmall, XC_INT32, XC_SUM, world));
    MP_CHECK(xc_barrier(dup));
    MP_CHECK(xc_waitall(2, req, NULL));
    check(&b, t);
  }

  /* A request of a communicator freed while its op was in flight: the free
     waits for the op, the request still reports it. */
  {
    xc_comm_t tmp;
    xc_request_t req;
    xc_status_t st;
    fill(&b, 30);
    MP_CHECK(xc_comm_dup(world, &tmp));
    MP_CHECK(xc_iallreduce(XC_IN_PLACE, b.max, kMax, XC_FLOAT64, XC_MAX, tmp, &req));
    MP_CHECK(xc_comm_free(tmp));
    MP_CHECK(xc_wait(&req, &st));
    check_coll_status(&st);
    for (size_t i = 0; i < kMax; ++i) {
      int32_t want = aval(330, 0, i);
      for (int r = 1; r < a_size; ++r)
        if (aval(330, r, i) > want) want = aval(330, r, i);
      MP_ASSERT(b.max[i] == want, "freed comm: max[%zu] = %g, want %d", i, b.max[i], want);
    }
  }

  /* A split issued behind pending ops: they run first, in order. */
  {
    xc_comm_t half;
    xc_request_t req;
    fill(&b, 40);
    MP_CHECK(xc_iallreduce(b.sum_in, b.sum_out, kSum, XC_INT32, XC_SUM, world, &req));
    MP_CHECK(xc_comm_split(world, a_rank % 2, a_rank, NULL, &half));
    MP_CHECK(xc_wait(&req, NULL));
    for (size_t i = 0; i < kSum; ++i) {
      int32_t want = 0;
      for (int r = 0; r < a_size; ++r) want += aval(40, r, i);
      MP_ASSERT(b.sum_out[i] == want, "split behind: sum[%zu] = %d, want %d", i, b.sum_out[i], want);
    }
    MP_CHECK(xc_comm_free(half));
  }

  /* Abort with ops queued and running (rank 0 alone enters them, so they can
     never finish): every one fails with XC_ERR_ABORTED, and abort returns at once. */
  {
    xc_comm_t tmp;
    MP_CHECK(xc_comm_dup(world, &tmp));
    if (a_rank == 0 && a_size > 1) {
      xc_request_t r[3];
      for (int i = 0; i < 3; ++i) MP_CHECK(xc_ibarrier(tmp, &r[i]));
      MP_CHECK(xc_comm_abort(tmp));
      for (int i = 0; i < 3; ++i) MP_EXPECT_ERR(xc_wait(&r[i], NULL), XC_ERR_ABORTED);
      MP_EXPECT_ERR(xc_ibarrier(tmp, &r[0]), XC_ERR_ABORTED);
    } else {
      MP_CHECK(xc_comm_abort(tmp));
    }
    MP_CHECK(xc_comm_free(tmp));
  }

  MP_CHECK(xc_comm_free(dup));
  MP_CHECK(xc_comm_free(world));
  free(b.sum_in);
  free(b.sum_out);
  free(b.bcast);
  free(b.gather_in);
  free(b.gather_out);
  free(b.max);
  free(b.small);
  if (a_rank == 0) printf("coll_async nonblocking: %d ranks ok\n", a_size);
  return 0;
}
