/* Fault tests: what the survivors see when a rank dies, and what a blocked
   thread sees when its communicator is aborted.

     fault_kill DIR ring PHASE     (under xcrun, 3+ ranks; driven by fault_kill.sh)
     fault_kill DIR rdv HOW        (under xcrun, 3+ ranks; driven by fault_kill.sh)
     fault_kill -   abort          (one process, two ranks made with a unique id)

   ring: every rank exchanges messages with its ring neighbours (xc_sendrecv
   and xc_irecv/xc_isend/xc_wait, small eager and large rendezvous sizes, data
   checked), then joins a collective (xc_allreduce on a dup of the world or
   xc_barrier on the world). At an iteration picked from the seed, the victim
   (the last rank) SIGKILLs itself: PHASE "exchange" at the top of the
   iteration, "rendezvous" with a large exchange posted and under way,
   "collective" after the exchange, before the collective.

   rdv: the survivors block at once in receives only the victim could
   satisfy: rank 0 in an xc_recv of an 8 MiB message from the victim, rank 1
   in an xc_recv from XC_ANY_SOURCE on the world, rank 2 (4+ ranks) in an
   xc_irecv from XC_ANY_SOURCE on a dup of the world and xc_wait. HOW: "none"
   the victim never sends; "rts" it posts its 8 MiB xc_isend (the rendezvous
   request goes out) and dies before any data moves; "part" it is in a
   blocking xc_send and SIGKILLs itself half-way through the data (the upper
   half of its buffer is unreadable and the fault handler kills it).

   Every survivor must get XC_ERR_PEER_FAILED naming the victim well within
   the configured deadline, see the failure in xc_comm_get_async_error on the
   communicators that contain the victim (and not on the "survivors"
   communicator split off before the kill), have later ops that need the
   victim fail at once, still run an allreduce and a large exchange on the
   survivors communicator, and free everything without waiting for the dead.
   Each survivor then writes DIR/rank<r>.ok (its detection time and the error
   message), or DIR/rank<r>.fail with the first check that failed. Survivors
   ignore SIGTERM so that xcrun, which stops the job when the victim dies,
   lets them finish within its grace period. Rank 0 also writes DIR/job_id
   and DIR/shm_after_init (how many /dev/shm/xcomm-<job>-* names existed once
   every rank had attached: the library unlinks them right away).

   abort: two threads of one process each join a two-rank communicator with
   xc_comm_init_rank and dup it; each blocks in an xc_recv on its dup that
   nothing will match (rank 0 from rank 1, rank 1 from XC_ANY_SOURCE) with an
   xc_irecv also pending, and a third thread calls xc_comm_abort on that dup.
   The blocked receive and the pending request must end with XC_ERR_ABORTED
   promptly, later ops on the dup too, while the parent communicator keeps
   working. Then rank 0 blocks in an xc_allreduce on a second dup that rank
   1 never joins, waiting in shared memory, and aborting that dup must end
   it promptly too. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "mp_test.h"
#include "verdict.h"

enum {
  TIMEOUT_MS = 20000,  /* the configured deadline of every blocking op */
  PROMPT_MS = 5000,    /* a failure must be reported well within it */
  RING_ITERS = 300,
  SMALL_MAX = 8192,    /* eager up to XC_SHM_EAGER_BYTES (8 KiB by default) */
  LARGE_MAX = 1 << 20,
  RDV_BYTES = 8 << 20,
  TAG_RDV = 7,
  TAG_UNUSED = 0x7000000
};

static int g_size, g_victim;
static uint64_t g_seed;

/* ---- small helpers --------------------------------------------------------- */


static double ms_between(int64_t a, int64_t b) { return (double)(b - a) / 1e6; }

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

#define EXPECT(cond, ...)   \
  do {                      \
    if (!(cond)) verdict_fail(__VA_ARGS__); \
  } while (0)

/* Does text name "rank R" (and not, say, "rank R0")? */
static int names_rank(const char *text, int r) {
  char want[32];
  snprintf(want, sizeof want, "rank %d", r);
  size_t n = strlen(want);
  for (const char *p = strstr(text, want); p; p = strstr(p + 1, want))
    if (p[n] < '0' || p[n] > '9') return 1;
  return 0;
}

/* The first error an op returned: which op, when, and its message. */
typedef struct {
  xc_result_t rc;
  int iter;
  int64_t start_ns, end_ns;
  char op[96];
  char msg[1024];
} op_error_t;

static int take_error(op_error_t *e, xc_result_t rc, const char *op, int iter, int64_t start_ns) {
  if (rc == XC_SUCCESS || e->rc != XC_SUCCESS) return rc != XC_SUCCESS;
  e->rc = rc;
  e->iter = iter;
  e->start_ns = start_ns;
  e->end_ns = verdict_now_ns();
  snprintf(e->op, sizeof e->op, "%s", op);
  snprintf(e->msg, sizeof e->msg, "%s", xc_last_error());
  return 1;
}

/* The victim's death: written (CLOCK_MONOTONIC, system-wide) just before
   the SIGKILL by whoever sends it. */
static void record_death(void) { verdict_write_file("victim.time", "%lld\n", (long long)verdict_now_ns()); }

static void die_now(void) {
  record_death();
  kill(getpid(), SIGKILL);
  for (;;) pause();
}

static int64_t read_death(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/victim.time", verdict_dir);
  for (int tries = 0; tries < 100; ++tries) {
    FILE *f = fopen(path, "r");
    if (f) {
      long long t = 0;
      int got = fscanf(f, "%lld", &t);
      fclose(f);
      if (got == 1) return t;
    }
    sleep_ms(10);
  }
  verdict_fail("%s was never written: the victim did not record its death", path);
  return 0;
}

/* How many /dev/shm/xcomm-<job>-* names exist now (-1: no /dev/shm). */
static int count_job_segments(const char *job) {
  char prefix[256];
  snprintf(prefix, sizeof prefix, "xcomm-%s-", job);
  DIR *d = opendir("/dev/shm");
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) ++n;
  closedir(d);
  return n;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) {
    fprintf(stderr, "[rank %d] out of memory (%zu bytes)\n", mp_rank, n);
    exit(1);
  }
  return p;
}

/* ---- set-up shared by the kill modes ---------------------------------------- */

typedef struct {
  xc_comm_t world, everyone, survivors; /* survivors: NULL on the victim */
  int rank;
} comms_t;

static void start_job(comms_t *c) {
  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.timeout_ms = TIMEOUT_MS;
  MP_CHECK(xc_init(&cfg, &c->world));
  MP_CHECK(xc_comm_rank(c->world, &c->rank));
  MP_CHECK(xc_comm_size(c->world, &g_size));
  mp_rank = verdict_rank = c->rank;
  g_victim = g_size - 1;
  g_seed = mp_seed();
  if (g_size < 3) {
    fprintf(stderr, "fault_kill needs at least 3 ranks (2 survivors), got %d\n", g_size);
    exit(2);
  }
  /* xcrun stops the job with SIGTERM when the victim dies; the survivors
     finish their checks first (within xcrun's --grace). */
  signal(SIGTERM, SIG_IGN);
  /* Made before the kill: a split needs every rank of its parent. */
  MP_CHECK(xc_comm_dup(c->world, &c->everyone));
  MP_CHECK(xc_comm_split(c->world, c->rank == g_victim ? XC_UNDEFINED : 0, c->rank, NULL, &c->survivors));
  MP_ASSERT((c->survivors == NULL) == (c->rank == g_victim), "survivors comm on rank %d", c->rank);
  MP_CHECK(xc_barrier(c->world));
  if (c->rank == 0) {
    const char *job = getenv("XC_JOB_ID");
    verdict_write_file("job_id", "%s\n", job ? job : "");
    verdict_write_file("shm_after_init", "%d\n", job ? count_job_segments(job) : -1);
    printf("seed 0x%llx, %d ranks, victim rank %d\n", (unsigned long long)g_seed, g_size, g_victim);
    fflush(stdout);
  }
}

/* After the failure: everything a survivor must still be able to do. */
static void survivor_checks(comms_t *c, const op_error_t *e) {
  int r = c->rank;
  int64_t death = read_death();
  double detect_ms = ms_between(death, e->end_ns), blocked_ms = ms_between(e->start_ns, e->end_ns);
  printf("[rank %d] %s -> %s (%d) %.1f ms after the victim's death, blocked %.1f ms: %s\n", r, e->op,
         xc_strerror(e->rc), (int)e->rc, detect_ms, blocked_ms, e->msg);
  fflush(stdout);
  verdict_report("rank=%d victim=%d op=%s iter=%d code=%d detect_ms=%.1f blocked_ms=%.1f", r, g_victim, e->op, e->iter,
         (int)e->rc, detect_ms, blocked_ms);
  verdict_report("message=%s", e->msg);
  EXPECT(e->rc == XC_ERR_PEER_FAILED, "%s returned %s (%d), want XC_ERR_PEER_FAILED: %s", e->op, xc_strerror(e->rc),
         (int)e->rc, e->msg);
  EXPECT(names_rank(e->msg, g_victim), "the message of %s does not name rank %d: %s", e->op, g_victim, e->msg);
  EXPECT(detect_ms >= 0 && detect_ms < PROMPT_MS, "the failure took %.1f ms to reach %s (deadline %d ms, want < %d)",
         detect_ms, e->op, TIMEOUT_MS, PROMPT_MS);

  /* The failure is recorded on the communicators that hold the victim. */
  xc_result_t async = XC_SUCCESS;
  MP_CHECK(xc_comm_get_async_error(c->world, &async));
  EXPECT(async == XC_ERR_PEER_FAILED, "xc_comm_get_async_error(world) = %d, want XC_ERR_PEER_FAILED", (int)async);
  MP_CHECK(xc_comm_get_async_error(c->everyone, &async));
  EXPECT(async == XC_ERR_PEER_FAILED, "xc_comm_get_async_error(dup of world) = %d, want XC_ERR_PEER_FAILED", (int)async);
  MP_CHECK(xc_comm_get_async_error(c->survivors, &async));
  EXPECT(async == XC_SUCCESS, "xc_comm_get_async_error(survivors) = %d, want XC_SUCCESS (the victim is not in it)",
         (int)async);
  verdict_report("async_error world=PEER_FAILED dup=PEER_FAILED survivors=SUCCESS");

  /* Later ops that need the victim fail at once. */
  int32_t word = r;
  int64_t t0 = verdict_now_ns();
  xc_result_t rc = xc_send(&word, 1, XC_INT32, g_victim, TAG_UNUSED, c->world);
  double took = ms_between(t0, verdict_now_ns());
  EXPECT(rc == XC_ERR_PEER_FAILED && names_rank(xc_last_error(), g_victim) && took < PROMPT_MS,
         "a later xc_send to rank %d: %d after %.1f ms (%s), want XC_ERR_PEER_FAILED naming it at once", g_victim,
         (int)rc, took, xc_last_error());
  t0 = verdict_now_ns();
  rc = xc_recv(&word, 1, XC_INT32, XC_ANY_SOURCE, TAG_UNUSED, c->world, NULL);
  took = ms_between(t0, verdict_now_ns());
  EXPECT(rc == XC_ERR_PEER_FAILED && names_rank(xc_last_error(), g_victim) && took < PROMPT_MS,
         "a later xc_recv from XC_ANY_SOURCE on the world: %d after %.1f ms (%s), want XC_ERR_PEER_FAILED naming rank "
         "%d at once",
         (int)rc, took, xc_last_error(), g_victim);
  verdict_report("later xc_send/xc_recv(any) on world: PEER_FAILED");

  /* The survivors' own communicator works: an allreduce and a large
     (rendezvous) ring exchange, both checked. */
  int ns = 0, sr = 0;
  MP_CHECK(xc_comm_size(c->survivors, &ns));
  MP_CHECK(xc_comm_rank(c->survivors, &sr));
  EXPECT(ns == g_size - 1 && sr == r, "survivors comm: rank %d of %d, want %d of %d", sr, ns, r, g_size - 1);
  uint64_t v[2] = {(uint64_t)(r + 1), 0}, want1 = 0;
  uint64_t s = g_seed ^ 0xa11edULL ^ (uint64_t)r;
  v[1] = mp_next(&s);
  for (int q = 0; q < ns; ++q) {
    uint64_t sq = g_seed ^ 0xa11edULL ^ (uint64_t)q;
    want1 += mp_next(&sq);
  }
  t0 = verdict_now_ns();
  rc = xc_allreduce(XC_IN_PLACE, v, 2, XC_UINT64, XC_SUM, c->survivors);
  took = ms_between(t0, verdict_now_ns());
  EXPECT(rc == XC_SUCCESS, "xc_allreduce on the survivors comm after the failure: %s (%s)", xc_strerror(rc),
         xc_last_error());
  EXPECT(v[0] == (uint64_t)ns * (uint64_t)(ns + 1) / 2 && v[1] == want1,
         "xc_allreduce on the survivors comm gave {%llu, %llu}, want {%llu, %llu}", (unsigned long long)v[0],
         (unsigned long long)v[1], (unsigned long long)ns * (unsigned long long)(ns + 1) / 2,
         (unsigned long long)want1);
  verdict_report("survivors allreduce ok (%.1f ms)", took);

  size_t big = LARGE_MAX;
  unsigned char *out = xmalloc(big), *in = xmalloc(big), *want = xmalloc(big);
  int right = (sr + 1) % ns, left = (sr + ns - 1) % ns;
  mp_fill(out, big, g_seed, (uint64_t)sr, 0xafe7);
  mp_fill(want, big, g_seed, (uint64_t)left, 0xafe7);
  memset(in, 0, big);
  xc_status_t st;
  rc = xc_sendrecv(out, big, right, 3, in, big, left, 3, XC_UINT8, c->survivors, &st);
  EXPECT(rc == XC_SUCCESS, "1 MiB xc_sendrecv on the survivors comm: %s (%s)", xc_strerror(rc), xc_last_error());
  EXPECT(st.source == left && st.bytes == big && memcmp(in, want, big) == 0,
         "1 MiB xc_sendrecv on the survivors comm: wrong data (source %d, %zu bytes)", st.source, st.bytes);
  free(out);
  free(in);
  free(want);
  verdict_report("survivors 1 MiB ring exchange ok");

  /* A later collective on the world needs the victim: it fails, promptly. */
  t0 = verdict_now_ns();
  rc = xc_barrier(c->world);
  took = ms_between(t0, verdict_now_ns());
  EXPECT(rc == XC_ERR_PEER_FAILED && took < PROMPT_MS,
         "a later xc_barrier on the world: %s (%d) after %.1f ms (%s), want XC_ERR_PEER_FAILED within %d ms",
         xc_strerror(rc), (int)rc, took, xc_last_error(), PROMPT_MS);
  verdict_report("later xc_barrier(world): PEER_FAILED after %.1f ms: %s", took, xc_last_error());

  /* Freeing never waits for the dead (the survivors comm synchronises its
     live members only). */
  t0 = verdict_now_ns();
  rc = xc_comm_free(c->survivors);
  EXPECT(rc == XC_SUCCESS, "xc_comm_free(survivors): %s (%s)", xc_strerror(rc), xc_last_error());
  rc = xc_comm_free(c->everyone);
  EXPECT(rc == XC_SUCCESS, "xc_comm_free(dup of world): %s (%s)", xc_strerror(rc), xc_last_error());
  rc = xc_comm_free(c->world);
  EXPECT(rc == XC_SUCCESS, "xc_comm_free(world): %s (%s)", xc_strerror(rc), xc_last_error());
  took = ms_between(t0, verdict_now_ns());
  EXPECT(took < PROMPT_MS, "freeing the communicators took %.1f ms", took);
  verdict_report("freed survivors, dup and world in %.1f ms", took);

  verdict_pass();
}

/* ---- ring: die mid-exchange ------------------------------------------------- */

enum { PHASE_EXCHANGE = 0, PHASE_RENDEZVOUS = 1, PHASE_COLLECTIVE = 2 };

/* Message size of an iteration, the same on every rank: odd draws small
   (eager), even draws large (rendezvous). */
static size_t ring_bytes(int iter) {
  uint64_t s = g_seed ^ (0x51ed270bULL * (uint64_t)(iter + 1));
  uint64_t h = mp_next(&s);
  if (h & 1) return 1 + (size_t)((h >> 1) % SMALL_MAX);
  return SMALL_MAX + 1 + (size_t)((h >> 1) % (LARGE_MAX - SMALL_MAX));
}

static void run_ring(int phase) {
  comms_t c;
  start_job(&c);
  const int r = c.rank, n = g_size, right = (r + 1) % n, left = (r + n - 1) % n;

  /* The kill point: an iteration from the seed (and the rank count); for the
     rendezvous phase, the next one whose message is large. */
  uint64_t ks = g_seed ^ (0x6b111ULL * (uint64_t)n) ^ (uint64_t)phase;
  int kill_iter = 20 + (int)(mp_next(&ks) % (RING_ITERS - 60));
  if (phase == PHASE_RENDEZVOUS)
    while (ring_bytes(kill_iter) <= SMALL_MAX) ++kill_iter;
  if (r == 0) {
    printf("ring: victim dies in iteration %d of %d (%zu-byte messages, then %s), phase %d\n", kill_iter, RING_ITERS,
           ring_bytes(kill_iter), kill_iter % 2 == 0 ? "xc_allreduce on a dup of world" : "xc_barrier on world",
           phase);
    fflush(stdout);
  }

  unsigned char *out = xmalloc(LARGE_MAX), *in = xmalloc(LARGE_MAX), *want = xmalloc(LARGE_MAX);
  op_error_t err;
  memset(&err, 0, sizeof err);
  for (int i = 0; i < RING_ITERS; ++i) {
    int dying = r == g_victim && i == kill_iter;
    if (dying && phase == PHASE_EXCHANGE) die_now();
    size_t bytes = ring_bytes(i);
    mp_fill(out, bytes, g_seed, (uint64_t)r, (uint64_t)i);
    xc_status_t st;
    memset(&st, 0, sizeof st);
    xc_result_t rc;
    const char *op;
    int64_t t0 = verdict_now_ns();
    if (dying && phase == PHASE_RENDEZVOUS) {
      /* Post both halves, let the handshake start, and die with them pending. */
      xc_request_t rq, sq;
      MP_CHECK(xc_irecv(in, bytes, XC_UINT8, left, i, c.world, &rq));
      MP_CHECK(xc_isend(out, bytes, XC_UINT8, right, i, c.world, &sq));
      for (int k = 0; k < 3; ++k) {
        int done = 0;
        MP_CHECK(xc_test(&sq, &done, NULL));
        if (done) break;
        sleep_ms(1);
      }
      die_now();
    }
    if (i % 2 == 0) {
      op = "xc_sendrecv";
      rc = xc_sendrecv(out, bytes, right, i, in, bytes, left, i, XC_UINT8, c.world, &st);
    } else {
      xc_request_t rq = NULL, sq = NULL;
      op = "xc_irecv+xc_isend+xc_wait";
      rc = xc_irecv(in, bytes, XC_UINT8, left, i, c.world, &rq);
      if (rc != XC_SUCCESS) {
        op = "xc_irecv";
      } else if ((rc = xc_isend(out, bytes, XC_UINT8, right, i, c.world, &sq)) != XC_SUCCESS) {
        op = "xc_isend";
        take_error(&err, rc, op, i, t0);
        (void)xc_wait(&rq, NULL); /* never leave a receive into our buffer behind */
      } else {
        rc = xc_wait(&rq, &st);
        if (take_error(&err, rc, "xc_wait (receive)", i, t0)) {
          (void)xc_wait(&sq, NULL);  /* to a live neighbour, or fails at once */
          break;
        }
        rc = xc_wait(&sq, NULL);
        op = "xc_wait (send)";
      }
    }
    if (take_error(&err, rc, op, i, t0)) break;
    mp_fill(want, bytes, g_seed, (uint64_t)left, (uint64_t)i);
    if (st.source != left || st.bytes != bytes || memcmp(in, want, bytes) != 0)
      verdict_fail("iteration %d: wrong message from rank %d (source %d, %zu bytes, want %zu)", i, left, st.source, st.bytes,
           bytes);

    if (dying && phase == PHASE_COLLECTIVE) die_now();
    t0 = verdict_now_ns();
    if (i % 2 == 0) {
      /* Everyone's checksum of what it sent: each rank can compute the sum. */
      uint64_t v[2] = {(uint64_t)r, 0}, want_sum = 0;
      memcpy(&v[1], out, bytes < 8 ? bytes : 8);
      for (int q = 0; q < n; ++q) {
        uint64_t w = 0;
        unsigned char tmp[8];
        mp_fill(tmp, 8, g_seed, (uint64_t)q, (uint64_t)i);
        memcpy(&w, tmp, bytes < 8 ? bytes : 8);
        want_sum += w;
      }
      rc = xc_allreduce(XC_IN_PLACE, v, 2, XC_UINT64, XC_SUM, c.everyone);
      if (take_error(&err, rc, "xc_allreduce (dup of world)", i, t0)) break;
      if (v[0] != (uint64_t)n * (uint64_t)(n - 1) / 2 || v[1] != want_sum)
        verdict_fail("iteration %d: xc_allreduce gave a wrong sum", i);
    } else {
      rc = xc_barrier(c.world);
      if (take_error(&err, rc, "xc_barrier (world)", i, t0)) break;
    }
  }
  free(out);
  free(in);
  free(want);
  if (r == g_victim) verdict_fail("the victim is still alive after %d iterations", RING_ITERS);
  if (err.rc == XC_SUCCESS) verdict_fail("all %d iterations succeeded although the victim died in iteration %d", RING_ITERS,
                                 kill_iter);
  verdict_report("kill_iter=%d phase=%d", kill_iter, phase);
  if (err.iter != kill_iter)
    verdict_fail("the first error came in iteration %d, but the victim died in iteration %d: %s -> %d (%s)", err.iter,
         kill_iter, err.op, (int)err.rc, err.msg);
  survivor_checks(&c, &err);
}

/* ---- rdv: die while survivors wait for it --------------------------------- */

/* "part": the upper half of the victim's send buffer is made unreadable, so
   its engine faults exactly when it starts to copy the second half into
   shared memory, whatever the machine's speed; the fault handler SIGKILLs the
   victim there. Only async-signal-safe calls in the handler. */
static char g_death_path[4096], g_death_tmp[4200];

static void die_on_fault(int sig) {
  (void)sig;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  unsigned long long t = (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
  char text[32];
  int n = 0;
  char digits[24];
  do {
    digits[n++] = (char)('0' + t % 10);
    t /= 10;
  } while (t);
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  text[n++] = '\n';
  int fd = open(g_death_tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t w = write(fd, text, (size_t)n);
    (void)w;
    close(fd);
    rename(g_death_tmp, g_death_path);
  }
  kill(getpid(), SIGKILL);
}

static void run_rdv(const char *how) {
  int none = strcmp(how, "none") == 0, rts = strcmp(how, "rts") == 0, part = strcmp(how, "part") == 0;
  int late = strcmp(how, "late") == 0;
  if (!none && !rts && !part && !late) {
    fprintf(stderr, "rdv: unknown variant '%s' (none, rts, part, late)\n", how);
    exit(2);
  }
  comms_t c;
  start_job(&c);
  const int r = c.rank;
  size_t bytes = RDV_BYTES;

  unsigned char *buf = NULL;
  long page = sysconf(_SC_PAGESIZE);
  if (posix_memalign((void **)&buf, (size_t)page, bytes) != 0) verdict_fail("posix_memalign of %zu bytes failed", bytes);
  op_error_t err;
  memset(&err, 0, sizeof err);
  if (r == g_victim) {
    mp_fill(buf, bytes, g_seed, (uint64_t)r, TAG_RDV);
    if (part) {
      snprintf(g_death_path, sizeof g_death_path, "%s/victim.time", verdict_dir);
      snprintf(g_death_tmp, sizeof g_death_tmp, "%s.tmp", g_death_path);
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = die_on_fault;
      sigaction(SIGSEGV, &sa, NULL);
      sigaction(SIGBUS, &sa, NULL);
      if (mprotect(buf + bytes / 2, bytes / 2, PROT_NONE) != 0) verdict_fail("mprotect failed");
    }
    MP_CHECK(xc_barrier(c.world));
    sleep_ms(300); /* the survivors are blocked by now */
    if (none) die_now();
    if (rts || late) {
      xc_request_t sq;
      MP_CHECK(xc_isend(buf, bytes, XC_UINT8, 0, TAG_RDV, c.world, &sq));
      die_now();
    }
    xc_result_t rc = xc_send(buf, bytes, XC_UINT8, 0, TAG_RDV, c.world); /* faults half-way */
    verdict_fail("the victim's %zu-byte send returned %d (%s) instead of dying half-way", bytes, (int)rc, xc_last_error());
  }

  unsigned char *want = NULL;
  if (r == 0) {
    want = xmalloc(bytes);
    mp_fill(want, bytes, g_seed, (uint64_t)g_victim, TAG_RDV);
    memset(buf, 0, bytes);
  }
  MP_CHECK(xc_barrier(c.world));
  int64_t t0 = verdict_now_ns();
  xc_status_t st;
  xc_result_t rc;
  if (r == 0 && late) {
    /* Receive only once the victim is known dead: its announcement is
       already here, the data can no longer be fetched (deterministic also
       with XC_SHM_LARGE=cma, where the receiver reads the sender's memory). */
    xc_result_t async = XC_SUCCESS;
    while (async == XC_SUCCESS && verdict_now_ns() - t0 < (int64_t)TIMEOUT_MS * 1000000) {
      MP_CHECK(xc_comm_get_async_error(c.world, &async));
    }
    rc = xc_recv(buf, bytes, XC_UINT8, g_victim, TAG_RDV, c.world, &st);
    take_error(&err, rc, "xc_recv (large, from the victim, after its death)", 0, t0);
  } else if (r == 0) {
    rc = xc_recv(buf, bytes, XC_UINT8, g_victim, TAG_RDV, c.world, &st);
    take_error(&err, rc, "xc_recv (large, from the victim)", 0, t0);
  } else if (r == 1) {
    rc = xc_recv(buf, bytes, XC_UINT8, XC_ANY_SOURCE, XC_ANY_TAG, c.world, &st);
    take_error(&err, rc, "xc_recv (XC_ANY_SOURCE, world)", 0, t0);
  } else {
    xc_request_t rq;
    MP_CHECK(xc_irecv(buf, bytes, XC_UINT8, XC_ANY_SOURCE, XC_ANY_TAG, c.everyone, &rq));
    rc = xc_wait(&rq, &st);
    take_error(&err, rc, "xc_wait (xc_irecv XC_ANY_SOURCE, dup of world)", 0, t0);
    EXPECT(rq == NULL, "xc_wait left the request handle set");
  }
  verdict_report("rdv=%s bytes=%zu", how, bytes);
  if (r == 0 && part) {
    size_t got = 0, step = 4096;
    while (got < bytes && memcmp(buf + got, want + got, step) == 0) got += step;
    printf("[rank 0] the first %zu of %zu bytes (%.1f%%) had arrived when the victim died\n", got, bytes,
           100.0 * (double)got / (double)bytes);
    verdict_report("arrived_bytes=%zu of %zu", got, bytes);
    EXPECT(got > 0 && got <= bytes / 2, "%zu of %zu bytes arrived, but the victim died at the half-way mark", got,
           bytes);
  }
  EXPECT(err.rc != XC_SUCCESS, "%s succeeded although the victim died (%zu bytes from rank %d)",
         r == 0 ? "the large receive" : "the any-source receive", st.bytes, st.source);
  free(buf);
  free(want);
  survivor_checks(&c, &err);
}

/* ---- abort: unblock a blocking receive from another thread --------------- */

typedef struct {
  xc_comm_t comm;
  int delay_ms;
  int64_t when;
  xc_result_t rc;
} aborter_t;

static void *abort_later(void *p) {
  aborter_t *a = p;
  sleep_ms(a->delay_ms);
  a->when = verdict_now_ns();
  a->rc = xc_comm_abort(a->comm);
  return NULL;
}

typedef struct {
  int rank;
  const xc_unique_id_t *id;
  char why[1024]; /* empty: every check passed */
  char what[1024];
} abort_rank_t;

#define ACHECK(cond, ...)                                   \
  do {                                                      \
    if (!(cond)) {                                          \
      snprintf(a->why, sizeof a->why, __VA_ARGS__);         \
      return NULL;                                          \
    }                                                       \
  } while (0)

static void *abort_rank(void *p) {
  abort_rank_t *a = p;
  const int r = a->rank, other = 1 - r;
  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.timeout_ms = TIMEOUT_MS;
  xc_comm_t comm = NULL, dup = NULL;
  xc_result_t rc = xc_comm_init_rank(2, a->id, r, &cfg, &comm);
  ACHECK(rc == XC_SUCCESS, "xc_comm_init_rank: %s (%s)", xc_strerror(rc), xc_last_error());
  rc = xc_comm_dup(comm, &dup);
  ACHECK(rc == XC_SUCCESS, "xc_comm_dup: %s (%s)", xc_strerror(rc), xc_last_error());
  rc = xc_barrier(comm);
  ACHECK(rc == XC_SUCCESS, "xc_barrier: %s (%s)", xc_strerror(rc), xc_last_error());

  /* A non-blocking receive pending across the abort, then a blocking one. */
  int32_t small = -1;
  xc_request_t pending = NULL;
  rc = xc_irecv(&small, 1, XC_INT32, other, 11, dup, &pending);
  ACHECK(rc == XC_SUCCESS, "xc_irecv: %s (%s)", xc_strerror(rc), xc_last_error());
  aborter_t ab = {dup, 200 + 100 * r, 0, XC_SUCCESS};
  pthread_t t;
  ACHECK(pthread_create(&t, NULL, abort_later, &ab) == 0, "pthread_create failed");
  size_t bytes = 1 << 20;
  unsigned char *buf = xmalloc(bytes);
  int64_t t0 = verdict_now_ns();
  rc = r == 0 ? xc_recv(buf, bytes, XC_UINT8, other, 5, dup, NULL)
              : xc_recv(buf, bytes, XC_UINT8, XC_ANY_SOURCE, XC_ANY_TAG, dup, NULL);
  int64_t t1 = verdict_now_ns();
  char msg[512];
  snprintf(msg, sizeof msg, "%s", xc_last_error());
  pthread_join(t, NULL);
  free(buf);
  ACHECK(ab.rc == XC_SUCCESS, "xc_comm_abort from another thread: %d", (int)ab.rc);
  double after_ms = ms_between(ab.when, t1), blocked_ms = ms_between(t0, t1);
  ACHECK(rc == XC_ERR_ABORTED && msg[0] != '\0',
         "the blocked xc_recv returned %s (%d) after %.1f ms, want XC_ERR_ABORTED: %s", xc_strerror(rc), (int)rc,
         blocked_ms, msg);
  ACHECK(after_ms >= 0 && after_ms < PROMPT_MS, "the blocked xc_recv returned %.1f ms after the abort", after_ms);
  snprintf(a->what, sizeof a->what, "blocked %.1f ms, ended %.2f ms after the abort: %s", blocked_ms, after_ms, msg);

  xc_status_t st;
  rc = xc_wait(&pending, &st);
  ACHECK(rc == XC_ERR_ABORTED && pending == NULL, "the pending xc_irecv: xc_wait returned %d (%s), want XC_ERR_ABORTED",
         (int)rc, xc_last_error());
  int32_t word = r;
  rc = xc_send(&word, 1, XC_INT32, other, 5, dup);
  ACHECK(rc == XC_ERR_ABORTED, "xc_send on the aborted dup: %d (%s)", (int)rc, xc_last_error());
  rc = xc_barrier(dup);
  ACHECK(rc == XC_ERR_ABORTED, "xc_barrier on the aborted dup: %d (%s)", (int)rc, xc_last_error());
  xc_result_t async = XC_SUCCESS;
  rc = xc_comm_get_async_error(dup, &async);
  ACHECK(rc == XC_SUCCESS && async == XC_ERR_ABORTED, "async error of the aborted dup: %d", (int)async);
  rc = xc_comm_get_async_error(comm, &async);
  ACHECK(rc == XC_SUCCESS && async == XC_SUCCESS, "async error of the parent: %d, want XC_SUCCESS", (int)async);

  /* The parent still works. */
  int64_t v = r + 1;
  rc = xc_allreduce(XC_IN_PLACE, &v, 1, XC_INT64, XC_SUM, comm);
  ACHECK(rc == XC_SUCCESS && v == 3, "xc_allreduce on the parent after the abort: %d (%s), v = %lld", (int)rc,
         xc_last_error(), (long long)v);
  int32_t got = -1;
  rc = xc_sendrecv(&word, 1, other, 6, &got, 1, other, 6, XC_INT32, comm, NULL);
  ACHECK(rc == XC_SUCCESS && got == other, "xc_sendrecv on the parent after the abort: %d (%s), got %d", (int)rc,
         xc_last_error(), (int)got);

  /* A collective blocked in its shared-memory waits (rank 1 never joins it)
     ends promptly too when its communicator is aborted. */
  xc_comm_t dup2 = NULL;
  rc = xc_comm_dup(comm, &dup2);
  ACHECK(rc == XC_SUCCESS, "xc_comm_dup: %s (%s)", xc_strerror(rc), xc_last_error());
  size_t count = 1 << 18;
  float *vec = xmalloc(count * sizeof *vec);
  for (size_t i = 0; i < count; ++i) vec[i] = (float)(i % 7);
  rc = xc_allreduce(XC_IN_PLACE, vec, count, XC_FLOAT32, XC_SUM, dup2);  /* both: sets up the staging */
  ACHECK(rc == XC_SUCCESS && vec[5] == 10.0f, "xc_allreduce on the second dup: %d (%s)", (int)rc, xc_last_error());
  if (r == 0) {
    aborter_t ab2 = {dup2, 200, 0, XC_SUCCESS};
    ACHECK(pthread_create(&t, NULL, abort_later, &ab2) == 0, "pthread_create failed");
    t0 = verdict_now_ns();
    rc = xc_allreduce(XC_IN_PLACE, vec, count, XC_FLOAT32, XC_SUM, dup2);
    t1 = verdict_now_ns();
    snprintf(msg, sizeof msg, "%s", xc_last_error());
    pthread_join(t, NULL);
    after_ms = ms_between(ab2.when, t1);
    ACHECK(rc == XC_ERR_ABORTED, "the blocked xc_allreduce returned %s (%d) after %.1f ms, want XC_ERR_ABORTED: %s",
           xc_strerror(rc), (int)rc, ms_between(t0, t1), msg);
    ACHECK(after_ms >= 0 && after_ms < PROMPT_MS, "the blocked xc_allreduce returned %.1f ms after the abort", after_ms);
    size_t len = strlen(a->what);
    snprintf(a->what + len, sizeof a->what - len, "; xc_allreduce ended %.2f ms after the abort", after_ms);
    rc = xc_send(&word, 1, XC_INT32, other, 9, comm);  /* rank 1 may go on */
  } else {
    rc = xc_recv(&got, 1, XC_INT32, other, 9, comm, NULL);
    if (rc == XC_SUCCESS) rc = xc_comm_abort(dup2);  /* it never joined: free without the closing barrier */
  }
  free(vec);
  ACHECK(rc == XC_SUCCESS, "after the aborted xc_allreduce: %d (%s)", (int)rc, xc_last_error());
  rc = xc_comm_free(dup2);
  ACHECK(rc == XC_SUCCESS, "xc_comm_free(second dup): %s (%s)", xc_strerror(rc), xc_last_error());

  t0 = verdict_now_ns();
  rc = xc_comm_free(dup);
  ACHECK(rc == XC_SUCCESS, "xc_comm_free(aborted dup): %s (%s)", xc_strerror(rc), xc_last_error());
  ACHECK(ms_between(t0, verdict_now_ns()) < PROMPT_MS, "xc_comm_free of the aborted dup took %.1f ms",
         ms_between(t0, verdict_now_ns()));
  rc = xc_comm_free(comm);
  ACHECK(rc == XC_SUCCESS, "xc_comm_free(parent): %s (%s)", xc_strerror(rc), xc_last_error());
  return NULL;
}

static int run_abort(void) {
  xc_unique_id_t id;
  MP_CHECK(xc_get_unique_id(&id));
  abort_rank_t ranks[2];
  pthread_t threads[2];
  for (int r = 0; r < 2; ++r) {
    memset(&ranks[r], 0, sizeof ranks[r]);
    ranks[r].rank = r;
    ranks[r].id = &id;
    if (pthread_create(&threads[r], NULL, abort_rank, &ranks[r]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  int failed = 0;
  for (int r = 0; r < 2; ++r) {
    pthread_join(threads[r], NULL);
    if (ranks[r].why[0]) {
      fprintf(stderr, "rank %d: FAIL: %s\n", r, ranks[r].why);
      failed = 1;
    } else {
      printf("rank %d: unblocked with XC_ERR_ABORTED: %s\n", r, ranks[r].what);
    }
  }
  return failed;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[2], "abort") == 0) return run_abort();
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s DIR ring exchange|rendezvous|collective\n"
            "       %s DIR rdv none|rts|part|late\n"
            "       %s - abort\n",
            argv[0], argv[0], argv[0]);
    return 2;
  }
  verdict_dir = argv[1];
  if (strcmp(argv[2], "ring") == 0) {
    const char *phases[] = {"exchange", "rendezvous", "collective"};
    for (int p = 0; p < 3; ++p)
      if (strcmp(argv[3], phases[p]) == 0) {
        run_ring(p);
        return 0;
      }
    fprintf(stderr, "ring: unknown phase '%s'\n", argv[3]);
    return 2;
  }
  if (strcmp(argv[2], "rdv") == 0) {
    run_rdv(argv[3]);
    return 0;
  }
  fprintf(stderr, "unknown mode '%s'\n", argv[2]);
  return 2;
}
