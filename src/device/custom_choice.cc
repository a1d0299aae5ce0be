#include "device/custom_choice.h"

#include "base/dtype.h"
#include "gpu/kernel_names.h"

namespace xc::device {

namespace {

bool known(const topo::Topology &t, int g) {
  return g >= 0 && static_cast<size_t>(g) < t.gpus.size() && t.links.size() == t.gpus.size();
}

bool nvlinked(const topo::Topology &t, int a, int b) {
  if (a == b || !known(t, a) || !known(t, b)) return true;
  topo::LinkType type = t.links[static_cast<size_t>(a)][static_cast<size_t>(b)].type;
  return type == topo::LinkType::kSelf || type == topo::LinkType::kNvlink || type == topo::LinkType::kNvswitch;
}

bool reachable(const topo::Topology &t, int a, int b) {
  if (nvlinked(t, a, b)) return true;
  const topo::GpuLink &l = t.links[static_cast<size_t>(a)][static_cast<size_t>(b)];
  return l.type == topo::LinkType::kPcie && l.p2p_driver;
}

}  // namespace

const char *custom_algo_name(CustomAlgo a) {
  switch (a) {
    case CustomAlgo::kOneShot: return "dev_oneshot";
    case CustomAlgo::kTwoShot: return "dev_twoshot";
    case CustomAlgo::kHcm: return "dev_hcm";
    default: return "dev_generic";
  }
}

CustomRoutes custom_routes(const topo::Topology &t, const std::vector<int> &gpu_of_rank) {
  CustomRoutes r;
  int n = static_cast<int>(gpu_of_rank.size());
  r.reach_all = true;
  bool all_linked = true, relays = true;
  for (int a = 0; a < kernels::kCustomMaxRanks; ++a)
    for (int b = 0; b < kernels::kCustomMaxRanks; ++b) r.via[a][b] = -1;
  auto gpu = [&](int rank) { return gpu_of_rank[static_cast<size_t>(rank)]; };
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (!reachable(t, gpu(a), gpu(b))) r.reach_all = false;
      if (nvlinked(t, gpu(a), gpu(b))) continue;
      all_linked = false;
      // The lowest rank NVLinked to both: every rank computes the same table.
      int k = 0;
      while (k < n && (k == a || k == b || !nvlinked(t, gpu(a), gpu(k)) || !nvlinked(t, gpu(k), gpu(b)))) ++k;
      if (k == n)
        relays = false;
      else if (a < kernels::kCustomMaxRanks && b < kernels::kCustomMaxRanks)
        r.via[a][b] = k;
    }
  r.hcm = !all_linked && relays && n <= kernels::kCustomMaxRanks;
  return r;
}

bool custom_candidate(const CollDesc &d, int n, size_t *bytes) {
  if (n < 2 || n > kernels::kCustomMaxRanks || d.count == 0) return false;
  size_t es = dtype_size(d.dtype);
  size_t staged = d.count * es;  // what each rank puts in its workspace
  switch (d.kind) {
    case CollKind::kAllreduce: *bytes = staged; break;
    case CollKind::kReduceScatter:
      staged *= static_cast<size_t>(n);
      *bytes = staged;
      break;
    case CollKind::kAllgather: *bytes = staged * static_cast<size_t>(n); break;
    default: return false;
  }
  if (d.kind != CollKind::kAllgather && !gpu::custom_kernel_exists(d.dtype, d.op)) return false;
  return staged <= kCustomTwoShotMaxBytes;
}

CustomAlgo custom_choose(CollKind kind, size_t bytes, int n, const CustomRoutes &routes, bool forced,
                         CustomAlgo wanted, const char **reason) {
  bool allreduce = kind == CollKind::kAllreduce;
  // What each kernel can run here: its op, the links it reads over, its buffers' capacity.
  auto usable = [&](CustomAlgo a) {
    switch (a) {
      case CustomAlgo::kOneShot: return allreduce && routes.reach_all;
      case CustomAlgo::kTwoShot: return routes.reach_all;
      case CustomAlgo::kHcm:
        return allreduce && bytes <= kCustomOneShotMaxBytes && (routes.hcm || routes.reach_all);
      default: return true;
    }
  };
  if (forced && usable(wanted)) {
    *reason = "XC_ALGO";
    return wanted;
  }
  if (n < 2) {
    *reason = "one rank";
    return CustomAlgo::kGeneric;
  }
  if (allreduce && bytes <= kCustomOneShotMaxBytes && routes.hcm) {
    *reason = "some GPUs are not NVLinked: HCM forwards through a common neighbour (<= 256 KiB)";
    return CustomAlgo::kHcm;
  }
  if (!routes.reach_all) {
    *reason = "some pair of GPUs has no peer access";
    return CustomAlgo::kGeneric;
  }
  if (allreduce && bytes <= kCustomOneShotMaxBytes) {
    *reason = "<= 256 KiB";
    return CustomAlgo::kOneShot;
  }
  if (bytes <= kCustomTwoShotMaxBytes) {
    *reason = allreduce ? "<= 10 MiB" : "<= 10 MiB: two-shot's half";
    return CustomAlgo::kTwoShot;
  }
  *reason = "> 10 MiB";
  return CustomAlgo::kGeneric;
}

}  // namespace xc::device
