/* Shared by the redistribution tests: a global array every rank can
   compute from the seed (small integers, so float sums are exact), boxes
   computed here independently of the library (torch.chunk's rule), and a
   check that every rank saw the same result. */
#ifndef XCOMM_REDIST_UTIL_H
#define XCOMM_REDIST_UTIL_H

#include "mp_test.h"

static int r_rank, r_size;
static xc_comm_t r_world;

static inline void r_init(void) {
  MP_CHECK(xc_init(NULL, &r_world));
  MP_CHECK(xc_comm_rank(r_world, &r_rank));
  MP_CHECK(xc_comm_size(r_world, &r_size));
  mp_rank = r_rank;
}

static inline void r_finish(const char *name) {
  MP_CHECK(xc_barrier(r_world));
  MP_CHECK(xc_comm_free(r_world));
  if (r_rank == 0) printf("%s: ok\n", name);
}

/* Element i of the global array of case t. */
static inline double gval(uint64_t t, size_t i) {
  uint64_t s = mp_seed() ^ (t << 40) ^ (uint64_t)i * 0x9e3779b97f4a7c15ULL;
  return (double)(int64_t)(mp_next(&s) % 2001) - 1000.0;
}
/* A second stream: the share a partial copy holds. */
static inline double kval(uint64_t t, size_t i, int q) {
  uint64_t s = mp_seed() ^ 0xabcdefULL ^ (t << 40) ^ ((uint64_t)q << 32) ^ (uint64_t)i * 0x100000001b3ULL;
  return (double)(int64_t)(mp_next(&s) % 201) - 100.0;
}

typedef struct {
  int ndim;
  size_t lo[8], hi[8];
} box_t;

static inline size_t box_volume(const box_t *b) {
  size_t v = 1;
  for (int d = 0; d < b->ndim; ++d) v *= b->hi[d] - b->lo[d];
  return v;
}

static inline box_t box_meet(const box_t *a, const box_t *b) {
  box_t r = *a;
  for (int d = 0; d < a->ndim; ++d) {
    r.lo[d] = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
    r.hi[d] = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
    if (r.hi[d] < r.lo[d]) r.hi[d] = r.lo[d];
  }
  return r;
}

/* Placements of the mesh tests: Replicate, Shard(0), Shard(1), Shard(2),
   Partial(sum). */
enum { R = 0, S0 = 1, S1 = 2, S2 = 3, P = 4, NPL = 5 };

/* rank's coordinate along mesh dimension k (mesh ranks in row-major order). */
static inline int coord(const int *mesh, int mnd, int rank, int k) {
  int c = rank;
  for (int j = mnd - 1; j > k; --j) c /= mesh[j];
  return c % mesh[k];
}

/* rank's box under placements pl on the mesh: torch.chunk pieces, mesh
   dimensions sharding one array dimension in mesh-dimension order. */
static inline box_t mbox(const size_t *shape, int ndim, const int *mesh, int mnd, const int *pl, int rank) {
  box_t b = {0, {0}, {0}};
  b.ndim = ndim;
  for (int d = 0; d < ndim; ++d) b.lo[d] = 0, b.hi[d] = shape[d];
  for (int k = 0; k < mnd; ++k) {
    if (pl[k] < S0 || pl[k] > S2) continue;
    int d = pl[k] - S0;
    size_t n = b.hi[d] - b.lo[d], m = (size_t)mesh[k], chunk = (n + m - 1) / m, c = (size_t)coord(mesh, mnd, rank, k);
    size_t lo = c * chunk < n ? c * chunk : n, hi = lo + chunk < n ? lo + chunk : n;
    b.hi[d] = b.lo[d] + hi;
    b.lo[d] += lo;
  }
  return b;
}

/* The mesh layout of placements pl (Partials are sums). */
static inline xc_layout_t make_placed(const size_t *shape, int ndim, const int *mesh, int mnd, const int *pl) {
  xc_placement_t p[8];
  for (int k = 0; k < mnd; ++k) {
    memset(&p[k], 0, sizeof p[k]);
    p[k].kind = pl[k] == R ? XC_PLACEMENT_REPLICATE : pl[k] == P ? XC_PLACEMENT_PARTIAL : XC_PLACEMENT_SHARD;
    p[k].dim = pl[k] - S0;
    p[k].op = XC_SUM;
  }
  xc_layout_t l;
  MP_CHECK(xc_layout_mesh(r_world, ndim, shape, mnd, mesh, p, &l));
  return l;
}

/* Row-major linear index of x in shape. */
static inline size_t lin(const size_t *x, const size_t *shape, int ndim) {
  size_t i = 0;
  for (int d = 0; d < ndim; ++d) i = i * shape[d] + x[d];
  return i;
}

/* Visit every index of box b in row-major order: f(global linear index, k-th element). */
#define FOR_BOX(b, shape, gi, k, ...)                                    \
  do {                                                                   \
    size_t x_[8];                                                        \
    size_t k = 0;                                                        \
    if (box_volume(&(b)) == 0) break;                                    \
    for (int d_ = 0; d_ < (b).ndim; ++d_) x_[d_] = (b).lo[d_];           \
    for (;;) {                                                           \
      size_t gi = lin(x_, shape, (b).ndim);                              \
      __VA_ARGS__;                                                           \
      ++k;                                                               \
      int d_ = (b).ndim - 1;                                             \
      for (; d_ >= 0; --d_) {                                            \
        if (++x_[d_] < (b).hi[d_]) break;                                \
        x_[d_] = (b).lo[d_];                                             \
      }                                                                  \
      if (d_ < 0) break;                                                 \
    }                                                                    \
  } while (0)

/* Every rank got the same result code and message (hash of the text). */
static inline void same_everywhere(xc_result_t rc, const char *msg) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char *p = msg; *p; ++p) h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
  int64_t v[4] = {(int64_t)rc, -(int64_t)rc, (int64_t)(h >> 2), -(int64_t)(h >> 2)}, r[4];
  MP_CHECK(xc_allreduce(v, r, 4, XC_INT64, XC_MIN, r_world));
  MP_ASSERT(r[0] == -r[1], "ranks got different results (this one %d)", (int)rc);
  MP_ASSERT(r[2] == -r[3], "ranks got different messages (this one: %s)", msg);
}

#endif
