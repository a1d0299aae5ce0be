// The collective algorithms, one entry each: its name (XC_ALGO, xc-info,
// XC_DEBUG's log), the ops and memory kinds it serves, what its members must
// share, and how to run it. A new algorithm is one entry here (and, to be
// chosen by default, a rule in selector.cc); XC_ALGO, xc-info and
// docs/collectives.md read this table (tests/tools checks the doc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "coll/backend.h"
#include "coll/context.h"
#include "coll/desc.h"

namespace xc::algo {

enum class Algo : uint8_t {
  kLocal,  // one rank: nothing to exchange
  kDissemination,
  kBinomial,
  kScatterAllgather,
  kReduceScatterGather,
  kRecursiveDoubling,
  kRing,
  kBruck,
  kLinear,
  kPairwise,
  kShmOneShot,
  kShmSingleCopy,
  kShmTwoShot,
  kShmStaged,
  kHierLeader,
  kHierMultiLeader,
  // Device memory, one host (src/device): the intra-node kernels and the
  // generic host-coordinated path. The device layer runs them; the table
  // names them for XC_ALGO and xc-info.
  kDevOneShot,
  kDevTwoShot,
  kDevHcm,
  kDevGeneric,
  kCount,
};
constexpr int kAlgoCount = static_cast<int>(Algo::kCount);

constexpr uint32_t op_bit(CollKind kind) { return 1u << static_cast<int>(kind); }
constexpr uint32_t mem_bit(MemKind kind) { return 1u << static_cast<int>(kind); }
constexpr uint32_t kAllOps = (1u << kCollKindCount) - 1;

// The memory and placement an algorithm needs.
struct AlgoEntry {
  Algo id;
  const char *name;
  uint32_t ops;     // op_bit of every CollKind it runs
  uint32_t memory;  // mem_bit of every memory kind it moves
  // The backend its members must share (coll/backend.h); kCount: none, it
  // runs over the point-to-point engine, on any hosts.
  coll::BackendId backend;
  // Ops for which that backend must also read peers' memory in place
  // (single copy): all of them for single copy itself; one-shot's v-ops,
  // whose parts too large to stage are read in place.
  uint32_t single_copy_ops;
  // Runs d (of an op in `ops`, with something to move) on c.
  Status (*run)(coll::CollContext &c, const CollDesc &d);
  const char *summary;  // one line, for xc-info and the docs
};

// Every algorithm, in Algo order.
const AlgoEntry *algo_table();
inline const AlgoEntry &algo_entry(Algo a) { return algo_table()[static_cast<int>(a)]; }
inline const char *algo_name(Algo a) { return algo_entry(a).name; }
// The algorithm called name (never "local"), or nullptr.
const AlgoEntry *find_algo(const std::string &name);
// Whether kind has algo (kLocal: every op).
inline bool algo_applies(CollKind kind, Algo a) { return (algo_entry(a).ops & op_bit(kind)) != 0; }
// "recursive_doubling, ring, shm_oneshot, ..." — the names kind accepts in XC_ALGO.
std::string algo_choices(CollKind kind);
// Every name XC_ALGO accepts, comma-separated.
std::string algo_names();

}  // namespace xc::algo
