/* Shared by the non-blocking collective and group tests: seeded values that
   every rank can compute for every other rank, so references are local. */
#ifndef XCOMM_ASYNC_UTIL_H
#define XCOMM_ASYNC_UTIL_H

#include "mp_test.h"

static int a_rank, a_size;

/* Element i of rank r's input to step t: a small integer, so float sums are exact. */
static inline int32_t aval(int t, int r, size_t i) {
  uint64_t s = mp_seed() ^ ((uint64_t)t << 48) ^ ((uint64_t)(r + 1) << 32) ^ (uint64_t)i;
  return (int32_t)(mp_next(&s) % 2001) - 1000;
}

static inline void a_init(int argc, char **argv, xc_comm_t *world) {
  (void)argc;
  (void)argv;
  MP_CHECK(xc_init(NULL, world));
  MP_CHECK(xc_comm_rank(*world, &a_rank));
  MP_CHECK(xc_comm_size(*world, &a_size));
  mp_rank = a_rank;
}

static inline void check_coll_status(const xc_status_t *st) {
  MP_ASSERT(st->source == XC_ANY_SOURCE && st->tag == XC_ANY_TAG && st->error == 0 && st->bytes == 0,
            "collective status {source %d, tag %d, error %d, bytes %zu}", st->source, st->tag, st->error, st->bytes);
}

#endif
