// Which algorithm a collective uses, as a pure function of what every rank
// knows alike (op, size, rank count), so every rank makes the same choice.
// The collectives call it, and xc-info prints it.
#pragma once

#include <cstddef>

namespace xc::algo {

enum class CollOp { kBarrier, kBroadcast, kAllreduce, kAllgather };

enum class Algo { kLocal, kDissemination, kBinomialTree, kRing, kRecursiveDoubling };

const char *coll_op_name(CollOp op);
const char *algo_name(Algo algo);

// The algorithm for op on nranks ranks with bytes per rank (count elements
// of the reduced type, for allreduce).
Algo choose(CollOp op, size_t bytes, size_t count, int nranks);

// Allreduce: below this many bytes the log(n)-round recursive doubling beats
// the bandwidth-optimal ring.
constexpr size_t kAllreduceRingMinBytes = 64 << 10;

}  // namespace xc::algo
