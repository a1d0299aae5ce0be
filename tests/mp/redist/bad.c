/* Bad layouts and bad arguments: each fails with the right code and a
   message that names the problem, the same on every rank, and never hangs
   (run with a short XC_TIMEOUT). */
#include "redist_util.h"

static const size_t shape[2] = {4, 6};

/* The call's result and message, checked alike everywhere. */
static void expect(xc_result_t rc, xc_result_t want, const char *needle, const char *what) {
  const char *msg = xc_last_error();
  MP_ASSERT(rc == want, "%s: got %d (%s), expected %d", what, (int)rc, msg, (int)want);
  MP_ASSERT(needle == NULL || strstr(msg, needle) != NULL, "%s: message \"%s\" does not say \"%s\"", what, msg, needle);
  char copy[512];
  snprintf(copy, sizeof copy, "%s", msg);
  same_everywhere(rc, copy);
}

static xc_result_t boxes(size_t n, const size_t *off, const size_t *ext, const int *own, xc_layout_t *out) {
  return xc_layout_boxes(r_world, 2, shape, n, off, ext, own, out);
}

static xc_layout_t shard(int dim, const size_t *shp) {
  xc_placement_t p = {XC_PLACEMENT_SHARD, dim, 0, 0};
  xc_layout_t l;
  MP_CHECK(xc_layout_mesh(r_world, 2, shp, 1, &r_size, &p, &l));
  return l;
}

int main(void) {
  r_init();
  xc_layout_t l = NULL;
  /* Two boxes over the whole array, both on rank 0. */
  size_t off_overlap[4] = {0, 0, 1, 2}, ext_overlap[4] = {4, 6, 2, 2};
  int own2[2] = {0, 0};
  expect(boxes(2, off_overlap, ext_overlap, own2, &l), XC_ERR_INVALID_ARGUMENT, "overlap", "overlapping boxes");
  MP_ASSERT(l == NULL, "out was written on failure");
  size_t off_gap[4] = {0, 0, 2, 0}, ext_gap[4] = {2, 6, 1, 6};
  expect(boxes(2, off_gap, ext_gap, own2, &l), XC_ERR_INVALID_ARGUMENT, "gap", "boxes with a gap");
  size_t off_ok[4] = {0, 0, 2, 0}, ext_ok[4] = {2, 6, 2, 6};
  int own_bad[2] = {0, r_size};
  expect(boxes(2, off_ok, ext_ok, own_bad, &l), XC_ERR_INVALID_ARGUMENT, "out of range", "owner out of range");
  int own_neg[2] = {-1, 0};
  expect(boxes(2, off_ok, ext_ok, own_neg, &l), XC_ERR_INVALID_ARGUMENT, "out of range", "negative owner");
  size_t ext_out[4] = {2, 6, 3, 6};
  expect(boxes(2, off_ok, ext_out, own2, &l), XC_ERR_INVALID_ARGUMENT, "outside", "box outside the array");
  expect(boxes(2, NULL, ext_ok, own2, &l), XC_ERR_INVALID_ARGUMENT, "offsets is NULL", "NULL offsets");
  expect(xc_layout_boxes(r_world, 0, shape, 2, off_ok, ext_ok, own2, &l), XC_ERR_INVALID_ARGUMENT, "ndim", "ndim 0");
  expect(xc_layout_boxes(r_world, 9, shape, 2, off_ok, ext_ok, own2, &l), XC_ERR_INVALID_ARGUMENT, "ndim", "ndim 9");
  expect(boxes(2, off_ok, ext_ok, own2, NULL), XC_ERR_INVALID_ARGUMENT, "out is NULL", "NULL out");
  expect(xc_layout_boxes(NULL, 2, shape, 2, off_ok, ext_ok, own2, &l), XC_ERR_INVALID_ARGUMENT, "NULL",
         "NULL communicator");

  /* Mesh layouts. */
  xc_placement_t p = {XC_PLACEMENT_SHARD, 2, 0, 0};
  int mesh = r_size, big = r_size + 1;
  expect(xc_layout_mesh(r_world, 2, shape, 1, &mesh, &p, &l), XC_ERR_INVALID_ARGUMENT, "dimension 2",
         "shard of a missing dimension");
  p.dim = 0;
  expect(xc_layout_mesh(r_world, 2, shape, 1, &big, &p, &l), XC_ERR_INVALID_ARGUMENT, "communicator has",
         "mesh larger than the communicator");
  xc_placement_t bad_kind = {7, 0, 0, 0}, bad_op = {XC_PLACEMENT_PARTIAL, 0, 99, 0}, bad_res = {0, 0, 0, 1};
  expect(xc_layout_mesh(r_world, 2, shape, 1, &mesh, &bad_kind, &l), XC_ERR_INVALID_ARGUMENT, "kind", "bad kind");
  expect(xc_layout_mesh(r_world, 2, shape, 1, &mesh, &bad_op, &l), XC_ERR_INVALID_ARGUMENT, "op", "bad op");
  expect(xc_layout_mesh(r_world, 2, shape, 1, &mesh, &bad_res, &l), XC_ERR_INVALID_ARGUMENT, "reserved",
         "reserved set");

  /* Block-cyclic. */
  expect(xc_layout_block_cyclic(r_world, 8, 8, 0, 2, 1, 1, 0, 0, XC_ORDER_ROW_MAJOR, XC_ORDER_COL_MAJOR, &l),
         XC_ERR_INVALID_ARGUMENT, "block sizes", "block size 0");
  expect(xc_layout_block_cyclic(r_world, 8, 8, 2, 2, r_size + 1, 1, 0, 0, XC_ORDER_ROW_MAJOR, XC_ORDER_COL_MAJOR, &l),
         XC_ERR_INVALID_ARGUMENT, "grid", "grid larger than the communicator");
  expect(xc_layout_block_cyclic(r_world, 8, 8, 2, 2, 1, 1, 1, 0, XC_ORDER_ROW_MAJOR, XC_ORDER_COL_MAJOR, &l),
         XC_ERR_INVALID_ARGUMENT, "source process", "source process outside the grid");
  expect(xc_layout_block_cyclic(r_world, 8, 8, 2, 2, 1, 1, 0, 0, (xc_order_t)5, XC_ORDER_COL_MAJOR, &l),
         XC_ERR_INVALID_ARGUMENT, "grid_order", "bad grid order");

  /* Plans: shape mismatch, dimension mismatch, dtype, op, NULLs. */
  size_t other[2] = {4, 7};
  xc_layout_t a = shard(0, shape), b = shard(1, other), c = shard(1, shape);
  xc_plan_t plan = NULL;
  expect(xc_redistribute_plan(a, b, XC_FLOAT32, NULL, &plan), XC_ERR_INVALID_ARGUMENT, "shapes differ",
         "shape mismatch");
  MP_ASSERT(plan == NULL, "plan written on failure");
  size_t shape3[3] = {4, 6, 1};
  xc_placement_t p3 = {XC_PLACEMENT_REPLICATE, 0, 0, 0};
  xc_layout_t d3;
  MP_CHECK(xc_layout_mesh(r_world, 3, shape3, 1, &r_size, &p3, &d3));
  expect(xc_redistribute_plan(a, d3, XC_FLOAT32, NULL, &plan), XC_ERR_INVALID_ARGUMENT, "dimensional",
         "ndim mismatch");
  expect(xc_redistribute_plan(a, c, (xc_dtype_t)42, NULL, &plan), XC_ERR_INVALID_ARGUMENT, "dtype", "bad dtype");
  xc_placement_t band = {XC_PLACEMENT_PARTIAL, 0, XC_BAND, 0};
  xc_layout_t pb;
  MP_CHECK(xc_layout_mesh(r_world, 2, shape, 1, &r_size, &band, &pb));
  expect(xc_redistribute_plan(pb, c, XC_FLOAT32, NULL, &plan), XC_ERR_INVALID_ARGUMENT, "Partial",
         "bitwise partial on floats");
  expect(xc_redistribute_plan(a, NULL, XC_FLOAT32, NULL, &plan), XC_ERR_INVALID_ARGUMENT, "dst is NULL", "NULL dst");
  expect(xc_redistribute_plan(a, c, XC_FLOAT32, NULL, NULL), XC_ERR_INVALID_ARGUMENT, "plan is NULL", "NULL plan");
  xc_redist_config_t cfg = XC_REDIST_CONFIG_INIT;
  cfg.flags = 0x80;
  expect(xc_redistribute_plan(a, c, XC_FLOAT32, &cfg, &plan), XC_ERR_INVALID_ARGUMENT, "flags", "unknown flag");
  if (r_size > 1) {  /* ranks that pass different layouts all learn it */
    xc_layout_t mine = r_rank == 0 ? a : c;
    expect(xc_redistribute_plan(mine, c, XC_FLOAT32, NULL, &plan), XC_ERR_INVALID_USAGE, "different src",
           "ranks disagree on src");
  }

  /* Runs: NULL buffers that should hold data, overlap, freed handles. */
  MP_CHECK(xc_redistribute_plan(a, c, XC_FLOAT32, NULL, &plan));
  size_t na, nc;
  MP_CHECK(xc_layout_local_count(a, &na));
  MP_CHECK(xc_layout_local_count(c, &nc));
  float *buf = calloc(na + nc + 1, sizeof(float));
  if (na) MP_EXPECT_ERR(xc_redistribute(plan, NULL, buf + na), XC_ERR_INVALID_ARGUMENT);
  if (na && nc) MP_EXPECT_ERR(xc_redistribute(plan, buf, buf), XC_ERR_INVALID_ARGUMENT);
  MP_EXPECT_ERR(xc_redistribute(NULL, buf, buf + na), XC_ERR_INVALID_ARGUMENT);
  MP_EXPECT_ERR(xc_iredistribute(plan, buf, buf + na, NULL), XC_ERR_INVALID_ARGUMENT);
  MP_CHECK(xc_group_start());
  MP_EXPECT_ERR(xc_redistribute(plan, buf, buf + na), XC_ERR_INVALID_USAGE);
  MP_CHECK(xc_group_end());
  MP_CHECK(xc_redistribute(plan, buf, buf + na));
  xc_plan_info_t info;
  info.size = 3;
  MP_EXPECT_ERR(xc_plan_info(plan, &info), XC_ERR_INVALID_ARGUMENT);
  MP_EXPECT_ERR(xc_plan_relabel(plan, NULL, NULL), XC_ERR_INVALID_ARGUMENT);
  MP_CHECK(xc_plan_free(plan));
  MP_EXPECT_ERR(xc_plan_free(plan), XC_ERR_INVALID_USAGE);
  MP_EXPECT_ERR(xc_redistribute(plan, buf, buf + na), XC_ERR_INVALID_USAGE);
  MP_CHECK(xc_plan_free(NULL));
  MP_CHECK(xc_layout_free(b));
  MP_EXPECT_ERR(xc_layout_free(b), XC_ERR_INVALID_USAGE);
  expect(xc_redistribute_plan(a, b, XC_FLOAT32, NULL, &plan), XC_ERR_INVALID_USAGE, "already freed",
         "freed layout");
  MP_CHECK(xc_layout_free(NULL));
  MP_CHECK(xc_layout_free(a));
  MP_CHECK(xc_layout_free(c));
  MP_CHECK(xc_layout_free(d3));
  MP_CHECK(xc_layout_free(pb));
  free(buf);
  r_finish("redist_bad");
  return 0;
}
