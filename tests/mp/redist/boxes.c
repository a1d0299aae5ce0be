/* General box layouts: random partitions of a 3-D array into boxes with
   random owners (some ranks own nothing, one rank several boxes), to other
   random partitions and to mesh layouts and back, checked element by
   element with the bytes received against the lower bound. Then one plan
   run 100 times on changing data, a non-blocking run, and the relabelling
   of a layout that is another with its ranks renumbered. */
#include "redist_util.h"

#define MAXB 24
static const size_t shape[3] = {9, 6, 5};
static size_t total(void) { return shape[0] * shape[1] * shape[2]; }

typedef struct {
  int n;
  box_t b[MAXB];
  int owner[MAXB];
} part_t;

static uint64_t rnd(uint64_t *s, uint64_t n) { return mp_next(s) % n; }

/* Split random boxes at random points until there are n, then shuffle. */
static part_t random_part(uint64_t *s, int n, int all_ranks) {
  part_t p;
  p.n = 1;
  p.b[0].ndim = 3;
  for (int d = 0; d < 3; ++d) p.b[0].lo[d] = 0, p.b[0].hi[d] = shape[d];
  for (int tries = 0; p.n < n && tries < 1000; ++tries) {
    int i = (int)rnd(s, (uint64_t)p.n), d = (int)rnd(s, 3);
    box_t *b = &p.b[i];
    if (b->hi[d] - b->lo[d] < 2) continue;
    size_t cut = b->lo[d] + 1 + rnd(s, b->hi[d] - b->lo[d] - 1);
    p.b[p.n] = *b;
    p.b[p.n].lo[d] = cut;
    b->hi[d] = cut;
    ++p.n;
  }
  for (int i = p.n - 1; i > 0; --i) {
    int j = (int)rnd(s, (uint64_t)i + 1);
    box_t t = p.b[i];
    p.b[i] = p.b[j];
    p.b[j] = t;
  }
  for (int i = 0; i < p.n; ++i) p.owner[i] = all_ranks && i < r_size ? i : (int)rnd(s, (uint64_t)r_size);
  return p;
}

static xc_layout_t make(const part_t *p) {
  size_t off[MAXB * 3], ext[MAXB * 3];
  for (int i = 0; i < p->n; ++i)
    for (int d = 0; d < 3; ++d) off[i * 3 + d] = p->b[i].lo[d], ext[i * 3 + d] = p->b[i].hi[d] - p->b[i].lo[d];
  xc_layout_t l;
  MP_CHECK(xc_layout_boxes(r_world, 3, shape, (size_t)p->n, off, ext, p->owner, &l));
  return l;
}

/* owner_of[g] and local index of every element under p, for this rank. */
static void index_part(const part_t *p, int *owner_of, size_t *local_of, size_t *count) {
  size_t run = 0;
  for (int i = 0; i < p->n; ++i) {
    FOR_BOX(p->b[i], shape, gi, k, {
      owner_of[gi] = p->owner[i];
      if (p->owner[i] == r_rank) local_of[gi] = run + k;
    });
    if (p->owner[i] == r_rank) run += box_volume(&p->b[i]);
  }
  *count = run;
}

/* A 1-D mesh layout as a partition: shard dim d (torch.chunk). */
static part_t mesh_part(int d) {
  part_t p;
  p.n = 0;
  size_t n = shape[d], chunk = (n + (size_t)r_size - 1) / (size_t)r_size;
  for (int r = 0; r < r_size; ++r) {
    box_t b;
    b.ndim = 3;
    for (int e = 0; e < 3; ++e) b.lo[e] = 0, b.hi[e] = shape[e];
    b.lo[d] = (size_t)r * chunk < n ? (size_t)r * chunk : n;
    b.hi[d] = b.lo[d] + chunk < n ? b.lo[d] + chunk : n;
    p.b[p.n] = b;
    p.owner[p.n++] = r;
  }
  return p;
}
static xc_layout_t make_mesh(int d) {
  xc_placement_t pl = {XC_PLACEMENT_SHARD, d, 0, 0};
  int mesh[1] = {r_size};
  xc_layout_t l;
  MP_CHECK(xc_layout_mesh(r_world, 3, shape, 1, mesh, &pl, &l));
  return l;
}

typedef struct {
  int *sown, *down;
  size_t *sloc, *dloc, scount, dcount;
  double *in, *out;
} bufs_t;

static void prepare(bufs_t *b, const part_t *sp, const part_t *dp) {
  size_t n = total();
  b->sown = malloc(n * sizeof(int));
  b->down = malloc(n * sizeof(int));
  b->sloc = malloc(n * sizeof(size_t));
  b->dloc = malloc(n * sizeof(size_t));
  index_part(sp, b->sown, b->sloc, &b->scount);
  index_part(dp, b->down, b->dloc, &b->dcount);
  b->in = malloc((b->scount + 1) * sizeof(double));
  b->out = malloc((b->dcount + 1) * sizeof(double));
}
static void release(bufs_t *b) {
  free(b->sown), free(b->down), free(b->sloc), free(b->dloc), free(b->in), free(b->out);
}
static void fill(bufs_t *b, uint64_t t) {
  for (size_t g = 0; g < total(); ++g)
    if (b->sown[g] == r_rank) b->in[b->sloc[g]] = gval(t, g);
  for (size_t i = 0; i < b->dcount; ++i) b->out[i] = -1e9;
}
static void check(const bufs_t *b, uint64_t t, const char *what) {
  for (size_t g = 0; g < total(); ++g)
    if (b->down[g] == r_rank)
      MP_ASSERT(b->out[b->dloc[g]] == gval(t, g), "%s case %llu: element %zu is %g, expected %g", what,
                (unsigned long long)t, g, b->out[b->dloc[g]], gval(t, g));
}
static uint64_t lower_bound(const bufs_t *b) {
  uint64_t lb = 0;
  for (size_t g = 0; g < total(); ++g)
    if (b->down[g] == r_rank && b->sown[g] != r_rank) lb += sizeof(double);
  return lb;
}

static void one(uint64_t t, const part_t *sp, xc_layout_t src, const part_t *dp, xc_layout_t dst) {
  bufs_t b;
  prepare(&b, sp, dp);
  size_t n;
  MP_CHECK(xc_layout_local_count(src, &n));
  MP_ASSERT(n == b.scount, "local count %zu, expected %zu", n, b.scount);
  fill(&b, t);
  xc_plan_t plan;
  MP_CHECK(xc_redistribute_plan(src, dst, XC_FLOAT64, NULL, &plan));
  MP_CHECK(xc_redistribute(plan, b.in, b.out));
  check(&b, t, "boxes");
  xc_plan_info_t info;
  info.size = sizeof info;
  MP_CHECK(xc_plan_info(plan, &info));
  uint64_t lb = lower_bound(&b);
  MP_ASSERT(info.bytes_received == lb && info.lower_bound_bytes == lb, "case %llu: received %llu, lower bound %llu",
            (unsigned long long)t, (unsigned long long)info.bytes_received, (unsigned long long)lb);
  MP_CHECK(xc_plan_free(plan));
  release(&b);
}

int main(void) {
  r_init();
  uint64_t s = mp_seed() ^ 0xb0c5;
  uint64_t t = 0;
  for (int c = 0; c < 30; ++c, ++t) {
    part_t a = random_part(&s, 1 + (int)rnd(&s, MAXB), 0), b = random_part(&s, 1 + (int)rnd(&s, MAXB), 0);
    xc_layout_t src = make(&a), dst = make(&b);
    one(t, &a, src, &b, dst);
    MP_CHECK(xc_layout_free(src));
    MP_CHECK(xc_layout_free(dst));
  }
  for (int d = 0; d < 3; ++d, ++t) {  /* boxes <-> mesh */
    part_t a = random_part(&s, 1 + (int)rnd(&s, MAXB), 0), m = mesh_part(d);
    xc_layout_t src = make(&a), dst = make_mesh(d);
    one(t, &a, src, &m, dst);
    one(t, &m, dst, &a, src);
    MP_CHECK(xc_layout_free(src));
    MP_CHECK(xc_layout_free(dst));
  }
  {  /* one plan, 100 runs on changing data; then non-blocking */
    part_t a = random_part(&s, MAXB, 0), b = random_part(&s, MAXB / 2, 0);
    xc_layout_t src = make(&a), dst = make(&b);
    bufs_t bb;
    prepare(&bb, &a, &b);
    xc_plan_t plan;
    MP_CHECK(xc_redistribute_plan(src, dst, XC_FLOAT64, NULL, &plan));
    for (int it = 0; it < 100; ++it, ++t) {
      fill(&bb, t);
      MP_CHECK(xc_redistribute(plan, bb.in, bb.out));
      check(&bb, t, "reused plan");
    }
    for (int it = 0; it < 5; ++it, ++t) {
      fill(&bb, t);
      xc_request_t req;
      MP_CHECK(xc_iredistribute(plan, bb.in, bb.out, &req));
      xc_status_t st;
      MP_CHECK(xc_wait(&req, &st));
      check(&bb, t, "non-blocking");
    }
    MP_CHECK(xc_plan_free(plan));
    release(&bb);
    MP_CHECK(xc_layout_free(src));
    MP_CHECK(xc_layout_free(dst));
  }
  {  /* relabelling: dst is src with the ranks renumbered by pi */
    part_t a = random_part(&s, MAXB, 1), b = a;
    int pi[64];
    for (int r = 0; r < r_size; ++r) pi[r] = r;
    for (int r = r_size - 1; r > 0; --r) {
      int j = (int)rnd(&s, (uint64_t)r + 1), x = pi[r];
      pi[r] = pi[j], pi[j] = x;
    }
    for (int i = 0; i < a.n; ++i) b.owner[i] = pi[a.owner[i]];
    xc_layout_t src = make(&a), dst = make(&b);
    xc_plan_t plan;
    MP_CHECK(xc_redistribute_plan(src, dst, XC_FLOAT64, NULL, &plan));
    int perm[64];
    uint64_t saved = 0;
    MP_CHECK(xc_plan_relabel(plan, perm, &saved));
    for (int r = 0; r < r_size; ++r)  /* part pi[r] of dst is what r holds */
      MP_ASSERT(perm[pi[r]] == r, "relabel: part %d should go to rank %d, got %d", pi[r], r, perm[pi[r]]);
    xc_plan_info_t info;
    info.size = sizeof info;
    MP_CHECK(xc_plan_info(plan, &info));
    uint64_t mine = info.bytes_received, all = 0;
    MP_CHECK(xc_allreduce(&mine, &all, 1, XC_UINT64, XC_SUM, r_world));
    MP_ASSERT(saved == all, "relabel saves %llu bytes, the plan moves %llu", (unsigned long long)saved,
              (unsigned long long)all);
    MP_CHECK(xc_plan_free(plan));
    MP_CHECK(xc_layout_free(src));
    MP_CHECK(xc_layout_free(dst));
  }
  r_finish("redist_boxes");
  return 0;
}
