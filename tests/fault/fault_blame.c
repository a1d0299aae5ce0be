/* Fault tests of whom a failure blames, and of what a kill leaves behind.

     fault_blame mismatch          (under xcrun, 2 ranks; driven by fault_blame.sh)
     fault_blame pending           (under xcrun, 2 ranks)
     fault_blame splitkill DIR     (N ranks started with torchrun's variables, not
                                    by xcrun: nothing sweeps /dev/shm after them)
     fault_blame createkill DIR    (as splitkill)
     fault_blame setupgone DIR     (as splitkill)
     fault_blame chaos DIR         (under xcrun, 3+ ranks; XC_TEST_SEED picks the
                                    victim and the moment)

   mismatch: rank 1 calls xc_allreduce with XC_MAX while rank 0 calls it
   with XC_SUM (rank 1 late, so rank 0 waits in shared memory and rank 1
   finds the mismatch), stops rank 0 until it has freed its communicator
   and exited 0. That is a clean exit after a failed op: rank 0
   must get the mismatch (XC_ERR_INVALID_USAGE), not XC_ERR_PEER_FAILED for a
   rank that only left. Exits 0 when so, 1 else.

   splitkill: the ranks split the world so that the last world rank is rank 0
   of the new communicator (the one that creates its shared-memory segment).
   It starts that communicator's first collective at once and is SIGKILLed
   (by a thread of its own) once it has created the segment and sent its
   name; the others start 1.5 s later, so they attach to a segment whose
   creator is dead, and must fail with XC_ERR_PEER_FAILED and leave no
   /dev/shm/xcomm-<job>-* behind (the script checks that).

   createkill: as splitkill, but the victim dies the moment its shared-memory
   segment exists (its shm_open, O_CREAT, of a collective's segment: this
   program's own shm_open stands in for libc's), before any member mapped
   it; the others start at once, must fail with XC_ERR_PEER_FAILED naming
   rank 0 of the split within PROMPT_MS, and leave nothing in /dev/shm.

   setupgone: the last rank dies right after the world is duplicated; rank 0
   starts the dup's first collective, creates its segment, sends its name,
   finds the death while waiting for the others to map it, fails and removes
   the segment, then says so (DIR/rank0.done). Only then do the other
   survivors start the collective: they find the segment gone and must fail
   within PROMPT_MS with XC_ERR_PEER_FAILED naming the dead rank, not wait
   out the deadline for a report that never comes (seen in chaos, seed 12).

   chaos: every rank loops over mixed ops on three communicators (the world,
   a dup and a split of it, all with the world's numbering): a ring exchange
   (xc_isend to the right, xc_irecv from XC_ANY_SOURCE, xc_wait), allreduce,
   broadcast, allgather, alltoall and barrier, small and large. The victim,
   drawn from the seed, SIGKILLs itself from a thread at a moment drawn from
   the seed (0-400 ms into the loop). Every survivor must see an op fail
   within PROMPT_MS of the death with XC_ERR_PEER_FAILED and a message that
   names the victim, then free everything; it writes DIR/rank<r>.ok or
   DIR/rank<r>.fail. (Receives name their source, or XC_ANY_SOURCE, which
   fails when a member crashes: a receive from a live rank that gave up the
   loop would rightly wait for it, not for the dead one.) */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "mp_test.h"
#include "verdict.h"

enum { TIMEOUT_MS = 20000, PROMPT_MS = 5000, CHAOS_LOOP_MS = 3000, LARGE = 64 << 10 };

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Does text name "rank r" (not rank 12 for rank 1)? */
static int names_rank(const char *text, int r) {
  char want[32];
  int n = snprintf(want, sizeof want, "rank %d", r);
  for (const char *p = strstr(text, want); p; p = strstr(p + 1, want))
    if (p[n] < '0' || p[n] > '9') return 1;
  return 0;
}

static xc_comm_t init_world(int *rank, int *size) {
  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.timeout_ms = TIMEOUT_MS;
  xc_comm_t world;
  MP_CHECK(xc_init(&cfg, &world));
  MP_CHECK(xc_comm_rank(world, rank));
  MP_CHECK(xc_comm_size(world, size));
  mp_rank = *rank;
  return world;
}

/* ---- mismatch ------------------------------------------------------------------ */

/* Rank 1, after its op failed: stop rank 0 until rank 1 has exited, so that
   rank 0 looks at the op's news only once rank 1 is gone (as a busy machine
   may have it; 4-5 of 8 runs there). A child of rank 1 resumes rank 0. */
static void hold_until_exit(pid_t other) {
  pid_t parent = getpid();
  kill(other, SIGSTOP);
  if (fork() == 0) {
    while (getppid() == parent) sleep_ms(1);
    sleep_ms(100);
    kill(other, SIGCONT);
    _exit(0);
  }
}

static int run_mismatch(void) {
  int rank, size;
  xc_comm_t world = init_world(&rank, &size);
  MP_ASSERT(size == 2, "mismatch runs on 2 ranks");
  int32_t mine = (int32_t)getpid(), theirs = 0;
  MP_CHECK(xc_sendrecv(&mine, 1, 1 - rank, 1, &theirs, 1, 1 - rank, 1, XC_INT32, world, NULL));
  int32_t in[4] = {1, 2, 3, 4}, out[4];
  if (rank == 1) sleep_ms(100);
  /* The world's first collective: rank 0 waits in shared memory (for rank 1
     to join the segment, or to arrive); rank 1 finds the mismatch. */
  xc_result_t rc = xc_allreduce(in, out, 4, XC_INT32, rank == 1 ? XC_MAX : XC_SUM, world);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", xc_last_error());
  if (rank == 1) {
    if (rc == XC_ERR_INVALID_USAGE) hold_until_exit((pid_t)theirs);
    xc_comm_free(world);  /* the op failed: no closing barrier; then it has left */
    return 0;             /* a clean exit after a failed op */
  }
  xc_comm_free(world);
  printf("rank 0: xc_allreduce -> %d (%s)\n", (int)rc, msg);
  if (rc != XC_ERR_INVALID_USAGE) {
    fprintf(stderr, "rank 0: want XC_ERR_INVALID_USAGE (%d) for the mismatch, got %d: %s\n",
            (int)XC_ERR_INVALID_USAGE, (int)rc, msg);
    return 1;
  }
  return 0;
}

/* ---- pending ------------------------------------------------------------------- */

/* Rank 1 posts a receive it never waits for (nor frees), aborts and frees
   the world (no closing barrier) and exits 0; rank 0, blocked in a receive
   from it, must get XC_ERR_PEER_FAILED saying rank 1 has left, not that it
   failed: the handle kept rank 1's fabric alive to the exit, and it never
   said it was leaving. */
static int run_pending(void) {
  int rank, size;
  xc_comm_t world = init_world(&rank, &size);
  MP_ASSERT(size == 2, "pending runs on 2 ranks");
  int32_t x = 0;
  if (rank == 1) {
    xc_request_t never;
    MP_CHECK(xc_irecv(&x, 1, XC_INT32, 0, 5, world, &never));
    MP_CHECK(xc_comm_abort(world));
    xc_comm_free(world);
    return 0;  /* a normal exit with the request still unfinished */
  }
  xc_result_t rc = xc_recv(&x, 1, XC_INT32, 1, 9, world, NULL);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", xc_last_error());
  xc_comm_free(world);
  printf("rank 0: xc_recv from rank 1 -> %d (%s)\n", (int)rc, msg);
  if (rc != XC_ERR_PEER_FAILED || !strstr(msg, "rank 1 has already left")) {
    fprintf(stderr, "rank 0: want XC_ERR_PEER_FAILED saying rank 1 has already left, got %d: %s\n", (int)rc, msg);
    return 1;
  }
  return 0;
}

/* ---- splitkill ----------------------------------------------------------------- */

static int own_segment_exists(const char *job) {
  char prefix[256];
  snprintf(prefix, sizeof prefix, "xcomm-%s-coll-%ld-", job, (long)getpid());
  DIR *d = opendir("/dev/shm");
  if (!d) return 0;
  int found = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) found = 1;
  closedir(d);
  return found;
}

static void *kill_after_create(void *arg) {
  const char *job = arg;
  while (!own_segment_exists(job)) sleep_ms(1);
  sleep_ms(200);  /* the name is sent; this rank waits for the others to join */
  raise(SIGKILL);
  return NULL;
}

/* ---- createkill ----------------------------------------------------------------- */

/* Set in the victim of createkill: its first shared-memory segment of a
   collective that it makes (O_CREAT) is the last thing it does. This
   definition stands in for libc's in libxcomm's calls too. */
static int die_on_coll_segment;

int shm_open(const char *name, int oflag, mode_t mode) {
  static int (*real)(const char *, int, mode_t);
  if (!real) real = (int (*)(const char *, int, mode_t))dlsym(RTLD_NEXT, "shm_open");
  int fd = real(name, oflag, mode);
  if (die_on_coll_segment && fd >= 0 && (oflag & O_CREAT) && strstr(name, "-coll-")) raise(SIGKILL);
  return fd;
}

/* splitkill (at_create 0) and createkill (1): the last world rank, rank 0
   of a split, dies in the split's first collective; the others must fail
   naming it (createkill: within PROMPT_MS; splitkill starts them 1.5 s
   late, once it is dead). */
static int run_split_victim(int at_create) {
  int rank, size;
  xc_comm_t world = init_world(&rank, &size);
  const char *job = getenv("XC_JOB_ID");
  MP_ASSERT(size >= 3 && (job || at_create), "%s needs XC_JOB_ID and 3+ ranks", at_create ? "createkill" : "splitkill");
  int victim = size - 1;
  xc_comm_t split;
  MP_CHECK(xc_comm_split(world, 0, size - 1 - rank, NULL, &split));  /* victim is rank 0 of split */
  int srank;
  MP_CHECK(xc_comm_rank(split, &srank));
  MP_ASSERT(srank == size - 1 - rank, "split rank %d", srank);
  int32_t v[4] = {rank, rank, rank, rank}, out[4];
  if (rank == victim) {
    pthread_t t;
    if (at_create)
      die_on_coll_segment = 1;
    else
      pthread_create(&t, NULL, kill_after_create, (void *)job);
    xc_allreduce(v, out, 4, XC_INT32, XC_SUM, split);
    sleep_ms(60000);  /* not reached: killed meanwhile */
    return 1;
  }
  if (!at_create) sleep_ms(1500);
  int64_t t0 = verdict_now_ns();
  xc_result_t rc = xc_allreduce(v, out, 4, XC_INT32, XC_SUM, split);
  int64_t ms = (verdict_now_ns() - t0) / 1000000;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", xc_last_error());
  printf("rank %d: first allreduce of the split -> %d after %lld ms (%s)\n", rank, (int)rc, (long long)ms, msg);
  xc_comm_free(split);
  xc_comm_free(world);
  if (rc != XC_ERR_PEER_FAILED || !names_rank(msg, 0) || (at_create && ms > PROMPT_MS)) {
    char within[32] = "";
    if (at_create) snprintf(within, sizeof within, " within %d ms", PROMPT_MS);
    fprintf(stderr, "rank %d: want XC_ERR_PEER_FAILED naming rank 0 of the split%s, got %d after %lld ms: %s\n", rank,
            within, (int)rc, (long long)ms, msg);
    return 1;
  }
  return 0;
}

/* ---- setupgone ------------------------------------------------------------------ */

static int run_setupgone(void) {
  int rank, size;
  xc_comm_t world = init_world(&rank, &size);
  MP_ASSERT(size >= 3, "setupgone needs 3+ ranks");
  int victim = size - 1;
  xc_comm_t dup;
  MP_CHECK(xc_comm_dup(world, &dup));
  if (rank == victim) raise(SIGKILL);
  char path[4096];
  snprintf(path, sizeof path, "%s/rank0.done", verdict_dir);
  if (rank != 0) { /* until rank 0 gave the op up (and removed the segment) */
    int64_t until = verdict_now_ns() + (int64_t)TIMEOUT_MS * 1000000;
    while (access(path, F_OK) != 0 && verdict_now_ns() < until) sleep_ms(5);
    MP_ASSERT(access(path, F_OK) == 0, "rank 0 never said it gave up");
  }
  int32_t v[4] = {rank, rank, rank, rank}, out[4];
  int64_t t0 = verdict_now_ns();
  xc_result_t rc = xc_allreduce(v, out, 4, XC_INT32, XC_SUM, dup);
  int64_t ms = (verdict_now_ns() - t0) / 1000000;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", xc_last_error());
  if (rank == 0) verdict_write_file("rank0.done", "%d\n", (int)rc);
  printf("rank %d: the dup's first allreduce -> %d after %lld ms (%s)\n", rank, (int)rc, (long long)ms, msg);
  xc_comm_free(dup);
  xc_comm_free(world);
  if (rc != XC_ERR_PEER_FAILED || !names_rank(msg, victim) || ms > PROMPT_MS) {
    fprintf(stderr, "rank %d: want XC_ERR_PEER_FAILED naming rank %d within %d ms, got %d after %lld ms: %s\n", rank,
            victim, PROMPT_MS, (int)rc, (long long)ms, msg);
    return 1;
  }
  return 0;
}

/* ---- chaos ---------------------------------------------------------------------- */

static void *kill_later(void *arg) {
  int ms = *(int *)arg;
  sleep_ms(ms);
  verdict_write_file("victim.time", "%lld\n", (long long)verdict_now_ns());
  raise(SIGKILL);
  return NULL;
}

static int64_t read_death(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/victim.time", verdict_dir);
  for (int i = 0; i < 2000; ++i) {
    FILE *f = fopen(path, "r");
    if (f) {
      long long t = 0;
      int got = fscanf(f, "%lld", &t);
      fclose(f);
      if (got == 1) return t;
    }
    sleep_ms(5);
  }
  return 0;
}

/* One round of mixed ops on comm (numbered as the world). Returns the first
   error, with its message in msg. */
static xc_result_t chaos_round(xc_comm_t comm, int rank, int size, int iter, uint8_t *a, uint8_t *b, char *msg,
                               size_t msg_bytes, const char **op) {
  xc_result_t rc = XC_SUCCESS;
#define STEP(name, call)                                       \
  do {                                                         \
    *op = name;                                                \
    rc = (call);                                               \
    if (rc != XC_SUCCESS) {                                    \
      snprintf(msg, msg_bytes, "%s", xc_last_error());         \
      return rc;                                               \
    }                                                          \
  } while (0)
  size_t bytes = (iter % 3 == 2) ? LARGE : 64;
  size_t each = bytes / (size_t)size;
  int right = (rank + 1) % size;
  xc_request_t rr, sr;
  STEP("xc_irecv", xc_irecv(b, bytes, XC_UINT8, XC_ANY_SOURCE, iter, comm, &rr));
  *op = "xc_isend";
  rc = xc_isend(a, bytes, XC_UINT8, right, iter, comm, &sr);
  if (rc != XC_SUCCESS) {
    snprintf(msg, msg_bytes, "%s", xc_last_error());
    xc_wait(&rr, NULL);  /* not left pending (see below) */
    return rc;
  }
  /* Both waited for even when the first fails: no handle is left behind
     (the last xc_comm_free says the rank leaves all the same: pending). */
  xc_result_t rs = xc_wait(&sr, NULL);
  if (rs != XC_SUCCESS) snprintf(msg, msg_bytes, "%s", xc_last_error());
  xc_result_t rr_rc = xc_wait(&rr, NULL);
  if (rs != XC_SUCCESS) {
    *op = "xc_wait(send)";
    return rs;
  }
  STEP("xc_wait(recv)", rr_rc);
  STEP("xc_allreduce", xc_allreduce(a, b, bytes / 4, XC_INT32, XC_SUM, comm));
  STEP("xc_broadcast", xc_broadcast(a, bytes, XC_UINT8, iter % size, comm));
  STEP("xc_allgather", xc_allgather(a, b, each, XC_UINT8, comm));
  STEP("xc_alltoall", xc_alltoall(a, b, each, XC_UINT8, comm));
  STEP("xc_barrier", xc_barrier(comm));
#undef STEP
  return XC_SUCCESS;
}

static int run_chaos(void) {
  int rank, size;
  xc_comm_t world = init_world(&rank, &size);
  MP_ASSERT(size >= 3, "chaos needs 3+ ranks");
  uint64_t seed = mp_seed(), st = seed;
  int victim = (int)(mp_next(&st) % (uint64_t)size);
  int kill_ms = (int)(mp_next(&st) % 400);
  signal(SIGTERM, SIG_IGN);  /* finish the checks within xcrun's grace */
  xc_comm_t comms[3] = {world, NULL, NULL};
  MP_CHECK(xc_comm_dup(world, &comms[1]));
  MP_CHECK(xc_comm_split(world, 0, rank, NULL, &comms[2]));
  MP_CHECK(xc_barrier(world));
  if (rank == 0) {
    const char *job = getenv("XC_JOB_ID");
    verdict_write_file("job_id", "%s\n", job ? job : "");
    verdict_write_file("victim", "%d\n", victim);
    printf("seed 0x%llx: %d ranks, rank %d dies %d ms into the loop\n", (unsigned long long)seed, size, victim,
           kill_ms);
    fflush(stdout);
  }
  uint8_t *a = calloc(LARGE, 1), *b = calloc(LARGE, 1);
  MP_ASSERT(a && b, "out of memory");
  if (rank == victim) {
    pthread_t t;
    pthread_create(&t, NULL, kill_later, &kill_ms);
  }
  char msg[2048] = "";
  const char *op = "";
  xc_result_t rc = XC_SUCCESS;
  int64_t start = verdict_now_ns(), fail_ns = 0;
  int iter = 0, on = 0;
  for (; rc == XC_SUCCESS; ++iter) {
    if (rank != victim && verdict_now_ns() - start > (int64_t)(CHAOS_LOOP_MS + 2 * PROMPT_MS) * 1000000LL) break;
    on = iter % 3;
    rc = chaos_round(comms[on], rank, size, iter, a, b, msg, sizeof msg, &op);
  }
  fail_ns = verdict_now_ns();
  if (rank == victim) sleep_ms(60000);  /* not reached: it dies meanwhile */
  char name[64];
  snprintf(name, sizeof name, "rank%d", rank);
  char why[512] = "";
  int64_t death = read_death();
  double detect_ms = death ? (double)(fail_ns - death) / 1e6 : -1;
  if (rc == XC_SUCCESS)
    snprintf(why, sizeof why, "no op failed although rank %d died", victim);
  else if (rc != XC_ERR_PEER_FAILED)
    snprintf(why, sizeof why, "%s failed with %d, want XC_ERR_PEER_FAILED (%d)", op, (int)rc, (int)XC_ERR_PEER_FAILED);
  else if (!names_rank(msg, victim))
    snprintf(why, sizeof why, "%s's message does not name rank %d, the dead one", op, victim);
  else if (!death)
    snprintf(why, sizeof why, "the victim recorded no time of death");
  else if (detect_ms > PROMPT_MS)
    snprintf(why, sizeof why, "the failure came %.0f ms after the death, want under %d", detect_ms, PROMPT_MS);
  for (int i = 2; i >= 0; --i) xc_comm_free(comms[i]);
  free(a);
  free(b);
  char file[80];
  snprintf(file, sizeof file, "%s.%s", name, why[0] ? "fail" : "ok");
  verdict_write_file(file, "%s%siter=%d comm=%d op=%s code=%d detect_ms=%.1f\nmessage=%s\n", why, why[0] ? "\n" : "",
             iter, on, op, (int)rc, detect_ms, msg);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "mismatch") == 0) return run_mismatch();
  if (argc >= 2 && strcmp(argv[1], "pending") == 0) return run_pending();
  if (argc >= 3 && strcmp(argv[1], "createkill") == 0) {
    verdict_dir = argv[2];
    return run_split_victim(1);
  }
  if (argc >= 3 && strcmp(argv[1], "splitkill") == 0) {
    verdict_dir = argv[2];
    return run_split_victim(0);
  }
  if (argc >= 3 && strcmp(argv[1], "setupgone") == 0) {
    verdict_dir = argv[2];
    return run_setupgone();
  }
  if (argc >= 3 && strcmp(argv[1], "chaos") == 0) {
    verdict_dir = argv[2];
    return run_chaos();
  }
  fprintf(stderr, "usage: fault_blame mismatch | pending | splitkill DIR | createkill DIR | setupgone DIR | chaos DIR\n");
  return 2;
}
