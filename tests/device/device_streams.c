/* Streams (xcomm.h "device memory and streams"): several streams at once,
   wrapped streams, destroying and unbinding, one stream on several
   communicators, and device ops mixed with host ops on one communicator.

     two_streams      collectives bound (XC_BIND_COLLECTIVES) to one stream
                      and point-to-point (every peer) to another, both in
                      flight before either is synchronised: rank 0 enqueues a
                      receive from rank 1 and then an allreduce, rank 1 the
                      allreduce and then the send, which deadlocks if the two
                      kinds share a stream; then a 4 MiB allreduce against a
                      grouped exchange with every rank.
     order            ops on one stream run in the order enqueued: an
                      allreduce, an allreduce in place on its result, an
                      allgather of that, synchronised once.
     wrap             xc_stream_wrap of NULL (the default stream) and of a
                      native stream (a cudaStream_t; on the emulated device any
                      value), bound, used, synchronised, released (the native
                      stream outlives its wrapper).
     destroy_pending  xc_stream_destroy with allreduces still enqueued: it
                      waits for them (their results are there when it
                      returns) and unbinds the stream, so later collectives
                      go to the default stream (completed with xc_wait, and
                      by synchronising xc_stream_wrap(comm, NULL)).
     unbind           xc_stream_bind(comm, NULL, target): a stream held by a
                      receive its peer satisfies only later; with the
                      collectives unbound from it, an allreduce completes
                      past it (it would deadlock behind the receive); the same
                      for a peer's binding.
     shared           one stream bound on two communicators (collectives) and
                      for a peer: every op on it, one xc_stream_synchronize.
     group_coll       a device allreduce between a device send and receive
                      in one group (the collective is enqueued when called,
                      the messages at xc_group_end), all on one stream.
     mixed            a device allreduce enqueued, then a host barrier and a
                      host allreduce on the same communicator, then the
                      stream synchronised.

     device_streams [CASE[,CASE...]]     (default: all)

   Run with a short XC_TIMEOUT so that a deadlock is an error, not a hang.
   Exit status: 0 passed, 1 failed, 77 skipped (XC_DEVICE=cuda, no GPU). */
#define _POSIX_C_SOURCE 200809L
#include "dev_mem.h"

static xc_comm_t world;
static int me, n;
static uint64_t g_salt = 1;

#define CALL(what, call)                                                                                    \
  do {                                                                                                      \
    xc_result_t rc_ = (call);                                                                               \
    if (rc_ != XC_SUCCESS) {                                                                                \
      fprintf(stderr, "[rank %d] %s: %s -> %s (%s)\n", me, what, #call, xc_strerror(rc_), xc_last_error()); \
      exit(1);                                                                                              \
    }                                                                                                       \
  } while (0)

/* ---- int32 data whose sums are exact ---------------------------------------------- */

static int32_t val(uint64_t salt, int rank, size_t i) {
  uint64_t s = mp_seed() ^ (salt << 40) ^ ((uint64_t)(rank + 1) << 32) ^ (uint64_t)i;
  return (int32_t)(mp_next(&s) % 20001) - 10000;
}

/* A device vector of count int32 values of this rank for salt. */
static int32_t *dev_vector(xc_comm_t comm, size_t count, uint64_t salt) {
  int32_t *h = (int32_t *)malloc(count * 4 + 4), *d = (int32_t *)dev_alloc(comm, count * 4 + 4);
  size_t i;
  MP_ASSERT(h != NULL, "out of memory");
  for (i = 0; i < count; ++i) h[i] = val(salt, me, i);
  dev_put(d, h, count * 4);
  free(h);
  return d;
}

static int32_t *dev_zeros(xc_comm_t comm, size_t count) {
  int32_t *d = (int32_t *)dev_alloc(comm, count * 4 + 4);
  dev_fill(d, 0, count * 4 + 4);
  return d;
}

/* The sum over ranks of val(salt, r, i), times mult (wrapping). */
static int32_t sum_ref(uint64_t salt, size_t i, uint32_t mult) {
  uint32_t acc = 0;
  int r;
  for (r = 0; r < n; ++r) acc += (uint32_t)val(salt, r, i);
  return (int32_t)(acc * mult);
}

/* dev[0..count) == sum over ranks (times mult). */
static void check_sum(const int32_t *dev, size_t count, uint64_t salt, uint32_t mult, const char *what) {
  int32_t *h = (int32_t *)malloc(count * 4 + 4);
  size_t i;
  MP_ASSERT(h != NULL, "out of memory");
  dev_get(h, dev, count * 4);
  for (i = 0; i < count; ++i)
    if (h[i] != sum_ref(salt, i, mult)) {
      fprintf(stderr, "[rank %d] FAIL %s: int32 count %zu: element %zu is %d, expected %d\n", me, what, count, i, h[i],
              sum_ref(salt, i, mult));
      exit(1);
    }
  free(h);
}

/* dev[0..count) == val(salt, from, i): a message from rank `from`. */
static void check_msg(const int32_t *dev, size_t count, uint64_t salt, int from, const char *what) {
  int32_t *h = (int32_t *)malloc(count * 4 + 4);
  size_t i;
  MP_ASSERT(h != NULL, "out of memory");
  dev_get(h, dev, count * 4);
  for (i = 0; i < count; ++i)
    if (h[i] != val(salt, from, i)) {
      fprintf(stderr, "[rank %d] FAIL %s: int32 count %zu from rank %d: element %zu is %d, expected %d\n", me, what,
              count, from, i, h[i], val(salt, from, i));
      exit(1);
    }
  free(h);
}

static void sync_ok(xc_stream_t s, const char *what) { CALL(what, xc_stream_synchronize(s)); }

/* ---- cases ------------------------------------------------------------------------ */

static void run_two_streams(void) {
  xc_comm_t d;
  xc_stream_t sc, sp;
  const size_t count = 1001, big = ((size_t)4 << 20) / 4;
  uint64_t salt = ++g_salt, msalt = ++g_salt, bsalt = ++g_salt, gsalt = ++g_salt;
  int32_t *in, *out, *bin, *bout, *msg = NULL, **gs, **gr;
  int p;
  const char *what = "two streams (collectives on one, point-to-point on the other)";
  CALL(what, xc_comm_dup(world, &d));
  sc = dev_stream(d);
  sp = dev_stream(d);
  CALL(what, xc_stream_bind(d, sc, XC_BIND_COLLECTIVES));
  for (p = 0; p < n; ++p) CALL(what, xc_stream_bind(d, sp, p));

  /* Cross dependency: rank 0 receives before its allreduce, rank 1 sends after its. */
  in = dev_vector(d, count, salt);
  out = dev_zeros(d, count);
  if (me == 0 && n > 1) {
    msg = dev_zeros(d, count);
    CALL(what, xc_recv(msg, count, XC_INT32, 1, 11, d, NULL));
    CALL(what, xc_allreduce(in, out, count, XC_INT32, XC_SUM, d));
  } else if (me == 1) {
    msg = dev_vector(d, count, msalt);
    CALL(what, xc_allreduce(in, out, count, XC_INT32, XC_SUM, d));
    CALL(what, xc_send(msg, count, XC_INT32, 0, 11, d));
  } else {
    CALL(what, xc_allreduce(in, out, count, XC_INT32, XC_SUM, d));
  }
  /* Both in flight; synchronise point-to-point first on rank 0, collectives first elsewhere. */
  if (me == 0) {
    sync_ok(sp, what);
    sync_ok(sc, what);
  } else {
    sync_ok(sc, what);
    sync_ok(sp, what);
  }
  check_sum(out, count, salt, 1, "two streams: the allreduce");
  if (me == 0 && n > 1) check_msg(msg, count, msalt, 1, "two streams: the message enqueued before the allreduce");
  if (msg) dev_free(d, msg);
  dev_free(d, in);
  dev_free(d, out);

  /* A large allreduce and a grouped exchange with every rank, both in flight. */
  bin = dev_vector(d, big, bsalt);
  bout = dev_zeros(d, big);
  gs = (int32_t **)calloc((size_t)n, sizeof(int32_t *));
  gr = (int32_t **)calloc((size_t)n, sizeof(int32_t *));
  MP_ASSERT(gs && gr, "out of memory");
  CALL(what, xc_allreduce(bin, bout, big, XC_INT32, XC_SUM, d));
  for (p = 0; p < n; ++p) {
    gs[p] = dev_vector(d, 70001, gsalt + (uint64_t)p);
    gr[p] = dev_zeros(d, 70001);
  }
  CALL(what, xc_group_start());
  for (p = 0; p < n; ++p) CALL(what, xc_send(gs[p], 70001, XC_INT32, p, 12, d));
  for (p = 0; p < n; ++p) CALL(what, xc_recv(gr[p], 70001, XC_INT32, p, 12, d, NULL));
  CALL(what, xc_group_end());
  sync_ok(sp, what);
  sync_ok(sc, what);
  check_sum(bout, big, bsalt, 1, "two streams: the 4 MiB allreduce");
  for (p = 0; p < n; ++p) {
    check_msg(gr[p], 70001, gsalt + (uint64_t)me, p, "two streams: the grouped exchange");
    dev_free(d, gs[p]);
    dev_free(d, gr[p]);
  }
  free(gs);
  free(gr);
  dev_free(d, bin);
  dev_free(d, bout);
  CALL(what, xc_stream_destroy(sc));
  CALL(what, xc_stream_destroy(sp));
  CALL(what, xc_comm_free(d));
}

static void run_order(void) {
  xc_stream_t s = dev_stream(world);
  const size_t count = 65537;
  uint64_t salt = ++g_salt;
  int32_t *in = dev_vector(world, count, salt), *out = dev_zeros(world, count);
  int32_t *all = dev_zeros(world, count * (size_t)n);
  int p;
  const char *what = "one stream, three ops in order";
  CALL(what, xc_stream_bind(world, s, XC_BIND_COLLECTIVES));
  CALL(what, xc_allreduce(in, out, count, XC_INT32, XC_SUM, world));
  CALL(what, xc_allreduce(XC_IN_PLACE, out, count, XC_INT32, XC_SUM, world));
  CALL(what, xc_allgather(out, all, count, XC_INT32, world));
  sync_ok(s, what);
  check_sum(out, count, salt, (uint32_t)n, "order: allreduce of the allreduce");
  for (p = 0; p < n; ++p) check_sum(all + (size_t)p * count, count, salt, (uint32_t)n, "order: allgather of it");
  CALL(what, xc_stream_bind(world, NULL, XC_BIND_COLLECTIVES));
  CALL(what, xc_stream_destroy(s));
  dev_free(world, in);
  dev_free(world, out);
  dev_free(world, all);
}

static void allreduce_on(xc_comm_t comm, xc_stream_t s, const char *what) {
  const size_t count = 4099;
  uint64_t salt = ++g_salt;
  int32_t *in = dev_vector(comm, count, salt), *out = dev_zeros(comm, count);
  CALL(what, xc_stream_bind(comm, s, XC_BIND_COLLECTIVES));
  CALL(what, xc_allreduce(in, out, count, XC_INT32, XC_SUM, comm));
  sync_ok(s, what);
  check_sum(out, count, salt, 1, what);
  CALL(what, xc_stream_bind(comm, NULL, XC_BIND_COLLECTIVES));
  dev_free(comm, in);
  dev_free(comm, out);
}

static void run_wrap(void) {
  xc_stream_t w;
  void *native;
  int i;
  CALL("xc_stream_wrap(NULL)", xc_stream_wrap(world, NULL, &w));
  MP_ASSERT(w != NULL, "xc_stream_wrap(NULL) gave a NULL stream");
  allreduce_on(world, w, "an allreduce on the wrapped default stream");
  CALL("xc_stream_wrap(NULL)", xc_stream_destroy(w));
  for (i = 0; i < 2; ++i) {
    native = dev_native_stream_create();
    CALL("xc_stream_wrap(native)", xc_stream_wrap(world, native, &w));
    MP_ASSERT(w != NULL, "xc_stream_wrap(%p) gave a NULL stream", native);
    allreduce_on(world, w, "an allreduce on a wrapped native stream");
    CALL("xc_stream_wrap(native)", xc_stream_destroy(w));
    /* The wrapper is gone, the native stream is still the application's. */
    dev_native_stream_destroy(native);
  }
}

static void run_destroy_pending(void) {
  enum { K = 6 };
  const size_t count = 200003;
  xc_stream_t s = dev_stream(world);
  uint64_t salt = ++g_salt;
  int32_t *in = dev_vector(world, count, salt), *out[K];
  xc_request_t req = NULL;
  xc_result_t rc;
  int k;
  const char *what = "xc_stream_destroy with work pending";
  CALL(what, xc_stream_bind(world, s, XC_BIND_COLLECTIVES));
  for (k = 0; k < K; ++k) {
    out[k] = dev_zeros(world, count);
    CALL(what, xc_allreduce(in, out[k], count, XC_INT32, XC_SUM, world));
  }
  rc = xc_stream_destroy(s);
  MP_ASSERT(rc == XC_SUCCESS, "%s -> %s (%s)", what, xc_strerror(rc), xc_last_error());
  for (k = 0; k < K; ++k) check_sum(out[k], count, salt, 1, "an allreduce enqueued before xc_stream_destroy");
  /* Unbound by the destroy: the next collectives go to the default stream,
     completed by xc_wait, and by synchronising xc_stream_wrap(comm, NULL). */
  dev_fill(out[0], 0, count * 4);
  CALL(what, xc_iallreduce(in, out[0], count, XC_INT32, XC_SUM, world, &req));
  CALL(what, xc_wait(&req, NULL));
  check_sum(out[0], count, salt, 1, "an allreduce after xc_stream_destroy (default stream, xc_wait)");
  {
    xc_stream_t def;
    CALL(what, xc_stream_wrap(world, NULL, &def));
    dev_fill(out[1], 0, count * 4);
    CALL(what, xc_allreduce(in, out[1], count, XC_INT32, XC_SUM, world));
    CALL(what, xc_stream_synchronize(def));
    check_sum(out[1], count, salt, 1, "an allreduce after xc_stream_destroy (default stream, synchronised)");
    CALL(what, xc_stream_destroy(def));
  }
  for (k = 0; k < K; ++k) dev_free(world, out[k]);
  dev_free(world, in);
  CALL("xc_stream_destroy(NULL)", xc_stream_destroy(NULL));
}

/* Rank 0 holds a stream with a receive from rank 1 that rank 1 satisfies
   only after an op of rank 0 that was unbound from that stream has
   completed: an allreduce (collectives unbound), then a send to rank 2
   (that peer unbound; rank 2 tells rank 1 through a host message). Were
   the op still routed to the held stream, it would wait behind the
   receive: a deadlock, an XC_ERR_TIMEOUT under a short XC_TIMEOUT. */
static void run_unbind(void) {
  xc_comm_t d;
  xc_stream_t s;
  const size_t count = 1001;
  uint64_t salt = ++g_salt, msalt = ++g_salt, m2salt = ++g_salt;
  int32_t *in, *out, *msg;
  xc_request_t req = NULL;
  int p, token = 0;
  const char *what = "unbind";
  if (n < 2) return;
  CALL(what, xc_comm_dup(world, &d));
  s = dev_stream(d);
  for (p = 0; p < n; ++p) CALL(what, xc_stream_bind(d, s, p));
  CALL(what, xc_stream_bind(d, s, XC_BIND_COLLECTIVES));
  CALL(what, xc_stream_bind(d, NULL, XC_BIND_COLLECTIVES));
  in = dev_vector(d, count, salt);
  out = dev_zeros(d, count);

  /* The collectives. */
  msg = me == 0 ? dev_zeros(d, count) : dev_vector(d, count, msalt);
  if (me == 0) CALL(what, xc_recv(msg, count, XC_INT32, 1, 21, d, NULL)); /* holds s until rank 1 sends */
  CALL(what, xc_iallreduce(in, out, count, XC_INT32, XC_SUM, d, &req));
  CALL(
      "unbind: an allreduce after xc_stream_bind(comm, NULL, XC_BIND_COLLECTIVES) (it must not wait behind the "
      "receive on the stream it was unbound from)",
      xc_wait(&req, NULL));
  check_sum(out, count, salt, 1, "unbind: the allreduce on the default stream");
  if (me == 1) CALL(what, xc_send(msg, count, XC_INT32, 0, 21, d));
  sync_ok(s, what);
  if (me == 0) check_msg(msg, count, msalt, 1, "unbind: the message received on the held stream");
  dev_free(d, msg);

  /* A peer. */
  if (n > 2) {
    msg = me == 0 ? dev_zeros(d, count) : dev_vector(d, count, m2salt);
    if (me == 0) {
      int32_t *to2 = dev_vector(d, count, m2salt);
      CALL(what, xc_stream_bind(d, NULL, 2));
      CALL(what, xc_recv(msg, count, XC_INT32, 1, 22, d, NULL));  /* on s */
      CALL(what, xc_isend(to2, count, XC_INT32, 2, 23, d, &req)); /* on the default stream */
      CALL(
          "unbind: a send after xc_stream_bind(comm, NULL, peer) (it must not wait behind the receive on the stream "
          "it was unbound from)",
          xc_wait(&req, NULL));
      sync_ok(s, what);
      check_msg(msg, count, m2salt, 1, "unbind: the second message received on the held stream");
      dev_free(d, to2);
    } else if (me == 2) {
      int32_t *from0 = dev_zeros(d, count);
      CALL(what, xc_irecv(from0, count, XC_INT32, 0, 23, d, &req));
      CALL(what, xc_wait(&req, NULL));
      check_msg(from0, count, m2salt, 0, "unbind: the message sent on the default stream");
      CALL(what, xc_send(&token, 1, XC_INT32, 1, 24, d)); /* host memory: tells rank 1 */
      dev_free(d, from0);
    } else if (me == 1) {
      CALL(what, xc_recv(&token, 1, XC_INT32, 2, 24, d, NULL));
      CALL(what, xc_send(msg, count, XC_INT32, 0, 22, d));
      sync_ok(s, what);
    }
    dev_free(d, msg);
  }
  CALL(what, xc_stream_destroy(s));
  dev_free(d, in);
  dev_free(d, out);
  CALL(what, xc_comm_free(d));
}

static void run_shared(void) {
  xc_comm_t d1, d2;
  xc_stream_t s;
  const size_t count = 30011;
  uint64_t s1 = ++g_salt, s2 = ++g_salt, s3 = ++g_salt;
  int32_t *in1, *in2, *out1, *out2, *msg, *rmsg;
  int next = (me + 1) % n, prev = (me - 1 + n) % n;
  const char *what = "one stream on two communicators";
  CALL(what, xc_comm_dup(world, &d1));
  CALL(what, xc_comm_dup(world, &d2));
  s = dev_stream(d1);
  CALL(what, xc_stream_bind(d1, s, XC_BIND_COLLECTIVES));
  CALL(what, xc_stream_bind(d2, s, XC_BIND_COLLECTIVES));
  CALL(what, xc_stream_bind(d1, s, next));
  CALL(what, xc_stream_bind(d1, s, prev));
  in1 = dev_vector(d1, count, s1);
  in2 = dev_vector(d2, count, s2);
  out1 = dev_zeros(d1, count);
  out2 = dev_zeros(d2, count);
  msg = dev_vector(d1, count, s3);
  rmsg = dev_zeros(d1, count);
  CALL(what, xc_allreduce(in1, out1, count, XC_INT32, XC_SUM, d1));
  CALL(what, xc_allreduce(in2, out2, count, XC_INT32, XC_SUM, d2));
  CALL(what, xc_group_start());
  CALL(what, xc_send(msg, count, XC_INT32, next, 31, d1));
  CALL(what, xc_recv(rmsg, count, XC_INT32, prev, 31, d1, NULL));
  CALL(what, xc_group_end());
  sync_ok(s, what);
  check_sum(out1, count, s1, 1, "shared stream: the allreduce on the first communicator");
  check_sum(out2, count, s2, 1, "shared stream: the allreduce on the second communicator");
  check_msg(rmsg, count, s3, prev, "shared stream: the message");
  /* Destroying it unbinds it from both. */
  CALL(what, xc_stream_destroy(s));
  dev_free(d1, in1);
  dev_free(d2, in2);
  dev_free(d1, out1);
  dev_free(d2, out2);
  dev_free(d1, msg);
  dev_free(d1, rmsg);
  CALL(what, xc_comm_free(d1));
  CALL(what, xc_comm_free(d2));
}

/* A group holding a device collective and device messages: the collective
   is enqueued when called, the messages at xc_group_end. */
static void run_group_coll(void) {
  xc_stream_t s = dev_stream(world);
  const size_t count = 20011;
  uint64_t salt = ++g_salt, msalt = ++g_salt;
  int32_t *in = dev_vector(world, count, salt), *out = dev_zeros(world, count);
  int32_t *msg = dev_vector(world, count, msalt), *rmsg = dev_zeros(world, count);
  int p, next = (me + 1) % n, prev = (me - 1 + n) % n;
  const char *what = "a device allreduce and device messages in one group";
  CALL(what, xc_stream_bind(world, s, XC_BIND_COLLECTIVES));
  for (p = 0; p < n; ++p) CALL(what, xc_stream_bind(world, s, p));
  CALL(what, xc_group_start());
  CALL(what, xc_send(msg, count, XC_INT32, next, 41, world));
  CALL(what, xc_allreduce(in, out, count, XC_INT32, XC_SUM, world));
  CALL(what, xc_recv(rmsg, count, XC_INT32, prev, 41, world, NULL));
  CALL(what, xc_group_end());
  sync_ok(s, what);
  check_sum(out, count, salt, 1, "group: the allreduce");
  check_msg(rmsg, count, msalt, prev, "group: the message");
  for (p = 0; p < n; ++p) CALL(what, xc_stream_bind(world, NULL, p));
  CALL(what, xc_stream_bind(world, NULL, XC_BIND_COLLECTIVES));
  CALL(what, xc_stream_destroy(s));
  dev_free(world, in);
  dev_free(world, out);
  dev_free(world, msg);
  dev_free(world, rmsg);
}

static void run_mixed(void) {
  xc_comm_t d;
  xc_stream_t s;
  const size_t count = 100003;
  uint64_t salt = ++g_salt;
  int32_t *in, *out, hv[3], hsum[3];
  int i;
  const char *what = "device and host ops on one communicator";
  CALL(what, xc_comm_dup(world, &d));
  s = dev_stream(d);
  CALL(what, xc_stream_bind(d, s, XC_BIND_COLLECTIVES));
  in = dev_vector(d, count, salt);
  out = dev_zeros(d, count);
  CALL(what, xc_allreduce(in, out, count, XC_INT32, XC_SUM, d));
  CALL(what, xc_barrier(d));
  for (i = 0; i < 3; ++i) hv[i] = me + i;
  CALL(what, xc_allreduce(hv, hsum, 3, XC_INT32, XC_SUM, d));
  for (i = 0; i < 3; ++i)
    MP_ASSERT(hsum[i] == n * (n - 1) / 2 + n * i, "%s: the host allreduce gave %d at %d, expected %d", what, hsum[i], i,
              n * (n - 1) / 2 + n * i);
  sync_ok(s, what);
  check_sum(out, count, salt, 1, "mixed: the device allreduce enqueued before the host ops");
  CALL(what, xc_stream_destroy(s));
  dev_free(d, in);
  dev_free(d, out);
  CALL(what, xc_comm_free(d));
}

/* ---- main ------------------------------------------------------------------------- */

typedef struct {
  const char *name;
  void (*run)(void);
} stream_case;

static const stream_case kCases[] = {
    {"two_streams", run_two_streams},         {"order", run_order},   {"wrap", run_wrap},
    {"destroy_pending", run_destroy_pending}, {"unbind", run_unbind}, {"shared", run_shared},
    {"group_coll", run_group_coll},           {"mixed", run_mixed},
};
#define NCASES (sizeof kCases / sizeof kCases[0])

int main(int argc, char **argv) {
  int selected[NCASES] = {0}, any = 0, i;
  size_t k;
  for (i = 1; i < argc; ++i) {
    const char *list = argv[i];
    while (*list) {
      size_t len = strcspn(list, ","), c;
      int found = 0;
      for (c = 0; c < NCASES; ++c)
        if (strlen(kCases[c].name) == len && strncmp(kCases[c].name, list, len) == 0) selected[c] = found = 1;
      if (!found) {
        fprintf(stderr, "device_streams: unknown case '%.*s'\n", (int)len, list);
        return 2;
      }
      any = 1;
      list += len + (list[len] == ',');
    }
  }
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &me));
  MP_CHECK(xc_comm_size(world, &n));
  mp_rank = me;
  dev_setup(world);
  if (me == 0)
    printf("device_streams: %d ranks on the %s device, seed 0x%llx\n", n, dev_kind(), (unsigned long long)mp_seed());
  for (k = 0; k < NCASES; ++k) {
    if (any && !selected[k]) continue;
    kCases[k].run();
    MP_CHECK(xc_barrier(world));
    if (me == 0) printf("device_streams: %s passed\n", kCases[k].name);
    fflush(stdout);
  }
  MP_CHECK(xc_comm_free(world));
  if (me == 0) printf("device_streams: all passed\n");
  return 0;
}
