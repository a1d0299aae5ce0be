#include "coll/shm/reach.h"

#include <algorithm>

#include "topo/cores.h"

namespace xc::coll {

size_t shm_oneshot_limit(CollKind kind, int nranks, bool single_copy) {
  size_t most = kShmOneShotMaxBytes;
  if (!single_copy || topo::oversubscribed(nranks)) return most;
  if (kind == CollKind::kReduce) return std::min(most, kShmOneShotRootReduceMaxBytes);
  bool reduces = kind == CollKind::kAllreduce || kind == CollKind::kReduceScatter ||
                 kind == CollKind::kReduceScatterv || kind == CollKind::kScan || kind == CollKind::kExscan;
  if (reduces) return std::min(most, kShmOneShotReduceMaxBytes);
  // allgather(v)/gather(v): bytes is one block and a rank copies n of them.
  bool per_block = kind == CollKind::kAllgather || kind == CollKind::kAllgatherv || kind == CollKind::kGather ||
                   kind == CollKind::kGatherv;
  return std::min(most, per_block ? kShmOneShotMoveMaxBytes / static_cast<size_t>(nranks) : kShmOneShotMoveMaxBytes);
}

}  // namespace xc::coll
