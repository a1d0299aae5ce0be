// redist: layouts, strided copies and the planner's invariants, without a
// network: every rank's plan is made in this process and the plans are
// checked against each other (each message planned by its sender is planned
// by its receiver with the same size; each rank receives exactly what it
// needs and does not hold; replicated sources share the sending).
#include "unit_test.h"

#include <map>
#include <numeric>
#include <vector>

#include "redist/layout.h"
#include "redist/planner.h"

namespace {

using namespace xc::redist;

Mesh mesh_of(std::vector<int> shape, std::vector<Placement> pl) {
  Mesh m;
  m.shape = std::move(shape);
  m.placements = std::move(pl);
  return m;
}
Placement R() { return Placement{}; }
Placement S(int d) { return Placement{XC_PLACEMENT_SHARD, d, XC_SUM}; }
Placement P() { return Placement{XC_PLACEMENT_PARTIAL, 0, XC_SUM}; }

void torch_chunk_rule(void **) {
  size_t shape[1] = {10};
  Layout l;
  ASSERT_OK(make_mesh_layout(4, 1, shape, mesh_of({4}, {S(0)}), &l));
  // ceil(10 / 4) = 3: 3, 3, 3, 1
  assert_int_equal(l.local_count[0], 3);
  assert_int_equal(l.local_count[3], 1);
  ASSERT_OK(make_mesh_layout(4, 1, std::array<size_t, 1>{2}.data(), mesh_of({4}, {S(0)}), &l));
  assert_int_equal(l.local_count[1], 1);
  assert_int_equal(l.local_count[2], 0);  // empty shards hold nothing
  assert_int_equal(l.blocks.size(), 2);
}

void numroc_matches_scalapack(void **) {
  // 10 rows in blocks of 3 over 2 processes from process 1: p1 holds 0-2, 6-8; p0 holds 3-5, 9.
  assert_int_equal(numroc(10, 3, 1, 1, 2), 6);
  assert_int_equal(numroc(10, 3, 0, 1, 2), 4);
  assert_int_equal(numroc(7, 2, 2, 0, 3), 2);
}

void copy_box_strided(void **) {
  // A 4x5 row-major source; copy rows 1..3, cols 2..4 into a column-major packed box.
  std::vector<int> src(20), dst(6, -1);
  std::iota(src.begin(), src.end(), 0);
  Box b;
  b.ndim = 2;
  b.lo = {1, 2};
  b.hi = {3, 5};
  View from = packed_view(Box{2, {0, 0}, {4, 5}}, 0);
  View to;
  to.origin = b.lo;
  to.stride = {1, 2};  // column-major 2 x 3
  copy_box(b, reinterpret_cast<char *>(src.data()), from, reinterpret_cast<char *>(dst.data()), to, sizeof(int));
  std::vector<int> want = {7, 12, 8, 13, 9, 14};
  assert_memory_equal(dst.data(), want.data(), sizeof(int) * 6);
}

void bad_boxes(void **) {
  size_t shape[2] = {4, 4}, off[4] = {0, 0, 1, 1}, ext[4] = {4, 4, 1, 1};
  int own[2] = {0, 1};
  Layout l;
  expect_error(make_boxes_layout(2, 2, shape, 2, off, ext, own, &l), XC_ERR_INVALID_ARGUMENT, "overlap");
  expect_error(make_boxes_layout(2, 2, shape, 1, off + 2, ext + 2, own, &l), XC_ERR_INVALID_ARGUMENT, "gap");
  int far[1] = {2};
  expect_error(make_boxes_layout(2, 2, shape, 1, off, ext, far, &l), XC_ERR_INVALID_ARGUMENT, "out of range");
}

// Make every rank's plan; check that they fit together and meet the bound.
void check_plans(const Layout &src, const Layout &dst, bool p2p_only, std::vector<Plan> *out = nullptr) {
  int n = src.nranks;
  std::vector<Plan> plans(static_cast<size_t>(n));
  PlanOptions opt;
  opt.p2p_only = p2p_only;
  for (int r = 0; r < n; ++r) ASSERT_OK(make_plan(src, dst, XC_FLOAT32, 4, r, opt, &plans[static_cast<size_t>(r)]));
  std::map<std::pair<int, int>, size_t> sent, got;
  for (int r = 0; r < n; ++r) {
    const Plan &p = plans[static_cast<size_t>(r)];
    assert_int_equal(p.info.bytes_received, p.info.lower_bound_bytes);
    if (p2p_only) assert_int_equal(p.info.collective_steps, 0);
    for (const Step &s : p.steps) {
      for (const Message &m : s.sends) sent[{r, m.peer}] += m.count;
      for (const Message &m : s.recvs) got[{m.peer, r}] += m.count;
    }
  }
  assert_true(sent == got);  // every message has a matching receive of its size
  if (out) *out = std::move(plans);
}

void mesh_pairs_fit_together(void **) {
  size_t shape[3] = {5, 7, 3};
  std::vector<Placement> all = {R(), S(0), S(1), S(2)};
  for (const Placement &a : all)
    for (const Placement &b : all)
      for (const Placement &c : all)
        for (const Placement &d : all) {
          Layout src, dst;
          ASSERT_OK(make_mesh_layout(4, 3, shape, mesh_of({2, 2}, {a, b}), &src));
          ASSERT_OK(make_mesh_layout(4, 3, shape, mesh_of({2, 2}, {c, d}), &dst));
          check_plans(src, dst, false);
          check_plans(src, dst, true);
        }
}

void replicas_share_the_sending(void **) {
  // R -> S(0) on 1 rank's worth each: nothing moves. S(0) x R -> R x S(1)
  // on a 2 x 2 mesh: the two replicas of each source shard both send.
  size_t shape[2] = {8, 8};
  Layout src, dst;
  ASSERT_OK(make_mesh_layout(4, 2, shape, mesh_of({2, 2}, {S(0), R()}), &src));
  ASSERT_OK(make_mesh_layout(4, 2, shape, mesh_of({2, 2}, {R(), S(1)}), &dst));
  std::vector<Plan> plans;
  check_plans(src, dst, true, &plans);
  for (const Plan &p : plans) assert_true(p.info.bytes_sent > 0);
}

void partial_reduces_by_collective(void **) {
  size_t shape[2] = {6, 4};
  Layout src, dst;
  ASSERT_OK(make_mesh_layout(3, 2, shape, mesh_of({3}, {P()}), &src));
  ASSERT_OK(make_mesh_layout(3, 2, shape, mesh_of({3}, {S(0)}), &dst));
  Plan p;
  ASSERT_OK(make_plan(src, dst, XC_FLOAT32, 4, 0, PlanOptions{}, &p));
  assert_int_equal(p.steps.size(), 1);
  assert_int_equal(static_cast<int>(p.steps[0].kind), static_cast<int>(StepKind::kReduceScatter));
  ASSERT_OK(make_mesh_layout(3, 2, shape, mesh_of({3}, {R()}), &dst));
  ASSERT_OK(make_plan(src, dst, XC_FLOAT32, 4, 0, PlanOptions{}, &p));
  assert_int_equal(static_cast<int>(p.steps[0].kind), static_cast<int>(StepKind::kAllreduce));
}

void relabel_finds_a_renumbering(void **) {
  size_t shape[1] = {12}, off[3] = {0, 4, 8}, ext[3] = {4, 4, 4};
  int a[3] = {0, 1, 2}, b[3] = {2, 0, 1};
  Layout src, dst;
  ASSERT_OK(make_boxes_layout(3, 1, shape, 3, off, ext, a, &src));
  ASSERT_OK(make_boxes_layout(3, 1, shape, 3, off, ext, b, &dst));
  Plan p;
  ASSERT_OK(make_plan(src, dst, XC_FLOAT32, 4, 0, PlanOptions{}, &p));
  // dst part 2 is box 0, held by rank 0: perm[2] = 0, and so on.
  assert_int_equal(p.relabel[2], 0);
  assert_int_equal(p.relabel[0], 1);
  assert_int_equal(p.relabel[1], 2);
  assert_int_equal(p.relabel_saved, 48);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(torch_chunk_rule),
      cmocka_unit_test(numroc_matches_scalapack),
      cmocka_unit_test(copy_box_strided),
      cmocka_unit_test(bad_boxes),
      cmocka_unit_test(mesh_pairs_fit_together),
      cmocka_unit_test(replicas_share_the_sending),
      cmocka_unit_test(partial_reduces_by_collective),
      cmocka_unit_test(relabel_finds_a_renumbering),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
