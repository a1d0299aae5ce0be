// Which intra-node kernel (kernels/custom.cuh) a device collective takes:
// one-shot, two-shot, hybrid cube mesh, or the generic host-coordinated
// path (device/coll.cc). A pure function of what every rank knows alike —
// the op, its size, the rank count, and how the ranks' GPUs are linked — so
// every rank chooses the same. docs/device-kernels.md says where the
// thresholds come from.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/desc.h"
#include "kernels/args.cuh"
#include "topo/topology.h"

namespace xc::device {

enum class CustomAlgo { kGeneric, kOneShot, kTwoShot, kHcm };
const char *custom_algo_name(CustomAlgo a);  // "dev_generic", "dev_oneshot", "dev_twoshot", "dev_hcm"

// Starting points (the seed design's; to be set from GPU measurements):
// one-shot (and HCM) up to the first, two-shot up to the second, counted
// in bytes of the vector (allreduce) or of all n blocks (reduce_scatter,
// allgather). Each rank's workspace stages up to the second.
constexpr size_t kCustomOneShotMaxBytes = 256 << 10;
constexpr size_t kCustomTwoShotMaxBytes = 10 << 20;

// How the ranks' GPUs reach each other, from the host's topology and the
// GPU each rank drives.
struct CustomRoutes {
  bool reach_all = false;  // every pair can read the other's memory (NVLink, NVSwitch, PCIe peer access)
  // Some pair is not NVLinked, yet each such pair has a neighbour NVLinked
  // to both: HCM reads only over NVLink, forwarding through it.
  bool hcm = false;
  int via[kernels::kCustomMaxRanks][kernels::kCustomMaxRanks];  // [reader][source]: the relay, or -1
};
// gpu_of_rank: the topology's GPU index of each rank, -1 where unknown. A
// topology that does not know a GPU (no NVML, the emulated device) leaves
// its pairs reachable and linked: the generic path reads them directly too.
CustomRoutes custom_routes(const topo::Topology &t, const std::vector<int> &gpu_of_rank);

// Whether d may take a kernel at all, before any set-up: allreduce,
// reduce_scatter or allgather, 2 to 8 ranks, a dtype and op that have a
// kernel, and no more than a workspace holds. *bytes: what the choice weighs.
bool custom_candidate(const CollDesc &d, int n, size_t *bytes);

// The choice. forced: XC_ALGO names wanted for this op (kGeneric forces the
// generic path); a forced kernel these ranks cannot run gives way to the
// policy. *reason: a short why, for XC_DEBUG=INFO.
CustomAlgo custom_choose(CollKind kind, size_t bytes, int n, const CustomRoutes &routes, bool forced,
                         CustomAlgo wanted, const char **reason);

}  // namespace xc::device
