/* Non-blocking point-to-point: completion driven only by an xc_test polling
   loop, many receives posted before their sends (and completing out of post
   order), an all-to-all finished by one xc_waitall, a flood of isends far
   beyond the ring's capacity before any receive, and the NULL-request
   rules (xc_wait / xc_test on NULL, xc_waitall with NULL entries and a
   statuses array, handles set to NULL by every completion). */
#define _POSIX_C_SOURCE 200809L
#include "p2p_util.h"

#define POLL_MAX_ITERS 200000000L /* a hang shows up as a failure, not a timeout */
#define POLL_MAX_SECONDS 30.0

static unsigned char *scratch;
#define SCRATCH_BYTES (4u << 20)

/* ---- xc_test polling --------------------------------------------------------- */

/* Poll xc_test on every non-NULL request until all are done. Each completion
   must set its handle to NULL; its status goes to sts[i]. */
static void poll_all(xc_request_t *reqs, xc_status_t *sts, int n, const char *what) {
  long iters = 0;
  double t0 = p2p_now();
  int left = 0;
  for (int i = 0; i < n; ++i) left += reqs[i] != NULL;
  while (left > 0) {
    for (int i = 0; i < n; ++i) {
      if (!reqs[i]) continue;
      int done = -1;
      MP_CHECK(xc_test(&reqs[i], &done, &sts[i]));
      MP_ASSERT(done == 0 || done == 1, "%s: xc_test set done = %d", what, done);
      if (done) {
        MP_ASSERT(reqs[i] == NULL, "%s: xc_test reported done but left request %d non-NULL", what, i);
        --left;
      } else {
        MP_ASSERT(reqs[i] != NULL, "%s: xc_test cleared request %d that is not done", what, i);
      }
    }
    ++iters;
    if ((iters & 1023) == 0)
      MP_ASSERT(iters < POLL_MAX_ITERS && p2p_now() - t0 < POLL_MAX_SECONDS,
                "%s: %d requests still not done after %ld xc_test rounds, %.1f s", what, left, iters,
                p2p_now() - t0);
  }
}

/* mode 0: irecv + isend, both completed only by xc_test.
   mode 1: irecv, then a blocking xc_send, then the receive polled. */
static void polling(xc_comm_t world, size_t bytes, int mode, uint64_t id) {
  int n = p2p_size;
  int to = (mp_rank + 1) % n, from = (mp_rank - 1 + n) % n;
  char what[128];
  snprintf(what, sizeof what, "xc_test polling mode %d, %zu B", mode, bytes);
  unsigned char *sb = p2p_alloc(bytes), *rb = p2p_alloc(bytes);
  p2p_make(sb, bytes, mp_rank, id);
  xc_request_t reqs[2] = {NULL, NULL};
  xc_status_t sts[2];
  memset(sts, 0xff, sizeof sts);
  const int tag = 11 + mode;
  MP_CHECK(xc_irecv(rb, bytes, XC_UINT8, from, tag, world, &reqs[0]));
  if (mode == 0) {
    MP_CHECK(xc_isend(sb, bytes, XC_UINT8, to, tag, world, &reqs[1]));
  } else {
    /* every rank posted its receive before its send, so this cannot deadlock */
    MP_CHECK(xc_send(sb, bytes, XC_UINT8, to, tag, world));
  }
  poll_all(reqs, sts, 2, what);
  p2p_check_status(&sts[0], from, tag, bytes, XC_SUCCESS, what);
  if (mode == 0) MP_ASSERT(sts[1].error == XC_SUCCESS, "%s: send status error %d", what, sts[1].error);
  p2p_check_data(rb, bytes, from, id, scratch, what);

  /* a NULL handle is done at once */
  int done = 0;
  xc_status_t st;
  memset(&st, 0x5a, sizeof st);
  MP_CHECK(xc_test(&reqs[0], &done, &st));
  MP_ASSERT(done == 1, "%s: xc_test on a NULL request gave done = %d", what, done);
  MP_ASSERT(st.error == XC_SUCCESS && st.bytes == 0,
            "%s: xc_test on a NULL request gave status {error %d, bytes %zu}, expected an empty status", what,
            st.error, st.bytes);
  free(sb);
  free(rb);
}

/* ---- pre-posted receives ----------------------------------------------------- */

#define NPRE 64

static size_t pre_size(int s, int i) {
  static const size_t sizes[] = {0, 1, 100, P2P_EAGER_BYTES, P2P_EAGER_BYTES + 1, 40000, 300u << 10};
  uint64_t v;
  mp_fill(&v, sizeof v, p2p_seed, (uint64_t)s, 70000u + (uint64_t)i);
  return sizes[v % (sizeof sizes / sizeof sizes[0])];
}

/* NPRE receives from the left neighbour (tag i, message i) are all posted
   before any send starts (a barrier orders them); the sends go out in a
   seeded shuffled order, so receives complete out of post order. */
static void preposted(xc_comm_t world) {
  int n = p2p_size;
  int to = (mp_rank + 1) % n, from = (mp_rank - 1 + n) % n;
  unsigned char *sb[NPRE], *rb[NPRE];
  xc_request_t rreq[NPRE], sreq[NPRE];
  xc_status_t rst[NPRE], sst[NPRE];
  int order[NPRE];
  for (int i = 0; i < NPRE; ++i) {
    rb[i] = p2p_alloc(pre_size(from, i));
    memset(rb[i], 0, pre_size(from, i));
    MP_CHECK(xc_irecv(rb[i], pre_size(from, i), XC_UINT8, from, i, world, &rreq[i]));
    MP_ASSERT(rreq[i] != NULL, "pre-posted: xc_irecv %d gave a NULL request", i);
    sb[i] = p2p_alloc(pre_size(mp_rank, i));
    p2p_make(sb[i], pre_size(mp_rank, i), mp_rank, 80000u + (uint64_t)i);
    order[i] = i;
  }
  for (int i = NPRE - 1; i > 0; --i) { /* seeded Fisher-Yates, per sender */
    uint64_t v;
    mp_fill(&v, sizeof v, p2p_seed, (uint64_t)mp_rank, 90000u + (uint64_t)i);
    int j = (int)(v % (uint64_t)(i + 1));
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  MP_CHECK(xc_barrier(world)); /* every receive is posted before the first send */
  for (int i = 0; i < NPRE; ++i) {
    int m = order[i];
    MP_CHECK(xc_isend(sb[m], pre_size(mp_rank, m), XC_UINT8, to, m, world, &sreq[i]));
  }
  MP_CHECK(xc_waitall(NPRE, rreq, rst));
  MP_CHECK(xc_waitall(NPRE, sreq, sst));
  for (int i = 0; i < NPRE; ++i) {
    char what[96];
    snprintf(what, sizeof what, "pre-posted receive %d of %d (%zu B)", i, NPRE, pre_size(from, i));
    MP_ASSERT(rreq[i] == NULL && sreq[i] == NULL, "%s: a request is not NULL after xc_waitall", what);
    MP_ASSERT(sst[i].error == XC_SUCCESS, "%s: send status error %d", what, sst[i].error);
    p2p_check_status(&rst[i], from, i, pre_size(from, i), XC_SUCCESS, what);
    p2p_check_data(rb[i], pre_size(from, i), from, 80000u + (uint64_t)i, scratch, what);
    free(rb[i]);
    free(sb[i]);
  }
}

/* Every rank sends to every rank (itself included), all receives and sends
   outstanding at once and finished by one xc_waitall over 2n requests. */
static void all_to_all(xc_comm_t world, size_t bytes, uint64_t id) {
  int n = p2p_size;
  unsigned char *sb = p2p_alloc(bytes * (size_t)n), *rb = p2p_alloc(bytes * (size_t)n);
  xc_request_t *reqs = malloc(2 * (size_t)n * sizeof *reqs);
  xc_status_t *sts = malloc(2 * (size_t)n * sizeof *sts);
  MP_ASSERT(reqs && sts, "malloc");
  for (int p = 0; p < n; ++p) {
    p2p_make(sb + (size_t)p * bytes, bytes, mp_rank, id + (uint64_t)p);
    MP_CHECK(xc_irecv(rb + (size_t)p * bytes, bytes, XC_UINT8, p, 3, world, &reqs[p]));
  }
  for (int i = 0; i < n; ++i) {
    int p = (mp_rank + i) % n; /* stagger so that not everyone sends to rank 0 first */
    MP_CHECK(xc_isend(sb + (size_t)p * bytes, bytes, XC_UINT8, p, 3, world, &reqs[n + p]));
  }
  MP_CHECK(xc_waitall(2 * (size_t)n, reqs, sts));
  for (int p = 0; p < n; ++p) {
    char what[96];
    snprintf(what, sizeof what, "all-to-all %zu B: message from rank %d", bytes, p);
    MP_ASSERT(reqs[p] == NULL && reqs[n + p] == NULL, "%s: a request is not NULL after xc_waitall", what);
    MP_ASSERT(sts[n + p].error == XC_SUCCESS, "%s: send status error %d", what, sts[n + p].error);
    p2p_check_status(&sts[p], p, 3, bytes, XC_SUCCESS, what);
    /* message p of sender s is the one s addressed to rank p: id + my rank */
    p2p_check_data(rb + (size_t)p * bytes, bytes, p, id + (uint64_t)mp_rank, scratch, what);
  }
  free(sb);
  free(rb);
  free(reqs);
  free(sts);
}

/* ---- many sends outstanding before any receive -------------------------------- */

#define NFLOOD 400

/* NFLOOD eager messages (far more than the shared-memory ring holds) are
   isent to the right neighbour before it posts a single receive; it then
   receives them one by one, in order. */
static void flood(xc_comm_t world) {
  int n = p2p_size;
  int to = (mp_rank + 1) % n, from = (mp_rank - 1 + n) % n;
  const size_t bytes = P2P_EAGER_BYTES;
  unsigned char *sb = p2p_alloc(bytes * NFLOOD), *rb = p2p_alloc(bytes);
  xc_request_t *reqs = malloc(NFLOOD * sizeof *reqs);
  MP_ASSERT(reqs != NULL, "malloc");
  for (int i = 0; i < NFLOOD; ++i) {
    p2p_make(sb + (size_t)i * bytes, bytes, mp_rank, 96000u + (uint64_t)i);
    MP_CHECK(xc_isend(sb + (size_t)i * bytes, bytes, XC_UINT8, to, 30, world, &reqs[i]));
  }
  for (int i = 0; i < NFLOOD; ++i) {
    char what[96];
    snprintf(what, sizeof what, "flood: message %d of %d sent before any receive", i, NFLOOD);
    xc_status_t st;
    MP_CHECK(xc_recv(rb, bytes, XC_UINT8, from, 30, world, &st));
    p2p_check_status(&st, from, 30, bytes, XC_SUCCESS, what);
    p2p_check_data(rb, bytes, from, 96000u + (uint64_t)i, scratch, what);
  }
  MP_CHECK(xc_waitall(NFLOOD, reqs, NULL));
  for (int i = 0; i < NFLOOD; ++i) MP_ASSERT(reqs[i] == NULL, "flood: send request %d not NULL after waitall", i);
  free(sb);
  free(rb);
  free(reqs);
}

/* ---- NULL requests ----------------------------------------------------------- */

static void null_requests(xc_comm_t world) {
  int n = p2p_size;
  int to = (mp_rank + 1) % n, from = (mp_rank - 1 + n) % n;
  xc_request_t r = NULL;
  xc_status_t st;
  memset(&st, 0x5a, sizeof st);
  MP_CHECK(xc_wait(&r, &st));
  MP_ASSERT(r == NULL, "xc_wait on a NULL request changed the handle");
  MP_ASSERT(st.error == XC_SUCCESS && st.bytes == 0,
            "xc_wait on a NULL request: status {error %d, bytes %zu}, expected an empty status", st.error, st.bytes);
  MP_CHECK(xc_wait(&r, NULL));
  int done = 0;
  MP_CHECK(xc_test(&r, &done, NULL));
  MP_ASSERT(done == 1, "xc_test on a NULL request: done = %d", done);
  MP_CHECK(xc_waitall(0, NULL, NULL));

  xc_request_t none[3] = {NULL, NULL, NULL};
  xc_status_t nst[3];
  memset(nst, 0x5a, sizeof nst);
  MP_CHECK(xc_waitall(3, none, nst));
  for (int i = 0; i < 3; ++i)
    MP_ASSERT(nst[i].error == XC_SUCCESS, "xc_waitall of NULL requests: statuses[%d].error = %d", i, nst[i].error);

  /* real requests mixed with NULL ones: {recv, NULL, send, NULL, recv, NULL, send} */
  const size_t sizes[2] = {100, 300u << 10};
  unsigned char *sb[2], *rb[2];
  for (int j = 0; j < 2; ++j) {
    sb[j] = p2p_alloc(sizes[j]);
    rb[j] = p2p_alloc(sizes[j]);
    p2p_make(sb[j], sizes[j], mp_rank, 95000u + (uint64_t)j);
  }
  xc_request_t reqs[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  xc_status_t sts[7];
  memset(sts, 0x5a, sizeof sts);
  MP_CHECK(xc_irecv(rb[0], sizes[0], XC_UINT8, from, 20, world, &reqs[0]));
  MP_CHECK(xc_isend(sb[0], sizes[0], XC_UINT8, to, 20, world, &reqs[2]));
  MP_CHECK(xc_irecv(rb[1], sizes[1], XC_UINT8, from, 21, world, &reqs[4]));
  MP_CHECK(xc_isend(sb[1], sizes[1], XC_UINT8, to, 21, world, &reqs[6]));
  MP_CHECK(xc_waitall(7, reqs, sts));
  for (int i = 0; i < 7; ++i) {
    MP_ASSERT(reqs[i] == NULL, "xc_waitall with NULL entries: request %d is not NULL afterwards", i);
    MP_ASSERT(sts[i].error == XC_SUCCESS, "xc_waitall with NULL entries: statuses[%d].error = %d", i,
              sts[i].error);
  }
  p2p_check_status(&sts[0], from, 20, sizes[0], XC_SUCCESS, "xc_waitall with NULL entries: receive 0");
  p2p_check_status(&sts[4], from, 21, sizes[1], XC_SUCCESS, "xc_waitall with NULL entries: receive 4");
  p2p_check_data(rb[0], sizes[0], from, 95000u, scratch, "xc_waitall with NULL entries: receive 0");
  p2p_check_data(rb[1], sizes[1], from, 95001u, scratch, "xc_waitall with NULL entries: receive 4");
  for (int i = 1; i < 7; i += 2)
    MP_ASSERT(sts[i].bytes == 0, "xc_waitall with NULL entries: statuses[%d].bytes = %zu for a NULL request", i,
              sts[i].bytes);

  /* xc_wait one by one, the later-posted request first; handles become NULL */
  MP_CHECK(xc_irecv(rb[0], sizes[0], XC_UINT8, from, 22, world, &reqs[0]));
  MP_CHECK(xc_irecv(rb[1], sizes[1], XC_UINT8, from, 23, world, &reqs[1]));
  MP_CHECK(xc_isend(sb[1], sizes[1], XC_UINT8, to, 23, world, &reqs[2]));
  MP_CHECK(xc_isend(sb[0], sizes[0], XC_UINT8, to, 22, world, &reqs[3]));
  for (int i = 3; i >= 0; --i) {
    memset(&st, 0x5a, sizeof st);
    MP_CHECK(xc_wait(&reqs[i], &st));
    MP_ASSERT(reqs[i] == NULL, "xc_wait in reverse order: request %d is not NULL afterwards", i);
    MP_ASSERT(st.error == XC_SUCCESS, "xc_wait in reverse order: request %d status error %d", i, st.error);
    if (i < 2) p2p_check_status(&st, from, 22 + i, sizes[i], XC_SUCCESS, "xc_wait in reverse order");
  }
  p2p_check_data(rb[0], sizes[0], from, 95000u, scratch, "xc_wait in reverse order: receive 0");
  p2p_check_data(rb[1], sizes[1], from, 95001u, scratch, "xc_wait in reverse order: receive 1");
  /* waiting again on the NULLed handle is a no-op */
  MP_CHECK(xc_wait(&reqs[0], NULL));
  for (int j = 0; j < 2; ++j) {
    free(sb[j]);
    free(rb[j]);
  }
}

int main(void) {
  xc_comm_t world = NULL;
  p2p_init("p2p_nonblocking", &world);
  scratch = p2p_alloc(SCRATCH_BYTES);
  double t0 = p2p_now();

  const size_t sizes[] = {0, 100, P2P_EAGER_BYTES, P2P_EAGER_BYTES + 1, 1u << 20, 4u << 20};
  uint64_t id = 1;
  for (int mode = 0; mode < 2; ++mode)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) polling(world, sizes[i], mode, id++);
  if (mp_rank == 0) printf("  xc_test polling ok (%.2f s)\n", p2p_now() - t0);

  for (int rep = 0; rep < 2; ++rep) preposted(world);
  if (mp_rank == 0) printf("  pre-posted receives ok (%.2f s)\n", p2p_now() - t0);

  all_to_all(world, 0, 1000);
  all_to_all(world, 100, 2000);
  all_to_all(world, P2P_EAGER_BYTES + 1, 3000);
  all_to_all(world, 512u << 10, 4000);
  if (mp_rank == 0) printf("  all-to-all waitall ok (%.2f s)\n", p2p_now() - t0);

  flood(world);
  if (mp_rank == 0) printf("  flood of sends ok (%.2f s)\n", p2p_now() - t0);

  null_requests(world);
  if (mp_rank == 0) printf("  NULL requests ok (%.2f s)\n", p2p_now() - t0);

  free(scratch);
  MP_CHECK(xc_comm_free(world));
  if (mp_rank == 0) printf("p2p_nonblocking: all passed\n");
  return 0;
}
