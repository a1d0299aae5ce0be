/* Bad input on every entry point of xcomm.h: NULL handles, NULL outputs,
   freed communicators and requests, ranks and roots out of range, negative
   tags, unknown dtypes and ops, bitwise ops on floats, counts that overflow,
   NULL buffers, bad configs, bad colors and group lists passed by one rank or
   all. Each must return the documented status with a non-empty
   xc_last_error(), leave its outputs untouched, and neither crash nor hang
   (a rank's bad split argument fails every rank). Also the pure functions
   (versions, strerror, dtype sizes, config defaults), the empty last error
   after a success, and a working world at the end. */
#include <limits.h>

#include "comm_util.h"

#define E_ARG(call) MP_EXPECT_ERR(call, XC_ERR_INVALID_ARGUMENT)
#define E_USE(call) MP_EXPECT_ERR(call, XC_ERR_INVALID_USAGE)

/* The call succeeds and clears a last error set just before it. */
#define OK_CLEARS(call)                                                                     \
  do {                                                                                      \
    int mp_junk_ = 0;                                                                       \
    E_ARG(xc_comm_rank(NULL, &mp_junk_));                                                   \
    MP_CHECK(call);                                                                         \
    MP_ASSERT(xc_last_error()[0] == '\0', "%s left last error '%s'", #call, xc_last_error()); \
  } while (0)

#define SENTINEL_COMM ((xc_comm_t)(uintptr_t)0x5a5a)
#define SENTINEL_REQ ((xc_request_t)(uintptr_t)0xa5a5)

static int n, me;
static int verbose_rank0(void) { return mp_rank == 0; }

/* Print the message of the last error on rank 0, for the report. */
static void show(const char *what) {
  if (verbose_rank0()) printf("  %-58s -> \"%s\"\n", what, xc_last_error());
}

static void pure_functions(void) {
  int ma = -1, mi = -1, pa = -1;
  MP_CHECK(xc_get_version(&ma, &mi, &pa));
  MP_ASSERT(ma == XC_VERSION_MAJOR && mi == XC_VERSION_MINOR && pa == XC_VERSION_PATCH,
            "xc_get_version says %d.%d.%d, header %d.%d.%d", ma, mi, pa, XC_VERSION_MAJOR, XC_VERSION_MINOR,
            XC_VERSION_PATCH);
  MP_CHECK(xc_get_version(NULL, NULL, NULL));
  mi = -1;
  MP_CHECK(xc_get_version(NULL, &mi, NULL));
  MP_ASSERT(mi == XC_VERSION_MINOR, "minor %d", mi);

  static const xc_result_t known[] = {XC_SUCCESS,          XC_IN_PROGRESS,     XC_ERR_INVALID_ARGUMENT,
                                      XC_ERR_INVALID_USAGE, XC_ERR_NO_MEMORY,   XC_ERR_SYSTEM,
                                      XC_ERR_TIMEOUT,       XC_ERR_PEER_FAILED, XC_ERR_ABORTED,
                                      XC_ERR_UNSUPPORTED,   XC_ERR_TRUNCATED,   XC_ERR_CUDA,
                                      XC_ERR_NCCL,          XC_ERR_INTERNAL,    XC_ERR_REVOKED};
  const int nknown = (int)(sizeof known / sizeof known[0]);
  for (int i = 0; i < nknown; ++i) {
    const char *s = xc_strerror(known[i]);
    MP_ASSERT(s != NULL && s[0] != '\0', "xc_strerror(%d) is empty", (int)known[i]);
    for (int j = 0; j < i; ++j)
      MP_ASSERT(strcmp(s, xc_strerror(known[j])) != 0, "xc_strerror(%d) == xc_strerror(%d) = '%s'", (int)known[i],
                (int)known[j], s);
  }
  static const int unknown[] = {2, -14, -100, 12345, INT_MIN, INT_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    const char *s = xc_strerror((xc_result_t)unknown[i]);
    MP_ASSERT(s != NULL && s[0] != '\0', "xc_strerror(%d) is empty", unknown[i]);
  }

  static const struct { xc_dtype_t t; size_t size; } sizes[] = {
      {XC_INT8, 1},     {XC_UINT8, 1},     {XC_INT32, 4},   {XC_UINT32, 4},  {XC_INT64, 8},
      {XC_UINT64, 8},   {XC_FLOAT16, 2},   {XC_BFLOAT16, 2}, {XC_FLOAT32, 4}, {XC_FLOAT64, 8}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
    MP_ASSERT(xc_dtype_size(sizes[i].t) == sizes[i].size, "xc_dtype_size(%d) = %zu, expected %zu", (int)sizes[i].t,
              xc_dtype_size(sizes[i].t), sizes[i].size);
  MP_ASSERT(xc_dtype_size((xc_dtype_t)10) == 0, "xc_dtype_size(10) = %zu", xc_dtype_size((xc_dtype_t)10));
  MP_ASSERT(xc_dtype_size((xc_dtype_t)99) == 0, "xc_dtype_size(99) = %zu", xc_dtype_size((xc_dtype_t)99));
  MP_ASSERT(xc_dtype_size((xc_dtype_t)-1) == 0, "xc_dtype_size(-1) = %zu", xc_dtype_size((xc_dtype_t)-1));
  MP_ASSERT(xc_dtype_size(XC_DTYPE_FORCE_32BIT) == 0, "xc_dtype_size(FORCE_32BIT) = %zu",
            xc_dtype_size(XC_DTYPE_FORCE_32BIT));

  /* xc_config_init: errors, then the defaults of XC_CONFIG_INIT */
  E_ARG(xc_config_init(NULL, sizeof(xc_config_t)));
  show("xc_config_init(NULL, sizeof)");
  xc_config_t cfg;
  memset(&cfg, 0x77, sizeof cfg);
  E_ARG(xc_config_init(&cfg, 1));
  show("xc_config_init(&cfg, 1)");
  const xc_config_t def = XC_CONFIG_INIT;
  OK_CLEARS(xc_config_init(&cfg, sizeof cfg));
  MP_ASSERT(cfg.size == sizeof cfg && cfg.version == XC_CONFIG_VERSION && cfg.device == XC_DEVICE_AUTO &&
                cfg.timeout_ms == 0 && cfg.thread_mode == XC_THREAD_DEFAULT &&
                cfg.debug_level == XC_DEBUG_DEFAULT && cfg.name == NULL,
            "xc_config_init gave size %zu version %u device %d timeout %llu thread %d debug %d name %p", cfg.size,
            cfg.version, cfg.device, (unsigned long long)cfg.timeout_ms, cfg.thread_mode, cfg.debug_level,
            (const void *)cfg.name);
  MP_ASSERT(def.size == cfg.size && def.version == cfg.version && def.device == cfg.device,
            "XC_CONFIG_INIT and xc_config_init disagree");
  /* a newer caller's bigger struct: known fields defaulted, the tail zeroed */
  struct {
    xc_config_t c;
    uint64_t tail[4];
  } big;
  memset(&big, 0xab, sizeof big);
  OK_CLEARS(xc_config_init(&big.c, sizeof big));
  MP_ASSERT(big.c.size == sizeof big && big.c.version == XC_CONFIG_VERSION && big.c.device == XC_DEVICE_AUTO &&
                big.c.timeout_ms == 0 && big.c.name == NULL,
            "xc_config_init(big) gave size %zu version %u device %d", big.c.size, big.c.version, big.c.device);
  for (int i = 0; i < 4; ++i) MP_ASSERT(big.tail[i] == 0, "xc_config_init left tail[%d] = %llx", i,
                                        (unsigned long long)big.tail[i]);
}

/* Every entry point taking a communicator, with NULL. */
static void null_comm(void) {
  int x = 4242;
  xc_result_t err = (xc_result_t)4242;
  xc_comm_t out = SENTINEL_COMM;
  xc_request_t req = SENTINEL_REQ;
  int32_t buf[4] = {0}, rbuf[16] = {0};
  int sizes[1] = {1}, ranks[1] = {0};
  E_ARG(xc_comm_rank(NULL, &x));
  show("xc_comm_rank(NULL, &x)");
  E_ARG(xc_comm_size(NULL, &x));
  E_ARG(xc_comm_local_rank(NULL, &x));
  E_ARG(xc_comm_local_size(NULL, &x));
  MP_ASSERT(x == 4242, "output written on failure: %d", x);
  E_ARG(xc_comm_get_async_error(NULL, &err));
  MP_ASSERT(err == (xc_result_t)4242, "output written on failure: %d", (int)err);
  E_ARG(xc_comm_split(NULL, 0, 0, NULL, &out));
  E_ARG(xc_comm_split_groups(NULL, 1, sizes, ranks, NULL, &out));
  E_ARG(xc_comm_dup(NULL, &out));
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  E_ARG(xc_comm_abort(NULL));
  E_ARG(xc_comm_revoke(NULL));
  show("xc_comm_revoke(NULL)");
  E_ARG(xc_comm_agree(NULL, &x));
  E_ARG(xc_comm_get_failed(NULL, &x, NULL));
  MP_ASSERT(x == 4242, "output written on failure: %d", x);
  E_ARG(xc_comm_shrink(NULL, NULL, &out));
  E_ARG(xc_comm_grow(NULL, 1, NULL, NULL, &out));
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  E_ARG(xc_send(buf, 1, XC_INT32, 0, 0, NULL));
  show("xc_send(..., NULL comm)");
  E_ARG(xc_recv(rbuf, 1, XC_INT32, 0, 0, NULL, NULL));
  E_ARG(xc_isend(buf, 1, XC_INT32, 0, 0, NULL, &req));
  E_ARG(xc_irecv(rbuf, 1, XC_INT32, 0, 0, NULL, &req));
  MP_ASSERT(req == SENTINEL_REQ, "req written on failure");
  E_ARG(xc_sendrecv(buf, 1, 0, 0, rbuf, 1, 0, 0, XC_INT32, NULL, NULL));
  E_ARG(xc_barrier(NULL));
  E_ARG(xc_broadcast(buf, 1, XC_INT32, 0, NULL));
  E_ARG(xc_allreduce(buf, rbuf, 1, XC_INT32, XC_SUM, NULL));
  E_ARG(xc_allreduce(XC_IN_PLACE, rbuf, 1, XC_INT32, XC_SUM, NULL));
  E_ARG(xc_allgather(buf, rbuf, 1, XC_INT32, NULL));
  /* and the entry points that make communicators */
  E_ARG(xc_init(NULL, NULL));
  E_ARG(xc_get_unique_id(NULL));
  xc_unique_id_t uid;
  memset(&uid, 0, sizeof uid);
  E_ARG(xc_comm_init_rank(1, &uid, 0, NULL, NULL));
  E_ARG(xc_comm_init_rank(0, &uid, 0, NULL, &out));
  E_ARG(xc_comm_init_rank(-1, &uid, 0, NULL, &out));
  E_ARG(xc_comm_init_rank(2, &uid, 2, NULL, &out));
  E_ARG(xc_comm_init_rank(2, &uid, -1, NULL, &out));
  E_ARG(xc_comm_init_rank(1, NULL, 0, NULL, &out));
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  /* a bad config to xc_init fails before any rendezvous */
  xc_config_t bad = XC_CONFIG_INIT;
  bad.version = 99;
  E_ARG(xc_init(&bad, &out));
  show("xc_init(version 99 config)");
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  /* the world exists already: a second xc_init is refused at once on every rank */
  MP_EXPECT_ERR(xc_init(NULL, &out), XC_ERR_INVALID_USAGE);
  show("xc_init (second call)");
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  /* NULL is a no-op success for free only */
  OK_CLEARS(xc_comm_free(NULL));
}

/* NULL outputs, with a valid communicator (every rank makes the same calls). */
static void null_outputs(xc_comm_t w) {
  int32_t buf[4] = {0};
  int sizes[1] = {n}, ranks[CU_MAXR];
  for (int r = 0; r < n; ++r) ranks[r] = r;
  E_ARG(xc_comm_rank(w, NULL));
  show("xc_comm_rank(world, NULL)");
  E_ARG(xc_comm_size(w, NULL));
  E_ARG(xc_comm_local_rank(w, NULL));
  E_ARG(xc_comm_local_size(w, NULL));
  E_ARG(xc_comm_get_async_error(w, NULL));
  E_ARG(xc_comm_split(w, 0, me, NULL, NULL));
  show("xc_comm_split(world, ..., NULL)");
  E_ARG(xc_comm_split_groups(w, 1, sizes, ranks, NULL, NULL));
  E_ARG(xc_comm_dup(w, NULL));
  E_ARG(xc_comm_agree(w, NULL));
  show("xc_comm_agree(world, NULL)");
  E_ARG(xc_comm_get_failed(w, NULL, NULL));
  show("xc_comm_get_failed(world, NULL, NULL)");
  E_ARG(xc_comm_shrink(w, NULL, NULL));  /* collective: every rank passes NULL */
  show("xc_comm_shrink(world, NULL, NULL)");
  E_ARG(xc_comm_grow(w, 0, NULL, NULL, NULL));
  show("xc_comm_grow(world, 0, NULL, NULL, NULL)");
  E_ARG(xc_isend(buf, 1, XC_INT32, me, 0, w, NULL));
  E_ARG(xc_irecv(buf, 1, XC_INT32, me, 0, w, NULL));
  show("xc_irecv(..., NULL req)");
}

/* Every entry point with a communicator that was freed. */
static void freed_comm(xc_comm_t w) {
  xc_comm_t stale = NULL;
  MP_CHECK(xc_comm_dup(w, &stale));
  MP_CHECK(xc_comm_free(stale));
  int x = 4242;
  xc_result_t err = (xc_result_t)4242;
  xc_comm_t out = SENTINEL_COMM;
  xc_request_t req = SENTINEL_REQ;
  int32_t buf[4] = {1, 2, 3, 4}, rbuf[16] = {0};
  int sizes[1] = {n}, ranks[CU_MAXR];
  for (int r = 0; r < n; ++r) ranks[r] = r;
  E_USE(xc_comm_rank(stale, &x));
  show("xc_comm_rank(freed comm)");
  E_USE(xc_comm_size(stale, &x));
  E_USE(xc_comm_local_rank(stale, &x));
  E_USE(xc_comm_local_size(stale, &x));
  MP_ASSERT(x == 4242, "output written on failure: %d", x);
  E_USE(xc_comm_get_async_error(stale, &err));
  MP_ASSERT(err == (xc_result_t)4242, "output written on failure");
  E_USE(xc_comm_split(stale, 0, me, NULL, &out));
  show("xc_comm_split(freed comm)");
  E_USE(xc_comm_split_groups(stale, 1, sizes, ranks, NULL, &out));
  E_USE(xc_comm_dup(stale, &out));
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  E_USE(xc_send(buf, 1, XC_INT32, me, 0, stale));
  show("xc_send(freed comm)");
  E_USE(xc_recv(rbuf, 1, XC_INT32, me, 0, stale, NULL));
  E_USE(xc_isend(buf, 1, XC_INT32, me, 0, stale, &req));
  E_USE(xc_irecv(rbuf, 1, XC_INT32, me, 0, stale, &req));
  MP_ASSERT(req == SENTINEL_REQ, "req written on failure");
  E_USE(xc_sendrecv(buf, 1, me, 0, rbuf, 1, me, 0, XC_INT32, stale, NULL));
  E_USE(xc_barrier(stale));
  show("xc_barrier(freed comm)");
  E_USE(xc_broadcast(buf, 1, XC_INT32, 0, stale));
  E_USE(xc_allreduce(buf, rbuf, 1, XC_INT32, XC_SUM, stale));
  E_USE(xc_allgather(buf, rbuf, 1, XC_INT32, stale));
  E_USE(xc_comm_abort(stale));
  E_USE(xc_comm_revoke(stale));
  show("xc_comm_revoke(freed comm)");
  E_USE(xc_comm_agree(stale, &x));
  E_USE(xc_comm_get_failed(stale, &x, NULL));
  MP_ASSERT(x == 4242, "output written on failure: %d", x);
  E_USE(xc_comm_shrink(stale, NULL, &out));
  E_USE(xc_comm_grow(stale, 0, NULL, NULL, &out));
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  E_USE(xc_comm_free(stale));
  show("xc_comm_free(freed comm)");
}

/* Ranks, roots and tags out of range; unknown dtypes and ops; overflowing
   counts; NULL buffers. All local: no rank reaches a peer. */
static void bad_arguments(xc_comm_t w) {
  int32_t buf[16] = {0}, rbuf[16 * CU_MAXR] = {0};
  xc_request_t req = SENTINEL_REQ;
  const int bad_peers[] = {-2, n, n + 100, INT_MAX, INT_MIN};
  for (size_t i = 0; i < sizeof bad_peers / sizeof bad_peers[0]; ++i) {
    int p = bad_peers[i];
    E_ARG(xc_send(buf, 1, XC_INT32, p, 0, w));
    if (i == 1) show("xc_send(peer = size)");
    E_ARG(xc_recv(rbuf, 1, XC_INT32, p, 0, w, NULL));
    E_ARG(xc_isend(buf, 1, XC_INT32, p, 0, w, &req));
    E_ARG(xc_irecv(rbuf, 1, XC_INT32, p, 0, w, &req));
    E_ARG(xc_sendrecv(buf, 1, p, 0, rbuf, 1, me, 0, XC_INT32, w, NULL));
    E_ARG(xc_sendrecv(buf, 1, me, 0, rbuf, 1, p, 0, XC_INT32, w, NULL));
    E_ARG(xc_broadcast(buf, 1, XC_INT32, p, w));
    if (i == 1) show("xc_broadcast(root = size)");
  }
  /* XC_ANY_SOURCE is for receives only */
  E_ARG(xc_send(buf, 1, XC_INT32, XC_ANY_SOURCE, 0, w));
  E_ARG(xc_isend(buf, 1, XC_INT32, XC_ANY_SOURCE, 0, w, &req));
  E_ARG(xc_sendrecv(buf, 1, XC_ANY_SOURCE, 0, rbuf, 1, me, 0, XC_INT32, w, NULL));
  E_ARG(xc_broadcast(buf, 1, XC_INT32, -1, w));
  /* negative tags (XC_ANY_TAG only for receives) */
  const int bad_tags[] = {-2, -5, INT_MIN};
  for (size_t i = 0; i < sizeof bad_tags / sizeof bad_tags[0]; ++i) {
    int t = bad_tags[i];
    E_ARG(xc_send(buf, 1, XC_INT32, me, t, w));
    if (i == 0) show("xc_send(tag -2)");
    E_ARG(xc_recv(rbuf, 1, XC_INT32, me, t, w, NULL));
    E_ARG(xc_isend(buf, 1, XC_INT32, me, t, w, &req));
    E_ARG(xc_irecv(rbuf, 1, XC_INT32, me, t, w, &req));
    E_ARG(xc_sendrecv(buf, 1, me, t, rbuf, 1, me, 0, XC_INT32, w, NULL));
    E_ARG(xc_sendrecv(buf, 1, me, 0, rbuf, 1, me, t, XC_INT32, w, NULL));
  }
  E_ARG(xc_send(buf, 1, XC_INT32, me, XC_ANY_TAG, w));
  E_ARG(xc_isend(buf, 1, XC_INT32, me, XC_ANY_TAG, w, &req));
  E_ARG(xc_sendrecv(buf, 1, me, XC_ANY_TAG, rbuf, 1, me, 0, XC_INT32, w, NULL));
  /* unknown dtypes */
  const int bad_dtypes[] = {10, 99, -1, XC_DTYPE_FORCE_32BIT};
  for (size_t i = 0; i < sizeof bad_dtypes / sizeof bad_dtypes[0]; ++i) {
    xc_dtype_t t = (xc_dtype_t)bad_dtypes[i];
    E_ARG(xc_send(buf, 1, t, me, 0, w));
    if (i == 1) show("xc_send(dtype 99)");
    E_ARG(xc_recv(rbuf, 1, t, me, 0, w, NULL));
    E_ARG(xc_isend(buf, 1, t, me, 0, w, &req));
    E_ARG(xc_irecv(rbuf, 1, t, me, 0, w, &req));
    E_ARG(xc_sendrecv(buf, 1, me, 0, rbuf, 1, me, 0, t, w, NULL));
    E_ARG(xc_broadcast(buf, 1, t, 0, w));
    E_ARG(xc_allreduce(buf, rbuf, 1, t, XC_SUM, w));
    E_ARG(xc_allreduce(XC_IN_PLACE, rbuf, 1, t, XC_MAX, w));
    E_ARG(xc_allgather(buf, rbuf, 1, t, w));
    /* count 0 does not make an unknown dtype valid */
    E_ARG(xc_send(buf, 0, t, me, 0, w));
    E_ARG(xc_allreduce(buf, rbuf, 0, t, XC_SUM, w));
  }
  /* unknown ops */
  const int bad_ops[] = {8, 99, -1, XC_OP_FORCE_32BIT};
  for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; ++i) {
    E_ARG(xc_allreduce(buf, rbuf, 1, XC_INT32, (xc_op_t)bad_ops[i], w));
    if (i == 1) show("xc_allreduce(op 99)");
    E_ARG(xc_allreduce(XC_IN_PLACE, rbuf, 1, XC_FLOAT32, (xc_op_t)bad_ops[i], w));
  }
  /* bitwise ops on floating types */
  const xc_dtype_t floats[] = {XC_FLOAT16, XC_BFLOAT16, XC_FLOAT32, XC_FLOAT64};
  const xc_op_t bitwise[] = {XC_BAND, XC_BOR, XC_BXOR};
  for (int f = 0; f < 4; ++f)
    for (int o = 0; o < 3; ++o) {
      E_ARG(xc_allreduce(buf, rbuf, 1, floats[f], bitwise[o], w));
      if (f == 3 && o == 0) show("xc_allreduce(BAND on float64)");
      E_ARG(xc_allreduce(XC_IN_PLACE, rbuf, 1, floats[f], bitwise[o], w));
    }
  /* counts whose byte size overflows */
  const size_t huge64 = SIZE_MAX, huge32 = SIZE_MAX / 2;
  E_ARG(xc_send(buf, huge64, XC_FLOAT64, me, 0, w));
  show("xc_send(SIZE_MAX float64)");
  E_ARG(xc_send(buf, huge32, XC_INT32, me, 0, w));
  E_ARG(xc_recv(rbuf, huge64, XC_FLOAT64, me, 0, w, NULL));
  E_ARG(xc_isend(buf, huge64, XC_FLOAT64, me, 0, w, &req));
  E_ARG(xc_irecv(rbuf, huge64, XC_FLOAT64, me, 0, w, &req));
  E_ARG(xc_sendrecv(buf, huge64, me, 0, rbuf, 1, me, 0, XC_FLOAT64, w, NULL));
  E_ARG(xc_sendrecv(buf, 1, me, 0, rbuf, huge64, me, 0, XC_FLOAT64, w, NULL));
  E_ARG(xc_broadcast(buf, huge64, XC_FLOAT64, 0, w));
  E_ARG(xc_allreduce(buf, rbuf, huge64, XC_FLOAT64, XC_SUM, w));
  E_ARG(xc_allreduce(XC_IN_PLACE, rbuf, huge32, XC_INT32, XC_SUM, w));
  E_ARG(xc_allgather(buf, rbuf, huge64, XC_FLOAT64, w));
  E_ARG(xc_allgather(XC_IN_PLACE, rbuf, huge64, XC_FLOAT64, w));
  if (n >= 2) {
    /* the block fits, size blocks do not */
    size_t c = SIZE_MAX / 8 / (size_t)n + 1;
    E_ARG(xc_allgather(buf, rbuf, c, XC_FLOAT64, w));
    show("xc_allgather(count * size overflows)");
    E_ARG(xc_allgather(XC_IN_PLACE, rbuf, c, XC_FLOAT64, w));
  }
  /* NULL buffers with nonzero counts */
  E_ARG(xc_send(NULL, 1, XC_INT32, me, 0, w));
  show("xc_send(NULL buffer, count 1)");
  E_ARG(xc_recv(NULL, 1, XC_INT32, me, 0, w, NULL));
  E_ARG(xc_isend(NULL, 2, XC_INT8, me, 0, w, &req));
  E_ARG(xc_irecv(NULL, 2, XC_INT8, me, 0, w, &req));
  E_ARG(xc_sendrecv(NULL, 1, me, 0, rbuf, 1, me, 0, XC_INT32, w, NULL));
  E_ARG(xc_sendrecv(buf, 1, me, 0, NULL, 1, me, 0, XC_INT32, w, NULL));
  E_ARG(xc_broadcast(NULL, 1, XC_INT32, 0, w));
  E_ARG(xc_allreduce(buf, NULL, 1, XC_INT32, XC_SUM, w));
  E_ARG(xc_allreduce(NULL, rbuf, 1, XC_INT32, XC_SUM, w));
  E_ARG(xc_allreduce(XC_IN_PLACE, NULL, 1, XC_INT32, XC_SUM, w));
  E_ARG(xc_allgather(buf, NULL, 1, XC_INT32, w));
  E_ARG(xc_allgather(NULL, rbuf, 1, XC_INT32, w));
  E_ARG(xc_allgather(XC_IN_PLACE, NULL, 1, XC_INT32, w));
  MP_ASSERT(req == SENTINEL_REQ, "req written on failure");

  /* the valid edges next to them: NULL buffers with count 0, all ranks */
  OK_CLEARS(xc_allreduce(NULL, NULL, 0, XC_FLOAT32, XC_SUM, w));
  OK_CLEARS(xc_broadcast(NULL, 0, XC_INT8, n - 1, w));
  OK_CLEARS(xc_allgather(NULL, NULL, 0, XC_UINT64, w));
  OK_CLEARS(xc_sendrecv(NULL, 0, (me + 1) % n, 0, NULL, 0, (me + n - 1) % n, 0, XC_INT32, w, NULL));
  /* a bitwise op on an integer type is fine */
  int32_t v = 1 << (me % 31), all = 0;
  OK_CLEARS(xc_allreduce(&v, &all, 1, XC_INT32, XC_BOR, w));
  int32_t expect = 0;
  for (int r = 0; r < n; ++r) expect |= 1 << (r % 31);
  MP_ASSERT(all == expect, "BOR gave %x, expected %x", (unsigned)all, (unsigned)expect);
}

/* Bad colors and configs to xc_comm_split: by every rank, or by one rank
   while the others pass valid arguments; every rank must fail, none hang. */
static void bad_split(xc_comm_t w) {
  xc_comm_t out = SENTINEL_COMM;
  /* one rank passes a negative color that is not XC_UNDEFINED */
  const int bad_ranks[2] = {0, n - 1};
  for (int b = 0; b < 2; ++b) {
    int color = me == bad_ranks[b] ? -5 : me % 2;
    E_ARG(xc_comm_split(w, color, me, NULL, &out));
    int viewer = bad_ranks[b] == 0 ? n - 1 : 0; /* a rank that passed a valid color (when n > 1) */
    if (me == viewer) {
      char what[96];
      snprintf(what, sizeof what, "split color -5 by rank %d, seen by rank %d", bad_ranks[b], me);
      printf("  %-58s -> \"%s\"\n", what, xc_last_error());
    }
    MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  }
  fflush(stdout);
  /* the same while the others pass XC_UNDEFINED */
  E_ARG(xc_comm_split(w, me == n - 1 ? -5 : XC_UNDEFINED, 0, NULL, &out));
  /* every rank passes a bad color */
  E_ARG(xc_comm_split(w, -1, me, NULL, &out));
  E_ARG(xc_comm_split(w, INT_MIN, me, NULL, &out));
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");

  /* bad configs, passed by every rank */
  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.size = 3;
  E_ARG(xc_comm_split(w, 0, me, &cfg, &out));
  show("split with config.size = 3");
  cfg = (xc_config_t)XC_CONFIG_INIT;
  cfg.size = 0;
  E_ARG(xc_comm_split(w, 0, me, &cfg, &out));
  cfg = (xc_config_t)XC_CONFIG_INIT;
  cfg.version = 99;
  E_ARG(xc_comm_split(w, 0, me, &cfg, &out));
  show("split with config.version = 99");
  cfg = (xc_config_t)XC_CONFIG_INIT;
  cfg.version = 0;
  E_ARG(xc_comm_split(w, 0, me, &cfg, &out));
  cfg = (xc_config_t)XC_CONFIG_INIT;
  cfg.device = -3;
  E_ARG(xc_comm_split(w, 0, me, &cfg, &out));
  cfg = (xc_config_t)XC_CONFIG_INIT;
  cfg.thread_mode = 7;
  E_ARG(xc_comm_split(w, 0, me, &cfg, &out));
  cfg = (xc_config_t)XC_CONFIG_INIT;
  cfg.debug_level = 9;
  E_ARG(xc_comm_split(w, 0, me, &cfg, &out));
  /* a newer struct with a field this library does not know set */
  struct {
    xc_config_t c;
    uint64_t tail[2];
  } big;
  memset(&big, 0, sizeof big);
  big.c = (xc_config_t)XC_CONFIG_INIT;
  big.c.size = sizeof big;
  big.tail[1] = 1;
  MP_EXPECT_ERR(xc_comm_split(w, 0, me, &big.c, &out), XC_ERR_UNSUPPORTED);
  show("split with a bigger config, nonzero unknown tail");
  MP_EXPECT_ERR(xc_comm_split_groups(w, 0, NULL, NULL, &big.c, &out), XC_ERR_UNSUPPORTED);
  cfg = (xc_config_t)XC_CONFIG_INIT;
  cfg.version = 99;
  int sizes[1] = {n}, ranks[CU_MAXR];
  for (int r = 0; r < n; ++r) ranks[r] = r;
  E_ARG(xc_comm_split_groups(w, 1, sizes, ranks, &cfg, &out));
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  /* one rank's bad config fails every rank */
  E_ARG(xc_comm_split(w, 0, me, me == 0 ? &cfg : NULL, &out));
  if (n > 1 && me == n - 1) printf("  %-58s -> \"%s\"\n", "split, config.version 99 on rank 0 only", xc_last_error());
  fflush(stdout);
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  /* a bigger struct whose tail is zero is fine */
  big.tail[1] = 0;
  xc_comm_t ok = NULL;
  OK_CLEARS(xc_comm_split(w, 0, me, &big.c, &ok));
  MP_ASSERT(ok != NULL, "no communicator");
  MP_CHECK(xc_barrier(ok));
  MP_CHECK(xc_comm_free(ok));
}

/* Bad group lists to xc_comm_split_groups. */
static void bad_groups(xc_comm_t w) {
  xc_comm_t out = SENTINEL_COMM;
  int sizes[4], ranks[CU_MAXR + 4];
  for (int r = 0; r < n; ++r) ranks[r] = r;
  E_ARG(xc_comm_split_groups(w, -1, NULL, NULL, NULL, &out));
  show("split_groups(ngroups = -1)");
  sizes[0] = 1;
  E_ARG(xc_comm_split_groups(w, -1, sizes, ranks, NULL, &out));
  /* overlapping groups, and a rank twice in one group */
  sizes[0] = 1;
  sizes[1] = 1;
  ranks[0] = 0;
  ranks[1] = 0;
  E_ARG(xc_comm_split_groups(w, 2, sizes, ranks, NULL, &out));
  show("split_groups(rank 0 in two groups)");
  if (n >= 2) {
    sizes[0] = 2;
    E_ARG(xc_comm_split_groups(w, 1, sizes, ranks, NULL, &out));
    show("split_groups(rank 0 twice in one group)");
  }
  /* ranks out of range */
  sizes[0] = 1;
  ranks[0] = n;
  E_ARG(xc_comm_split_groups(w, 1, sizes, ranks, NULL, &out));
  show("split_groups(rank = size)");
  ranks[0] = -1;
  E_ARG(xc_comm_split_groups(w, 1, sizes, ranks, NULL, &out));
  /* sizes: negative, above the parent, summing above it, overflowing */
  for (int r = 0; r < n; ++r) ranks[r] = r;
  ranks[n] = 0;
  sizes[0] = -1;
  E_ARG(xc_comm_split_groups(w, 1, sizes, ranks, NULL, &out));
  sizes[0] = n + 1;
  E_ARG(xc_comm_split_groups(w, 1, sizes, ranks, NULL, &out));
  show("split_groups(one group of size+1)");
  sizes[0] = n;
  sizes[1] = 1;
  E_ARG(xc_comm_split_groups(w, 2, sizes, ranks, NULL, &out));
  show("split_groups(sizes {n, 1})");
  sizes[0] = INT_MAX;
  sizes[1] = INT_MAX;
  sizes[2] = 2;
  E_ARG(xc_comm_split_groups(w, 3, sizes, ranks, NULL, &out));
  sizes[0] = 1;
  sizes[1] = INT_MAX;
  E_ARG(xc_comm_split_groups(w, 2, sizes, ranks, NULL, &out));
  /* NULL lists */
  E_ARG(xc_comm_split_groups(w, 1, NULL, ranks, NULL, &out));
  show("split_groups(NULL group_sizes)");
  sizes[0] = 1;
  E_ARG(xc_comm_split_groups(w, 1, sizes, NULL, NULL, &out));
  show("split_groups(NULL ranks)");
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");

  /* one rank's invalid lists fail every rank */
  sizes[0] = n;
  for (int r = 0; r < n; ++r) ranks[r] = r;
  E_ARG(xc_comm_split_groups(w, me == n - 1 ? -1 : 1, sizes, ranks, NULL, &out));
  if (n > 1 && me == 0) show("split_groups, ngroups -1 on the last rank only");
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  if (n >= 2) {
    /* valid but different lists: rank 0 lists the world reversed */
    int rev[CU_MAXR];
    for (int r = 0; r < n; ++r) rev[r] = n - 1 - r;
    E_USE(xc_comm_split_groups(w, 1, sizes, me == 0 ? rev : ranks, NULL, &out));
    if (me == n - 1) printf("  %-58s -> \"%s\"\n", "split_groups, rank 0's list differs (seen by last)", xc_last_error());
    show("split_groups, rank 0's list differs (seen by 0)");
    /* rank 0 passes no groups at all */
    E_USE(xc_comm_split_groups(w, me == 0 ? 0 : 1, sizes, ranks, NULL, &out));
    /* the same ranks split differently: rank 0 halves */
    int halves[2] = {n / 2, n - n / 2};
    E_USE(xc_comm_split_groups(w, me == 0 ? 2 : 1, me == 0 ? halves : sizes, ranks, NULL, &out));
    MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
    fflush(stdout);
  }
}

/* Requests: NULL, completed (stale copies), xc_test without done, waitall. */
/* Fault tolerance: a bad argument of one rank fails every rank of a shrink
   or a grow alike (they exchange first), and nothing is written. */
static void bad_fault_tolerance(xc_comm_t w) {
  xc_comm_t out = SENTINEL_COMM;
  xc_config_t bad = XC_CONFIG_INIT;
  int nfailed = -1, failed[CU_MAXR];
  bad.version = 999;
  E_ARG(xc_comm_shrink(w, me == n - 1 ? &bad : NULL, &out));
  show("xc_comm_shrink, the last rank's config is bad");
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  E_ARG(xc_comm_grow(w, -1, NULL, NULL, &out));
  show("xc_comm_grow(world, -1, ...)");
  E_ARG(xc_comm_grow(w, 1, NULL, NULL, &out));  /* rank 0 has no id */
  show("xc_comm_grow(world, 1, NULL id on rank 0, ...)");
  MP_ASSERT(out == SENTINEL_COMM, "out written on failure");
  if (n > 1) {
    xc_unique_id_t id;
    memset(&id, 0, sizeof id);
    E_USE(xc_comm_grow(w, me == 0 ? 1 : 2, &id, NULL, &out));  /* ranks disagree on nnew */
    show("xc_comm_grow, ranks pass different nnew");
  }
  OK_CLEARS(xc_comm_get_failed(w, &nfailed, failed));
  MP_ASSERT(nfailed == 0, "%d failed ranks in a healthy world", nfailed);
  int flag = me == 0 ? 6 : 3;  /* 110 & 011 = 010 */
  OK_CLEARS(xc_comm_agree(w, &flag));
  MP_ASSERT(flag == (n > 1 ? 2 : 6), "agreed flag %d", flag);
}

static void bad_requests(xc_comm_t w) {
  xc_status_t st;
  E_ARG(xc_wait(NULL, NULL));
  show("xc_wait(NULL)");
  E_ARG(xc_wait(NULL, &st));
  int done = 7;
  E_ARG(xc_test(NULL, &done, NULL));
  MP_ASSERT(done == 7, "done written on failure");
  xc_request_t none = NULL;
  memset(&st, 0x55, sizeof st);
  OK_CLEARS(xc_wait(&none, &st));
  MP_ASSERT(st.error == XC_SUCCESS && st.source == XC_ANY_SOURCE && st.tag == XC_ANY_TAG,
            "xc_wait(NULL request) status: error %d source %d tag %d", st.error, st.source, st.tag);
  OK_CLEARS(xc_test(&none, &done, NULL));
  MP_ASSERT(done == 1, "xc_test of a NULL request: done = %d", done);
  E_ARG(xc_waitall(2, NULL, NULL));
  show("xc_waitall(2, NULL)");
  OK_CLEARS(xc_waitall(0, NULL, NULL));
  xc_request_t nones[2] = {NULL, NULL};
  OK_CLEARS(xc_waitall(2, nones, NULL));

  /* a live receive: xc_test without done fails and leaves it pending */
  int right = (me + 1) % n, left = (me + n - 1) % n;
  int32_t out = 100 + me, in = -1;
  xc_request_t r = NULL, s = NULL;
  MP_CHECK(xc_irecv(&in, 1, XC_INT32, left, 31, w, &r));
  xc_request_t r_before = r;
  E_ARG(xc_test(&r, NULL, NULL));
  show("xc_test(live request, done = NULL)");
  MP_ASSERT(r == r_before, "xc_test changed the request on failure");
  MP_CHECK(xc_isend(&out, 1, XC_INT32, right, 31, w, &s));
  xc_request_t r_copy = r, s_copy = s;
  MP_CHECK(xc_wait(&r, &st));
  MP_ASSERT(r == NULL, "xc_wait did not clear the handle");
  MP_ASSERT(in == 100 + left && st.source == left && st.tag == 31, "received %d from %d tag %d", (int)in, st.source,
            st.tag);
  done = 0;
  while (!done) MP_CHECK(xc_test(&s, &done, NULL));
  MP_ASSERT(s == NULL, "xc_test did not clear the handle");
  /* the handles' old values are completed and freed */
  E_USE(xc_wait(&r_copy, NULL));
  show("xc_wait(completed request)");
  done = 7;
  E_USE(xc_test(&s_copy, &done, NULL));
  show("xc_test(completed request)");
  MP_ASSERT(done == 7, "done written on failure");
  xc_request_t both[2] = {r_copy, s_copy};
  E_USE(xc_waitall(2, both, NULL));
  show("xc_waitall(completed requests)");
  MP_CHECK(xc_barrier(w));
}

int main(void) {
  /* the functions that need no communicator come first */
  mp_rank = -1;
  pure_functions();

  cu_view_t wv;
  cu_init("bad_input", &wv);
  xc_comm_t w = wv.comm;
  n = wv.size;
  me = wv.rank;
  if (mp_rank == 0) printf("messages seen:\n");

  null_comm();
  null_outputs(w);
  freed_comm(w);
  bad_arguments(w);
  MP_CHECK(xc_barrier(w));
  bad_split(w);
  MP_CHECK(xc_barrier(w));
  bad_groups(w);
  MP_CHECK(xc_barrier(w));
  bad_fault_tolerance(w);
  MP_CHECK(xc_barrier(w));
  bad_requests(w);

  /* after all that the world still works, and says so */
  xc_result_t async = XC_ERR_INTERNAL;
  OK_CLEARS(xc_comm_get_async_error(w, &async));
  MP_ASSERT(async == XC_SUCCESS, "world async error %d", (int)async);
  int64_t x = me + 1, sum = 0;
  OK_CLEARS(xc_allreduce(&x, &sum, 1, XC_INT64, XC_SUM, w));
  MP_ASSERT(sum == (int64_t)n * (n + 1) / 2, "allreduce sum %lld, expected %lld", (long long)sum,
            (long long)n * (n + 1) / 2);
  cu_check(&wv, 1, "world after bad input");
  /* a split still works too */
  int colors[CU_MAXR], keys[CU_MAXR];
  for (int p = 0; p < n; ++p) {
    colors[p] = p % 2;
    keys[p] = -p;
  }
  cu_view_t child;
  cu_split(&wv, colors, keys, NULL, &child, 2, "split(world) after bad input");
  cu_free(&child);
  MP_CHECK(xc_comm_free(w));
  fflush(stdout);
  if (mp_rank == 0) printf("bad_input: OK\n");
  return 0;
}
