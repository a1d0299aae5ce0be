/* Point-to-point on device memory (stream-ordered; xcomm.h "device memory
   and streams"). Messages are seeded (tests/mp/p2p/p2p_util.h), so every
   receiver checks the bytes, the status and the guard bytes past the end of
   its buffer.

     pairs       xc_send/xc_recv between every pair of ranks, sizes 0, 1,
                 1001 elements and 4 MiB + 1 element in rotating dtypes; the
                 pairs in one global order, the lower rank sending first (a
                 device send completes when its receiver has read it, so
                 this order needs no group). xc_recv's status is filled at
                 enqueue: the peer, tag and capacity it was given.
     nonblocking the same with xc_isend/xc_irecv and one xc_waitall; the
                 receive buffers are larger than the messages, and the
                 statuses must give the matched source, tag and size.
     sendrecv    xc_sendrecv around the ring at every shift (itself at 1 rank).
     any_source  each rank in turn receives one message from every other
                 rank with XC_ANY_SOURCE and XC_ANY_TAG (xc_irecv + xc_waitall:
                 real source, tag and size; one blocking xc_recv whose
                 status at enqueue says XC_ANY_SOURCE, completed by
                 synchronising the default stream, xc_stream_wrap(comm,
                 NULL), where any-source receives go).
     truncation  a message larger than the receive buffer: xc_irecv + xc_wait
                 gives XC_ERR_TRUNCATED (status: real size) and the stream's
                 xc_stream_synchronize returns it once; xc_recv's truncation
                 shows at xc_stream_synchronize; nothing is written; the
                 sender succeeds; the next message arrives intact; the
                 communicator's async error reports it (a duplicate is used).
     zero        zero-element messages between device buffers, every form.
     group       every rank sends to and receives from every rank (itself
                 included) inside xc_group_start/xc_group_end on one stream,
                 with blocking calls (statuses filled at xc_group_end) and
                 with xc_isend/xc_irecv waited after the group.
     per_peer    a stream per peer (xc_stream_bind(comm, s, peer)): at each
                 shift every rank sends to rank+k and receives from rank-k
                 with blocking calls and no group, which only the separate
                 streams keep from deadlocking (at the shift that pairs a rank
                 with itself both ways, a group).
     kinds       host and device messages never match: a host message and a
                 device message with the same tag, received in the other
                 order, each arrive in the buffer of their kind.

     device_p2p [CASE[,CASE...]]      (default: all)

   Exit status: 0 passed, 1 failed (what, rank, dtype, count printed), 77
   skipped (XC_DEVICE=cuda without a usable GPU). Under XC_TIMEOUT a
   deadlock shows as an error instead of a hang. */
#define _POSIX_C_SOURCE 200809L
#include "dev_mem.h"
#include "p2p_util.h"

#define SENTINEL 0xC3
#define GUARD 64u

static xc_comm_t world;
static xc_stream_t g_stream;  /* bound for every peer of world (ops without a per-peer binding) */
static xc_stream_t g_default; /* xc_stream_wrap(world, NULL): the default stream, where any-source receives go */
static int me, n;
static unsigned char *scratch; /* the expected message, rebuilt per check */
#define SCRATCH_BYTES ((size_t)(8 << 20) + 64)

/* ---- helpers ---------------------------------------------------------------- */

static void sync_or_die(xc_stream_t s, const char *what) {
  xc_result_t rc = xc_stream_synchronize(s);
  if (rc != XC_SUCCESS) {
    fprintf(stderr, "[rank %d] %s: xc_stream_synchronize -> %s (%s)\n", me, what, xc_strerror(rc), xc_last_error());
    exit(1);
  }
}

#define CALL(what, call)                                                                                    \
  do {                                                                                                      \
    xc_result_t rc_ = (call);                                                                               \
    if (rc_ != XC_SUCCESS) {                                                                                \
      fprintf(stderr, "[rank %d] %s: %s -> %s (%s)\n", me, what, #call, xc_strerror(rc_), xc_last_error()); \
      exit(1);                                                                                              \
    }                                                                                                       \
  } while (0)

/* A device message buffer and its host twin. */
typedef struct {
  void *dev;
  size_t bytes; /* the message (or capacity) in bytes; the device buffer has GUARD more */
} dbuf;

/* The message id from `from` to `to` in case `cs`, round `round`. */
static uint64_t msg_id(int cs, int round, int from, int to) {
  return ((uint64_t)cs << 48) | ((uint64_t)round << 24) | ((uint64_t)from << 12) | (uint64_t)to;
}

static dbuf make_send(size_t bytes, uint64_t id) {
  dbuf b;
  unsigned char *h = (unsigned char *)p2p_alloc(bytes + GUARD);
  b.bytes = bytes;
  b.dev = dev_alloc(world, bytes + GUARD);
  p2p_make(h, bytes, me, id);
  memset(h + bytes, SENTINEL, GUARD);
  dev_put(b.dev, h, bytes + GUARD);
  free(h);
  return b;
}

static dbuf make_recv(size_t capacity) {
  dbuf b;
  b.bytes = capacity;
  b.dev = dev_alloc(world, capacity + GUARD);
  dev_fill(b.dev, SENTINEL, capacity + GUARD);
  return b;
}

/* The receive buffer holds message id of `from` (msg bytes), and sentinels
   from there to the end of capacity + GUARD. */
static void check_recv(const dbuf *b, size_t msg, int from, uint64_t id, const char *what) {
  unsigned char *h = (unsigned char *)p2p_alloc(b->bytes + GUARD);
  dev_get(h, b->dev, b->bytes + GUARD);
  p2p_check_data(h, msg, from, id, scratch, what);
  p2p_check_untouched(h + msg, b->bytes + GUARD - msg, SENTINEL, what);
  free(h);
}

static void check_untouched_dev(const dbuf *b, const char *what) {
  unsigned char *h = (unsigned char *)p2p_alloc(b->bytes + GUARD);
  dev_get(h, b->dev, b->bytes + GUARD);
  p2p_check_untouched(h, b->bytes + GUARD, SENTINEL, what);
  free(h);
}

static void drop(dbuf *b) {
  if (b->dev) dev_free(world, b->dev);
  b->dev = NULL;
}

/* Sizes in elements and the dtype of round i. */
static const size_t kSizes[] = {0, 1, 1001, 0 /* 4 MiB + 1 element */};
#define NSIZES 4
static xc_dtype_t round_dtype(int round) { return p2p_dtypes[(round * 3 + 1) % P2P_NDTYPES]; }
static size_t round_count(int round, xc_dtype_t dt) {
  return round == 3 ? ((size_t)4 << 20) / xc_dtype_size(dt) + 1 : kSizes[round];
}
static const char *dt_name(xc_dtype_t dt) { return p2p_dtype_names[(int)dt]; }

/* ---- pairs / nonblocking ------------------------------------------------------ */

/* Every unordered pair {i, j} in one global order; i sends first. */
static void run_pairs(int nonblocking) {
  const int cs = nonblocking ? 2 : 1;
  int round;
  for (round = 0; round < NSIZES; ++round) {
    xc_dtype_t dt = round_dtype(round);
    size_t count = round_count(round, dt), es = xc_dtype_size(dt), bytes = count * es;
    size_t extra = nonblocking ? 3 : 0; /* irecv capacity beyond the message, in elements */
    dbuf *sb = (dbuf *)calloc((size_t)n, sizeof(dbuf)), *rb = (dbuf *)calloc((size_t)n, sizeof(dbuf));
    xc_status_t *st = (xc_status_t *)calloc((size_t)n, sizeof(xc_status_t));
    xc_request_t *reqs = (xc_request_t *)calloc(2 * (size_t)n, sizeof(xc_request_t));
    int *rpeer = (int *)calloc((size_t)n, sizeof(int));
    int i, j, nreq = 0, nrecv = 0, k;
    char what[160];
    MP_ASSERT(sb && rb && st && reqs && rpeer, "out of memory");
    snprintf(what, sizeof what, "%s %s count %zu", nonblocking ? "xc_isend/xc_irecv" : "xc_send/xc_recv", dt_name(dt),
             count);
    for (i = 0; i < n; ++i)
      for (j = i + 1; j < n; ++j) {
        int peer, step;
        if (me != i && me != j) continue;
        peer = me == i ? j : i;
        for (step = 0; step < 2; ++step) {
          int sending = (me == i) == (step == 0);
          int tag = 1000 * cs + round;
          if (sending) {
            sb[peer] = make_send(bytes, msg_id(cs, round, me, peer));
            if (nonblocking)
              CALL(what, xc_isend(sb[peer].dev, count, dt, peer, tag, world, &reqs[nreq++]));
            else
              CALL(what, xc_send(sb[peer].dev, count, dt, peer, tag, world));
          } else {
            rb[peer] = make_recv(bytes + extra * es);
            memset(&st[nrecv], 0xff, sizeof st[nrecv]);
            if (nonblocking)
              CALL(what, xc_irecv(rb[peer].dev, count + extra, dt, peer, tag, world, &reqs[nreq++]));
            else {
              CALL(what, xc_recv(rb[peer].dev, count, dt, peer, tag, world, &st[nrecv]));
              p2p_check_status(&st[nrecv], peer, tag, bytes, 0, what); /* at enqueue: the given peer, tag, capacity */
            }
            rpeer[nrecv++] = peer;
          }
        }
      }
    if (nonblocking) {
      xc_status_t *all = (xc_status_t *)calloc((size_t)nreq + 1, sizeof(xc_status_t));
      int r = 0;
      MP_ASSERT(all != NULL, "out of memory");
      CALL(what, xc_waitall((size_t)nreq, reqs, all));
      /* Requests were posted in the order send/recv per pair: statuses of receives in that order. */
      for (i = 0, k = 0; i < n; ++i)
        for (j = i + 1; j < n; ++j) {
          int step;
          if (me != i && me != j) continue;
          for (step = 0; step < 2; ++step) {
            int sending = (me == i) == (step == 0);
            if (!sending) {
              int peer = rpeer[k++];
              char w2[200];
              snprintf(w2, sizeof w2, "%s from rank %d", what, peer);
              p2p_check_status(&all[r], peer, 1000 * cs + round, bytes, 0, w2);
            } else {
              MP_ASSERT(all[r].error == 0, "%s: send status error %d", what, all[r].error);
            }
            ++r;
          }
        }
      free(all);
    }
    sync_or_die(g_stream, what);
    for (k = 0; k < nrecv; ++k) {
      char w2[200];
      snprintf(w2, sizeof w2, "%s from rank %d", what, rpeer[k]);
      check_recv(&rb[rpeer[k]], bytes, rpeer[k], msg_id(cs, round, rpeer[k], me), w2);
    }
    for (i = 0; i < n; ++i) {
      drop(&sb[i]);
      drop(&rb[i]);
    }
    free(sb);
    free(rb);
    free(st);
    free(reqs);
    free(rpeer);
  }
}

/* ---- sendrecv ------------------------------------------------------------------ */

static void run_sendrecv(void) {
  int k, round;
  for (round = 0; round < NSIZES; ++round)
    for (k = (n == 1 ? 0 : 1); k < (n == 1 ? 1 : n); ++k) {
      xc_dtype_t dt = round_dtype(round + k);
      size_t count = round_count(round, dt), bytes = count * xc_dtype_size(dt);
      int to = (me + k) % n, from = (me - k + n) % n, tag = 3000 + k;
      dbuf sb = make_send(bytes, msg_id(3, round, me, to)), rb = make_recv(bytes);
      xc_status_t st;
      char what[160];
      snprintf(what, sizeof what, "xc_sendrecv shift %d %s count %zu (to %d, from %d)", k, dt_name(dt), count, to,
               from);
      memset(&st, 0xff, sizeof st);
      CALL(what, xc_sendrecv(sb.dev, count, to, tag, rb.dev, count, from, tag, dt, world, &st));
      sync_or_die(g_stream, what);
      MP_ASSERT(st.source == from && st.tag == tag && st.error == 0,
                "%s: status {source %d, tag %d, error %d}, expected {%d, %d, 0}", what, st.source, st.tag, st.error,
                from, tag);
      check_recv(&rb, bytes, from, msg_id(3, round, from, me), what);
      drop(&sb);
      drop(&rb);
    }
}

/* ---- any source ------------------------------------------------------------------ */

static size_t any_bytes(int sender, int round) {
  return round == 0 ? 0 : (size_t)(1001 * sender + 17 * round) + (round == 2 ? (size_t)1 << 20 : 0);
}

static void run_any_source(void) {
  int target, round;
  if (n < 2) return;
  for (round = 0; round < 3; ++round)
    for (target = 0; target < n; ++target) {
      char what[160];
      snprintf(what, sizeof what, "XC_ANY_SOURCE receive at rank %d (round %d)", target, round);
      if (me != target) {
        size_t bytes = any_bytes(me, round);
        dbuf sb = make_send(bytes, msg_id(4, round, me, target));
        CALL(what, xc_send(sb.dev, bytes, XC_UINT8, target, 4000 + me, world));
        sync_or_die(g_stream, what);
        drop(&sb);
      } else {
        size_t cap = (size_t)1001 * (size_t)n + 64 + ((size_t)1 << 20);
        int nr = n - 1, i, blocking = round == 1; /* round 1: the first receive is a blocking xc_recv */
        dbuf *rb = (dbuf *)calloc((size_t)nr, sizeof(dbuf));
        xc_request_t *reqs = (xc_request_t *)calloc((size_t)nr, sizeof(xc_request_t));
        xc_status_t *st = (xc_status_t *)calloc((size_t)nr, sizeof(xc_status_t));
        int *seen = (int *)calloc((size_t)n, sizeof(int)), blocked_source = -1;
        MP_ASSERT(rb && reqs && st && seen, "out of memory");
        for (i = 0; i < nr; ++i) {
          rb[i] = make_recv(cap);
          if (i == 0 && blocking) {
            xc_status_t bst;
            memset(&bst, 0xff, sizeof bst);
            CALL(what, xc_recv(rb[i].dev, cap, XC_UINT8, XC_ANY_SOURCE, XC_ANY_TAG, world, &bst));
            p2p_check_status(&bst, XC_ANY_SOURCE, XC_ANY_TAG, cap, 0,
                             "blocking xc_recv from XC_ANY_SOURCE (status at enqueue)");
            reqs[i] = NULL;
          } else {
            CALL(what, xc_irecv(rb[i].dev, cap, XC_UINT8, XC_ANY_SOURCE, XC_ANY_TAG, world, &reqs[i]));
          }
        }
        CALL(what, xc_waitall((size_t)nr, reqs, st));
        sync_or_die(g_default, what); /* the blocking one: any-source receives go to the default stream */
        for (i = blocking ? 1 : 0; i < nr; ++i) {
          int src = st[i].source;
          char w2[200];
          snprintf(w2, sizeof w2, "%s: receive %d", what, i);
          MP_ASSERT(src >= 0 && src < n && src != me && !seen[src], "%s: status.source %d (invalid or seen twice)", w2,
                    src);
          seen[src] = 1;
          p2p_check_status(&st[i], src, 4000 + src, any_bytes(src, round), 0, w2);
          check_recv(&rb[i], any_bytes(src, round), src, msg_id(4, round, src, me), w2);
        }
        if (blocking) { /* the one source no irecv reported */
          for (i = 0; i < n; ++i)
            if (i != me && !seen[i]) blocked_source = i;
          MP_ASSERT(blocked_source >= 0, "%s: no source left for the blocking receive", what);
          check_recv(&rb[0], any_bytes(blocked_source, round), blocked_source, msg_id(4, round, blocked_source, me),
                     "blocking xc_recv from XC_ANY_SOURCE");
        }
        for (i = 0; i < nr; ++i) drop(&rb[i]);
        free(rb);
        free(reqs);
        free(st);
        free(seen);
      }
    }
}

/* ---- truncation ------------------------------------------------------------------ */

/* Rank 0 sends three messages to rank 1 on a duplicate of the world (its async
   error must not stay on the world): 1001 bytes into 500 (xc_irecv), 1001
   into 500 (xc_recv), then 600 into 600. */
static void run_truncation(void) {
  xc_comm_t d;
  xc_stream_t s;
  CALL("truncation", xc_comm_dup(world, &d));
  s = dev_stream(d);
  if (n >= 2 && me < 2) {
    int i;
    for (i = 0; i < n; ++i) CALL("truncation", xc_stream_bind(d, s, i));
  }
  if (n >= 2 && me == 0) {
    dbuf a = make_send(1001, msg_id(5, 0, 0, 1)), b = make_send(1001, msg_id(5, 1, 0, 1)),
         c = make_send(600, msg_id(5, 2, 0, 1));
    xc_result_t async = XC_ERR_INTERNAL;
    CALL("truncation (sender)", xc_send(a.dev, 1001, XC_UINT8, 1, 50, d));
    CALL("truncation (sender)", xc_send(b.dev, 1001, XC_UINT8, 1, 50, d));
    CALL("truncation (sender)", xc_send(c.dev, 600, XC_UINT8, 1, 50, d));
    sync_or_die(s, "truncation: the sender's stream (its sends succeed)");
    CALL("truncation", xc_comm_get_async_error(d, &async));
    MP_ASSERT(async == XC_SUCCESS, "truncation: the sender's async error is %d (%s), expected none", (int)async,
              xc_strerror(async));
    drop(&a);
    drop(&b);
    drop(&c);
  } else if (n >= 2 && me == 1) {
    dbuf r1 = make_recv(500), r2 = make_recv(500), r3 = make_recv(600);
    xc_request_t req = NULL;
    xc_status_t st;
    xc_result_t rc, async = XC_SUCCESS;
    CALL("truncation", xc_irecv(r1.dev, 500, XC_UINT8, 0, 50, d, &req));
    rc = xc_wait(&req, &st);
    MP_ASSERT(rc == XC_ERR_TRUNCATED && xc_last_error()[0] != '\0',
              "truncation: xc_wait on a 1001-byte message into 500 bytes -> %d (%s: %s), expected XC_ERR_TRUNCATED",
              (int)rc, xc_strerror(rc), xc_last_error());
    p2p_check_status(&st, 0, 50, 1001, XC_ERR_TRUNCATED, "truncation: xc_irecv's status");
    rc = xc_stream_synchronize(s);
    MP_ASSERT(
        rc == XC_ERR_TRUNCATED && xc_last_error()[0] != '\0',
        "truncation: xc_stream_synchronize after the truncated xc_irecv -> %d (%s: %s), expected XC_ERR_TRUNCATED",
        (int)rc, xc_strerror(rc), xc_last_error());
    rc = xc_stream_synchronize(s);
    MP_ASSERT(rc == XC_SUCCESS, "truncation: a second xc_stream_synchronize -> %d (%s: %s), expected the error cleared",
              (int)rc, xc_strerror(rc), xc_last_error());
    check_untouched_dev(&r1, "truncation: the xc_irecv buffer");

    memset(&st, 0xff, sizeof st);
    CALL("truncation", xc_recv(r2.dev, 500, XC_UINT8, 0, 50, d, &st));
    p2p_check_status(&st, 0, 50, 500, 0, "truncation: xc_recv's status at enqueue");
    rc = xc_stream_synchronize(s);
    MP_ASSERT(rc == XC_ERR_TRUNCATED && xc_last_error()[0] != '\0',
              "truncation: xc_stream_synchronize after a truncated xc_recv -> %d (%s: %s), expected XC_ERR_TRUNCATED",
              (int)rc, xc_strerror(rc), xc_last_error());
    check_untouched_dev(&r2, "truncation: the xc_recv buffer");

    CALL("truncation: the message after", xc_irecv(r3.dev, 600, XC_UINT8, 0, 50, d, &req));
    CALL("truncation: the message after", xc_wait(&req, &st));
    p2p_check_status(&st, 0, 50, 600, 0, "truncation: the message after");
    sync_or_die(s, "truncation: the message after");
    check_recv(&r3, 600, 0, msg_id(5, 2, 0, 1), "truncation: the message after");
    CALL("truncation", xc_comm_get_async_error(d, &async));
    MP_ASSERT(async == XC_ERR_TRUNCATED, "truncation: xc_comm_get_async_error -> %d (%s), expected XC_ERR_TRUNCATED",
              (int)async, xc_strerror(async));
    drop(&r1);
    drop(&r2);
    drop(&r3);
  }
  CALL("truncation", xc_stream_destroy(s));
  CALL("truncation", xc_comm_free(d));
}

/* ---- zero-element messages ----------------------------------------------------- */

static void run_zero(void) {
  int k;
  for (k = 0; k < n; ++k) {
    int to = (me + k) % n, from = (me - k + n) % n, tag = 6000 + k;
    dbuf sb = make_send(0, 0), rb = make_recv(0), rb2 = make_recv(8);
    xc_request_t reqs[2] = {NULL, NULL};
    xc_status_t st[2], st1;
    char what[128];
    snprintf(what, sizeof what, "zero elements, shift %d (to %d, from %d)", k, to, from);
    /* A group: at shift 0 the peer is this rank. */
    CALL(what, xc_group_start());
    CALL(what, xc_isend(sb.dev, 0, XC_FLOAT32, to, tag, world, &reqs[0]));
    CALL(what, xc_irecv(rb2.dev, 2, XC_FLOAT32, from, tag, world, &reqs[1]));
    CALL(what, xc_group_end());
    CALL(what, xc_waitall(2, reqs, st));
    p2p_check_status(&st[1], from, tag, 0, 0, what);
    CALL(what, xc_sendrecv(sb.dev, 0, to, tag + 1, rb.dev, 0, from, tag + 1, XC_INT64, world, &st1));
    sync_or_die(g_stream, what);
    MP_ASSERT(st1.source == from && st1.error == 0, "%s: xc_sendrecv status {source %d, error %d}", what, st1.source,
              st1.error);
    check_untouched_dev(&rb, what);
    check_untouched_dev(&rb2, what);
    drop(&sb);
    drop(&rb);
    drop(&rb2);
  }
}

/* ---- groups ---------------------------------------------------------------------- */

static void run_group(void) {
  int form, round;
  for (form = 0; form < 2; ++form)
    for (round = 1; round < NSIZES; ++round) {
      xc_dtype_t dt = round_dtype(round + 5);
      size_t count = round_count(round, dt), bytes = count * xc_dtype_size(dt);
      dbuf *sb = (dbuf *)calloc((size_t)n, sizeof(dbuf)), *rb = (dbuf *)calloc((size_t)n, sizeof(dbuf));
      xc_status_t *st = (xc_status_t *)calloc(2 * (size_t)n, sizeof(xc_status_t));
      xc_request_t *reqs = (xc_request_t *)calloc(2 * (size_t)n, sizeof(xc_request_t));
      int p, tag = 7000 + round;
      char what[160];
      MP_ASSERT(sb && rb && st && reqs, "out of memory");
      snprintf(what, sizeof what, "group of %s with every rank, %s count %zu",
               form ? "xc_isend/xc_irecv" : "xc_send/xc_recv", dt_name(dt), count);
      for (p = 0; p < n; ++p) {
        sb[p] = make_send(bytes, msg_id(7, round * 2 + form, me, p));
        rb[p] = make_recv(bytes);
      }
      CALL(what, xc_group_start());
      for (p = 0; p < n; ++p) { /* sends before receives on every rank: only the group makes this work */
        if (form)
          CALL(what, xc_isend(sb[p].dev, count, dt, p, tag, world, &reqs[p]));
        else
          CALL(what, xc_send(sb[p].dev, count, dt, p, tag, world));
      }
      for (p = 0; p < n; ++p) {
        if (form)
          CALL(what, xc_irecv(rb[p].dev, count, dt, p, tag, world, &reqs[n + p]));
        else
          CALL(what, xc_recv(rb[p].dev, count, dt, p, tag, world, &st[p]));
      }
      CALL(what, xc_group_end());
      if (form) CALL(what, xc_waitall(2 * (size_t)n, reqs, st));
      sync_or_die(g_stream, what);
      for (p = 0; p < n; ++p) {
        char w2[200];
        snprintf(w2, sizeof w2, "%s: from rank %d", what, p);
        p2p_check_status(form ? &st[n + p] : &st[p], p, tag, bytes, 0, w2);
        check_recv(&rb[p], bytes, p, msg_id(7, round * 2 + form, p, me), w2);
      }
      for (p = 0; p < n; ++p) {
        drop(&sb[p]);
        drop(&rb[p]);
      }
      free(sb);
      free(rb);
      free(st);
      free(reqs);
    }
}

/* ---- a stream per peer -------------------------------------------------------------- */

static void run_per_peer(void) {
  xc_comm_t d;
  xc_stream_t *s;
  int p, k;
  CALL("per-peer streams", xc_comm_dup(world, &d));
  s = (xc_stream_t *)calloc((size_t)n, sizeof(xc_stream_t));
  MP_ASSERT(s != NULL, "out of memory");
  for (p = 0; p < n; ++p) {
    s[p] = dev_stream(d);
    CALL("per-peer streams", xc_stream_bind(d, s[p], p));
  }
  for (k = 0; k < n; ++k) {
    xc_dtype_t dt = round_dtype(k);
    size_t count = k % 2 ? 1001 : ((size_t)1 << 20) / xc_dtype_size(dt) + 1, bytes = count * xc_dtype_size(dt);
    int to = (me + k) % n, from = (me - k + n) % n, tag = 8000 + k;
    int both = to == from; /* shift 0, or n/2 with n even: the same peer both ways */
    dbuf sb = make_send(bytes, msg_id(8, k, me, to)), rb = make_recv(bytes);
    char what[160];
    snprintf(what, sizeof what, "per-peer streams, shift %d (to %d on its stream, from %d on its stream) %s count %zu",
             k, to, from, dt_name(dt), count);
    if (both) CALL(what, xc_group_start());
    CALL(what, xc_send(sb.dev, count, dt, to, tag, d));
    CALL(what, xc_recv(rb.dev, count, dt, from, tag, d, NULL));
    if (both) CALL(what, xc_group_end());
    sync_or_die(s[to], what);
    sync_or_die(s[from], what);
    check_recv(&rb, bytes, from, msg_id(8, k, from, me), what);
    drop(&sb);
    drop(&rb);
  }
  for (p = 0; p < n; ++p) CALL("per-peer streams", xc_stream_destroy(s[p]));
  free(s);
  CALL("per-peer streams", xc_comm_free(d));
}

/* ---- host and device messages --------------------------------------------------------- */

static void run_kinds(void) {
  if (n < 2) return;
  if (me == 0) {
    int round;
    for (round = 0; round < 2; ++round) {
      unsigned char host[256];
      dbuf sb = make_send(256, msg_id(9, round, 0, 1));
      p2p_make(host, sizeof host, 0, msg_id(9, 10 + round, 0, 1));
      /* Round 0: host message first; round 1: device message first. */
      if (round == 0) CALL("host/device", xc_send(host, sizeof host, XC_UINT8, 1, 90, world));
      CALL("host/device", xc_send(sb.dev, 256, XC_UINT8, 1, 90, world));
      if (round == 1) CALL("host/device", xc_send(host, sizeof host, XC_UINT8, 1, 90, world));
      sync_or_die(g_stream, "host/device messages (sender)");
      drop(&sb);
    }
  } else if (me == 1) {
    int round;
    for (round = 0; round < 2; ++round) {
      unsigned char host[256 + GUARD];
      dbuf rb = make_recv(256);
      xc_request_t req = NULL;
      xc_status_t st;
      memset(host, SENTINEL, sizeof host);
      /* The device receive is posted before the host one in round 0 (the host
         message was sent first), after it in round 1. */
      if (round == 0) CALL("host/device", xc_irecv(rb.dev, 256, XC_UINT8, 0, 90, world, &req));
      CALL("host/device", xc_recv(host, 256, XC_UINT8, 0, 90, world, &st));
      p2p_check_status(&st, 0, 90, 256, 0, "host/device: the host receive");
      if (round == 1) CALL("host/device", xc_irecv(rb.dev, 256, XC_UINT8, 0, 90, world, &req));
      CALL("host/device", xc_wait(&req, &st));
      p2p_check_status(&st, 0, 90, 256, 0, "host/device: the device receive");
      sync_or_die(g_stream, "host/device messages (receiver)");
      p2p_check_data(host, 256, 0, msg_id(9, 10 + round, 0, 1), scratch,
                     "host/device: the host receive got the device message");
      p2p_check_untouched(host + 256, GUARD, SENTINEL, "host/device: the host receive");
      check_recv(&rb, 256, 0, msg_id(9, round, 0, 1), "host/device: the device receive got the host message");
      drop(&rb);
    }
  }
}

/* ---- main ------------------------------------------------------------------------- */

typedef struct {
  const char *name;
  void (*run)(void);
} p2p_case;

static void run_pairs_blocking(void) { run_pairs(0); }
static void run_pairs_nonblocking(void) { run_pairs(1); }

static const p2p_case kCases[] = {
    {"pairs", run_pairs_blocking},  {"nonblocking", run_pairs_nonblocking},
    {"sendrecv", run_sendrecv},     {"any_source", run_any_source},
    {"truncation", run_truncation}, {"zero", run_zero},
    {"group", run_group},           {"per_peer", run_per_peer},
    {"kinds", run_kinds},
};
#define NCASES (sizeof kCases / sizeof kCases[0])

int main(int argc, char **argv) {
  int selected[NCASES] = {0}, any = 0, i, p;
  size_t k;
  for (i = 1; i < argc; ++i) {
    const char *list = argv[i];
    while (*list) {
      size_t len = strcspn(list, ","), c;
      int found = 0;
      for (c = 0; c < NCASES; ++c)
        if (strlen(kCases[c].name) == len && strncmp(kCases[c].name, list, len) == 0) selected[c] = found = 1;
      if (!found) {
        fprintf(stderr, "device_p2p: unknown case '%.*s'\n", (int)len, list);
        return 2;
      }
      any = 1;
      list += len + (list[len] == ',');
    }
  }
  p2p_init("device_p2p", &world);
  me = mp_rank;
  n = p2p_size;
  dev_setup(world);
  scratch = (unsigned char *)p2p_alloc(SCRATCH_BYTES);
  g_stream = dev_stream(world);
  for (p = 0; p < n; ++p) MP_CHECK(xc_stream_bind(world, g_stream, p));
  MP_CHECK(xc_stream_wrap(world, NULL, &g_default));
  if (me == 0) printf("device_p2p: on the %s device\n", dev_kind());
  for (k = 0; k < NCASES; ++k) {
    if (any && !selected[k]) continue;
    kCases[k].run();
    MP_CHECK(xc_barrier(world));
    if (me == 0) printf("device_p2p: %s passed\n", kCases[k].name);
    fflush(stdout);
  }
  MP_CHECK(xc_stream_destroy(g_stream));
  MP_CHECK(xc_stream_destroy(g_default));
  free(scratch);
  MP_CHECK(xc_comm_free(world));
  if (me == 0) printf("device_p2p: all passed\n");
  return 0;
}
