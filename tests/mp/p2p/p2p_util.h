/* Helpers shared by the point-to-point tests: seeded messages that any rank
   can regenerate from (seed, sender, message id), checks of received data and
   statuses, and a deadlock-free order for blocking ring shifts. */
#ifndef XCOMM_MP_P2P_UTIL_H
#define XCOMM_MP_P2P_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp_test.h"

#define P2P_EAGER_BYTES 8192u /* the library's default eager threshold */
#define P2P_RING_BYTES (256u << 10)

static uint64_t p2p_seed;
static int p2p_size = 1;

static const xc_dtype_t p2p_dtypes[] = {XC_INT8,    XC_UINT8,    XC_INT32,   XC_UINT32, XC_INT64,
                                        XC_UINT64,  XC_FLOAT16,  XC_BFLOAT16, XC_FLOAT32, XC_FLOAT64};
static const char *const p2p_dtype_names[] = {"INT8",    "UINT8",   "INT32",    "UINT32",  "INT64",
                                              "UINT64",  "FLOAT16", "BFLOAT16", "FLOAT32", "FLOAT64"};
#define P2P_NDTYPES ((int)(sizeof(p2p_dtypes) / sizeof(p2p_dtypes[0])))

/* Common start: xc_init, rank/size, the seed printed by rank 0. */
static inline void p2p_init(const char *prog, xc_comm_t *world) {
  MP_CHECK(xc_init(NULL, world));
  MP_CHECK(xc_comm_rank(*world, &mp_rank));
  MP_CHECK(xc_comm_size(*world, &p2p_size));
  p2p_seed = mp_seed();
  if (mp_rank == 0)
    printf("%s: %d ranks, seed 0x%llx (replay with XC_TEST_SEED)\n", prog, p2p_size,
           (unsigned long long)p2p_seed);
  fflush(stdout);
}

static inline void *p2p_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  MP_ASSERT(p != NULL, "malloc(%zu) failed", bytes);
  return p;
}

/* The message `id` from rank `sender`: n bytes of its seeded stream. */
static inline void p2p_make(void *buf, size_t n, int sender, uint64_t id) {
  mp_fill(buf, n, p2p_seed, (uint64_t)sender, id);
}

/* Check that got[0..n) is message `id` of `sender`; names the case on failure.
   scratch must hold n bytes. */
static inline void p2p_check_data(const void *got, size_t n, int sender, uint64_t id, void *scratch,
                                  const char *what) {
  if (n == 0) return;
  p2p_make(scratch, n, sender, id);
  if (memcmp(got, scratch, n) == 0) return;
  const unsigned char *g = (const unsigned char *)got, *e = (const unsigned char *)scratch;
  size_t i = 0;
  while (i < n && g[i] == e[i]) ++i;
  fprintf(stderr,
          "[rank %d] %s: data mismatch in message %llu from rank %d (%zu bytes): first at byte %zu "
          "(got 0x%02x, expected 0x%02x)\n",
          mp_rank, what, (unsigned long long)id, sender, n, i, g[i], e[i]);
  exit(1);
}

/* Check a receive status. */
static inline void p2p_check_status(const xc_status_t *st, int source, int tag, size_t bytes, int error,
                                    const char *what) {
  if (st->source == source && st->tag == tag && st->bytes == bytes && st->error == error) return;
  fprintf(stderr,
          "[rank %d] %s: status {source %d, tag %d, bytes %zu, error %d}, expected {source %d, tag %d, bytes %zu, "
          "error %d}\n",
          mp_rank, what, st->source, st->tag, st->bytes, st->error, source, tag, bytes, error);
  exit(1);
}

/* Every byte of buf[0..n) is still `pattern`. */
static inline void p2p_check_untouched(const void *buf, size_t n, unsigned char pattern, const char *what) {
  const unsigned char *p = (const unsigned char *)buf;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != pattern) {
      fprintf(stderr, "[rank %d] %s: receive buffer was written at byte %zu of %zu (0x%02x, sentinel 0x%02x)\n",
              mp_rank, what, i, n, p[i], pattern);
      exit(1);
    }
  }
}

/* In the ring shift by k (r sends to r+k, receives from r-k), should this rank
   send before it receives, with blocking calls that may wait for the peer?
   The shift splits the ranks into cycles r0, r0+k, r0+2k, ... (r0 the
   smallest); ranks at even positions send first, odd ones receive first, so
   every cycle of two or more has a rank that receives first and the waits
   only chain (an odd cycle has two neighbouring senders, which is fine). */
static inline int p2p_send_first(int rank, int n, int k) {
  int pos = 0, smallest = rank, steps = 0, cur = rank;
  do { /* walk backwards around the cycle; pos = steps back to its smallest rank */
    if (cur < smallest) {
      smallest = cur;
      pos = steps;
    }
    cur = ((cur - k) % n + n) % n;
    ++steps;
  } while (cur != rank);
  return pos % 2 == 0;
}

static inline double p2p_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
