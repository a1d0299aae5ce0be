#include "algo/selector.h"

namespace xc::algo {

const char *coll_op_name(CollOp op) {
  switch (op) {
    case CollOp::kBarrier: return "barrier";
    case CollOp::kBroadcast: return "broadcast";
    case CollOp::kAllreduce: return "allreduce";
    case CollOp::kAllgather: return "allgather";
  }
  return "?";
}

const char *algo_name(Algo algo) {
  switch (algo) {
    case Algo::kLocal: return "local";
    case Algo::kDissemination: return "dissemination";
    case Algo::kBinomialTree: return "binomial_tree";
    case Algo::kRing: return "ring";
    case Algo::kRecursiveDoubling: return "recursive_doubling";
  }
  return "?";
}

Algo choose(CollOp op, size_t bytes, size_t count, int nranks) {
  if (nranks <= 1) return Algo::kLocal;
  switch (op) {
    case CollOp::kBarrier: return Algo::kDissemination;
    case CollOp::kBroadcast: return Algo::kBinomialTree;
    case CollOp::kAllgather: return Algo::kRing;
    case CollOp::kAllreduce:
      if (bytes < kAllreduceRingMinBytes || count < static_cast<size_t>(nranks)) return Algo::kRecursiveDoubling;
      return Algo::kRing;
  }
  return Algo::kLocal;
}

}  // namespace xc::algo
