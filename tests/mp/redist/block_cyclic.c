/* Block-cyclic to block-cyclic (ScaLAPACK descriptors) on random grids,
   block sizes, source processes, grid orders and local storage orders, in
   float64 and int32: local pieces are placed here from the definition
   (independently of the library's numroc), the result checked element by
   element and the bytes received against the lower bound. */
#include "redist_util.h"

typedef struct {
  size_t mb, nb;
  int nprow, npcol, rsrc, csrc, grid_col, store_col;
} bc_t;

static uint64_t rnd(uint64_t *s, uint64_t n) { return mp_next(s) % n; }

static int owner(const bc_t *b, size_t i, size_t j, size_t *li, size_t *lj) {
  size_t bi = i / b->mb, bj = j / b->nb;
  int p = (int)((b->rsrc + bi) % (size_t)b->nprow), q = (int)((b->csrc + bj) % (size_t)b->npcol);
  *li = (bi / (size_t)b->nprow) * b->mb + i % b->mb;
  *lj = (bj / (size_t)b->npcol) * b->nb + j % b->nb;
  return b->grid_col ? q * b->nprow + p : p * b->npcol + q;
}

/* Local rows and columns of rank under b, by counting. */
static void local_dims(const bc_t *b, size_t rows, size_t cols, int rank, size_t *lr, size_t *lc) {
  *lr = *lc = 0;
  /* rows held: those whose process row is rank's */
  for (size_t i = 0; i < rows; ++i) {
    size_t bi = i / b->mb;
    int p = (int)((b->rsrc + bi) % (size_t)b->nprow);
    int rp = b->grid_col ? rank % b->nprow : rank / b->npcol;
    if (rank < b->nprow * b->npcol && p == rp) ++*lr;
  }
  for (size_t j = 0; j < cols; ++j) {
    size_t bj = j / b->nb;
    int q = (int)((b->csrc + bj) % (size_t)b->npcol);
    int rq = b->grid_col ? rank / b->nprow : rank % b->npcol;
    if (rank < b->nprow * b->npcol && q == rq) ++*lc;
  }
}

static size_t local_at(const bc_t *b, size_t lr, size_t lc, size_t li, size_t lj) {
  return b->store_col ? li + lj * lr : li * lc + lj;
}

static void put(void *buf, size_t k, double v, int f64) {
  if (f64)
    ((double *)buf)[k] = v;
  else
    ((int32_t *)buf)[k] = (int32_t)v;
}
static double get(const void *buf, size_t k, int f64) { return f64 ? ((const double *)buf)[k] : ((const int32_t *)buf)[k]; }

static bc_t random_bc(uint64_t *s) {
  bc_t b;
  b.mb = 1 + rnd(s, 7);
  b.nb = 1 + rnd(s, 7);
  do {
    b.nprow = 1 + (int)rnd(s, (uint64_t)r_size);
    b.npcol = 1 + (int)rnd(s, (uint64_t)r_size);
  } while (b.nprow * b.npcol > r_size);
  b.rsrc = (int)rnd(s, (uint64_t)b.nprow);
  b.csrc = (int)rnd(s, (uint64_t)b.npcol);
  b.grid_col = (int)rnd(s, 2);
  b.store_col = (int)rnd(s, 2);
  return b;
}

static xc_layout_t make(const bc_t *b, size_t rows, size_t cols) {
  xc_layout_t l;
  MP_CHECK(xc_layout_block_cyclic(r_world, rows, cols, b->mb, b->nb, b->nprow, b->npcol, b->rsrc, b->csrc,
                                  b->grid_col ? XC_ORDER_COL_MAJOR : XC_ORDER_ROW_MAJOR,
                                  b->store_col ? XC_ORDER_COL_MAJOR : XC_ORDER_ROW_MAJOR, &l));
  return l;
}

int main(void) {
  r_init();
  uint64_t s = mp_seed() ^ 0xbc;
  for (int t = 0; t < 40; ++t) {
    size_t rows = 1 + rnd(&s, 40), cols = 1 + rnd(&s, 40);
    bc_t a = random_bc(&s), b = random_bc(&s);
    int f64 = t % 2 == 0;
    size_t es = f64 ? 8 : 4;
    size_t alr, alc, blr, blc;
    local_dims(&a, rows, cols, r_rank, &alr, &alc);
    local_dims(&b, rows, cols, r_rank, &blr, &blc);
    xc_layout_t src = make(&a, rows, cols), dst = make(&b, rows, cols);
    size_t n;
    MP_CHECK(xc_layout_local_count(src, &n));
    MP_ASSERT(n == alr * alc, "case %d: local count %zu, expected %zu x %zu", t, n, alr, alc);
    void *in = calloc(alr * alc + 1, es), *out = calloc(blr * blc + 1, es);
    uint64_t lb = 0;
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) {
        size_t li, lj, di, dj;
        int so = owner(&a, i, j, &li, &lj), dw = owner(&b, i, j, &di, &dj);
        if (so == r_rank) put(in, local_at(&a, alr, alc, li, lj), gval((uint64_t)t, i * cols + j), f64);
        if (dw == r_rank && so != r_rank) lb += es;
      }
    xc_plan_t plan;
    MP_CHECK(xc_redistribute_plan(src, dst, f64 ? XC_FLOAT64 : XC_INT32, NULL, &plan));
    MP_CHECK(xc_redistribute(plan, in, out));
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) {
        size_t di, dj;
        if (owner(&b, i, j, &di, &dj) != r_rank) continue;
        double got = get(out, local_at(&b, blr, blc, di, dj), f64), want = gval((uint64_t)t, i * cols + j);
        MP_ASSERT(got == want, "case %d (%zux%zu, %zux%zu on %dx%d -> %zux%zu on %dx%d): (%zu, %zu) is %g, expected %g",
                  t, rows, cols, a.mb, a.nb, a.nprow, a.npcol, b.mb, b.nb, b.nprow, b.npcol, i, j, got, want);
      }
    xc_plan_info_t info;
    info.size = sizeof info;
    MP_CHECK(xc_plan_info(plan, &info));
    MP_ASSERT(info.bytes_received == lb && info.lower_bound_bytes == lb, "case %d: received %llu, lower bound %llu", t,
              (unsigned long long)info.bytes_received, (unsigned long long)lb);
    MP_CHECK(xc_plan_free(plan));
    MP_CHECK(xc_layout_free(src));
    MP_CHECK(xc_layout_free(dst));
    free(in);
    free(out);
  }
  r_finish("redist_block_cyclic");
  return 0;
}
