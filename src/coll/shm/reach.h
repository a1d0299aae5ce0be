// How far one-shot reaches before single copy is faster, per op: the
// selector (algo/selector.cc) asks it for every rank alike, and one-shot-v
// asks it for what each rank contributes alone. Sizes are what one rank
// stages (selection_bytes); the measurements are in docs/collectives.md.
// Inline: the selector asks on every op.
#pragma once

#include <algorithm>
#include <cstddef>

#include "coll/desc.h"
#include "topo/cores.h"

namespace xc::coll {

// One-shot's per-rank staging limit (bytes one rank writes into its slot).
constexpr size_t kShmOneShotMaxBytes = 64 << 10;
// With a core per rank and single copy available, one-shot stops earlier:
// reductions at this vector size ...
constexpr size_t kShmOneShotReduceMaxBytes = 16 << 10;
// ... reduce (one result, at the root, where single copy pays a second
// transfer and a done barrier) at this one ...
constexpr size_t kShmOneShotRootReduceMaxBytes = 32 << 10;
// ... and data movement where the widest rank copies this much.
constexpr size_t kShmOneShotMoveMaxBytes = 8 << 10;

// The most bytes one-shot takes for kind before single copy is faster.
// Oversubscribed, or without single copy, up to its staging limit (single
// copy's extra barrier costs context switches). gatherv, scatterv and
// alltoallv: what one rank contributes (its block; the root's blocks; all
// its blocks), which each rank weighs alone for its own part.
inline size_t shm_oneshot_limit(CollKind kind, int nranks, bool single_copy) {
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
