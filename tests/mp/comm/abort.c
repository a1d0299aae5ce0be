/* xc_comm_abort: a receive pending on a dup completes with XC_ERR_ABORTED
   when the dup is aborted; later ops on the aborted dup (P2P, collectives,
   split, dup) return XC_ERR_ABORTED with a message and
   xc_comm_get_async_error reports it; messages sent on it before the abort
   never reach the world; the world and a sibling dup keep working; freeing
   the aborted dup succeeds without synchronising (bounded time), and the
   stale handle then reads as freed. Also: a receive pending on a dup when
   the dup is freed completes with XC_ERR_ABORTED, and blocking calls in
   progress on another thread (xc_recv, xc_barrier) return XC_ERR_ABORTED
   when the main thread aborts their communicator. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <time.h>

#include "comm_util.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A blocking call on another thread, cut by an abort. */
typedef struct blocked {
  xc_comm_t comm;
  int peer;
  int barrier; /* 1: xc_barrier, 0: xc_recv */
  int started; /* set (atomically) just before the call */
  xc_result_t rc;
  char msg[256];
  int32_t value;
} blocked_t;

static void *blocked_main(void *arg) {
  blocked_t *b = (blocked_t *)arg;
  b->value = -1;
  __atomic_store_n(&b->started, 1, __ATOMIC_SEQ_CST);
  if (b->barrier)
    b->rc = xc_barrier(b->comm);
  else
    b->rc = xc_recv(&b->value, 1, XC_INT32, b->peer, 6000, b->comm, NULL);
  snprintf(b->msg, sizeof b->msg, "%s", xc_last_error());
  return NULL;
}

/* A call on another thread that cannot complete: a receive nobody sends
   to, or (on ranks other than 0) a barrier rank 0 never joins. The main
   thread aborts the communicator as soon as the thread is about to enter
   the call, so the abort lands anywhere from before the call to while it
   blocks; in every case the call must return XC_ERR_ABORTED promptly.
   The communicator's timeout is 2 s, so a call the abort missed fails
   with XC_ERR_TIMEOUT instead of hanging the test. Returns the number of
   such misses (0 expected). */
static int abort_blocked(xc_comm_t world, int barrier, int n, int iter) {
  xc_comm_t d = NULL;
  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.timeout_ms = 2000;
  MP_CHECK(xc_comm_split(world, 0, mp_rank, &cfg, &d));
  blocked_t b;
  memset(&b, 0, sizeof b);
  b.comm = d;
  b.peer = (mp_rank + n - 1) % n;
  b.barrier = barrier;
  b.rc = XC_SUCCESS;
  const int runs = !barrier || mp_rank != 0;
  pthread_t th;
  MP_CHECK(xc_barrier(world));
  if (runs) {
    MP_ASSERT(pthread_create(&th, NULL, blocked_main, &b) == 0, "pthread_create failed");
    while (!__atomic_load_n(&b.started, __ATOMIC_SEQ_CST)) {
    }
  }
  double t0 = now_s();
  MP_CHECK(xc_comm_abort(d));
  int missed = 0;
  if (runs) {
    MP_ASSERT(pthread_join(th, NULL) == 0, "pthread_join failed");
    double dt = now_s() - t0;
    if (mp_rank == 1 && iter == 0)
      printf("  blocked %s on another thread, aborted: %d after %.3f s: \"%s\"\n",
             barrier ? "xc_barrier" : "xc_recv", (int)b.rc, dt, b.msg);
    if (b.rc != XC_ERR_ABORTED || b.msg[0] == '\0' || dt > 1.0) {
      printf("  [rank %d] iteration %d: %s on another thread, aborted by this one, returned %d after %.3f s: \"%s\"\n",
             mp_rank, iter, barrier ? "xc_barrier" : "xc_recv", (int)b.rc, dt, b.msg);
      missed = 1;
    }
    fflush(stdout);
    MP_ASSERT(b.value == -1, "aborted receive wrote %d", (int)b.value);
  }
  MP_CHECK(xc_barrier(world));
  MP_CHECK(xc_comm_free(d));
  return missed;
}

int main(void) {
  cu_view_t w;
  cu_init("abort", &w);
  const int n = w.size, me = w.rank;
  const int right = (me + 1) % n, left = (me + n - 1) % n;

  cu_view_t d = w, sib = w;
  MP_CHECK(xc_comm_dup(w.comm, &d.comm));
  MP_CHECK(xc_comm_dup(w.comm, &sib.comm));
  cu_check(&d, 1, "dup before abort");

  /* receives that nothing will match, pending when the abort comes: one
     from the left neighbour, one from any source */
  int32_t pend[2] = {-1, -1};
  xc_request_t rq[2] = {NULL, NULL};
  MP_CHECK(xc_irecv(&pend[0], 1, XC_INT32, left, 4000, d.comm, &rq[0]));
  /* a message on the dup, sent before the abort with the tag the world
     uses below; it must never show up on the world */
  int64_t on_dup = -7000 - me, on_world = 7000 + me;
  xc_request_t sreq = NULL;
  MP_CHECK(xc_isend(&on_dup, 1, XC_INT64, right, 5, d.comm, &sreq));
  MP_CHECK(xc_barrier(w.comm)); /* everyone has posted and sent */
  MP_CHECK(xc_irecv(&pend[1], 1, XC_INT32, XC_ANY_SOURCE, 4001, d.comm, &rq[1]));
  int done = 1;
  MP_CHECK(xc_test(&rq[0], &done, NULL));
  MP_ASSERT(done == 0, "a receive nobody sent to completed");

  double t0 = now_s();
  MP_CHECK(xc_comm_abort(d.comm));
  MP_ASSERT(now_s() - t0 < 2.0, "xc_comm_abort blocked for %.3f s", now_s() - t0);

  /* the pending receives complete with XC_ERR_ABORTED */
  xc_status_t st;
  memset(&st, 0, sizeof st);
  MP_EXPECT_ERR(xc_wait(&rq[0], &st), XC_ERR_ABORTED);
  MP_ASSERT(rq[0] == NULL, "xc_wait did not clear the request");
  MP_ASSERT(st.error == XC_ERR_ABORTED, "status.error %d", st.error);
  if (me == 0) printf("  pending irecv after abort: \"%s\"\n", xc_last_error());
  done = 0;
  for (int i = 0; i < 1000000 && !done; ++i) {
    xc_result_t rc = xc_test(&rq[1], &done, &st);
    if (done) {
      MP_ASSERT(rc == XC_ERR_ABORTED && xc_last_error()[0] != '\0', "any-source irecv completed with %d (%s)",
                (int)rc, xc_last_error());
    } else {
      MP_ASSERT(rc == XC_SUCCESS, "xc_test returned %d while pending", (int)rc);
    }
  }
  MP_ASSERT(done, "an aborted receive never completed under xc_test");
  MP_ASSERT(pend[0] == -1 && pend[1] == -1, "aborted receives wrote %d %d", (int)pend[0], (int)pend[1]);
  /* the send may have completed before the abort or been cut by it */
  xc_result_t src = xc_wait(&sreq, NULL);
  MP_ASSERT(src == XC_SUCCESS || src == XC_ERR_ABORTED, "isend on the aborted dup: %d (%s)", (int)src,
            xc_last_error());

  /* every later op on the dup fails with XC_ERR_ABORTED */
  xc_result_t async = XC_SUCCESS;
  MP_CHECK(xc_comm_get_async_error(d.comm, &async));
  MP_ASSERT(async == XC_ERR_ABORTED, "async error %d after abort", (int)async);
  int32_t buf[4] = {1, 2, 3, 4}, rbuf[4 * CU_MAXR];
  xc_request_t req = NULL;
  xc_comm_t out = NULL;
  int sizes[1] = {n}, ranks[CU_MAXR];
  for (int r = 0; r < n; ++r) ranks[r] = r;
  MP_EXPECT_ERR(xc_send(buf, 1, XC_INT32, right, 1, d.comm), XC_ERR_ABORTED);
  if (me == 0) printf("  xc_send on the aborted dup: \"%s\"\n", xc_last_error());
  MP_EXPECT_ERR(xc_recv(rbuf, 1, XC_INT32, left, 1, d.comm, NULL), XC_ERR_ABORTED);
  MP_EXPECT_ERR(xc_sendrecv(buf, 1, right, 1, rbuf, 1, left, 1, XC_INT32, d.comm, NULL), XC_ERR_ABORTED);
  xc_result_t rc = xc_isend(buf, 1, XC_INT32, right, 1, d.comm, &req);
  if (rc == XC_SUCCESS) rc = xc_wait(&req, NULL); /* the error may come with the request */
  MP_ASSERT(rc == XC_ERR_ABORTED && xc_last_error()[0] != '\0', "xc_isend on the aborted dup: %d (%s)", (int)rc,
            xc_last_error());
  rc = xc_irecv(rbuf, 1, XC_INT32, left, 1, d.comm, &req);
  if (rc == XC_SUCCESS) rc = xc_wait(&req, NULL);
  MP_ASSERT(rc == XC_ERR_ABORTED && xc_last_error()[0] != '\0', "xc_irecv on the aborted dup: %d (%s)", (int)rc,
            xc_last_error());
  MP_EXPECT_ERR(xc_barrier(d.comm), XC_ERR_ABORTED);
  if (me == 0) printf("  xc_barrier on the aborted dup: \"%s\"\n", xc_last_error());
  MP_EXPECT_ERR(xc_broadcast(buf, 1, XC_INT32, 0, d.comm), XC_ERR_ABORTED);
  MP_EXPECT_ERR(xc_allreduce(buf, rbuf, 1, XC_INT32, XC_SUM, d.comm), XC_ERR_ABORTED);
  MP_EXPECT_ERR(xc_allgather(buf, rbuf, 1, XC_INT32, d.comm), XC_ERR_ABORTED);
  MP_EXPECT_ERR(xc_comm_split(d.comm, 0, me, NULL, &out), XC_ERR_ABORTED);
  MP_EXPECT_ERR(xc_comm_split_groups(d.comm, 1, sizes, ranks, NULL, &out), XC_ERR_ABORTED);
  MP_EXPECT_ERR(xc_comm_dup(d.comm, &out), XC_ERR_ABORTED);
  MP_ASSERT(out == NULL, "out written on failure");
  MP_CHECK(xc_comm_get_async_error(d.comm, &async));
  MP_ASSERT(async == XC_ERR_ABORTED, "async error %d", (int)async);

  /* the world and the sibling dup still work; the world's tag-5 message is
     the world's, not the one sent on the dup */
  {
    int64_t got = 0;
    MP_CHECK(xc_sendrecv(&on_world, 1, right, 5, &got, 1, left, 5, XC_INT64, w.comm, &st));
    MP_ASSERT(got == 7000 + left, "world received %lld, expected %d", (long long)got, 7000 + left);
    MP_CHECK(xc_comm_get_async_error(w.comm, &async));
    MP_ASSERT(async == XC_SUCCESS, "world async error %d", (int)async);
    MP_CHECK(xc_comm_get_async_error(sib.comm, &async));
    MP_ASSERT(async == XC_SUCCESS, "sibling async error %d", (int)async);
    int64_t x = me + 1, sum = 0;
    MP_CHECK(xc_allreduce(&x, &sum, 1, XC_INT64, XC_SUM, w.comm));
    MP_ASSERT(sum == (int64_t)n * (n + 1) / 2, "allreduce sum %lld", (long long)sum);
    cu_check(&w, 2, "world after aborting a dup");
    cu_check(&sib, 3, "sibling dup after aborting a dup");
    cu_isolation(&w, w.comm, sib.comm, 9, "world/sibling dup after abort");
  }

  /* freeing the aborted dup does not synchronise: it returns promptly even
     while the other ranks are elsewhere (rank 0 frees last, after a world
     barrier the others reach only after their own free) */
  if (me != 0) {
    t0 = now_s();
    MP_CHECK(xc_comm_free(d.comm));
    double dt = now_s() - t0;
    MP_ASSERT(dt < 2.0, "xc_comm_free of an aborted comm took %.3f s", dt);
  }
  MP_CHECK(xc_barrier(w.comm));
  if (me == 0) {
    t0 = now_s();
    MP_CHECK(xc_comm_free(d.comm));
    double dt = now_s() - t0;
    MP_ASSERT(dt < 2.0, "xc_comm_free of an aborted comm took %.3f s", dt);
  }
  MP_EXPECT_ERR(xc_comm_rank(d.comm, &done), XC_ERR_INVALID_USAGE);
  MP_EXPECT_ERR(xc_send(buf, 1, XC_INT32, right, 1, d.comm), XC_ERR_INVALID_USAGE);

  /* a receive pending on a dup when the dup is freed: XC_ERR_ABORTED */
  {
    cu_view_t f = w;
    MP_CHECK(xc_comm_dup(w.comm, &f.comm));
    int32_t never = -1;
    xc_request_t pr = NULL;
    MP_CHECK(xc_irecv(&never, 1, XC_INT32, left, 77, f.comm, &pr));
    t0 = now_s();
    MP_CHECK(xc_comm_free(f.comm));
    MP_ASSERT(now_s() - t0 < 5.0, "xc_comm_free took %.3f s", now_s() - t0);
    MP_EXPECT_ERR(xc_wait(&pr, &st), XC_ERR_ABORTED);
    if (me == 0) printf("  irecv pending when its comm is freed: \"%s\"\n", xc_last_error());
    MP_ASSERT(never == -1, "a cancelled receive wrote %d", (int)never);
  }

  /* abort on a split child: only that child is affected */
  {
    int colors[CU_MAXR], keys[CU_MAXR];
    for (int p = 0; p < n; ++p) {
      colors[p] = p % 2;
      keys[p] = -p;
    }
    cu_view_t a, b;
    cu_split(&w, colors, keys, NULL, &a, 4, "split A");
    cu_split(&w, colors, keys, NULL, &b, 5, "split B");
    MP_CHECK(xc_comm_abort(a.comm));
    MP_EXPECT_ERR(xc_barrier(a.comm), XC_ERR_ABORTED);
    MP_CHECK(xc_comm_get_async_error(a.comm, &async));
    MP_ASSERT(async == XC_ERR_ABORTED, "async error %d", (int)async);
    cu_check(&b, 6, "split B after aborting split A");
    MP_CHECK(xc_comm_free(a.comm));
    cu_free(&b);
  }

  MP_CHECK(xc_comm_free(sib.comm));
  cu_check(&w, 7, "world at the end");
  /* last, as it exercises a race: blocking calls on another thread,
     aborted from this one; repeated, as the abort lands at a different
     point of the call each time */
  {
    for (int it = 0; it < 40; ++it) {
      int64_t missed = abort_blocked(w.comm, 1, n, it);
      missed += abort_blocked(w.comm, 0, n, it);
      MP_CHECK(xc_allreduce(XC_IN_PLACE, &missed, 1, XC_INT64, XC_SUM, w.comm));
      MP_ASSERT(missed == 0, "iteration %d: %lld blocked calls (over all ranks) missed the abort of their communicator",
                it, (long long)missed);
    }
  }

  MP_CHECK(xc_comm_free(w.comm));
  fflush(stdout);
  if (me == 0) printf("abort: OK\n");
  return 0;
}
