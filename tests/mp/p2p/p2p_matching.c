/* Message matching: XC_ANY_SOURCE / XC_ANY_TAG, tags selecting messages out
   of send order, the non-overtaking rule for one (sender, tag) stream of mixed
   eager and rendezvous sizes, communicators made by xc_comm_dup never
   matching their parent's (or each other's) messages, and peers and
   status.source in sub-communicator ranks on a reversed xc_comm_split. Data
   are seeded per (sender, message). */
#define _POSIX_C_SOURCE 200809L
#include "p2p_util.h"

#define SMALL 100u
#define LARGE (1u << 20) /* rendezvous, several ring fills */

static unsigned char *rbuf, *scratch;
#define RBUF_BYTES (4u << 20)

/* ---- XC_ANY_SOURCE / XC_ANY_TAG ------------------------------------------------ */

/* Size of rank r's message in the any-source rounds: eager, boundary and
   rendezvous sizes, different per rank. */
static size_t any_size(int r, int root) {
  static const size_t sizes[] = {SMALL, P2P_EAGER_BYTES + 1, 300u << 10, P2P_EAGER_BYTES, 1, 0, 70000};
  return sizes[(size_t)(r + root) % (sizeof sizes / sizeof sizes[0])];
}

/* Every rank (root included, by an isend to itself) sends one message to
   root; root receives them all with wildcards. mode 0: ANY_SOURCE + ANY_TAG;
   mode 1: ANY_SOURCE with each tag named, in descending rank order; mode 2:
   each source named with ANY_TAG, in descending rank order. */
static void any_round(xc_comm_t world, int root, int mode) {
  int n = p2p_size;
  uint64_t id = 1000u + (uint64_t)root * 10u + (uint64_t)mode;
  int tag_base = 100 * (mode + 1);
  size_t my_bytes = any_size(mp_rank, root);
  unsigned char *sbuf = p2p_alloc(my_bytes);
  p2p_make(sbuf, my_bytes, mp_rank, id);
  xc_request_t sreq = NULL;
  MP_CHECK(xc_isend(sbuf, my_bytes, XC_UINT8, root, tag_base + mp_rank, world, &sreq));
  if (mp_rank == root) {
    char *seen = calloc((size_t)n, 1);
    MP_ASSERT(seen != NULL, "calloc");
    for (int i = 0; i < n; ++i) {
      char what[128];
      xc_status_t st;
      memset(&st, 0xff, sizeof st);
      int expect_src = n - 1 - i;
      if (mode == 0) {
        snprintf(what, sizeof what, "root %d: receive %d of %d with ANY_SOURCE+ANY_TAG", root, i, n);
        MP_CHECK(xc_recv(rbuf, RBUF_BYTES, XC_UINT8, XC_ANY_SOURCE, XC_ANY_TAG, world, &st));
        MP_ASSERT(st.source >= 0 && st.source < n, "%s: status.source %d is out of range", what, st.source);
        MP_ASSERT(!seen[st.source], "%s: source %d delivered twice", what, st.source);
        expect_src = st.source;
      } else if (mode == 1) {
        snprintf(what, sizeof what, "root %d: ANY_SOURCE receive of tag %d", root, tag_base + expect_src);
        MP_CHECK(xc_recv(rbuf, RBUF_BYTES, XC_UINT8, XC_ANY_SOURCE, tag_base + expect_src, world, &st));
      } else {
        snprintf(what, sizeof what, "root %d: ANY_TAG receive from rank %d", root, expect_src);
        MP_CHECK(xc_recv(rbuf, RBUF_BYTES, XC_UINT8, expect_src, XC_ANY_TAG, world, &st));
      }
      seen[expect_src] = 1;
      size_t bytes = any_size(expect_src, root);
      p2p_check_status(&st, expect_src, tag_base + expect_src, bytes, XC_SUCCESS, what);
      p2p_check_data(rbuf, bytes, expect_src, id, scratch, what);
    }
    for (int r = 0; r < n; ++r) MP_ASSERT(seen[r], "root %d mode %d: nothing received from rank %d", root, mode, r);
    free(seen);
  }
  MP_CHECK(xc_wait(&sreq, NULL));
  free(sbuf);
  /* wildcard receives must not see the next round's messages */
  MP_CHECK(xc_barrier(world));
}

/* ---- tags select out of send order ------------------------------------------- */

/* Send A (tag_a) then B (tag_b) to the right neighbour; receive B first, then
   A, from the left neighbour. With one rank the neighbour is self. */
static void tag_order(xc_comm_t world, size_t bytes_a, size_t bytes_b, int tag_a, int tag_b, int preposted,
                      uint64_t id) {
  int n = p2p_size;
  int to = (mp_rank + 1) % n, from = (mp_rank - 1 + n) % n;
  char what[160];
  snprintf(what, sizeof what, "tag order: %s A (tag %d, %zu B) then B (tag %d, %zu B), B received first",
           preposted ? "pre-posted irecvs," : "blocking recvs,", tag_a, bytes_a, tag_b, bytes_b);
  unsigned char *a = p2p_alloc(bytes_a), *b = p2p_alloc(bytes_b);
  unsigned char *ra = p2p_alloc(bytes_a), *rb = p2p_alloc(bytes_b);
  p2p_make(a, bytes_a, mp_rank, id);
  p2p_make(b, bytes_b, mp_rank, id + 1);
  xc_request_t rreq[2] = {NULL, NULL}, sreq[2] = {NULL, NULL};
  xc_status_t rst[2];
  if (preposted) {
    MP_CHECK(xc_irecv(rb, bytes_b, XC_UINT8, from, tag_b, world, &rreq[1]));
    MP_CHECK(xc_irecv(ra, bytes_a, XC_UINT8, from, tag_a, world, &rreq[0]));
  }
  MP_CHECK(xc_isend(a, bytes_a, XC_UINT8, to, tag_a, world, &sreq[0]));
  MP_CHECK(xc_isend(b, bytes_b, XC_UINT8, to, tag_b, world, &sreq[1]));
  if (preposted) {
    MP_CHECK(xc_waitall(2, rreq, rst));
  } else {
    /* the buffers are exactly the sizes: a mismatch shows up as a truncation */
    MP_CHECK(xc_recv(rb, bytes_b, XC_UINT8, from, tag_b, world, &rst[1]));
    MP_CHECK(xc_recv(ra, bytes_a, XC_UINT8, from, tag_a, world, &rst[0]));
  }
  p2p_check_status(&rst[1], from, tag_b, bytes_b, XC_SUCCESS, what);
  p2p_check_status(&rst[0], from, tag_a, bytes_a, XC_SUCCESS, what);
  p2p_check_data(rb, bytes_b, from, id + 1, scratch, what);
  p2p_check_data(ra, bytes_a, from, id, scratch, what);
  MP_CHECK(xc_waitall(2, sreq, NULL));
  free(a);
  free(b);
  free(ra);
  free(rb);
}

/* ---- non-overtaking ---------------------------------------------------------- */

#define NMSG 50

/* Size of message i of sender s in the ordered stream: a seeded mix of
   eager and rendezvous sizes. */
static size_t stream_size(int s, int i) {
  static const size_t sizes[] = {0, 1, SMALL, P2P_EAGER_BYTES - 1, P2P_EAGER_BYTES, P2P_EAGER_BYTES + 1,
                                 65536, 300u << 10, 1u << 20, 3, 4000};
  uint64_t v;
  mp_fill(&v, sizeof v, p2p_seed, (uint64_t)s, 50000u + (uint64_t)i);
  return sizes[v % (sizeof sizes / sizeof sizes[0])];
}

/* The right neighbour gets NMSG messages with one tag; it receives them in
   order. mode 0: blocking recvs with the source named and ANY_TAG; mode 1:
   blocking recvs with ANY_SOURCE and ANY_TAG; mode 2: NMSG irecvs with
   ANY_TAG posted before sending, then waitall. */
static void non_overtaking(xc_comm_t world, int mode) {
  int n = p2p_size;
  int to = (mp_rank + 1) % n, from = (mp_rank - 1 + n) % n;
  const int tag = 77 + mode;
  uint64_t id0 = 60000u + 100u * (uint64_t)mode;
  unsigned char *sb[NMSG], *rb[NMSG];
  xc_request_t sreq[NMSG], rreq[NMSG];
  xc_status_t rst[NMSG];
  for (int i = 0; i < NMSG; ++i) {
    size_t bytes = stream_size(mp_rank, i);
    sb[i] = p2p_alloc(bytes);
    p2p_make(sb[i], bytes, mp_rank, id0 + (uint64_t)i);
    rb[i] = p2p_alloc(LARGE);
    rreq[i] = NULL;
  }
  if (mode == 2)
    for (int i = 0; i < NMSG; ++i) MP_CHECK(xc_irecv(rb[i], LARGE, XC_UINT8, from, XC_ANY_TAG, world, &rreq[i]));
  for (int i = 0; i < NMSG; ++i)
    MP_CHECK(xc_isend(sb[i], stream_size(mp_rank, i), XC_UINT8, to, tag, world, &sreq[i]));
  if (mode == 2) {
    MP_CHECK(xc_waitall(NMSG, rreq, rst));
  } else {
    for (int i = 0; i < NMSG; ++i)
      MP_CHECK(xc_recv(rb[i], LARGE, XC_UINT8, mode == 0 ? from : XC_ANY_SOURCE, XC_ANY_TAG, world, &rst[i]));
  }
  for (int i = 0; i < NMSG; ++i) {
    char what[128];
    snprintf(what, sizeof what, "non-overtaking mode %d: message %d of %d (%zu B) in order", mode, i, NMSG,
             stream_size(from, i));
    p2p_check_status(&rst[i], from, tag, stream_size(from, i), XC_SUCCESS, what);
    p2p_check_data(rb[i], stream_size(from, i), from, id0 + (uint64_t)i, scratch, what);
  }
  MP_CHECK(xc_waitall(NMSG, sreq, NULL));
  for (int i = 0; i < NMSG; ++i) {
    MP_ASSERT(sreq[i] == NULL && rreq[i] == NULL, "non-overtaking mode %d: request %d not NULL after wait", mode, i);
    free(sb[i]);
    free(rb[i]);
  }
  MP_CHECK(xc_barrier(world)); /* ANY_SOURCE in mode 1: keep the modes apart */
}

/* ---- dup'ed communicators ---------------------------------------------------- */

/* Send one message on each of comms[0..nc) (same tag, same peer) in that
   order; receive them in the opposite order. any: the receives use
   ANY_SOURCE + ANY_TAG. */
static void dup_isolation(xc_comm_t *comms, int nc, size_t bytes, int any, uint64_t id0) {
  int n = p2p_size;
  int to = (mp_rank + 1) % n, from = (mp_rank - 1 + n) % n;
  const int tag = 7;
  unsigned char *sb[4];
  xc_request_t sreq[4];
  for (int c = 0; c < nc; ++c) {
    sb[c] = p2p_alloc(bytes);
    p2p_make(sb[c], bytes, mp_rank, id0 + (uint64_t)c);
    MP_CHECK(xc_isend(sb[c], bytes, XC_UINT8, to, tag, comms[c], &sreq[c]));
  }
  for (int c = nc - 1; c >= 0; --c) {
    char what[128];
    snprintf(what, sizeof what, "dup isolation: %d comms, %zu B, %s, receive on comm %d first-to-last reversed",
             nc, bytes, any ? "ANY_SOURCE+ANY_TAG" : "named source+tag", c);
    xc_status_t st;
    memset(rbuf, 0, bytes);
    MP_CHECK(xc_recv(rbuf, RBUF_BYTES, XC_UINT8, any ? XC_ANY_SOURCE : from, any ? XC_ANY_TAG : tag, comms[c],
                     &st));
    p2p_check_status(&st, from, tag, bytes, XC_SUCCESS, what);
    p2p_check_data(rbuf, bytes, from, id0 + (uint64_t)c, scratch, what);
  }
  MP_CHECK(xc_waitall((size_t)nc, sreq, NULL));
  for (int c = 0; c < nc; ++c) free(sb[c]);
  if (any)
    MP_CHECK(xc_barrier(comms[0]));
}

/* ---- ranks of a sub-communicator ---------------------------------------------- */

/* Split world by parity with the order reversed (key = -rank): sub-rank i of
   colour c is the i-th largest world rank of that parity. Messages on the
   split communicator name peers, and statuses report sources, in sub-ranks.
   Every sub-rank sends to every sub-rank (itself included); the receiver
   takes them with ANY_SOURCE and names them by status.source. */
static void split_ranks(xc_comm_t world) {
  int n = p2p_size;
  int color = mp_rank % 2;
  xc_comm_t sub = NULL;
  MP_CHECK(xc_comm_split(world, color, -mp_rank, NULL, &sub));
  MP_ASSERT(sub != NULL, "split: got a NULL communicator");
  int *world_of = malloc((size_t)n * sizeof *world_of), m = 0; /* sub-rank -> world rank */
  MP_ASSERT(world_of != NULL, "malloc");
  for (int r = n - 1; r >= 0; --r)
    if (r % 2 == color) world_of[m++] = r;
  int sub_rank = -1, sub_size = -1;
  MP_CHECK(xc_comm_rank(sub, &sub_rank));
  MP_CHECK(xc_comm_size(sub, &sub_size));
  MP_ASSERT(sub_size == m && sub_rank >= 0 && sub_rank < m && world_of[sub_rank] == mp_rank,
            "split by parity, reversed: rank %d of %d, expected rank of world %d among %d", sub_rank, sub_size,
            mp_rank, m);
  const size_t sizes[] = {SMALL, P2P_EAGER_BYTES + 1, 300u << 10};
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z) {
    size_t bytes = sizes[z] + (size_t)mp_rank; /* the size names the sender too */
    uint64_t id = 40000u + z;
    unsigned char *sb = p2p_alloc(bytes);
    p2p_make(sb, bytes, mp_rank, id);
    xc_request_t *sreq = malloc((size_t)m * sizeof *sreq);
    char *seen = calloc((size_t)m, 1);
    MP_ASSERT(sreq && seen, "malloc");
    for (int p = 0; p < m; ++p) MP_CHECK(xc_isend(sb, bytes, XC_UINT8, p, 500 + sub_rank, sub, &sreq[p]));
    for (int i = 0; i < m; ++i) {
      char what[128];
      snprintf(what, sizeof what, "split communicator (colour %d, reversed): ANY_SOURCE receive %d of %d", color,
               i, m);
      xc_status_t st;
      MP_CHECK(xc_recv(rbuf, RBUF_BYTES, XC_UINT8, XC_ANY_SOURCE, XC_ANY_TAG, sub, &st));
      MP_ASSERT(st.source >= 0 && st.source < m && !seen[st.source], "%s: status.source %d is out of range [0, %d) "
                "or repeated", what, st.source, m);
      seen[st.source] = 1;
      int w = world_of[st.source];
      p2p_check_status(&st, st.source, 500 + st.source, sizes[z] + (size_t)w, XC_SUCCESS, what);
      p2p_check_data(rbuf, sizes[z] + (size_t)w, w, id, scratch, what);
    }
    MP_CHECK(xc_waitall((size_t)m, sreq, NULL));
    free(sb);
    free(sreq);
    free(seen);
    MP_CHECK(xc_barrier(sub)); /* the next size's ANY_SOURCE receives start clean */
  }
  /* a named sub-rank source: the last sub-rank sends to sub-rank 0 */
  if (m > 1 && (sub_rank == 0 || sub_rank == m - 1)) {
    const char *what = "split communicator: receive from a named sub-rank";
    if (sub_rank == m - 1) {
      p2p_make(rbuf, SMALL, mp_rank, 41000u);
      MP_CHECK(xc_send(rbuf, SMALL, XC_UINT8, 0, 9, sub));
    } else {
      xc_status_t st;
      MP_CHECK(xc_recv(rbuf, SMALL, XC_UINT8, m - 1, 9, sub, &st));
      p2p_check_status(&st, m - 1, 9, SMALL, XC_SUCCESS, what);
      p2p_check_data(rbuf, SMALL, world_of[m - 1], 41000u, scratch, what);
    }
  }
  MP_CHECK(xc_comm_free(sub));
  free(world_of);
}

int main(void) {
  xc_comm_t world = NULL;
  p2p_init("p2p_matching", &world);
  int n = p2p_size;
  rbuf = p2p_alloc(RBUF_BYTES);
  scratch = p2p_alloc(RBUF_BYTES);
  double t0 = p2p_now();

  for (int root = 0; root < n; ++root)
    for (int mode = 0; mode < 3; ++mode) any_round(world, root, mode);
  if (mp_rank == 0) printf("  ANY_SOURCE/ANY_TAG ok (%.2f s)\n", p2p_now() - t0);

  {
    const size_t sz[4][2] = {{SMALL, SMALL}, {LARGE, LARGE}, {SMALL, LARGE}, {LARGE, SMALL}};
    uint64_t id = 20000;
    for (int pre = 0; pre < 2; ++pre)
      for (int c = 0; c < 4; ++c) {
        tag_order(world, sz[c][0], sz[c][1], 1, 2, pre, id);
        id += 2;
        tag_order(world, sz[c][0], sz[c][1], XC_TAG_MAX, 0, pre, id);
        id += 2;
      }
    /* zero-byte messages are matched by tag too */
    tag_order(world, 0, 0, 1, 2, 0, id);
    id += 2;
    tag_order(world, 0, P2P_EAGER_BYTES + 1, 3, 4, 1, id);
  }
  MP_CHECK(xc_barrier(world));
  if (mp_rank == 0) printf("  tag selection ok (%.2f s)\n", p2p_now() - t0);

  for (int mode = 0; mode < 3; ++mode) non_overtaking(world, mode);
  if (mp_rank == 0) printf("  non-overtaking ok (%.2f s)\n", p2p_now() - t0);

  {
    /* world, a dup, a dup of the dup, and a second dup of world */
    xc_comm_t comms[4] = {world, NULL, NULL, NULL};
    MP_CHECK(xc_comm_dup(world, &comms[1]));
    MP_CHECK(xc_comm_dup(comms[1], &comms[2]));
    MP_CHECK(xc_comm_dup(world, &comms[3]));
    for (int c = 1; c < 4; ++c) {
      int r = -1, s = -1;
      MP_CHECK(xc_comm_rank(comms[c], &r));
      MP_CHECK(xc_comm_size(comms[c], &s));
      MP_ASSERT(r == mp_rank && s == n, "dup level %d: rank %d size %d, expected %d of %d", c, r, s, mp_rank, n);
    }
    const size_t sizes[] = {0, SMALL, P2P_EAGER_BYTES + 1, LARGE};
    uint64_t id = 30000;
    for (int any = 0; any < 2; ++any)
      for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        dup_isolation(comms, 2, sizes[i], any, id);
        id += 3;
        dup_isolation(comms, 4, sizes[i], any, id);
        id += 4;
      }
    MP_CHECK(xc_comm_free(comms[3]));
    MP_CHECK(xc_comm_free(comms[2]));
    MP_CHECK(xc_comm_free(comms[1]));
  }
  if (mp_rank == 0) printf("  comm_dup isolation ok (%.2f s)\n", p2p_now() - t0);

  split_ranks(world);
  if (mp_rank == 0) printf("  split communicator ranks ok (%.2f s)\n", p2p_now() - t0);

  free(rbuf);
  free(scratch);
  MP_CHECK(xc_comm_free(world));
  if (mp_rank == 0) printf("p2p_matching: all passed\n");
  return 0;
}
