// Which algorithm a collective uses, as a pure function of what every rank
// knows alike (op, size, rank count, locality), so every rank makes the same
// choice; XC_ALGO can force one per op. The dispatcher (collective.cc) calls
// it, and xc-info prints it.
#pragma once

#include <cstddef>
#include <string>

#include "coll/desc.h"
#include "base/status.h"

namespace xc::algo {

enum class Algo {
  kLocal,                // one rank: nothing to exchange
  kDissemination,        // barrier
  kBinomial,             // broadcast, reduce, gather, scatter
  kScatterAllgather,     // broadcast of large messages
  kReduceScatterGather,  // reduce of large vectors
  kRecursiveDoubling,    // allreduce, scan, exscan
  kRing,                 // allreduce, allgather(v), reduce_scatter(v)
  kBruck,                // allgather, alltoall (small blocks)
  kLinear,               // gather(v), scatter(v)
  kPairwise,             // reduce_scatter(v), alltoall(v)
  kShmOneShot,           // shared memory, one host (algo/shm_coll.h)
  kShmSingleCopy,
  kShmTwoShot,
  kShmStaged,
};
constexpr int kAlgoCount = 14;

const char *algo_name(Algo algo);
bool is_shm_algo(Algo algo);
// Whether kind has algo (kLocal: every op).
bool algo_applies(CollKind kind, Algo algo);
// "recursive_doubling, ring, shm_oneshot, ..." — the names kind accepts.
std::string algo_choices(CollKind kind);

struct Locality {
  bool all_local = false;    // every member on this host, shared-memory staging set up
  bool single_copy = false;  // ... and peers' buffers can be read directly
};

// The default policy. in_place weighs only for the ops where every rank
// shares it (placement_agrees). reason (optional) gets a short why ("< 64 KiB").
Algo choose(CollKind kind, size_t bytes, int nranks, Locality loc, bool in_place, const char **reason = nullptr);

// Whether the pipeline choose() picked (two-shot, staged) should give way to
// single copy when every rank's buffers of the op lie on 2 MiB pages
// (xc_mem_alloc): the pipelines win mostly because the kernel's copy pins
// 4 KiB pages one at a time. No rank knows the others' memory, so the
// pipeline asks at arrival (shm_pipeline_start) and all go alike.
bool single_copy_on_huge_pages(Algo chosen, CollKind kind, size_t bytes, int nranks, Locality loc);

// Whether these ranks can run algo for kind (a forced choice they cannot is
// replaced by choose()'s). gatherv/scatterv/alltoallv one-shot needs single
// copy for what a rank cannot stage.
bool algo_usable(CollKind kind, Algo algo, Locality loc);

// XC_ALGO, parsed: "ring" (every op that has a ring) and/or "op=algo" items,
// comma-separated; an op's own item wins over a bare name. *forced is false
// when nothing applies to kind. An unknown name anywhere, or an algorithm the
// named op lacks, is XC_ERR_INVALID_ARGUMENT (at that op, or at every op).
Status forced_algo(const std::string &spec, CollKind kind, bool *forced, Algo *algo);

// Policy thresholds (bytes as selection_bytes counts them).
constexpr size_t kAllreduceRingMinBytes = 64 << 10;        // below: recursive doubling
constexpr size_t kBroadcastScatterMinBytes = 512 << 10;    // at or above: scatter + allgather
constexpr size_t kReduceScatterGatherMinBytes = 512 << 10;  // at or above: reduce-scatter + gather
constexpr size_t kAllgatherRingMinBytes = 64 << 10;        // all n blocks; below: Bruck
constexpr size_t kGatherLinearMinBytes = 64 << 10;         // all n blocks; below: binomial
constexpr size_t kReduceScatterRingMinBytes = 64 << 10;    // the whole input; below: pairwise
constexpr size_t kAlltoallBruckMaxBytes = 256;              // per peer; at or below: Bruck
// Large ops beyond cache, where streaming the outputs from a staging pipeline
// beats single copy's kernel copies (measured on 2 cores, docs/design.md):
// out-of-place allreduce (the vector) goes two-shot, allgather(v) (all n
// blocks) staged (16 MiB out of place, 2 ranks: single copy 1487-1574 us
// against staged 1649-1726, Open MPI 1485-1499; 32 MiB 4015-4349 against
// 3457-3699); with more ranks than cores allgather(v) goes staged from the
// smaller size. In-place alltoall goes staged wherever one-shot stops (its
// in-place single copy swaps blocks through bounce buffers and the
// kernel's copies).
constexpr size_t kShmTwoShotMinBytes = 16 << 20;
constexpr size_t kShmStagedMinBytes = 32 << 20;
constexpr size_t kShmStagedOversubscribedMinBytes = 1 << 20;
// Broadcast beyond one-shot, from this many ranks with a core each: single
// copy's receivers all pin the root's pages at once, which stops scaling,
// while staged readers share the staged lines in cache (16-core machine,
// µs, 16 KiB / 1 MiB / 64 MiB, staged against single copy: 4 ranks 4.9 /
// 154 / 10675 against 8.2 / 194 / 16464, 8 ranks 5.9 / 167 / 14448 against
// 42 / 673 / 20433, 16 ranks 5.8 / 196 / 16419 against 190 / 1458 / 32626;
// 2 ranks 3.9 / 119 / 8640 against 2.2 / 46 / 7451). docs/design.md.
constexpr int kShmStagedBroadcastMinRanks = 4;
// ... and on 2 MiB pages everywhere (2 ranks, µs, docs/design.md): out-of-place
// allreduce two-shot from here (16 MiB 2075-2160 single copy against
// 2720-2870, 32 MiB even, 64 MiB 12.9 against 12.1 ms); allgather(v) single
// copy at any size with cores to spare (64 MiB in place 5.3 against 6.1-6.4
// ms), oversubscribed staged from here (4 ranks, all blocks: 4 MiB 580-590 /
// 470-490 against 660 / 550-570, 8 MiB in place 1200-1275 against 1125-1150).
constexpr size_t kShmTwoShotHugeMinBytes = 32 << 20;
constexpr size_t kShmStagedOversubscribedHugeMinBytes = 8 << 20;

}  // namespace xc::algo
