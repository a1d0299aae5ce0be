/* Point-to-point transfers of every dtype and every size class (empty, one
   element, small, around the eager threshold, medium, past the shared-memory
   ring, large and pipelined) between every ordered pair of ranks, by ring
   shifts, with blocking send/recv, sendrecv and isend/irecv + waitall; and
   messages to self. Every received byte is checked against the sender's
   seeded stream and every status against the expected source, tag and size. */
#define _POSIX_C_SOURCE 200809L
#include "p2p_util.h"

enum { M_BLOCKING = 0, M_SENDRECV = 1, M_NONBLOCKING = 2, M_SELF = 3, M_COUNT };
static const char *const method_names[] = {"send/recv", "sendrecv", "isend/irecv+waitall", "self isend+recv"};

enum { NSIZES = 9 };
static const char *const size_names[NSIZES] = {"0 elements", "1 element",  "~100 B",       "eager-1 element",
                                               "eager",      "eager+1 element", "100 KiB", "ring+1 element",
                                               "4 MiB"};

/* Element count of size class s for elements of esize bytes. */
static size_t size_count(int s, size_t esize) {
  switch (s) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 100 / esize;
    case 3: return P2P_EAGER_BYTES / esize - 1;
    case 4: return P2P_EAGER_BYTES / esize;
    case 5: return P2P_EAGER_BYTES / esize + 1;
    case 6: return (100u << 10) / esize;
    case 7: return P2P_RING_BYTES / esize + 1;
    default: return (4u << 20) / esize;
  }
}

#define MAX_BYTES ((4u << 20) + 64u)
#define SLACK 64u /* extra receive room in the non-blocking case */
#define SENTINEL 0xA5

static unsigned char *sendbuf, *recvbuf, *scratch;

/* Unique message id, also used as the tag. */
static int msg_id(int method, int k, int dt, int s) { return (method << 20) | (k << 12) | (dt << 4) | s; }

static void describe(char *out, size_t n, int method, int k, int dt, int s, size_t count) {
  snprintf(out, n, "%s shift %d dtype %s size %s (%zu elements)", method_names[method], k, p2p_dtype_names[dt],
           size_names[s], count);
}

static void one_transfer(xc_comm_t world, int method, int k, int dt, int s) {
  int n = p2p_size;
  int to = (mp_rank + k) % n, from = (mp_rank - k + n) % n;
  xc_dtype_t dtype = p2p_dtypes[dt];
  size_t esize = xc_dtype_size(dtype);
  size_t count = size_count(s, esize);
  size_t bytes = count * esize;
  int tag = msg_id(method, k, dt, s);
  char what[160];
  describe(what, sizeof what, method, k, dt, s, count);

  p2p_make(sendbuf, bytes, mp_rank, (uint64_t)tag);
  memset(recvbuf, SENTINEL, bytes + SLACK);
  xc_status_t st;
  memset(&st, 0xff, sizeof st);
  /* zero elements may come with NULL buffers (odd dtypes do that; the
     non-blocking receive has room to spare, so it keeps its buffer) */
  int null_bufs = count == 0 && dt % 2;
  const void *sb = null_bufs ? NULL : sendbuf;
  void *rb = null_bufs && method != M_NONBLOCKING ? NULL : recvbuf;

  switch (method) {
    case M_BLOCKING:
      if (p2p_send_first(mp_rank, n, k)) {
        MP_CHECK(xc_send(sb, count, dtype, to, tag, world));
        MP_CHECK(xc_recv(rb, count, dtype, from, tag, world, &st));
      } else {
        MP_CHECK(xc_recv(rb, count, dtype, from, tag, world, &st));
        MP_CHECK(xc_send(sb, count, dtype, to, tag, world));
      }
      break;
    case M_SENDRECV:
      MP_CHECK(xc_sendrecv(sb, count, to, tag, rb, count, from, tag, dtype, world, &st));
      break;
    case M_NONBLOCKING: {
      /* The receive buffer is larger than the message: status.bytes must say
         the message's size and nothing past it may be written. */
      size_t room = count + SLACK / esize;
      xc_request_t reqs[2] = {NULL, NULL};
      xc_status_t sts[2];
      if (k % 2) { /* alternate which is posted first */
        MP_CHECK(xc_isend(sb, count, dtype, to, tag, world, &reqs[1]));
        MP_CHECK(xc_irecv(rb, room, dtype, from, tag, world, &reqs[0]));
      } else {
        MP_CHECK(xc_irecv(rb, room, dtype, from, tag, world, &reqs[0]));
        MP_CHECK(xc_isend(sb, count, dtype, to, tag, world, &reqs[1]));
      }
      MP_ASSERT(reqs[0] != NULL && reqs[1] != NULL, "%s: isend/irecv gave a NULL request", what);
      MP_CHECK(xc_waitall(2, reqs, sts));
      MP_ASSERT(reqs[0] == NULL && reqs[1] == NULL, "%s: xc_waitall left a request handle non-NULL", what);
      MP_ASSERT(sts[1].error == XC_SUCCESS, "%s: send status error %d", what, sts[1].error);
      st = sts[0];
      break;
    }
    default: /* M_SELF: isend to self, then a blocking receive, then wait */
    {
      xc_request_t sreq = NULL;
      MP_CHECK(xc_isend(sb, count, dtype, mp_rank, tag, world, &sreq));
      MP_CHECK(xc_recv(rb, count, dtype, mp_rank, tag, world, &st));
      xc_status_t sst;
      MP_CHECK(xc_wait(&sreq, &sst));
      MP_ASSERT(sreq == NULL, "%s: xc_wait left the request handle non-NULL", what);
      MP_ASSERT(sst.error == XC_SUCCESS, "%s: send status error %d", what, sst.error);
      from = mp_rank;
      break;
    }
  }
  p2p_check_status(&st, from, tag, bytes, XC_SUCCESS, what);
  p2p_check_data(recvbuf, bytes, from, (uint64_t)tag, scratch, what);
  p2p_check_untouched(recvbuf + bytes, SLACK / esize * esize, SENTINEL, what); /* nothing past the message */
}

int main(void) {
  xc_comm_t world = NULL;
  p2p_init("p2p_sizes", &world);
  int n = p2p_size;
  sendbuf = p2p_alloc(MAX_BYTES);
  recvbuf = p2p_alloc(MAX_BYTES + SLACK);
  scratch = p2p_alloc(MAX_BYTES);

  double t0 = p2p_now();
  for (int method = 0; method < M_COUNT; ++method) {
    /* blocking send/recv skips the shift by 0 (a blocking send to self need
       not complete before its receive); self has its own method */
    int k_first = method == M_BLOCKING ? 1 : 0;
    int k_last = method == M_SELF ? 0 : n - 1;
    for (int k = k_first; k <= k_last; ++k)
      for (int dt = 0; dt < P2P_NDTYPES; ++dt)
        for (int s = 0; s < NSIZES; ++s) one_transfer(world, method, k, dt, s);
    MP_CHECK(xc_barrier(world));
    if (mp_rank == 0) printf("  %-22s ok (%.2f s)\n", method_names[method], p2p_now() - t0);
  }

  free(sendbuf);
  free(recvbuf);
  free(scratch);
  MP_CHECK(xc_comm_free(world));
  if (mp_rank == 0) printf("p2p_sizes: all passed\n");
  return 0;
}
