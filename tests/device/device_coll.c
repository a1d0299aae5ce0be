/* Every collective on device memory, stream-ordered, checked on every rank
   against the reference computed locally from seeded inputs (the collective
   tests' table and references: tests/mp/coll/coll_ops.h, coll_check.h).

     device_coll [--no-big] [--kernels] [--registered] [OP[,OP...]]...      (default: every op)

   --kernels runs the sizes where the intra-node kernels' choices turn
   (run_op_kernels); --registered registers the send-side buffers
   (xc_buffer_register), which the kernels then read in place.

   Per op: every dtype x every reduction that applies (sum, prod, min, max,
   avg; band, bor, bxor on integers) x out of place and in place (where the
   header allows XC_IN_PLACE) x roots 0, the last and the middle rank x
   counts 0, 1 and 1001; a batch of four cases (counts 0 to 65537) started
   with the non-blocking calls and waited for in reverse order; then 4 MiB
   cases (the op's vector, or all n blocks of it, is 4 MiB)
   in two dtypes only (int32 or float32 sum, and bfloat16 avg), so the large
   size is not multiplied by the whole matrix.

   Each case: the op's host buffers are prepared as in the host matrix
   (input filled, outputs poisoned, guard elements past every end), copied
   into device memory (xc_mem_alloc_device, reused between cases at varying
   offsets), the op enqueued with device pointers, completed, copied back and
   checked (outputs, untouched inputs, gaps and guards). Cases alternate
   between the blocking call followed by xc_stream_synchronize on the stream
   bound to the collectives, and the non-blocking twin followed by xc_wait
   alone (the request completes when the op has completed on the device).

   The references assume what the device kernels promise (coll_check.h,
   rank_order): float16/bfloat16 get fractional inputs reduced in float32
   in rank order and rounded once, integer avg gets raw bits (the wrapped
   sum divided, truncating). Every allreduce result is also hashed and the
   hashes allgathered over a host-memory duplicate of the communicator: the
   result must be bit-identical on every rank; so must allreduce of random
   full-mantissa floats (every float dtype and reduction), whose values are
   not checked.

   Every failure names rank, op, dtype, reduction, placement, root and count.
   Exit status: 0 all passed, 1 a failure, 77 skipped (XC_DEVICE=cuda
   without a usable GPU; see dev_mem.h). XC_TEST_SEED replays another seed. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "coll_ops.h"
#include "dev_mem.h"

static const size_t kCounts[] = {0, 1, 1001};
#define BIG_BYTES ((size_t)4 << 20)
/* Where each case's buffers start in the device pools: at the start, at an
   8-byte offset, and past a page. */
static const size_t kOffsets[] = {0, 8, 4096 + 72};

typedef struct {
  xc_comm_t comm;     /* the device ops */
  xc_comm_t check;    /* a duplicate: host-memory comparisons between ranks */
  xc_stream_t stream; /* bound to comm's collectives */
  int rank, nranks;
  uint64_t seed, salt;
  size_t cases, calls;
  void *pool[2]; /* device memory reused by every case: send side, receive side */
  size_t pool_bytes[2];
  int registered;       /* --registered: the send pool is an xc_buffer_register'ed buffer */
  xc_buffer_t pool_reg; /* its registration */
  uint64_t *hashes;
  size_t identity_failures;
} dc_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* At least bytes of device pool i (grown by reallocating). */
static void *pool(dc_t *m, int i, size_t bytes) {
  if (bytes > m->pool_bytes[i]) {
    if (i == 0 && m->pool_reg) MP_CHECK(xc_buffer_deregister(m->pool_reg));
    m->pool_reg = NULL;
    if (m->pool[i]) dev_free(m->comm, m->pool[i]);
    m->pool_bytes[i] = bytes + bytes / 4;
    m->pool[i] = dev_alloc(m->comm, m->pool_bytes[i]);
    if (i == 0 && m->registered) MP_CHECK(xc_buffer_register(m->comm, m->pool[0], m->pool_bytes[0], &m->pool_reg));
  }
  return m->pool[i];
}

/* Every rank hashes bytes of its result; all hashes must agree. */
static void check_identical(dc_t *m, const char *what, const void *buf, size_t bytes) {
  uint64_t mine = ct_hash(buf, bytes);
  int p;
  MP_CHECK(xc_allgather(&mine, m->hashes, 1, XC_UINT64, m->check));
  for (p = 0; p < m->nranks; ++p)
    if (m->hashes[p] != mine && m->identity_failures++ < 8)
      fprintf(stderr,
              "[rank %d] FAIL %s (of %d ranks, seed 0x%llx): result differs from rank %d's (hash 0x%llx vs 0x%llx)\n",
              m->rank, what, m->nranks, (unsigned long long)m->seed, p, (unsigned long long)mine,
              (unsigned long long)m->hashes[p]);
}

/* One case in flight: its host and device buffers. */
typedef struct {
  ct_run r;
  void *hsend, *hrecv, *dsend, *drecv;
  size_t sbytes, rbytes;
  xc_request_t req;
  int nonblocking;
} dc_case;

/* Prepare the host buffers, copy them (guards included) to device memory at
 *offset in the pools (advanced past them), and enqueue the op. */
static void case_start(dc_t *m, dc_case *k, const ct_op *op, const ct_dtype *dt, int redop, int in_place, int root,
                       size_t count, int nonblocking, size_t *offset) {
  xc_result_t rc;
  char call[64];
  size_t es = dt->size;
  memset(k, 0, sizeof *k);
  k->r.comm = m->comm;
  k->r.c.op = op->name;
  k->r.c.dt = dt;
  k->r.c.redop = redop;
  k->r.c.in_place = in_place;
  k->r.c.root = root;
  k->r.c.count = count;
  k->r.c.rank = m->rank;
  k->r.c.nranks = m->nranks;
  k->r.c.seed = m->seed;
  k->r.c.salt = ++m->salt;
  k->r.c.rank_order = 1;
  k->nonblocking = nonblocking;
  op->prepare(&k->r);

  k->hsend = k->r.send;
  k->hrecv = k->r.recv;
  k->sbytes = k->hsend ? (k->r.send_n + CT_GUARD) * es : 0;
  k->rbytes = k->hrecv ? (k->r.recv_n + CT_GUARD) * es : 0;
  if (k->hsend) k->dsend = (char *)m->pool[0] + offset[0];
  if (k->hrecv) k->drecv = (char *)m->pool[1] + offset[1];
  offset[0] += (k->sbytes + 63) / 64 * 64;
  offset[1] += (k->rbytes + 63) / 64 * 64;
  dev_put(k->dsend, k->hsend, k->sbytes);
  dev_put(k->drecv, k->hrecv, k->rbytes);

  k->r.send = k->dsend;
  k->r.recv = k->drecv;
  rc = op->start(&k->r, nonblocking ? &k->req : NULL);
  k->r.send = k->hsend;
  k->r.recv = k->hrecv;
  snprintf(call, sizeof call, "xc_%s%s (enqueue)", nonblocking ? "i" : "", op->name);
  if (rc != XC_SUCCESS) ct_fail_call(&k->r.c, call, rc);
}

/* Complete a non-blocking case with xc_wait (a blocking one was completed by
   the caller's xc_stream_synchronize), copy back, check, free. */
static void case_finish(dc_t *m, dc_case *k, const ct_op *op) {
  if (k->nonblocking) {
    xc_status_t st;
    xc_result_t rc = xc_wait(&k->req, &st);
    if (rc != XC_SUCCESS) ct_fail_call(&k->r.c, "xc_wait", rc);
    if (st.error != 0) ct_fail_call(&k->r.c, "xc_wait (status.error)", (xc_result_t)st.error);
  }
  dev_get(k->hsend, k->dsend, k->sbytes);
  dev_get(k->hrecv, k->drecv, k->rbytes);
  op->check(&k->r);
  if (strcmp(op->name, "allreduce") == 0) {
    char desc[160];
    ct_describe(&k->r.c, desc, sizeof desc);
    check_identical(m, desc, k->hrecv, k->r.c.count * k->r.c.dt->size);
  }
  ct_free_run(&k->r);
  ++m->cases;
}

/* The bytes a case needs in each pool (without running it). */
static void case_bytes(dc_t *m, const ct_op *op, const ct_dtype *dt, int redop, int in_place, int root, size_t count,
                       size_t *need) {
  ct_run r;
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
  r.c.rank_order = 1;
  op->prepare(&r);
  need[0] += r.send ? ((r.send_n + CT_GUARD) * dt->size + 63) / 64 * 64 : 0;
  need[1] += r.recv ? ((r.recv_n + CT_GUARD) * dt->size + 63) / 64 * 64 : 0;
  ct_free_run(&r);
}

static void run_case(dc_t *m, const ct_op *op, const ct_dtype *dt, int redop, int in_place, int root, size_t count) {
  dc_case k;
  size_t need[2] = {0, 0}, off = kOffsets[m->cases % 3], offset[2];
  int nonblocking = (int)(m->calls++ % 2);
  xc_result_t rc;
  case_bytes(m, op, dt, redop, in_place, root, count, need);
  pool(m, 0, need[0] + off);
  pool(m, 1, need[1] + off);
  offset[0] = offset[1] = off;
  case_start(m, &k, op, dt, redop, in_place, root, count, nonblocking, offset);
  if (!nonblocking) {
    rc = xc_stream_synchronize(m->stream);
    if (rc != XC_SUCCESS) ct_fail_call(&k.r.c, "xc_stream_synchronize", rc);
  }
  case_finish(m, &k, op);
}

/* Several cases of one op in flight on the stream at once, started with the
   non-blocking calls and waited for in reverse order. */
static void run_batch(dc_t *m, const ct_op *op) {
  enum { B = 4 };
  static const size_t kBatchCounts[B] = {1001, 0, 7, 65537};
  dc_case k[B];
  size_t need[2] = {0, 0}, offset[2] = {0, 0};
  int i, reduces = (op->flags & CT_REDUCES) != 0, root = (op->flags & CT_ROOTED) ? m->nranks - 1 : -1;
  const ct_dtype *dt = &ct_dtypes[reduces ? 6 : 3]; /* float16 (fractional, rank order) and uint32 */
  for (i = 0; i < B; ++i)
    case_bytes(m, op, dt, reduces ? XC_SUM : CT_COPY, (op->flags & CT_ONE_BUFFER) ? 1 : i % 2, root, kBatchCounts[i],
               need);
  pool(m, 0, need[0]);
  pool(m, 1, need[1]);
  for (i = 0; i < B; ++i)
    case_start(m, &k[i], op, dt, reduces ? XC_SUM : CT_COPY, (op->flags & CT_ONE_BUFFER) ? 1 : i % 2, root,
               kBatchCounts[i], 1, offset);
  for (i = B - 1; i >= 0; --i) case_finish(m, &k[i], op);
}

/* Allreduce of random full-mantissa floats: the same bits on every rank. */
static void run_identity(dc_t *m) {
  static const xc_dtype_t kTypes[] = {XC_FLOAT16, XC_BFLOAT16, XC_FLOAT32, XC_FLOAT64};
  static const char *const kNames[] = {"float16", "bfloat16", "float32", "float64"};
  static const xc_op_t kOps[] = {XC_SUM, XC_PROD, XC_MIN, XC_MAX, XC_AVG};
  static const size_t kIdCounts[] = {1001, 70001};
  size_t ti, oi, ci;
  int place;
  for (ti = 0; ti < 4; ++ti)
    for (oi = 0; oi < 5; ++oi)
      for (ci = 0; ci < 2; ++ci)
        for (place = 0; place < 2; ++place) {
          size_t count = kIdCounts[ci], bytes = count * xc_dtype_size(kTypes[ti]);
          void *host = malloc(bytes), *din = pool(m, 0, bytes), *dout = pool(m, 1, bytes);
          char what[160];
          xc_result_t rc;
          MP_ASSERT(host != NULL, "out of memory");
          snprintf(what, sizeof what, "allreduce %s %s (random floats) %s count %zu", kNames[ti],
                   ct_redop_name((int)kOps[oi]), place ? "in-place" : "out-of-place", count);
          ct_fill_random_floats(host, count, kTypes[ti], m->seed + ++m->salt, m->rank);
          dev_put(place ? dout : din, host, bytes);
          rc = xc_allreduce(place ? XC_IN_PLACE : din, dout, count, kTypes[ti], kOps[oi], m->comm);
          if (rc == XC_SUCCESS) rc = xc_stream_synchronize(m->stream);
          if (rc != XC_SUCCESS) {
            fprintf(stderr, "[rank %d] FAIL %s (of %d ranks): %s (%s)\n", m->rank, what, m->nranks, xc_strerror(rc),
                    xc_last_error());
            exit(1);
          }
          dev_get(host, dout, bytes);
          check_identical(m, what, host, bytes);
          free(host);
          ++m->cases;
        }
}

static int block_op(const ct_op *op) {
  static const char *const names[] = {"allgather", "allgatherv",     "gather",          "gatherv",  "scatter",
                                      "scatterv",  "reduce_scatter", "reduce_scatterv", "alltoall", "alltoallv"};
  size_t i;
  for (i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (strcmp(op->name, names[i]) == 0) return 1;
  return 0;
}

static const ct_dtype *find_dtype(xc_dtype_t t) {
  size_t i;
  for (i = 0; i < ct_num_dtypes; ++i)
    if (ct_dtypes[i].dtype == t) return &ct_dtypes[i];
  return NULL;
}

static void run_op(dc_t *m, const ct_op *op, int big) {
  int roots[3], nroots = 0, place, ri, i;
  size_t di, oi, ci;
  if (op->flags & CT_NO_DATA) {
    /* The barrier takes no memory: it is a host op, blocking and not. */
    for (i = 0; i < 4; ++i) {
      xc_request_t req = NULL;
      if (i % 2) {
        MP_CHECK(xc_ibarrier(m->comm, &req));
        MP_CHECK(xc_wait(&req, NULL));
      } else {
        MP_CHECK(xc_barrier(m->comm));
      }
      ++m->cases;
    }
    return;
  }
  roots[nroots++] = (op->flags & CT_ROOTED) ? 0 : -1;
  if ((op->flags & CT_ROOTED) && m->nranks > 1) roots[nroots++] = m->nranks - 1;
  if ((op->flags & CT_ROOTED) && m->nranks > 2) roots[nroots++] = m->nranks / 2;

  for (di = 0; di < ct_num_dtypes; ++di) {
    const ct_dtype *dt = &ct_dtypes[di];
    size_t nredops = (op->flags & CT_REDUCES) ? ct_num_redops : 1;
    for (oi = 0; oi < nredops; ++oi) {
      int redop = (op->flags & CT_REDUCES) ? ct_redops[oi] : CT_COPY;
      if (redop != CT_COPY && !ct_redop_valid(redop, dt)) continue;
      for (place = 0; place < ((op->flags & CT_ONE_BUFFER) ? 1 : 2); ++place)
        for (ri = 0; ri < nroots; ++ri)
          for (ci = 0; ci < sizeof kCounts / sizeof kCounts[0]; ++ci)
            run_case(m, op, dt, redop, (op->flags & CT_ONE_BUFFER) ? 1 : place, roots[ri], kCounts[ci]);
    }
  }
  if (strcmp(op->name, "allreduce") == 0) run_identity(m);
  run_batch(m, op);
  if (!big) return;

  /* 4 MiB in two dtypes: int32 (float32 for reductions) and bfloat16 (avg). */
  for (i = 0; i < 2; ++i) {
    int reduces = (op->flags & CT_REDUCES) != 0;
    const ct_dtype *dt = find_dtype(i == 1 ? XC_BFLOAT16 : reduces ? XC_FLOAT32 : XC_INT32);
    int redop = !reduces ? CT_COPY : i == 1 ? XC_AVG : XC_SUM;
    size_t count = BIG_BYTES / dt->size / (block_op(op) ? (size_t)m->nranks : 1);
    for (place = 0; place < ((op->flags & CT_ONE_BUFFER) ? 1 : 2); ++place)
      run_case(m, op, dt, redop, (op->flags & CT_ONE_BUFFER) ? 1 : place, (op->flags & CT_ROOTED) ? m->nranks - 1 : -1,
               count);
  }
}

/* --kernels: where the intra-node kernels' choices turn (one-shot up to
   256 KiB, two-shot up to 10 MiB: docs/device-kernels.md), in the dtypes
   and reductions they have: 1 element, 255 bytes' worth, one 16-byte
   vector, the one-shot threshold -1, exact, +1 element; with big, the
   two-shot threshold likewise and 16 MiB in float32 sum (copies: float32)
   and bfloat16 avg. Sizes count the op's vector, or all n blocks. */
#define KERNEL_ONESHOT_MAX ((size_t)256 << 10)
#define KERNEL_TWOSHOT_MAX ((size_t)10 << 20)
static void run_op_kernels(dc_t *m, const ct_op *op, int big) {
  static const xc_dtype_t kReduceTypes[] = {XC_FLOAT32, XC_FLOAT16, XC_BFLOAT16};
  static const xc_dtype_t kCopyTypes[] = {XC_INT8, XC_FLOAT16, XC_FLOAT32};
  static const int kRedops[] = {XC_SUM, XC_MIN, XC_MAX, XC_AVG};
  int reduces = (op->flags & CT_REDUCES) != 0, place, i;
  size_t blocks = block_op(op) ? (size_t)m->nranks : 1, ti, oi, ci;
  for (ti = 0; ti < 3; ++ti) {
    const ct_dtype *dt = find_dtype(reduces ? kReduceTypes[ti] : kCopyTypes[ti]);
    size_t es = dt->size, one = KERNEL_ONESHOT_MAX / blocks / es;
    size_t counts[] = {1, 255 / es, 16 / es, one - 1, one, one + 1};
    for (oi = 0; oi < (reduces ? 4u : 1u); ++oi)
      for (place = 0; place < 2; ++place)
        for (ci = 0; ci < sizeof counts / sizeof counts[0]; ++ci)
          run_case(m, op, dt, reduces ? kRedops[oi] : CT_COPY, place, -1, counts[ci]);
  }
  if (strcmp(op->name, "allreduce") == 0) run_identity(m);
  if (!big) return;
  for (i = 0; i < 2; ++i) {
    const ct_dtype *dt = find_dtype(i == 1 ? XC_BFLOAT16 : XC_FLOAT32);
    int redop = !reduces ? CT_COPY : i == 1 ? XC_AVG : XC_SUM;
    size_t two = KERNEL_TWOSHOT_MAX / blocks / dt->size;
    size_t counts[] = {two - 1, two, two + 1, ((size_t)16 << 20) / blocks / dt->size};
    for (ci = 0; ci < sizeof counts / sizeof counts[0]; ++ci)
      for (place = 0; place < 2; ++place) run_case(m, op, dt, redop, place, -1, counts[ci]);
  }
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
  dc_t m;
  int selected[32] = {0}, any = 0, big = 1, kernels = 0, i;
  size_t k;
  double failures, t0 = now_s();
  memset(&m, 0, sizeof m);
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--no-big") == 0)
      big = 0;
    else if (strcmp(argv[i], "--kernels") == 0)
      kernels = 1;
    else if (strcmp(argv[i], "--registered") == 0)
      m.registered = 1;
    else
      select_ops(argv[i], selected), any = 1;
  }
  if (!any)
    for (k = 0; k < ct_num_ops; ++k) selected[k] = 1;

  MP_CHECK(xc_init(NULL, &m.comm));
  MP_CHECK(xc_comm_rank(m.comm, &m.rank));
  MP_CHECK(xc_comm_size(m.comm, &m.nranks));
  mp_rank = m.rank;
  dev_setup(m.comm);
  MP_CHECK(xc_comm_dup(m.comm, &m.check));
  m.seed = mp_seed();
  m.hashes = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)m.nranks);
  MP_ASSERT(m.hashes != NULL, "out of memory");
  m.stream = dev_stream(m.comm);
  MP_CHECK(xc_stream_bind(m.comm, m.stream, XC_BIND_COLLECTIVES));
  if (m.rank == 0)
    printf("device_coll: %d ranks on the %s device, seed 0x%llx\n", m.nranks, dev_kind(), (unsigned long long)m.seed);

  for (k = 0; k < ct_num_ops; ++k) {
    size_t before = m.cases;
    double t = now_s();
    if (!selected[k]) continue;
    if (kernels)
      run_op_kernels(&m, &ct_ops[k], big);
    else
      run_op(&m, &ct_ops[k], big);
    if (m.rank == 0) printf("device_coll: %s: %zu cases, %.1f s\n", ct_ops[k].name, m.cases - before, now_s() - t);
    fflush(stdout);
  }

  MP_CHECK(xc_stream_synchronize(m.stream));
  MP_CHECK(xc_stream_destroy(m.stream));
  if (m.pool_reg) MP_CHECK(xc_buffer_deregister(m.pool_reg));
  if (m.pool[0]) dev_free(m.comm, m.pool[0]);
  if (m.pool[1]) dev_free(m.comm, m.pool[1]);
  /* The verdict is collective, so every rank exits alike. */
  failures = (double)(ct_failures + m.identity_failures);
  MP_CHECK(xc_allreduce(XC_IN_PLACE, &failures, 1, XC_FLOAT64, XC_SUM, m.check));
  free(m.hashes);
  MP_CHECK(xc_comm_free(m.check));
  MP_CHECK(xc_comm_free(m.comm));
  if (failures > 0) {
    if (m.rank == 0) printf("device_coll: FAILED: %.0f wrong results over all ranks\n", failures);
    return 1;
  }
  if (m.rank == 0) printf("device_coll: %zu cases passed in %.1f s\n", m.cases, now_s() - t0);
  return 0;
}
