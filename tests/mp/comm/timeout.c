/* Timeouts from a config passed to xc_comm_split (timeout_ms = 300), on 2
   ranks. Rank 0 receives from rank 1 with a tag rank 1 never sends (blocking
   xc_recv, then xc_irecv + xc_wait) and must get XC_ERR_TIMEOUT within
   [0.3, 5] s with a message naming the op and "rank 1", while rank 1 waits
   in a barrier on the world, which rank 0 joins after its timeout. The
   timed-out receive must not stay posted: a message sent afterwards with the
   same tag reaches the next receive. Then a collective: rank 0 enters
   xc_barrier on the child, which rank 1 never enters; it must time out in
   the same bounds, naming rank 1 as the one that never arrived, the first while 16 busy processes share rank 0's cpu, so that
   each of the waiter's yields may hand a whole time slice away. A child of
   the child and a dup of it (no config) inherit the 300 ms and the name;
   the name is copied at the split. The world, whose timeout is the
   default, keeps working. XC_TIMEOUT is set to 20 s before xc_init so a
   timeout that is not inherited fails the bounds instead of hanging the
   test. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "comm_util.h"

#define TIMEOUT_MS 300
#define MIN_S 0.3
#define MAX_S 5.0

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void expect_timeout(xc_result_t rc, double dt, const char *what, const char *op, int need_rank) {
  const char *msg = xc_last_error();
  printf("  %-34s -> %d after %.3f s: \"%s\"\n", what, (int)rc, dt, msg);
  fflush(stdout);
  MP_ASSERT(rc == XC_ERR_TIMEOUT, "%s returned %d (%s), expected XC_ERR_TIMEOUT", what, (int)rc, msg);
  MP_ASSERT(msg[0] != '\0', "%s: empty message", what);
  MP_ASSERT(dt >= MIN_S && dt <= MAX_S, "%s timed out after %.3f s, expected [%.1f, %.1f]", what, dt, MIN_S, MAX_S);
  if (op) MP_ASSERT(strstr(msg, op) != NULL, "%s: message does not name %s: %s", what, op, msg);
  if (need_rank) MP_ASSERT(strstr(msg, "rank 1") != NULL, "%s: message does not name rank 1: %s", what, msg);
}

/* The last error names the other rank of 2-rank comm (world rank 1, by its
   rank in comm) as the one that never arrived at the collective. */
static void expect_absent(xc_comm_t comm) {
  int r = -1;
  char want[64], msg[512];
  snprintf(msg, sizeof msg, "%s", xc_last_error()); /* before the next call clears it */
  MP_CHECK(xc_comm_rank(comm, &r));
  snprintf(want, sizeof want, ": rank %d never arrived at it", 1 - r);
  MP_ASSERT(strstr(msg, want) != NULL, "the absent rank is not named (want '%s'): %s", want, msg);
}

/* Processes that only burn the cpu this rank runs on, pinned there with
   this rank until hog_stop; they die with this rank whatever ends it. */
#define HOGS 16
static void hog_start(pid_t *pids, cpu_set_t *saved) {
  int cpu = sched_getcpu();
  MP_ASSERT(cpu >= 0 && sched_getaffinity(0, sizeof *saved, saved) == 0, "cannot read this rank's cpu");
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  MP_ASSERT(sched_setaffinity(0, sizeof one, &one) == 0, "cannot pin this rank to cpu %d", cpu);
  for (int i = 0; i < HOGS; ++i) {
    pids[i] = fork();
    MP_ASSERT(pids[i] >= 0, "fork failed");
    if (pids[i] == 0) {
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1) _exit(1);
      volatile unsigned long spins = 0;
      for (;;) ++spins;
    }
  }
}

static void hog_stop(const pid_t *pids, const cpu_set_t *saved) {
  for (int i = 0; i < HOGS; ++i)
    MP_ASSERT(kill(pids[i], SIGKILL) == 0 && waitpid(pids[i], NULL, 0) == pids[i], "cannot stop a busy process");
  MP_ASSERT(sched_setaffinity(0, sizeof *saved, saved) == 0, "cannot restore this rank's cpus");
}

/* Rank 0 receives on comm from rank 1 with a tag nobody sends; rank 1 waits
   on the world meanwhile. */
static void recv_timeout(xc_comm_t comm, xc_comm_t world, int tag, const char *what) {
  if (mp_rank == 0) {
    int32_t v = -1;
    double t0 = now_s();
    xc_result_t rc = xc_recv(&v, 1, XC_INT32, 1, tag, comm, NULL);
    expect_timeout(rc, now_s() - t0, what, "xc_recv", 1);
    MP_ASSERT(v == -1, "timed-out receive wrote %d", (int)v);
  }
  MP_CHECK(xc_barrier(world));
}

int main(void) {
  MP_ASSERT(setenv("XC_TIMEOUT", "20000", 1) == 0, "setenv failed");
  cu_view_t w;
  cu_init("timeout", &w);
  MP_ASSERT(w.size == 2, "run with 2 ranks, not %d", w.size);
  const int me = w.rank;

  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.timeout_ms = TIMEOUT_MS;
  char name[32] = "short-timeout";
  cfg.name = name;
  int colors[2] = {0, 0}, keys[2] = {0, 1};
  cu_view_t c;
  cu_split(&w, colors, keys, &cfg, &c, 1, "split(world, config timeout 300 ms)");
  memset(name, 'X', sizeof name - 1); /* the library keeps its own copy */

  /* blocking receive that nothing matches */
  const int never_tag = 4242;
  recv_timeout(c.comm, w.comm, never_tag, "xc_recv from rank 1");

  /* the timed-out receive is gone: a message sent now with that tag goes to
     the next receive */
  if (me == 1) {
    int32_t x = 31337;
    MP_CHECK(xc_send(&x, 1, XC_INT32, 0, never_tag, c.comm));
  } else {
    xc_status_t st;
    int32_t v = -1;
    MP_CHECK(xc_recv(&v, 1, XC_INT32, 1, never_tag, c.comm, &st));
    MP_ASSERT(v == 31337 && st.source == 1 && st.tag == never_tag, "received %d from %d tag %d", (int)v, st.source,
              st.tag);
  }
  cu_check(&c, 2, "child after a P2P timeout");

  /* non-blocking receive, timed out by xc_wait */
  if (me == 0) {
    xc_request_t req = NULL;
    xc_status_t st;
    int32_t v = -1;
    MP_CHECK(xc_irecv(&v, 1, XC_INT32, 1, never_tag + 1, c.comm, &req));
    double t0 = now_s();
    xc_result_t rc = xc_wait(&req, &st);
    expect_timeout(rc, now_s() - t0, "xc_irecv + xc_wait from rank 1", NULL, 1);
    MP_ASSERT(req == NULL, "xc_wait did not free the request");
    MP_ASSERT(st.error == XC_ERR_TIMEOUT, "status.error %d", st.error);
    MP_ASSERT(v == -1, "timed-out receive wrote %d", (int)v);
  }
  MP_CHECK(xc_barrier(w.comm));
  cu_check(&c, 3, "child after an irecv timeout");

  /* without a config, a child of the child and a dup of it inherit the
     300 ms (and the name) */
  cu_view_t g, d = c;
  keys[0] = 1;
  keys[1] = 0;
  cu_split(&c, colors, keys, NULL, &g, 4, "split(child, NULL config)");
  MP_CHECK(xc_comm_dup(c.comm, &d.comm));
  cu_check(&d, 5, "dup(child)");
  recv_timeout(d.comm, w.comm, 7, "xc_recv on dup(child)");
  /* in g the world's rank 0 is g's rank 1, so it waits for g's rank 0 */
  if (me == 0) {
    int32_t v = -1;
    double t0 = now_s();
    xc_result_t rc = xc_recv(&v, 1, XC_INT32, 0, 8, g.comm, NULL);
    expect_timeout(rc, now_s() - t0, "xc_recv on split(child) from its rank 0", "xc_recv", 0);
    MP_ASSERT(strstr(xc_last_error(), "rank 0") != NULL, "message does not name rank 0: %s", xc_last_error());
  }
  MP_CHECK(xc_barrier(w.comm));

  /* collectives rank 1 never joins: on the grandchild, then on the child */
  if (me == 0) {
    cpu_set_t saved;
    pid_t hogs[HOGS];
    hog_start(hogs, &saved);
    double t0 = now_s();
    xc_result_t rc = xc_barrier(g.comm);
    double dt = now_s() - t0;
    hog_stop(hogs, &saved);
    expect_timeout(rc, dt, "xc_barrier on split(child), busy cpu", "xc_barrier", 0);
    MP_ASSERT(strstr(xc_last_error(), "short-timeout") != NULL, "the inherited name is not in the message: %s",
              xc_last_error());
    expect_absent(g.comm);
    t0 = now_s();
    rc = xc_barrier(c.comm);
    expect_timeout(rc, now_s() - t0, "xc_barrier without rank 1", "xc_barrier", 0);
    MP_ASSERT(strstr(xc_last_error(), "short-timeout") != NULL, "the config's name is not in the message: %s",
              xc_last_error());
    expect_absent(c.comm);
    fflush(stdout);
  }
  MP_CHECK(xc_barrier(w.comm));
  /* the collectives of c and g are out of step now: abort, then free; d is
     still in step */
  MP_CHECK(xc_comm_abort(g.comm));
  MP_CHECK(xc_comm_free(g.comm));
  MP_CHECK(xc_comm_abort(c.comm));
  MP_CHECK(xc_comm_free(c.comm));
  cu_check(&d, 9, "dup(child) after its parent's timeouts");
  MP_CHECK(xc_comm_free(d.comm));

  /* the world keeps the default timeout and works */
  int64_t x = me + 1, sum = 0;
  MP_CHECK(xc_allreduce(&x, &sum, 1, XC_INT64, XC_SUM, w.comm));
  MP_ASSERT(sum == 3, "allreduce sum %lld", (long long)sum);
  cu_check(&w, 10, "world at the end");
  MP_CHECK(xc_comm_free(w.comm));
  if (me == 0) printf("timeout: OK\n");
  return 0;
}
