/* Device collectives when a peer dies or the communicator is aborted.

     device_fault DIR kill     (under xcrun, 2+ ranks; driven by device_fault.sh)
     device_fault abort        (under xcrun, 2+ ranks)
     device_fault timeout      (under xcrun, 2+ ranks)

   kill: every rank runs device allreduces on a stream bound to the world's
   collectives (checked), then enqueues a batch of 4 MiB allreduces; the
   victim (the last rank) enqueues a few of them and SIGKILLs itself while
   they are in flight, without synchronising. Each survivor's
   xc_stream_synchronize must return XC_ERR_PEER_FAILED, or XC_ERR_TIMEOUT
   (the deadline is TIMEOUT_MS), with a message, within the deadline plus a
   margin of the victim's death; xc_comm_get_async_error must report an
   error; a later allreduce on the world must fail (at the call or at the
   synchronize) within the same bound; destroying the stream and freeing the
   world must come back within it too. Survivors ignore SIGTERM (xcrun
   stops the job when the victim dies) and write DIR/rank<r>.ok with the
   code, the times and the message, or DIR/rank<r>.fail and exit 1.

   abort: on a duplicate of the world every rank but 1 enqueues a device
   allreduce that rank 1 never joins. xc_comm_abort must return at once,
   and the stream's xc_stream_synchronize must return XC_ERR_ABORTED
   promptly (the deadline is far away: a timeout is a failure), later
   device ops on the duplicate fail with XC_ERR_ABORTED and
   xc_comm_get_async_error says so. Twice: aborting, then synchronising; and
   aborting from the main thread while another thread is blocked in
   xc_stream_synchronize. The world keeps working.

   timeout: on a communicator with a 1.5 s deadline, an allreduce that rank
   1 never joins and (at rank 0) a device receive from rank 1 that it never
   sends: xc_stream_synchronize returns XC_ERR_TIMEOUT with a message within
   the deadline plus a margin, the async error says so, the stream is usable
   after, and the process goes on (the world still works).

   The allreduces are of float32 sums: by default the intra-node kernels
   take them (one-shot at 4 KiB, two-shot at 4 MiB), waiting for peers at a
   flag barrier in device memory; XC_ALGO=dev_generic runs the same checks
   on the host-coordinated path. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "dev_mem.h"
#include "verdict.h"

enum {
  TIMEOUT_MS = 5000,        /* kill: the deadline of every wait */
  MARGIN_MS = 5000,         /* kill: an error must come within TIMEOUT_MS + MARGIN_MS */
  ABORT_TIMEOUT_MS = 60000, /* abort: far away, so a timeout cannot pass for the abort */
  ABORT_CALL_MS = 1000,     /* abort: xc_comm_abort returns within this */
  ABORT_PROMPT_MS = 5000,   /* abort: the synchronize returns within this of the abort */
  TIMEOUT_SHORT_MS = 1500,  /* timeout: the deadline of the communicator the lone waits are on */
  BATCH = 24,
  VICTIM_ENQUEUES = 3
};
#define BIG_COUNT (((size_t)4 << 20) / 4)

static int me, n;

static double ms_since(int64_t t0) { return (double)(verdict_now_ns() - t0) / 1e6; }

#define EXPECT(cond, ...)           \
  do {                              \
    if (!(cond)) verdict_fail(__VA_ARGS__); \
  } while (0)

#define CALL(call)                                                                          \
  do {                                                                                      \
    xc_result_t rc_ = (call);                                                               \
    if (rc_ != XC_SUCCESS) verdict_fail("%s -> %s (%s)", #call, xc_strerror(rc_), xc_last_error()); \
  } while (0)

static void fill_input(void *dev, size_t count, int salt) {
  float *h = (float *)malloc(count * 4);
  size_t i;
  EXPECT(h != NULL, "out of memory");
  for (i = 0; i < count; ++i) h[i] = (float)((size_t)me * 7 + i % 1000 + (size_t)salt);
  dev_put(dev, h, count * 4);
  free(h);
}

static void check_output(const void *dev, size_t count, int salt) {
  float *h = (float *)malloc(count * 4);
  size_t i;
  EXPECT(h != NULL, "out of memory");
  dev_get(h, dev, count * 4);
  for (i = 0; i < count; ++i) {
    float want = (float)(7 * n * (n - 1) / 2 + n * (int)(i % 1000 + (size_t)salt));
    EXPECT(h[i] == want, "allreduce: element %zu is %g, expected %g", i, h[i], want);
  }
  free(h);
}

static int is_failure_code(xc_result_t rc) { return rc == XC_ERR_PEER_FAILED || rc == XC_ERR_TIMEOUT; }

/* ---- kill --------------------------------------------------------------------- */

static int run_kill(void) {
  xc_config_t cfg = XC_CONFIG_INIT;
  xc_comm_t world;
  xc_stream_t s;
  void *in, *out;
  int k, victim;
  int64_t t0, death;
  xc_result_t rc, async = XC_SUCCESS;
  char msg[1024];
  double sync_ms;

  /* xcrun stops the job with SIGTERM when the victim dies: the survivors finish their checks. */
  signal(SIGTERM, SIG_IGN);
  cfg.timeout_ms = TIMEOUT_MS;
  MP_CHECK(xc_init(&cfg, &world));
  MP_CHECK(xc_comm_rank(world, &me));
  MP_CHECK(xc_comm_size(world, &n));
  mp_rank = verdict_rank = me;
  victim = n - 1;
  dev_setup(world);
  if (me == 0) {
    const char *job = getenv("XC_JOB_ID");
    verdict_write_file("job_id", "%s", job ? job : "");
    printf("device_fault kill: %d ranks on the %s device, rank %d dies with %d allreduces in flight on the others\n", n,
           dev_kind(), victim, BATCH);
  }
  EXPECT(n >= 2, "kill needs 2 or more ranks");
  s = dev_stream(world);
  CALL(xc_stream_bind(world, s, XC_BIND_COLLECTIVES));
  in = dev_alloc(world, BIG_COUNT * 4);
  out = dev_alloc(world, BIG_COUNT * 4);
  for (k = 0; k < 3; ++k) {
    fill_input(in, 1001, k);
    CALL(xc_allreduce(in, out, 1001, XC_FLOAT32, XC_SUM, world));
    CALL(xc_stream_synchronize(s));
    check_output(out, 1001, k);
  }
  verdict_report("rank=%d warm-up allreduces correct", me);
  CALL(xc_barrier(world));

  fill_input(in, BIG_COUNT, 0);
  if (me == victim) {
    for (k = 0; k < VICTIM_ENQUEUES; ++k) CALL(xc_allreduce(in, out, BIG_COUNT, XC_FLOAT32, XC_SUM, world));
    verdict_write_file("victim.time", "%lld\n", (long long)verdict_now_ns());
    kill(getpid(), SIGKILL);
    for (;;) pause();
  }
  for (k = 0; k < BATCH; ++k) {
    rc = xc_allreduce(in, out, BIG_COUNT, XC_FLOAT32, XC_SUM, world);
    if (rc != XC_SUCCESS) { /* the failure may already be known at enqueue */
      EXPECT(is_failure_code(rc) || rc == XC_ERR_ABORTED, "enqueueing allreduce %d -> %s (%s)", k, xc_strerror(rc),
             xc_last_error());
      verdict_report("rank=%d enqueue of allreduce %d already failed: %s (%s)", me, k, xc_strerror(rc), xc_last_error());
      break;
    }
  }
  t0 = verdict_now_ns();
  rc = xc_stream_synchronize(s);
  sync_ms = ms_since(t0);
  snprintf(msg, sizeof msg, "%s", xc_last_error());
  {
    /* Written before the kill, and the error can only follow the kill. */
    char path[4096];
    FILE *f;
    long long t = 0;
    snprintf(path, sizeof path, "%s/victim.time", verdict_dir);
    f = fopen(path, "r");
    if (f) {
      if (fscanf(f, "%lld", &t) != 1) t = 0;
      fclose(f);
    }
    EXPECT(t != 0, "xc_stream_synchronize returned %s (%s) before the victim recorded its death", xc_strerror(rc), msg);
    death = (int64_t)t;
  }
  EXPECT(is_failure_code(rc),
         "xc_stream_synchronize with the victim dead -> %d %s (%s), expected XC_ERR_PEER_FAILED or "
         "XC_ERR_TIMEOUT",
         (int)rc, xc_strerror(rc), msg);
  EXPECT(msg[0] != '\0', "xc_stream_synchronize -> %s with an empty xc_last_error()", xc_strerror(rc));
  EXPECT((double)(verdict_now_ns() - death) / 1e6 < TIMEOUT_MS + MARGIN_MS,
         "the error came %.0f ms after the victim's death (deadline %d ms + %d ms)", (double)(verdict_now_ns() - death) / 1e6,
         TIMEOUT_MS, MARGIN_MS);
  verdict_report("rank=%d code=%d (%s) sync_ms=%.0f detect_ms=%.0f", me, (int)rc, xc_strerror(rc), sync_ms,
         (double)(verdict_now_ns() - death) / 1e6);
  verdict_report("message=%s", msg);
  CALL(xc_comm_get_async_error(world, &async));
  EXPECT(async != XC_SUCCESS, "xc_comm_get_async_error reports no error after the peer died");
  verdict_report("async_error=%s", xc_strerror(async));

  /* A later allreduce needs the dead rank: it fails, at the call or at the synchronize. */
  t0 = verdict_now_ns();
  rc = xc_allreduce(in, out, 1001, XC_FLOAT32, XC_SUM, world);
  if (rc == XC_SUCCESS) rc = xc_stream_synchronize(s);
  EXPECT(rc != XC_SUCCESS, "an allreduce after the peer died succeeded");
  EXPECT(ms_since(t0) < TIMEOUT_MS + MARGIN_MS, "an allreduce after the peer died took %.0f ms to fail", ms_since(t0));
  verdict_report("later allreduce: %s after %.0f ms (%s)", xc_strerror(rc), ms_since(t0), xc_last_error());

  t0 = verdict_now_ns();
  rc = xc_stream_destroy(s);
  verdict_report("xc_stream_destroy: %s after %.0f ms", xc_strerror(rc), ms_since(t0));
  EXPECT(ms_since(t0) < TIMEOUT_MS + MARGIN_MS, "xc_stream_destroy took %.0f ms", ms_since(t0));
  dev_free(world, in);
  dev_free(world, out);
  t0 = verdict_now_ns();
  rc = xc_comm_free(world);
  verdict_report("xc_comm_free: %s after %.0f ms", xc_strerror(rc), ms_since(t0));
  EXPECT(ms_since(t0) < TIMEOUT_MS + MARGIN_MS, "xc_comm_free took %.0f ms", ms_since(t0));
  verdict_pass();
  return 0;
}

/* ---- timeout ------------------------------------------------------------------ */

/* On a communicator with a short deadline, a device op waiting for a rank
   that never comes: an allreduce rank 1 does not join, and a receive from
   rank 1 (at rank 0) that rank 1 never sends. Each must fail XC_ERR_TIMEOUT
   with a message, within the deadline plus a margin, and the process must
   go on (the stream usable, the world working). */
static void timeout_once(xc_comm_t world, int p2p) {
  xc_config_t cfg = XC_CONFIG_INIT;
  xc_comm_t d;
  xc_stream_t s;
  void *in = dev_alloc(world, 1001 * 4), *out = dev_alloc(world, 1001 * 4);
  const char *what = p2p ? "a device receive from a rank that never sends" : "a device allreduce rank 1 never joins";
  int waits = p2p ? me == 0 : me != 1;
  cfg.timeout_ms = TIMEOUT_SHORT_MS;
  CALL(xc_comm_split(world, 0, me, &cfg, &d));
  s = dev_stream(d);
  CALL(xc_stream_bind(d, s, XC_BIND_COLLECTIVES));
  CALL(xc_stream_bind(d, s, 1));
  /* Every rank once, so the op that follows finds the intra-node kernels
     set up and waits inside one (on the generic path: a plain warm-up). */
  fill_input(in, 1001, 0);
  CALL(xc_allreduce(in, out, 1001, XC_FLOAT32, XC_SUM, d));
  CALL(xc_stream_synchronize(s));
  check_output(out, 1001, 0);
  if (waits) {
    int64_t t0 = verdict_now_ns();
    xc_result_t rc, async = XC_SUCCESS;
    double ms;
    char msg[512];
    if (p2p)
      CALL(xc_recv(out, 1001, XC_FLOAT32, 1, 5, d, NULL));
    else
      CALL(xc_allreduce(in, out, 1001, XC_FLOAT32, XC_SUM, d));
    rc = xc_stream_synchronize(s);
    ms = ms_since(t0);
    snprintf(msg, sizeof msg, "%s", xc_last_error());
    EXPECT(rc == XC_ERR_TIMEOUT && msg[0] != '\0', "%s: xc_stream_synchronize -> %d %s (%s), expected XC_ERR_TIMEOUT",
           what, (int)rc, xc_strerror(rc), msg);
    EXPECT(ms < TIMEOUT_SHORT_MS + MARGIN_MS, "%s: XC_ERR_TIMEOUT after %.0f ms (deadline %d ms)", what, ms,
           TIMEOUT_SHORT_MS);
    if (me == 0) printf("  %s: %s after %.0f ms (%s)\n", what, xc_strerror(rc), ms, msg);
    CALL(xc_comm_get_async_error(d, &async));
    EXPECT(async == XC_ERR_TIMEOUT, "%s: xc_comm_get_async_error -> %s, expected XC_ERR_TIMEOUT", what,
           xc_strerror(async));
    /* The error was cleared by the synchronize. */
    CALL(xc_stream_synchronize(s));
  }
  CALL(xc_barrier(world));
  CALL(xc_comm_abort(d));
  {
    xc_result_t rc = xc_stream_destroy(s);
    EXPECT(rc == XC_SUCCESS || rc == XC_ERR_ABORTED || rc == XC_ERR_TIMEOUT, "%s: xc_stream_destroy -> %s (%s)", what,
           xc_strerror(rc), xc_last_error());
  }
  CALL(xc_comm_free(d));
  dev_free(world, in);
  dev_free(world, out);
}

static int run_timeout(void) {
  xc_comm_t world;
  xc_stream_t s;
  void *in, *out;
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &me));
  MP_CHECK(xc_comm_size(world, &n));
  mp_rank = verdict_rank = me;
  dev_setup(world);
  if (n < 2) {
    if (me == 0) printf("device_fault timeout: needs 2 or more ranks\n");
    return 2;
  }
  if (me == 0)
    printf("device_fault timeout: %d ranks on the %s device, deadline %d ms\n", n, dev_kind(), TIMEOUT_SHORT_MS);
  timeout_once(world, 0);
  timeout_once(world, 1);
  s = dev_stream(world);
  CALL(xc_stream_bind(world, s, XC_BIND_COLLECTIVES));
  in = dev_alloc(world, 1001 * 4);
  out = dev_alloc(world, 1001 * 4);
  fill_input(in, 1001, 3);
  CALL(xc_allreduce(in, out, 1001, XC_FLOAT32, XC_SUM, world));
  CALL(xc_stream_synchronize(s));
  check_output(out, 1001, 3);
  CALL(xc_stream_destroy(s));
  dev_free(world, in);
  dev_free(world, out);
  MP_CHECK(xc_comm_free(world));
  if (me == 0) printf("device_fault timeout: passed\n");
  return 0;
}

/* ---- abort -------------------------------------------------------------------- */

typedef struct {
  xc_stream_t s;
  int started;
  xc_result_t rc;
  int64_t end;
  char msg[512];
} sync_thread_t;

static void *sync_main(void *arg) {
  sync_thread_t *t = (sync_thread_t *)arg;
  __atomic_store_n(&t->started, 1, __ATOMIC_SEQ_CST);
  t->rc = xc_stream_synchronize(t->s);
  t->end = verdict_now_ns();
  snprintf(t->msg, sizeof t->msg, "%s", xc_last_error());
  return NULL;
}

static void abort_once(xc_comm_t world, int threaded) {
  xc_comm_t d;
  xc_stream_t s;
  void *in = dev_alloc(world, 1001 * 4), *out = dev_alloc(world, 1001 * 4);
  const char *how =
      threaded ? "aborted while another thread waits in xc_stream_synchronize" : "aborted, then synchronised";
  CALL(xc_comm_dup(world, &d));
  s = dev_stream(d);
  CALL(xc_stream_bind(d, s, XC_BIND_COLLECTIVES));
  /* Every rank once, so the op that follows finds the intra-node kernels
     set up and waits inside one (on the generic path: a plain warm-up). */
  fill_input(in, 1001, 0);
  CALL(xc_allreduce(in, out, 1001, XC_FLOAT32, XC_SUM, d));
  CALL(xc_stream_synchronize(s));
  check_output(out, 1001, 0);
  if (me != 1) {
    sync_thread_t t;
    pthread_t th;
    int64_t t0, after;
    xc_result_t rc, async = XC_SUCCESS;
    memset(&t, 0, sizeof t);
    t.s = s;
    /* Rank 1 never enters this allreduce. */
    CALL(xc_allreduce(in, out, 1001, XC_FLOAT32, XC_SUM, d));
    if (threaded) {
      EXPECT(pthread_create(&th, NULL, sync_main, &t) == 0, "pthread_create failed");
      while (!__atomic_load_n(&t.started, __ATOMIC_SEQ_CST)) {
      }
    }
    t0 = verdict_now_ns();
    rc = xc_comm_abort(d);
    after = verdict_now_ns();
    EXPECT(rc == XC_SUCCESS, "%s: xc_comm_abort -> %s (%s)", how, xc_strerror(rc), xc_last_error());
    EXPECT((double)(after - t0) / 1e6 < ABORT_CALL_MS, "%s: xc_comm_abort took %.0f ms", how,
           (double)(after - t0) / 1e6);
    if (threaded) {
      EXPECT(pthread_join(th, NULL) == 0, "pthread_join failed");
      rc = t.rc;
    } else {
      rc = xc_stream_synchronize(s);
      t.end = verdict_now_ns();
      snprintf(t.msg, sizeof t.msg, "%s", xc_last_error());
    }
    EXPECT(rc == XC_ERR_ABORTED, "%s: xc_stream_synchronize -> %d %s (%s), expected XC_ERR_ABORTED", how, (int)rc,
           xc_strerror(rc), t.msg);
    EXPECT(t.msg[0] != '\0', "%s: xc_stream_synchronize -> XC_ERR_ABORTED with an empty xc_last_error()", how);
    EXPECT((double)(t.end - t0) / 1e6 < ABORT_PROMPT_MS, "%s: xc_stream_synchronize returned %.0f ms after the abort",
           how, (double)(t.end - t0) / 1e6);
    if (me == 0)
      printf("  %s: xc_comm_abort %.1f ms, xc_stream_synchronize -> %s %.1f ms after it (%s)\n", how,
             (double)(after - t0) / 1e6, xc_strerror(rc), (double)(t.end - t0) / 1e6, t.msg);
    CALL(xc_comm_get_async_error(d, &async));
    EXPECT(async == XC_ERR_ABORTED, "%s: xc_comm_get_async_error -> %s, expected XC_ERR_ABORTED", how,
           xc_strerror(async));
    /* Later device ops on the aborted communicator fail, at the call or on the stream. */
    rc = xc_allreduce(in, out, 1001, XC_FLOAT32, XC_SUM, d);
    if (rc == XC_SUCCESS) rc = xc_stream_synchronize(s);
    EXPECT(rc == XC_ERR_ABORTED, "%s: an allreduce after the abort -> %s (%s), expected XC_ERR_ABORTED", how,
           xc_strerror(rc), xc_last_error());
  }
  /* Rank 1 aborts its handle too once the others are done, so nobody's
     xc_comm_free waits for the others. */
  CALL(xc_barrier(world));
  if (me == 1) CALL(xc_comm_abort(d));
  {
    xc_result_t rc = xc_stream_destroy(s);
    EXPECT(rc == XC_SUCCESS || rc == XC_ERR_ABORTED, "%s: xc_stream_destroy -> %s (%s)", how, xc_strerror(rc),
           xc_last_error());
  }
  CALL(xc_comm_free(d));
  dev_free(world, in);
  dev_free(world, out);
}

static int run_abort(void) {
  xc_config_t cfg = XC_CONFIG_INIT;
  xc_comm_t world;
  xc_stream_t s;
  void *in, *out;
  cfg.timeout_ms = ABORT_TIMEOUT_MS;
  MP_CHECK(xc_init(&cfg, &world));
  MP_CHECK(xc_comm_rank(world, &me));
  MP_CHECK(xc_comm_size(world, &n));
  mp_rank = verdict_rank = me;
  dev_setup(world);
  if (n < 2) {
    if (me == 0) printf("device_fault abort: needs 2 or more ranks\n");
    return 2;
  }
  if (me == 0) printf("device_fault abort: %d ranks on the %s device\n", n, dev_kind());
  abort_once(world, 0);
  abort_once(world, 1);
  /* The world still works. */
  s = dev_stream(world);
  CALL(xc_stream_bind(world, s, XC_BIND_COLLECTIVES));
  in = dev_alloc(world, 1001 * 4);
  out = dev_alloc(world, 1001 * 4);
  fill_input(in, 1001, 5);
  CALL(xc_allreduce(in, out, 1001, XC_FLOAT32, XC_SUM, world));
  CALL(xc_stream_synchronize(s));
  check_output(out, 1001, 5);
  CALL(xc_stream_destroy(s));
  dev_free(world, in);
  dev_free(world, out);
  MP_CHECK(xc_comm_free(world));
  if (me == 0) printf("device_fault abort: passed\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "abort") == 0) return run_abort();
  if (argc >= 2 && strcmp(argv[1], "timeout") == 0) return run_timeout();
  if (argc >= 3 && strcmp(argv[2], "kill") == 0) {
    verdict_dir = argv[1];
    return run_kill();
  }
  fprintf(stderr, "usage: %s DIR kill | %s abort | %s timeout\n", argv[0], argv[0], argv[0]);
  return 2;
}
