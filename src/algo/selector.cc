#include "algo/selector.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/dtype.h"

#include "coll/shm/reach.h"
#include "topo/cores.h"

namespace xc::algo {

namespace {

const Algo kAllAlgos[kAlgoCount] = {
    Algo::kLocal,     Algo::kDissemination, Algo::kBinomial,   Algo::kScatterAllgather, Algo::kReduceScatterGather,
    Algo::kRecursiveDoubling, Algo::kRing,  Algo::kBruck,      Algo::kLinear,           Algo::kPairwise,
    Algo::kShmOneShot, Algo::kShmSingleCopy, Algo::kShmTwoShot, Algo::kShmStaged,
};

// Kinds whose sizes not every rank knows (only the root, or each rank its own).
bool sizes_rank_local(CollKind kind) {
  return kind == CollKind::kGatherv || kind == CollKind::kScatterv || kind == CollKind::kAlltoallv;
}

bool reduces_to_blocks(CollKind kind) {
  return kind == CollKind::kAllreduce || kind == CollKind::kReduce || kind == CollKind::kReduceScatter ||
         kind == CollKind::kReduceScatterv;
}

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

Algo parse_algo(const std::string &name, bool *ok) {
  for (Algo a : kAllAlgos)
    if (a != Algo::kLocal && name == algo_name(a)) {
      *ok = true;
      return a;
    }
  *ok = false;
  return Algo::kLocal;
}

bool parse_kind(const std::string &name, CollKind *kind) {
  for (int k = 0; k < kCollKindCount; ++k)
    if (name == coll_kind_name(static_cast<CollKind>(k))) {
      *kind = static_cast<CollKind>(k);
      return true;
    }
  return false;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string all_algo_names() {
  std::string out;
  for (Algo a : kAllAlgos)
    if (a != Algo::kLocal) out += (out.empty() ? "" : ", ") + std::string(algo_name(a));
  return out;
}

}  // namespace

bool single_copy_on_huge_pages(Algo chosen, CollKind kind, size_t bytes, int nranks, Locality loc) {
  if (!loc.single_copy || (chosen != Algo::kShmTwoShot && chosen != Algo::kShmStaged)) return false;
  bool over = topo::oversubscribed(nranks);
  if (kind == CollKind::kAllreduce) return !over && bytes < kShmTwoShotHugeMinBytes;
  if (kind == CollKind::kAllgather || kind == CollKind::kAllgatherv)
    return !over || bytes * static_cast<size_t>(nranks) < kShmStagedOversubscribedHugeMinBytes;
  return false;  // in-place alltoall: staged wins on any pages
}

bool algo_usable(CollKind kind, Algo algo, Locality loc) {
  if (!is_shm_algo(algo)) return true;
  if (!loc.all_local) return false;
  if (algo == Algo::kShmSingleCopy) return loc.single_copy;
  if (algo == Algo::kShmOneShot && sizes_rank_local(kind)) return loc.single_copy;
  return true;
}

const char *algo_name(Algo algo) {
  switch (algo) {
    case Algo::kLocal: return "local";
    case Algo::kDissemination: return "dissemination";
    case Algo::kBinomial: return "binomial";
    case Algo::kScatterAllgather: return "scatter_allgather";
    case Algo::kReduceScatterGather: return "reduce_scatter_gather";
    case Algo::kRecursiveDoubling: return "recursive_doubling";
    case Algo::kRing: return "ring";
    case Algo::kBruck: return "bruck";
    case Algo::kLinear: return "linear";
    case Algo::kPairwise: return "pairwise";
    case Algo::kShmOneShot: return "shm_oneshot";
    case Algo::kShmSingleCopy: return "shm_single_copy";
    case Algo::kShmTwoShot: return "shm_twoshot";
    case Algo::kShmStaged: return "shm_staged";
  }
  return "?";
}

bool is_shm_algo(Algo algo) {
  return algo == Algo::kShmOneShot || algo == Algo::kShmSingleCopy || algo == Algo::kShmTwoShot ||
         algo == Algo::kShmStaged;
}

bool algo_applies(CollKind kind, Algo algo) {
  switch (algo) {
    case Algo::kLocal: return true;
    case Algo::kShmOneShot: return true;
    case Algo::kShmSingleCopy: return true;
    case Algo::kShmTwoShot: return reduces_to_blocks(kind);
    case Algo::kShmStaged:
      return kind == CollKind::kAllgather || kind == CollKind::kAllgatherv || kind == CollKind::kAlltoall ||
             kind == CollKind::kBroadcast;
    case Algo::kDissemination: return kind == CollKind::kBarrier;
    case Algo::kBinomial:
      return kind == CollKind::kBroadcast || kind == CollKind::kReduce || kind == CollKind::kGather ||
             kind == CollKind::kScatter;
    case Algo::kScatterAllgather: return kind == CollKind::kBroadcast;
    case Algo::kReduceScatterGather: return kind == CollKind::kReduce;
    case Algo::kRecursiveDoubling:
      return kind == CollKind::kAllreduce || kind == CollKind::kScan || kind == CollKind::kExscan;
    case Algo::kRing:
      return kind == CollKind::kAllreduce || kind == CollKind::kAllgather || kind == CollKind::kAllgatherv ||
             kind == CollKind::kReduceScatter || kind == CollKind::kReduceScatterv;
    case Algo::kBruck: return kind == CollKind::kAllgather || kind == CollKind::kAlltoall;
    case Algo::kLinear:
      return kind == CollKind::kGather || kind == CollKind::kGatherv || kind == CollKind::kScatter ||
             kind == CollKind::kScatterv;
    case Algo::kPairwise:
      return kind == CollKind::kReduceScatter || kind == CollKind::kReduceScatterv ||
             kind == CollKind::kAlltoall || kind == CollKind::kAlltoallv;
  }
  return false;
}

std::string algo_choices(CollKind kind) {
  std::string out;
  for (Algo a : kAllAlgos)
    if (a != Algo::kLocal && algo_applies(kind, a)) out += (out.empty() ? "" : ", ") + std::string(algo_name(a));
  return out;
}

Algo choose(CollKind kind, size_t bytes, int nranks, Locality loc, bool in_place, const char **reason) {
  const char *why = "";
  Algo a;
  if (kind == CollKind::kBarrier) bytes = 0;
  if (nranks <= 1) {
    why = "one rank";
    a = Algo::kLocal;
  } else if (loc.all_local && !sizes_rank_local(kind) && bytes <= coll::shm_oneshot_limit(kind, nranks, loc.single_copy)) {
    why = "one host, small";
    a = Algo::kShmOneShot;
  } else if (loc.all_local && loc.single_copy && sizes_rank_local(kind)) {
    why = "one host: each rank stages its part if small, else peers read it in place";
    a = Algo::kShmOneShot;
  } else if (loc.all_local && pipeline_beats_single_copy(kind, bytes, nranks, in_place && placement_agrees(kind))) {
    why = kind == CollKind::kAlltoall    ? "one host, in place: staged pipeline"
          : kind == CollKind::kBroadcast ? "one host, ranks on cores of their own: staged pipeline"
                                         : "one host, large: staged pipeline, outputs streamed";
    a = kind == CollKind::kAllreduce ? Algo::kShmTwoShot : Algo::kShmStaged;
  } else if (loc.all_local && loc.single_copy) {
    why = "one host, peers' buffers readable";
    a = Algo::kShmSingleCopy;
  } else if (loc.all_local && reduces_to_blocks(kind)) {
    why = "one host, large reduction";
    a = Algo::kShmTwoShot;
  } else {
    a = choose_p2p(kind, bytes, nranks, &why);
  }
  if (reason) *reason = why;
  return a;
}

Status forced_algo(const std::string &spec, CollKind kind, bool *forced, Algo *algo) {
  *forced = false;
  bool have_global = false, have_own = false;
  Algo global = Algo::kLocal, own = Algo::kLocal;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = trim(spec.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string name = trim(eq == std::string::npos ? item : item.substr(eq + 1));
    bool ok = false;
    Algo a = parse_algo(name, &ok);
    if (!ok)
      return Error(XC_ERR_INVALID_ARGUMENT, "XC_ALGO='%s': unknown algorithm '%s' (known: %s)", spec.c_str(),
                   name.c_str(), all_algo_names().c_str());
    if (eq == std::string::npos) {
      have_global = true;
      global = a;
      continue;
    }
    std::string op = trim(item.substr(0, eq));
    CollKind k;
    if (!parse_kind(op, &k))
      return Error(XC_ERR_INVALID_ARGUMENT, "XC_ALGO='%s': unknown op '%s' (ops are named as in xc_<op>, e.g. allreduce)",
                   spec.c_str(), op.c_str());
    if (k != kind) continue;
    if (!algo_applies(kind, a))
      return Error(XC_ERR_INVALID_ARGUMENT, "XC_ALGO='%s': %s has no algorithm '%s' (choices: %s)", spec.c_str(),
                   coll_kind_name(kind), name.c_str(), algo_choices(kind).c_str());
    have_own = true;
    own = a;
  }
  if (have_own) {
    *forced = true;
    *algo = own;
  } else if (have_global && algo_applies(kind, global)) {
    *forced = true;
    *algo = global;
  }
  return Status::Ok();
}

}  // namespace xc::algo
