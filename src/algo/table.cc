#include "algo/table.h"

#include <initializer_list>

#include "algo/hier/hier.h"
#include "algo/run_p2p.h"
#include "coll/shm/backend.h"

namespace xc::algo {

namespace {

constexpr uint32_t ops(std::initializer_list<CollKind> kinds) {
  uint32_t bits = 0;
  for (CollKind k : kinds) bits |= op_bit(k);
  return bits;
}

using K = CollKind;
constexpr uint32_t kHost = mem_bit(MemKind::kHost);
constexpr uint32_t kDevice = mem_bit(MemKind::kDevice);
constexpr coll::BackendId kEngine = coll::BackendId::kCount;  // no backend: the point-to-point engine
constexpr coll::BackendId kShm = coll::BackendId::kShm;
constexpr coll::BackendId kHier = coll::BackendId::kHier;
constexpr uint32_t kReductionsToBlocks = ops({K::kAllreduce, K::kReduce, K::kReduceScatter, K::kReduceScatterv});
constexpr uint32_t kSizesRankLocal = ops({K::kGatherv, K::kScatterv, K::kAlltoallv});
constexpr uint32_t kHierOps = ops({K::kAllreduce, K::kReduce, K::kReduceScatter, K::kReduceScatterv, K::kAllgather,
                                   K::kBroadcast, K::kAlltoall});

Status run_local(coll::CollContext &c, const CollDesc &d);
// The device algorithms run in the device layer, never through this table.
Status run_in_device_layer(coll::CollContext &, const CollDesc &d) {
  return Error(XC_ERR_INTERNAL, "%s: device algorithms run in the device layer", coll_kind_name(d.kind));
}

constexpr AlgoEntry kAlgos[] = {
    {Algo::kLocal, "local", kAllOps, kHost, kEngine, 0, run_local, "one rank: copies its own data, if any"},
    {Algo::kDissemination, "dissemination", ops({K::kBarrier}), kHost, kEngine, 0, run_dissemination,
     "ceil(log2 n) rounds of empty messages"},
    {Algo::kBinomial, "binomial", ops({K::kBroadcast, K::kReduce, K::kGather, K::kScatter}), kHost, kEngine, 0,
     run_binomial, "a binomial tree from or to the root"},
    {Algo::kScatterAllgather, "scatter_allgather", ops({K::kBroadcast}), kHost, kEngine, 0, run_scatter_allgather,
     "the root scatters n pieces, a ring allgathers them (large messages)"},
    {Algo::kReduceScatterGather, "reduce_scatter_gather", ops({K::kReduce}), kHost, kEngine, 0,
     run_reduce_scatter_gather, "a ring reduce-scatter, then the root gathers the pieces (large vectors)"},
    {Algo::kRecursiveDoubling, "recursive_doubling", ops({K::kAllreduce, K::kScan, K::kExscan}), kHost, kEngine, 0,
     run_recursive_doubling, "log2 n pairwise exchanges, any n"},
    {Algo::kRing, "ring", ops({K::kAllreduce, K::kAllgather, K::kAllgatherv, K::kReduceScatter, K::kReduceScatterv}),
     kHost, kEngine, 0, run_ring, "n - 1 steps around a ring (bandwidth-optimal)"},
    {Algo::kBruck, "bruck", ops({K::kAllgather, K::kAlltoall}), kHost, kEngine, 0, run_bruck,
     "ceil(log2 n) rounds of combined blocks (small blocks)"},
    {Algo::kLinear, "linear", ops({K::kGather, K::kGatherv, K::kScatter, K::kScatterv}), kHost, kEngine, 0, run_linear,
     "the root exchanges with every rank directly"},
    {Algo::kPairwise, "pairwise", ops({K::kReduceScatter, K::kReduceScatterv, K::kAlltoall, K::kAlltoallv}), kHost,
     kEngine, 0, run_pairwise, "n - 1 rounds, each rank paired with another"},
    {Algo::kShmOneShot, "shm_oneshot", kAllOps, kHost, kShm, kSizesRankLocal,
     [](coll::CollContext &c, const CollDesc &d) { return coll::shm_oneshot(c, d); },
     "one host: each rank stages its input, readers take it from the peers' slots (small)"},
    {Algo::kShmSingleCopy, "shm_single_copy", kAllOps, kHost, kShm, kAllOps,
     [](coll::CollContext &c, const CollDesc &d) { return coll::shm_single_copy(c, d); },
     "one host: peers' buffers read and written in place (process_vm_readv/writev)"},
    {Algo::kShmTwoShot, "shm_twoshot", kReductionsToBlocks, kHost, kShm, 0,
     [](coll::CollContext &c, const CollDesc &d) { return coll::shm_twoshot(c, d); },
     "one host: a staged reduce-scatter then allgather, pipelined (large reductions)"},
    {Algo::kShmStaged, "shm_staged", ops({K::kAllgather, K::kAllgatherv, K::kAlltoall, K::kBroadcast}), kHost, kShm, 0,
     [](coll::CollContext &c, const CollDesc &d) { return coll::shm_staged(c, d); },
     "one host: blocks staged through shared memory, pipelined, outputs streamed (large)"},
    {Algo::kHierLeader, "hier_leader", kHierOps | op_bit(K::kAlltoallv), kHost, kHier, 0, hier::run_leader,
     "several hosts: within each host through shared memory, between hosts one rank per host"},
    {Algo::kHierMultiLeader, "hier_multileader", kHierOps, kHost, kHier, 0, hier::run_multileader,
     "several hosts, as many ranks on each: local rank i of every host carries slice i between hosts"},
    {Algo::kDevOneShot, "dev_oneshot", ops({K::kAllreduce}), kDevice, kEngine, 0, run_in_device_layer,
     "device memory, one host: a kernel reads every peer's staged input and reduces (small)"},
    {Algo::kDevTwoShot, "dev_twoshot", ops({K::kAllreduce, K::kReduceScatter, K::kAllgather}), kDevice, kEngine, 0,
     run_in_device_layer, "device memory, one host: a kernel reduces 1/n of every peer, then gathers (medium)"},
    {Algo::kDevHcm, "dev_hcm", ops({K::kAllreduce}), kDevice, kEngine, 0, run_in_device_layer,
     "device memory, one host: one-shot reading only over NVLink, relayed by a common neighbour"},
    {Algo::kDevGeneric, "dev_generic", kAllOps, kDevice, kEngine, 0, run_in_device_layer,
     "device memory, one host: buffers traded on the host, copies and reductions read peers in place"},
};
static_assert(sizeof kAlgos / sizeof kAlgos[0] == kAlgoCount, "one entry per algorithm");

constexpr bool in_algo_order() {
  for (int i = 0; i < kAlgoCount; ++i)
    if (static_cast<int>(kAlgos[i].id) != i) return false;
  return true;
}
static_assert(in_algo_order(), "entries in Algo order");

// One rank moves nothing between ranks: the first point-to-point algorithm
// of its op only copies.
Status run_local(coll::CollContext &c, const CollDesc &d) {
  for (const AlgoEntry &e : kAlgos)
    if (e.id != Algo::kLocal && e.backend == kEngine && (e.ops & op_bit(d.kind))) return e.run(c, d);
  return Error(XC_ERR_INTERNAL, "%s has no point-to-point algorithm", coll_kind_name(d.kind));
}

std::string join_names(uint32_t kind_bits) {
  std::string out;
  for (const AlgoEntry &e : kAlgos)
    if (e.id != Algo::kLocal && (e.ops & kind_bits)) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

}  // namespace

const AlgoEntry *algo_table() { return kAlgos; }

const AlgoEntry *find_algo(const std::string &name) {
  for (const AlgoEntry &e : kAlgos)
    if (e.id != Algo::kLocal && name == e.name) return &e;
  return nullptr;
}

std::string algo_choices(CollKind kind) { return join_names(op_bit(kind)); }
std::string algo_names() { return join_names(kAllOps); }

}  // namespace xc::algo
