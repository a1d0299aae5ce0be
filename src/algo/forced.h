// XC_ALGO: algorithms forced by the user, per op. "ring" forces the ring on
// every op that has one; "allreduce=ring,alltoall=bruck" forces per op; an
// op's own item wins over a bare name. Names are the table's (algo/table.h).
#pragma once

#include <string>
#include <vector>

#include "algo/table.h"

namespace xc::algo {

// spec parsed for kind: *forced is false when nothing applies to kind. An
// unknown name anywhere, or an algorithm the named op lacks, is
// XC_ERR_INVALID_ARGUMENT (at that op, or at every op).
// "nccl" (bare, or op=nccl) is no algorithm of the table: it sends that op's
// device-memory calls to NCCL (docs/nccl.md) and sets *nccl; the op's host
// memory keeps the selector's choice.
constexpr const char *kNcclAlgoName = "nccl";
Status forced_algo(const std::string &spec, CollKind kind, bool *forced, Algo *algo, bool *nccl = nullptr);

// XC_ALGO read and parsed once per process, for kind: whether it forces an
// algorithm, or the error every call of that kind reports alike.
struct ForcedChoice {
  Status status;
  bool forced = false;
  Algo algo = Algo::kLocal;
  bool nccl = false;  // device memory of this op goes to NCCL
};
// One per CollKind, from XC_ALGO (forced.cc).
std::vector<ForcedChoice> forced_choices_from_env();
// Inline: every collective asks.
inline const ForcedChoice &forced_choice(CollKind kind) {
  static const std::vector<ForcedChoice> table = forced_choices_from_env();
  return table[static_cast<size_t>(kind)];
}

}  // namespace xc::algo
