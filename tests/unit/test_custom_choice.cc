// Unit tests of the intra-node kernels' choice (device/custom_choice.h):
// routes on the shipped topologies (the DGX-1 hybrid cube mesh relays each
// pair it lacks through a common NVLinked neighbour; PCIe across root
// complexes reaches nothing; NVSwitch reaches all), which ops may take a
// kernel at all, and the policy at its thresholds, exactly and one off.
#include <cstdlib>
#include <string>
#include <vector>

#include "device/custom_choice.h"
#include "topo/topology.h"
#include "unit_test.h"
#include "xcomm_build_config.h"

using namespace xc;
using xc::device::CustomAlgo;
using xc::device::CustomRoutes;

namespace {

topo::Topology load(const char *name) {
  const char *dir = getenv("XC_TOPO_DIR");
  if (!dir || !*dir) fail_msg("XC_TOPO_DIR is not set (meson test sets it to tests/topo)");
  topo::Topology t;
#if XC_HAVE_HWLOC
  ASSERT_OK(topo::load_file(std::string(dir) + "/" + name, &t));
#else
  skip();
#endif
  return t;
}

std::vector<int> first_gpus(int n) {
  std::vector<int> g;
  for (int i = 0; i < n; ++i) g.push_back(i);
  return g;
}

bool nvlinked(const topo::Topology &t, int a, int b) {
  topo::LinkType l = t.links[static_cast<size_t>(a)][static_cast<size_t>(b)].type;
  return a == b || l == topo::LinkType::kNvlink || l == topo::LinkType::kNvswitch;
}

void dgx1_relays_every_missing_link(void **) {
  topo::Topology t = load("dgx1_v100.json");
  for (int n = 2; n <= 8; ++n) {
    CustomRoutes r = device::custom_routes(t, first_gpus(n));
    assert_false(r.reach_all && n == 8);  // SYS pairs: no peer access
    bool missing = false;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        int k = r.via[a][b];
        if (nvlinked(t, a, b)) {
          assert_int_equal(k, -1);
          continue;
        }
        missing = true;
        assert_true(k >= 0 && k < n && k != a && k != b);
        assert_true(nvlinked(t, a, k) && nvlinked(t, k, b));
      }
    assert_int_equal(r.hcm, missing);
  }
  // All eight: HCM below one-shot's threshold, the generic path above (no
  // pair without NVLink has peer access, so two-shot cannot run).
  CustomRoutes r = device::custom_routes(t, first_gpus(8));
  const char *why = nullptr;
  assert_int_equal(
      static_cast<int>(device::custom_choose(CollKind::kAllreduce, 8, 8, r, false, CustomAlgo::kGeneric, &why)),
      static_cast<int>(CustomAlgo::kHcm));
  assert_int_equal(static_cast<int>(device::custom_choose(CollKind::kAllreduce, (256 << 10) + 2, 8, r, false,
                                                          CustomAlgo::kGeneric, &why)),
                   static_cast<int>(CustomAlgo::kGeneric));
  assert_non_null(strstr(why, "peer access"));
}

void pcie_and_nvswitch(void **) {
  topo::Topology pcie = load("pcie4.json"), nvs = load("dgx_h100.json");
  CustomRoutes p = device::custom_routes(pcie, first_gpus(4));
  assert_false(p.reach_all);
  assert_false(p.hcm);  // no NVLink to relay over
  const char *why = nullptr;
  for (CustomAlgo forced : {CustomAlgo::kOneShot, CustomAlgo::kTwoShot, CustomAlgo::kHcm})
    assert_int_equal(static_cast<int>(device::custom_choose(CollKind::kAllreduce, 64, 4, p, true, forced, &why)),
                     static_cast<int>(CustomAlgo::kGeneric));
  CustomRoutes s = device::custom_routes(nvs, first_gpus(8));
  assert_true(s.reach_all);
  assert_false(s.hcm);
  // Ranks sharing one GPU (and GPUs the topology does not know) reach each other.
  CustomRoutes shared = device::custom_routes(pcie, std::vector<int>{0, 0, 0});
  assert_true(shared.reach_all);
  CustomRoutes unknown = device::custom_routes(topo::Topology(), std::vector<int>{0, 1, 2, 3});
  assert_true(unknown.reach_all);
  assert_false(unknown.hcm);
}

// The policy one element (4 bytes) either side of each threshold.
void thresholds(void **) {
  CustomRoutes all = device::custom_routes(topo::Topology(), first_gpus(4));
  const char *why = nullptr;
  auto pick = [&](CollKind k, size_t bytes) {
    return static_cast<int>(device::custom_choose(k, bytes, 4, all, false, CustomAlgo::kGeneric, &why));
  };
  const size_t one = device::kCustomOneShotMaxBytes, two = device::kCustomTwoShotMaxBytes;
  assert_int_equal(pick(CollKind::kAllreduce, 4), static_cast<int>(CustomAlgo::kOneShot));
  assert_int_equal(pick(CollKind::kAllreduce, one - 4), static_cast<int>(CustomAlgo::kOneShot));
  assert_int_equal(pick(CollKind::kAllreduce, one), static_cast<int>(CustomAlgo::kOneShot));
  assert_int_equal(pick(CollKind::kAllreduce, one + 4), static_cast<int>(CustomAlgo::kTwoShot));
  assert_int_equal(pick(CollKind::kAllreduce, two), static_cast<int>(CustomAlgo::kTwoShot));
  assert_int_equal(pick(CollKind::kAllreduce, two + 4), static_cast<int>(CustomAlgo::kGeneric));
  for (CollKind k : {CollKind::kReduceScatter, CollKind::kAllgather}) {
    assert_int_equal(pick(k, 4), static_cast<int>(CustomAlgo::kTwoShot));
    assert_int_equal(pick(k, two), static_cast<int>(CustomAlgo::kTwoShot));
    assert_int_equal(pick(k, two + 4), static_cast<int>(CustomAlgo::kGeneric));
  }
  // Forced: one-shot at any size a workspace stages; HCM only up to its relay slots; kernels an op lacks give way.
  assert_int_equal(
      static_cast<int>(device::custom_choose(CollKind::kAllreduce, two, 4, all, true, CustomAlgo::kOneShot, &why)),
      static_cast<int>(CustomAlgo::kOneShot));
  assert_int_equal(
      static_cast<int>(device::custom_choose(CollKind::kAllreduce, one + 4, 4, all, true, CustomAlgo::kHcm, &why)),
      static_cast<int>(CustomAlgo::kTwoShot));
  assert_int_equal(
      static_cast<int>(device::custom_choose(CollKind::kAllgather, 64, 4, all, true, CustomAlgo::kOneShot, &why)),
      static_cast<int>(CustomAlgo::kTwoShot));
}

void candidates(void **) {
  CollDesc d;
  d.kind = CollKind::kAllreduce;
  d.dtype = XC_FLOAT32;
  d.op = XC_AVG;
  d.count = 1000;
  size_t bytes = 0;
  assert_true(device::custom_candidate(d, 2, &bytes));
  assert_int_equal(bytes, 4000);
  assert_false(device::custom_candidate(d, 1, &bytes));  // one rank: a copy
  assert_false(device::custom_candidate(d, 9, &bytes));  // more than a pad holds
  d.dtype = XC_FLOAT64;
  assert_false(device::custom_candidate(d, 4, &bytes));  // no kernel
  d.dtype = XC_BFLOAT16;
  d.op = XC_PROD;
  assert_false(device::custom_candidate(d, 4, &bytes));
  d.op = XC_MAX;
  d.count = device::kCustomTwoShotMaxBytes / 2 + 1;  // more than a workspace stages
  assert_false(device::custom_candidate(d, 4, &bytes));
  d.kind = CollKind::kAllgather;  // any dtype: a copy
  d.dtype = XC_INT8;
  d.count = 3;
  assert_true(device::custom_candidate(d, 3, &bytes));
  assert_int_equal(bytes, 9);  // all n blocks
  d.kind = CollKind::kBroadcast;
  assert_false(device::custom_candidate(d, 3, &bytes));
  d.kind = CollKind::kReduceScatter;
  d.dtype = XC_FLOAT16;
  d.op = XC_SUM;
  d.count = 0;
  assert_false(device::custom_candidate(d, 3, &bytes));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dgx1_relays_every_missing_link),
      cmocka_unit_test(pcie_and_nvswitch),
      cmocka_unit_test(thresholds),
      cmocka_unit_test(candidates),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
