/* Truncation: a message larger than the receive buffer completes the receive
   with XC_ERR_TRUNCATED, a non-empty xc_last_error(), status.bytes = the
   message's real size, and nothing written into the buffer (checked with a
   sentinel pattern, guard bytes included); the sender's call succeeds; and
   the next messages between the same pair, same tag, still arrive intact.
   Eager, boundary and rendezvous sizes; blocking, wildcard, xc_wait,
   xc_waitall, xc_test and xc_sendrecv receives. */
#define _POSIX_C_SOURCE 200809L
#include "p2p_util.h"

#define SENTINEL 0xC3
#define GUARD 64u

enum { R_RECV = 0, R_RECV_ANY, R_WAIT, R_WAITALL, R_TEST, R_SENDRECV, R_COUNT };
static const char *const mode_names[R_COUNT] = {"xc_recv",  "xc_recv ANY_SOURCE+ANY_TAG", "xc_irecv+xc_wait",
                                                "xc_irecv+xc_waitall", "xc_irecv+xc_test", "xc_sendrecv"};

static unsigned char *scratch;
#define SCRATCH_BYTES (4u << 20)
static int printed_message;

/* Check the result and status of the truncated receive and the untouched buffer. */
static void check_truncated(xc_result_t rc, const xc_status_t *st, int from, int tag, size_t msg_bytes,
                            const unsigned char *rb, size_t room_bytes, const char *what) {
  const char *msg = xc_last_error();
  MP_ASSERT(rc == XC_ERR_TRUNCATED, "%s: returned %d (%s: %s), expected XC_ERR_TRUNCATED", what, (int)rc,
            xc_strerror(rc), msg);
  MP_ASSERT(msg[0] != '\0', "%s: xc_last_error() is empty after XC_ERR_TRUNCATED", what);
  if (!printed_message && mp_rank == 0) {
    printf("  (truncation message: %s)\n", msg);
    printed_message = 1;
  }
  p2p_check_status(st, from, tag, msg_bytes, XC_ERR_TRUNCATED, what);
  p2p_check_untouched(rb, room_bytes + GUARD, SENTINEL, what);
}

/* Rank r sends message `id` (msg_count elements) to r+1, which receives it
   into room_count elements, then message id+1 with the same tag into a buffer
   that fits. With one rank the peer is self (isend, so nothing blocks). */
static void trunc_case(xc_comm_t world, xc_dtype_t dtype, size_t msg_count, size_t room_count, int mode,
                       uint64_t id) {
  int n = p2p_size;
  int to = (mp_rank + 1) % n, from = (mp_rank - 1 + n) % n;
  size_t esize = xc_dtype_size(dtype);
  size_t msg_bytes = msg_count * esize, room_bytes = room_count * esize;
  const int tag = 40 + mode;
  char what[192], what2[256];
  snprintf(what, sizeof what, "%s: %zu-byte message into a %zu-byte buffer", mode_names[mode], msg_bytes,
           room_bytes);
  snprintf(what2, sizeof what2, "%s: the next message after the truncation", what);

  unsigned char *sb1 = p2p_alloc(msg_bytes), *sb2 = p2p_alloc(msg_bytes);
  unsigned char *rb = p2p_alloc(room_bytes + GUARD), *rb2 = p2p_alloc(msg_bytes);
  p2p_make(sb1, msg_bytes, mp_rank, id);
  p2p_make(sb2, msg_bytes, mp_rank, id + 1);
  memset(rb, SENTINEL, room_bytes + GUARD);
  /* a zero-element receive may pass NULL */
  void *rbuf = room_count == 0 && (id & 1) ? NULL : (void *)rb;
  xc_status_t st, st2;
  memset(&st, 0xff, sizeof st);
  memset(&st2, 0xff, sizeof st2);
  xc_result_t rc;
  int self = to == mp_rank;
  xc_request_t self_req = NULL;

  switch (mode) {
    case R_RECV:
    case R_RECV_ANY: {
      int src = mode == R_RECV ? from : XC_ANY_SOURCE, rtag = mode == R_RECV ? tag : XC_ANY_TAG;
      if (self) {
        MP_CHECK(xc_isend(sb1, msg_count, dtype, to, tag, world, &self_req));
        rc = xc_recv(rbuf, room_count, dtype, src, rtag, world, &st);
        check_truncated(rc, &st, from, tag, msg_bytes, rb, room_bytes, what);
        MP_CHECK(xc_wait(&self_req, NULL));
        MP_CHECK(xc_isend(sb2, msg_count, dtype, to, tag, world, &self_req));
        MP_CHECK(xc_recv(rb2, msg_count, dtype, src, rtag, world, &st2));
        MP_CHECK(xc_wait(&self_req, NULL));
      } else if (p2p_send_first(mp_rank, n, 1)) {
        MP_CHECK(xc_send(sb1, msg_count, dtype, to, tag, world)); /* the sender's call succeeds */
        rc = xc_recv(rbuf, room_count, dtype, src, rtag, world, &st);
        check_truncated(rc, &st, from, tag, msg_bytes, rb, room_bytes, what);
        MP_CHECK(xc_send(sb2, msg_count, dtype, to, tag, world));
        MP_CHECK(xc_recv(rb2, msg_count, dtype, src, rtag, world, &st2));
      } else {
        rc = xc_recv(rbuf, room_count, dtype, src, rtag, world, &st);
        check_truncated(rc, &st, from, tag, msg_bytes, rb, room_bytes, what);
        MP_CHECK(xc_send(sb1, msg_count, dtype, to, tag, world));
        MP_CHECK(xc_recv(rb2, msg_count, dtype, src, rtag, world, &st2));
        MP_CHECK(xc_send(sb2, msg_count, dtype, to, tag, world));
      }
      break;
    }
    case R_WAIT:
    case R_TEST: {
      xc_request_t req = NULL;
      MP_CHECK(xc_irecv(rbuf, room_count, dtype, from, tag, world, &req));
      if (self)
        MP_CHECK(xc_isend(sb1, msg_count, dtype, to, tag, world, &self_req));
      else
        MP_CHECK(xc_send(sb1, msg_count, dtype, to, tag, world)); /* receives are posted first: no deadlock */
      if (mode == R_WAIT) {
        rc = xc_wait(&req, &st);
      } else {
        int done = 0;
        long iters = 0;
        double t0 = p2p_now();
        for (;;) {
          rc = xc_test(&req, &done, &st);
          if (done || rc != XC_SUCCESS) break;
          ++iters;
          if ((iters & 1023) == 0)
            MP_ASSERT(p2p_now() - t0 < 30.0, "%s: not done after %ld xc_test calls, %.1f s", what, iters,
                      p2p_now() - t0);
        }
        MP_ASSERT(done == 1, "%s: xc_test returned %d with done = %d", what, (int)rc, done);
      }
      MP_ASSERT(req == NULL, "%s: the request handle is not NULL after completing with an error", what);
      check_truncated(rc, &st, from, tag, msg_bytes, rb, room_bytes, what);
      MP_CHECK(xc_wait(&self_req, NULL));
      MP_CHECK(xc_irecv(rb2, msg_count, dtype, from, tag, world, &req));
      if (self)
        MP_CHECK(xc_isend(sb2, msg_count, dtype, to, tag, world, &self_req));
      else
        MP_CHECK(xc_send(sb2, msg_count, dtype, to, tag, world));
      MP_CHECK(xc_wait(&req, &st2));
      MP_CHECK(xc_wait(&self_req, NULL));
      break;
    }
    case R_WAITALL: {
      /* both receives posted, then both sends; the first completes truncated */
      xc_request_t reqs[4] = {NULL, NULL, NULL, NULL};
      xc_status_t sts[4];
      memset(sts, 0xff, sizeof sts);
      MP_CHECK(xc_irecv(rbuf, room_count, dtype, from, tag, world, &reqs[0]));
      MP_CHECK(xc_irecv(rb2, msg_count, dtype, from, tag, world, &reqs[1]));
      MP_CHECK(xc_isend(sb1, msg_count, dtype, to, tag, world, &reqs[2]));
      MP_CHECK(xc_isend(sb2, msg_count, dtype, to, tag, world, &reqs[3]));
      rc = xc_waitall(4, reqs, sts);
      for (int i = 0; i < 4; ++i)
        MP_ASSERT(reqs[i] == NULL, "%s: request %d not NULL after xc_waitall returned an error", what, i);
      st = sts[0];
      st2 = sts[1];
      check_truncated(rc, &st, from, tag, msg_bytes, rb, room_bytes, what);
      MP_ASSERT(sts[2].error == XC_SUCCESS && sts[3].error == XC_SUCCESS,
                "%s: the sends' statuses say errors %d and %d, expected success", what, sts[2].error, sts[3].error);
      break;
    }
    default: /* R_SENDRECV: every rank sends right and receives from the left in one call */
      rc = xc_sendrecv(sb1, msg_count, to, tag, rbuf, room_count, from, tag, dtype, world, &st);
      check_truncated(rc, &st, from, tag, msg_bytes, rb, room_bytes, what);
      MP_CHECK(xc_sendrecv(sb2, msg_count, to, tag, rb2, msg_count, from, tag, dtype, world, &st2));
      break;
  }
  p2p_check_status(&st2, from, tag, msg_bytes, XC_SUCCESS, what2);
  p2p_check_data(rb2, msg_bytes, from, id + 1, scratch, what2);
  free(sb1);
  free(sb2);
  free(rb);
  free(rb2);
}

int main(void) {
  xc_comm_t world = NULL;
  p2p_init("p2p_truncation", &world);
  scratch = p2p_alloc(SCRATCH_BYTES);
  double t0 = p2p_now();

  struct {
    xc_dtype_t dtype;
    size_t msg, room; /* elements */
  } cases[] = {
      {XC_UINT8, 1, 0},                                      /* anything into nothing */
      {XC_UINT8, 100, 50},                                   /* eager */
      {XC_UINT8, P2P_EAGER_BYTES, P2P_EAGER_BYTES - 1},      /* largest eager, one byte short */
      {XC_UINT8, P2P_EAGER_BYTES + 1, P2P_EAGER_BYTES},      /* smallest rendezvous */
      {XC_FLOAT64, 1000, 999},                               /* counts in elements, bytes in status */
      {XC_INT32, (1u << 20) / 4, (1u << 20) / 4 - 1},        /* rendezvous, one element short */
      {XC_UINT8, 4u << 20, 100},                             /* large into small */
  };
  uint64_t id = 2;
  for (int mode = 0; mode < R_COUNT; ++mode) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
      trunc_case(world, cases[c].dtype, cases[c].msg, cases[c].room, mode, id);
      id += 3; /* even and odd ids: NULL and non-NULL zero-size buffers */
    }
    if (mp_rank == 0) printf("  %-27s ok (%.2f s)\n", mode_names[mode], p2p_now() - t0);
  }

  free(scratch);
  MP_CHECK(xc_comm_free(world));
  if (mp_rank == 0) printf("p2p_truncation: all passed\n");
  return 0;
}
