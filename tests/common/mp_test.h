/* Helpers shared by the multi-process tests (run under xcrun): checks that
   name the rank and the failing call, and seeded random data so every rank
   can compute any other rank's contribution locally. */
#ifndef XCOMM_MP_TEST_H
#define XCOMM_MP_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xcomm.h"

static int mp_rank = -1;

#define MP_CHECK(call)                                                                           \
  do {                                                                                           \
    xc_result_t mp_rc_ = (call);                                                                 \
    if (mp_rc_ != XC_SUCCESS) {                                                                  \
      fprintf(stderr, "[rank %d] %s:%d: %s -> %s (%s)\n", mp_rank, __FILE__, __LINE__, #call,    \
              xc_strerror(mp_rc_), xc_last_error());                                             \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

/* The call must fail with exactly this code and leave a non-empty message. */
#define MP_EXPECT_ERR(call, code)                                                                \
  do {                                                                                           \
    xc_result_t mp_rc_ = (call);                                                                 \
    if (mp_rc_ != (code) || xc_last_error()[0] == '\0') {                                        \
      fprintf(stderr, "[rank %d] %s:%d: %s -> %d (%s), expected %d\n", mp_rank, __FILE__,        \
              __LINE__, #call, (int)mp_rc_, xc_last_error(), (int)(code));                       \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

#define MP_ASSERT(cond, ...)                                                                     \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "[rank %d] %s:%d: assertion %s failed: ", mp_rank, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                              \
      fprintf(stderr, "\n");                                                                     \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

/* splitmix64: a tiny, good, seedable generator. */
static inline uint64_t mp_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Fill n bytes from a stream keyed by (seed, a, b): e.g. (test seed, sender, message). */
static inline void mp_fill(void *buf, size_t n, uint64_t seed, uint64_t a, uint64_t b) {
  uint64_t s = seed ^ (a * 0x100000001b3ULL) ^ (b << 32) ^ (b >> 32);
  unsigned char *p = (unsigned char *)buf;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = mp_next(&s);
    memcpy(p + i, &v, 8);
  }
  if (i < n) {
    uint64_t v = mp_next(&s);
    memcpy(p + i, &v, n - i);
  }
}

/* The test's seed: XC_TEST_SEED or a fixed default, printed by rank 0 so a
   failure can be replayed. */
static inline uint64_t mp_seed(void) {
  const char *s = getenv("XC_TEST_SEED");
  uint64_t seed = s ? strtoull(s, NULL, 0) : 0x5eed2026ULL;
  return seed;
}

#endif
