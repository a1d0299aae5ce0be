/* Partial placements with other reductions than sum, on a 1-D mesh:
   P(op) -> R and P(op) -> S0 reduce by op; R -> P(op) holds the value at
   coordinate 0 and op's identity elsewhere for prod (1) and bxor (0), and
   the value everywhere for max and min. float64 for max, min and prod,
   int64 for bxor; checked element by element against the seeded array. */
#include "redist_util.h"

static const size_t shape[2] = {7, 5};

static xc_layout_t layout(int kind, xc_op_t op) {
  xc_placement_t p = {kind, 0, op, 0};
  xc_layout_t l;
  MP_CHECK(xc_layout_mesh(r_world, 2, shape, 1, &r_size, &p, &l));
  return l;
}

/* This rank's partial share of element i: op over the ranks' shares is g. */
static double share(xc_op_t op, double g, size_t i) {
  if (r_rank == 0) return g;
  double k = (double)(1 + (i + (size_t)r_rank) % 5);
  switch (op) {
    case XC_MAX: return g - k;
    case XC_MIN: return g + k;
    case XC_PROD: return 1.0;
    default: return (double)((int64_t)k * 977);  /* bxor: rank 0 corrects below */
  }
}

/* The bxor of the other ranks' shares of element i (to make rank 0's share). */
static int64_t others_xor(size_t i) {
  int64_t x = 0;
  for (int r = 1; r < r_size; ++r) x ^= (int64_t)(1 + (i + (size_t)r) % 5) * 977;
  return x;
}

static void one(xc_op_t op, int to) {
  int f64 = op != XC_BXOR;
  xc_layout_t src = layout(XC_PLACEMENT_PARTIAL, op), dst = layout(to, op);
  size_t total = shape[0] * shape[1], dcount;
  MP_CHECK(xc_layout_local_count(dst, &dcount));
  double *in = malloc(total * sizeof(double)), *out = malloc((dcount + 1) * sizeof(double));
  for (size_t i = 0; i < total; ++i) {
    double g = gval((uint64_t)op, i);
    if (f64) {
      in[i] = share(op, g, i);
    } else {
      int64_t v = r_rank == 0 ? (int64_t)g ^ others_xor(i) : (int64_t)share(op, g, i);
      memcpy(&in[i], &v, 8);
    }
  }
  xc_plan_t plan;
  MP_CHECK(xc_redistribute_plan(src, dst, f64 ? XC_FLOAT64 : XC_INT64, NULL, &plan));
  MP_CHECK(xc_redistribute(plan, in, out));
  size_t chunk = (shape[0] + (size_t)r_size - 1) / (size_t)r_size;
  size_t lo = to == XC_PLACEMENT_SHARD ? (size_t)r_rank * chunk : 0;
  if (lo > shape[0]) lo = shape[0];
  for (size_t k = 0; k < dcount; ++k) {
    size_t i = lo * shape[1] + k;
    double g = gval((uint64_t)op, i), got;
    if (f64) {
      got = out[k];
    } else {
      int64_t v;
      memcpy(&v, &out[k], 8);
      got = (double)v;
    }
    MP_ASSERT(got == g, "op %d -> kind %d: element %zu is %g, expected %g", (int)op, to, i, got, g);
  }
  MP_CHECK(xc_plan_free(plan));
  MP_CHECK(xc_layout_free(dst));
  /* Replicate -> Partial(op). */
  xc_layout_t rep = layout(XC_PLACEMENT_REPLICATE, op);
  MP_CHECK(xc_redistribute_plan(rep, src, f64 ? XC_FLOAT64 : XC_INT64, NULL, &plan));
  for (size_t i = 0; i < total; ++i) {
    double g = gval((uint64_t)op, i);
    if (f64) in[i] = g;
    else {
      int64_t v = (int64_t)g;
      memcpy(&in[i], &v, 8);
    }
  }
  free(out);
  out = malloc(total * sizeof(double));
  MP_CHECK(xc_redistribute(plan, in, out));
  int one_holder = op == XC_PROD || op == XC_BXOR;
  for (size_t i = 0; i < total; ++i) {
    double g = gval((uint64_t)op, i), want = g, got;
    if (one_holder && r_rank != 0) want = op == XC_PROD ? 1.0 : 0.0;
    if (f64) got = out[i];
    else {
      int64_t v;
      memcpy(&v, &out[i], 8);
      got = (double)v;
    }
    MP_ASSERT(got == want, "R -> P(op %d): element %zu is %g, expected %g", (int)op, i, got, want);
  }
  MP_CHECK(xc_plan_free(plan));
  MP_CHECK(xc_layout_free(rep));
  MP_CHECK(xc_layout_free(src));
  free(in);
  free(out);
}

int main(void) {
  r_init();
  xc_op_t ops[4] = {XC_MAX, XC_MIN, XC_PROD, XC_BXOR};
  for (int o = 0; o < 4; ++o) {
    one(ops[o], XC_PLACEMENT_REPLICATE);
    one(ops[o], XC_PLACEMENT_SHARD);
  }
  r_finish("redist_partial_ops");
  return 0;
}
