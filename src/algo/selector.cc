#include "algo/selector.h"

#include "coll/shm/reach.h"
#include "topo/cores.h"

namespace xc::algo {

namespace {

// Whether a large op goes through a staging pipeline (two-shot, staged)
// rather than single copy: bytes as selection_bytes counts them.
bool pipeline_beats_single_copy(CollKind kind, size_t bytes, int nranks, bool in_place) {
  if (kind == CollKind::kAllreduce) return !in_place && bytes >= kShmTwoShotMinBytes;
  if (kind == CollKind::kAlltoall) return in_place;  // at any size beyond one-shot (docs/design.md)
  if (kind == CollKind::kBroadcast) return nranks >= kShmStagedBroadcastMinRanks && !topo::oversubscribed(nranks);
  if (kind != CollKind::kAllgather && kind != CollKind::kAllgatherv) return false;
  size_t all = bytes * static_cast<size_t>(nranks);
  if (topo::oversubscribed(nranks)) return all >= kShmStagedOversubscribedMinBytes;
  return all >= kShmStagedMinBytes;
}

// The p2p policy (ranks on several hosts, or shared memory not worth it).
Algo choose_p2p(CollKind kind, size_t bytes, int n, const char **why) {
  auto pick = [why](Algo a, const char *reason) {
    *why = reason;
    return a;
  };
  switch (kind) {
    case CollKind::kBarrier: return pick(Algo::kDissemination, "only one");
    case CollKind::kBroadcast:
      if (bytes >= kBroadcastScatterMinBytes && n > 2) return pick(Algo::kScatterAllgather, ">= 512 KiB");
      return pick(Algo::kBinomial, "< 512 KiB or 2 ranks");
    case CollKind::kReduce:
      if (bytes >= kReduceScatterGatherMinBytes && n > 2) return pick(Algo::kReduceScatterGather, ">= 512 KiB");
      return pick(Algo::kBinomial, "< 512 KiB or 2 ranks");
    case CollKind::kAllreduce:
      if (bytes >= kAllreduceRingMinBytes && n > 2) return pick(Algo::kRing, ">= 64 KiB");
      return pick(Algo::kRecursiveDoubling, "< 64 KiB or 2 ranks");
    case CollKind::kAllgather:
      if (bytes * static_cast<size_t>(n) >= kAllgatherRingMinBytes) return pick(Algo::kRing, "result >= 64 KiB");
      return pick(Algo::kBruck, "result < 64 KiB");
    case CollKind::kGather:
    case CollKind::kScatter:
      if (bytes * (kind == CollKind::kGather ? static_cast<size_t>(n) : 1) >= kGatherLinearMinBytes)
        return pick(Algo::kLinear, "all blocks >= 64 KiB");
      return pick(Algo::kBinomial, "all blocks < 64 KiB");
    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv:
      if (bytes >= kReduceScatterRingMinBytes) return pick(Algo::kRing, "input >= 64 KiB");
      return pick(Algo::kPairwise, "input < 64 KiB");
    case CollKind::kAlltoall:
      if (bytes / static_cast<size_t>(n) <= kAlltoallBruckMaxBytes && n > 2)
        return pick(Algo::kBruck, "<= 256 B per peer");
      return pick(Algo::kPairwise, "> 256 B per peer or 2 ranks");
    case CollKind::kAllgatherv: return pick(Algo::kRing, "only one");
    case CollKind::kGatherv:
    case CollKind::kScatterv: return pick(Algo::kLinear, "sizes known at the root only");
    case CollKind::kAlltoallv: return pick(Algo::kPairwise, "only one");
    case CollKind::kScan:
    case CollKind::kExscan: return pick(Algo::kRecursiveDoubling, "only one");
  }
  return pick(Algo::kLocal, "?");
}

// Several hosts, more than one rank on some: the hierarchical algorithms
// where they apply (false: the p2p policy).
bool choose_hier(CollKind kind, size_t bytes, int n, const Locality &loc, Algo *a, const char **why) {
  if (!loc.hierarchical || loc.memory != MemKind::kHost || !algo_applies(kind, Algo::kHierLeader)) return false;
  auto pick = [&](bool multi, const char *reason) {
    *a = multi ? Algo::kHierMultiLeader : Algo::kHierLeader;
    *why = reason;
    return true;
  };
  bool eq = loc.equal_hosts;
  const char *unequal = "several hosts, unequal ranks per host";
  switch (kind) {
    case CollKind::kAllreduce:
      if (!eq)
        return bytes >= kHierUnequalAllreduceMinBytes ? pick(false, "several hosts, unequal ranks per host, >= 64 KiB")
                                                      : false;
      return pick(false, "several hosts, equal ranks per host");
    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv:
      return eq ? pick(true, "several hosts, equal ranks per host") : pick(false, unequal);
    case CollKind::kAllgather:
    case CollKind::kBroadcast:
    case CollKind::kReduce:
      return pick(false, "several hosts");
    case CollKind::kAlltoall:
      return bytes < kHierAlltoallLeaderMaxBytes ? pick(false, "several hosts, < 1 MiB") : false;
    default: return false;
  }
}

}  // namespace

bool single_copy_on_huge_pages(Algo chosen, CollKind kind, size_t bytes, int nranks, const Locality &loc) {
  if (!loc.single_copy || (chosen != Algo::kShmTwoShot && chosen != Algo::kShmStaged)) return false;
  bool over = topo::oversubscribed(nranks);
  if (kind == CollKind::kAllreduce) return !over && bytes < kShmTwoShotHugeMinBytes;
  if (kind == CollKind::kAllgather || kind == CollKind::kAllgatherv)
    return !over || bytes * static_cast<size_t>(nranks) < kShmStagedOversubscribedHugeMinBytes;
  return false;  // in-place alltoall: staged wins on any pages
}

bool algo_usable(CollKind kind, Algo algo, const Locality &loc) {
  const AlgoEntry &e = algo_entry(algo);
  if (!(e.memory & mem_bit(loc.memory))) return false;
  if (e.backend == coll::BackendId::kCount) return true;
  if (e.backend == coll::BackendId::kHier)
    return loc.hierarchical && (algo != Algo::kHierMultiLeader || loc.equal_hosts);
  // The shared-memory backend is there when all are local.
  if (!loc.all_local) return false;
  return !(e.single_copy_ops & op_bit(kind)) || loc.single_copy;
}

Algo choose(CollKind kind, size_t bytes, int nranks, const Locality &loc, bool in_place, const char **reason) {
  const char *why = "";
  Algo a;
  if (kind == CollKind::kBarrier) bytes = 0;
  bool shm = loc.all_local && loc.memory == MemKind::kHost;  // the shared-memory backend moves host memory
  if (nranks <= 1) {
    why = "one rank";
    a = Algo::kLocal;
  } else if (shm && !sizes_rank_local(kind) && bytes <= coll::shm_oneshot_limit(kind, nranks, loc.single_copy)) {
    why = "one host, small";
    a = Algo::kShmOneShot;
  } else if (shm && loc.single_copy && sizes_rank_local(kind)) {
    why = "one host: each rank stages its part if small, else peers read it in place";
    a = Algo::kShmOneShot;
  } else if (shm && pipeline_beats_single_copy(kind, bytes, nranks, in_place && placement_agrees(kind))) {
    why = kind == CollKind::kAlltoall    ? "one host, in place: staged pipeline"
          : kind == CollKind::kBroadcast ? "one host, ranks on cores of their own: staged pipeline"
                                         : "one host, large: staged pipeline, outputs streamed";
    a = kind == CollKind::kAllreduce ? Algo::kShmTwoShot : Algo::kShmStaged;
  } else if (shm && loc.single_copy) {
    why = "one host, peers' buffers readable";
    a = Algo::kShmSingleCopy;
  } else if (shm && algo_applies(kind, Algo::kShmTwoShot)) {
    why = "one host, large reduction";
    a = Algo::kShmTwoShot;
  } else if (!choose_hier(kind, bytes, nranks, loc, &a, &why)) {
    a = choose_p2p(kind, bytes, nranks, &why);
  }
  if (reason) *reason = why;
  return a;
}

}  // namespace xc::algo
