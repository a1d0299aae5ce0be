/* Errors and resources of the device API (xcomm.h "device memory and
   streams"): each failing call must return the documented status with a
   non-empty xc_last_error() and leave its output untouched.

     device_errors          (XC_DEVICE=emulated or cuda)
       mixed       an op mixing a device and a host buffer: XC_ERR_UNSUPPORTED
                   (allreduce both ways, allgather, alltoallv, sendrecv, in
                   every rank alike); the communicator still works after.
       register    xc_buffer_register of host memory (malloc, xc_mem_alloc,
                   the stack) and NULL: XC_ERR_INVALID_ARGUMENT; of device
                   memory (whole and an interior range): ops on it, again
                   and again, deregistered, ops on it still; deregister NULL.
       memory      xc_mem_free of device memory, twice (the second
                   XC_ERR_INVALID_ARGUMENT), with a NULL communicator; zero
                   bytes; allocate, use, free five times (a peer must not
                   use a stale mapping of a reused address).
       bad_input   NULL handles and outputs, a bind target out of range, and
                   device ops with bad arguments (count overflow, bitwise op
                   on floats, unknown dtype, root/peer out of range, negative
                   tag): the status the same call gives on host memory.
       config_none a communicator split with config.device = XC_DEVICE_NONE:
                   xc_stream_create and xc_mem_alloc_device there are
                   XC_ERR_UNSUPPORTED.
     device_errors none     XC_DEVICE=none (set with setenv before xc_init):
                   xc_stream_create, xc_stream_wrap and xc_mem_alloc_device are
                   XC_ERR_UNSUPPORTED; host ops work.

   Exit status: 0 passed, 1 failed, 77 skipped (XC_DEVICE=cuda, no GPU). */
#define _POSIX_C_SOURCE 200809L
#include "dev_mem.h"

static xc_comm_t world;
static int me, n;

#define CALL(what, call)                                                                                    \
  do {                                                                                                      \
    xc_result_t rc_ = (call);                                                                               \
    if (rc_ != XC_SUCCESS) {                                                                                \
      fprintf(stderr, "[rank %d] %s: %s -> %s (%s)\n", me, what, #call, xc_strerror(rc_), xc_last_error()); \
      exit(1);                                                                                              \
    }                                                                                                       \
  } while (0)

/* The call fails with exactly code and a message; prints the message once. */
#define EXPECT(call, code)                                                                                         \
  do {                                                                                                             \
    xc_result_t rc_ = (call);                                                                                      \
    if (rc_ != (code) || xc_last_error()[0] == '\0') {                                                             \
      fprintf(stderr, "[rank %d] FAIL %s:%d: %s -> %d %s (\"%s\"), expected %d %s with a message\n", me, __FILE__, \
              __LINE__, #call, (int)rc_, xc_strerror(rc_), xc_last_error(), (int)(code), xc_strerror(code));       \
      exit(1);                                                                                                     \
    }                                                                                                              \
    if (me == 0) printf("  %s -> %s: %s\n", #call, xc_strerror(rc_), xc_last_error());                             \
  } while (0)

static void *const kSentinel = (void *)0x5e5e5e5e;

/* A device allreduce (int32 sum of rank + i) on stream s, checked. */
static void allreduce_ok(xc_comm_t comm, xc_stream_t s, void *din, void *dout, size_t count, const char *what) {
  int32_t *h = (int32_t *)malloc(count * 4);
  size_t i;
  MP_ASSERT(h != NULL, "out of memory");
  for (i = 0; i < count; ++i) h[i] = me + (int32_t)i;
  dev_put(din, h, count * 4);
  CALL(what, xc_allreduce(din, dout, count, XC_INT32, XC_SUM, comm));
  CALL(what, xc_stream_synchronize(s));
  dev_get(h, dout, count * 4);
  for (i = 0; i < count; ++i)
    MP_ASSERT(h[i] == n * (n - 1) / 2 + n * (int32_t)i, "%s: element %zu is %d, expected %d", what, i, h[i],
              n * (n - 1) / 2 + n * (int32_t)i);
  free(h);
}

static void run_mixed(xc_stream_t s) {
  const size_t count = 1001;
  void *dev = dev_alloc(world, count * 4 * (size_t)n), *dev2 = dev_alloc(world, count * 4 * (size_t)n);
  int32_t *host = (int32_t *)calloc(count * (size_t)n, 4);
  size_t *counts = (size_t *)calloc((size_t)n, sizeof(size_t)), *displs = (size_t *)calloc((size_t)n, sizeof(size_t));
  int p;
  MP_ASSERT(host && counts && displs, "out of memory");
  for (p = 0; p < n; ++p) {
    counts[p] = count;
    displs[p] = (size_t)p * count;
  }
  EXPECT(xc_allreduce(dev, host, count, XC_INT32, XC_SUM, world), XC_ERR_UNSUPPORTED);
  EXPECT(xc_allreduce(host, dev, count, XC_INT32, XC_SUM, world), XC_ERR_UNSUPPORTED);
  EXPECT(xc_allgather(dev, host, count, XC_INT32, world), XC_ERR_UNSUPPORTED);
  EXPECT(xc_alltoallv(host, counts, displs, dev, counts, displs, XC_INT32, world), XC_ERR_UNSUPPORTED);
  EXPECT(xc_sendrecv(dev, count, (me + 1) % n, 5, host, count, (me - 1 + n) % n, 5, XC_INT32, world, NULL),
         XC_ERR_UNSUPPORTED);
  {
    xc_request_t req = (xc_request_t)kSentinel;
    EXPECT(xc_iallreduce(host, dev, count, XC_INT32, XC_SUM, world, &req), XC_ERR_UNSUPPORTED);
    MP_ASSERT(req == (xc_request_t)kSentinel, "xc_iallreduce wrote its request output although it failed");
  }
  /* Nothing was started: the communicator and the stream still work. */
  allreduce_ok(world, s, dev, dev2, count, "an allreduce after the mixed-memory errors");
  CALL("mixed", xc_stream_synchronize(s));
  dev_free(world, dev);
  dev_free(world, dev2);
  free(host);
  free(counts);
  free(displs);
}

static void run_register(xc_stream_t s) {
  const size_t count = 4099;
  void *heap = malloc(4096), *pinned = NULL, *din, *dout;
  char stack[64];
  xc_buffer_t b = (xc_buffer_t)kSentinel, bin = NULL, bout = NULL, bpart = NULL;
  int iter;
  MP_ASSERT(heap != NULL, "out of memory");
  CALL("register", xc_mem_alloc(world, 1 << 16, &pinned));
  EXPECT(xc_buffer_register(world, heap, 4096, &b), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_buffer_register(world, pinned, 1 << 16, &b), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_buffer_register(world, stack, sizeof stack, &b), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_buffer_register(world, NULL, 64, &b), XC_ERR_INVALID_ARGUMENT);
  MP_ASSERT(b == (xc_buffer_t)kSentinel, "a failed xc_buffer_register wrote its output");
  CALL("register", xc_mem_free(world, pinned));
  free(heap);

  din = dev_alloc(world, count * 4 + 4096);
  dout = dev_alloc(world, count * 4);
  EXPECT(xc_buffer_register(NULL, din, count * 4, &b), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_buffer_register(world, din, count * 4, NULL), XC_ERR_INVALID_ARGUMENT);
  CALL("register", xc_buffer_register(world, din, count * 4 + 4096, &bin));
  CALL("register", xc_buffer_register(world, dout, count * 4, &bout));
  CALL("register (an interior range)", xc_buffer_register(world, (char *)din + 4096, count * 4, &bpart));
  MP_ASSERT(bin && bout && bpart, "xc_buffer_register gave a NULL handle");
  for (iter = 0; iter < 4; ++iter) {
    allreduce_ok(world, s, din, dout, count, "an allreduce on registered buffers");
    allreduce_ok(world, s, (char *)din + 4096, dout, count, "an allreduce on a registered interior range");
  }
  CALL("register", xc_buffer_deregister(bpart));
  CALL("register", xc_buffer_deregister(bin));
  CALL("register", xc_buffer_deregister(bout));
  CALL("xc_buffer_deregister(NULL)", xc_buffer_deregister(NULL));
  allreduce_ok(world, s, din, dout, count, "an allreduce on buffers after xc_buffer_deregister");
  dev_free(world, din);
  dev_free(world, dout);
}

static void run_memory(xc_stream_t s) {
  void *p = kSentinel, *q;
  int iter;
  CALL("memory", xc_mem_alloc_device(world, 0, &p));
  MP_ASSERT(p == NULL, "xc_mem_alloc_device of 0 bytes gave %p, expected NULL", p);
  p = kSentinel;
  EXPECT(xc_mem_alloc_device(NULL, 64, &p), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_mem_alloc_device(world, 64, NULL), XC_ERR_INVALID_ARGUMENT);
  MP_ASSERT(p == kSentinel, "a failed xc_mem_alloc_device wrote its output");
  p = dev_alloc(world, 1 << 20);
  q = dev_alloc(world, 4096);
  CALL("xc_mem_free of device memory", xc_mem_free(world, p));
  EXPECT(xc_mem_free(world, p), XC_ERR_INVALID_ARGUMENT);
  CALL("xc_mem_free of device memory with a NULL communicator", xc_mem_free(NULL, q));
  CALL("xc_mem_free(NULL pointer)", xc_mem_free(world, NULL));
  /* Allocate, use, free: addresses come back, mappings must not be stale. */
  for (iter = 0; iter < 5; ++iter) {
    size_t count = 1001 + (size_t)iter * 4096;
    void *din = dev_alloc(world, count * 4), *dout = dev_alloc(world, count * 4);
    allreduce_ok(world, s, din, dout, count, "an allreduce on freshly allocated (perhaps reused) device memory");
    dev_free(world, din);
    dev_free(world, dout);
  }
}

/* A device op with bad arguments fails as the same op on host memory does. */
#define SAME_AS_HOST(what, dev_call, host_call)                                                                  \
  do {                                                                                                           \
    xc_result_t hrc_ = (host_call), drc_;                                                                        \
    char hmsg_[512];                                                                                             \
    snprintf(hmsg_, sizeof hmsg_, "%s", xc_last_error());                                                        \
    drc_ = (dev_call);                                                                                           \
    if (hrc_ == XC_SUCCESS || drc_ != hrc_ || xc_last_error()[0] == '\0') {                                      \
      fprintf(stderr, "[rank %d] FAIL %s: on device memory %s (\"%s\"), on host memory %s (\"%s\")\n", me, what, \
              xc_strerror(drc_), xc_last_error(), xc_strerror(hrc_), hmsg_);                                     \
      exit(1);                                                                                                   \
    }                                                                                                            \
    if (me == 0) printf("  %s -> %s: %s\n", what, xc_strerror(drc_), xc_last_error());                           \
  } while (0)

static void run_bad_input(xc_stream_t s) {
  xc_stream_t t = (xc_stream_t)kSentinel;
  void *d = dev_alloc(world, 4096), *d2 = dev_alloc(world, 4096);
  char h[4096], h2[4096];
  const size_t huge = ((size_t)-1) / 2;
  EXPECT(xc_stream_create(NULL, &t), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_stream_create(world, NULL), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_stream_wrap(NULL, NULL, &t), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_stream_wrap(world, NULL, NULL), XC_ERR_INVALID_ARGUMENT);
  MP_ASSERT(t == (xc_stream_t)kSentinel, "a failed xc_stream_create/wrap wrote its output");
  EXPECT(xc_stream_bind(NULL, s, 0), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_stream_bind(world, s, n), XC_ERR_INVALID_ARGUMENT);
  EXPECT(xc_stream_bind(world, s, -2), XC_ERR_INVALID_ARGUMENT);
  CALL("xc_stream_destroy(NULL)", xc_stream_destroy(NULL));
  memset(h, 0, sizeof h);
  SAME_AS_HOST("allreduce of a count that overflows", xc_allreduce(d, d2, huge, XC_INT32, XC_SUM, world),
               xc_allreduce(h, h2, huge, XC_INT32, XC_SUM, world));
  SAME_AS_HOST("allreduce band on float32", xc_allreduce(d, d2, 16, XC_FLOAT32, XC_BAND, world),
               xc_allreduce(h, h2, 16, XC_FLOAT32, XC_BAND, world));
  SAME_AS_HOST("allreduce of dtype 99", xc_allreduce(d, d2, 16, (xc_dtype_t)99, XC_SUM, world),
               xc_allreduce(h, h2, 16, (xc_dtype_t)99, XC_SUM, world));
  SAME_AS_HOST("allreduce of op 99", xc_allreduce(d, d2, 16, XC_INT32, (xc_op_t)99, world),
               xc_allreduce(h, h2, 16, XC_INT32, (xc_op_t)99, world));
  SAME_AS_HOST("broadcast from root n", xc_broadcast(d, 16, XC_INT32, n, world),
               xc_broadcast(h, 16, XC_INT32, n, world));
  SAME_AS_HOST("send to peer n", xc_send(d, 16, XC_INT32, n, 1, world), xc_send(h, 16, XC_INT32, n, 1, world));
  SAME_AS_HOST("send with tag -5", xc_send(d, 16, XC_INT32, 0, -5, world), xc_send(h, 16, XC_INT32, 0, -5, world));
  SAME_AS_HOST("allreduce on a NULL communicator", xc_allreduce(d, d2, 16, XC_INT32, XC_SUM, NULL),
               xc_allreduce(h, h2, 16, XC_INT32, XC_SUM, NULL));
  /* Nothing was enqueued. */
  CALL("bad input", xc_stream_synchronize(s));
  allreduce_ok(world, s, d, d2, 1001, "an allreduce after the bad-input errors");
  dev_free(world, d);
  dev_free(world, d2);
}

static void run_config_none(void) {
  xc_config_t cfg = XC_CONFIG_INIT;
  xc_comm_t hostonly = NULL;
  xc_stream_t t = (xc_stream_t)kSentinel;
  void *p = kSentinel;
  cfg.device = XC_DEVICE_NONE;
  CALL("config_none", xc_comm_split(world, 0, me, &cfg, &hostonly));
  EXPECT(xc_stream_create(hostonly, &t), XC_ERR_UNSUPPORTED);
  EXPECT(xc_mem_alloc_device(hostonly, 4096, &p), XC_ERR_UNSUPPORTED);
  MP_ASSERT(t == (xc_stream_t)kSentinel && p == kSentinel, "a failed call wrote its output");
  CALL("config_none", xc_comm_free(hostonly));
}

/* XC_DEVICE=none: no device at all. */
static int run_none(void) {
  xc_stream_t t = (xc_stream_t)kSentinel;
  void *p = kSentinel;
  int32_t v, sum;
  setenv("XC_DEVICE", "none", 1);
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &me));
  MP_CHECK(xc_comm_size(world, &n));
  mp_rank = me;
  if (me == 0) printf("device_errors none: %d ranks, XC_DEVICE=none\n", n);
  EXPECT(xc_stream_create(world, &t), XC_ERR_UNSUPPORTED);
  EXPECT(xc_stream_wrap(world, NULL, &t), XC_ERR_UNSUPPORTED);
  EXPECT(xc_mem_alloc_device(world, 4096, &p), XC_ERR_UNSUPPORTED);
  MP_ASSERT(t == (xc_stream_t)kSentinel && p == kSentinel, "a failed call wrote its output");
  v = me + 1;
  CALL("a host allreduce with XC_DEVICE=none", xc_allreduce(&v, &sum, 1, XC_INT32, XC_SUM, world));
  MP_ASSERT(sum == n * (n + 1) / 2, "host allreduce gave %d, expected %d", sum, n * (n + 1) / 2);
  MP_CHECK(xc_comm_free(world));
  if (me == 0) printf("device_errors none: passed\n");
  return 0;
}

int main(int argc, char **argv) {
  xc_stream_t s;
  if (argc > 1 && strcmp(argv[1], "none") == 0) return run_none();
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &me));
  MP_CHECK(xc_comm_size(world, &n));
  mp_rank = me;
  dev_setup(world);
  if (me == 0) printf("device_errors: %d ranks on the %s device\n", n, dev_kind());
  s = dev_stream(world);
  MP_CHECK(xc_stream_bind(world, s, XC_BIND_COLLECTIVES));
  if (me == 0) printf("mixed:\n");
  run_mixed(s);
  if (me == 0) printf("register:\n");
  run_register(s);
  if (me == 0) printf("memory:\n");
  run_memory(s);
  if (me == 0) printf("bad_input:\n");
  run_bad_input(s);
  if (me == 0) printf("config_none:\n");
  run_config_none();
  MP_CHECK(xc_stream_destroy(s));
  MP_CHECK(xc_barrier(world));
  MP_CHECK(xc_comm_free(world));
  if (me == 0) printf("device_errors: passed\n");
  return 0;
}
