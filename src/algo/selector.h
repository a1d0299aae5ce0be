// Which algorithm of the table (algo/table.h) a collective uses, as a pure
// function of what every rank knows alike (op, size, rank count, placement,
// memory kind, host class), so every rank makes the same choice. The
// dispatcher (collective.cc) calls it, and xc-info prints it. The thresholds
// below were measured; docs/collectives.md has the figures, dated.
#pragma once

#include <cstddef>

#include "algo/table.h"
#include "coll/desc.h"
#include "topo/topology.h"

namespace xc::algo {

// What the choice depends on besides the op and its size.
struct Locality {
  bool all_local = false;    // every member on this host, shared-memory backend set up
  bool single_copy = false;  // ... and peers' buffers can be read directly
  // Members on several hosts with more than one on some host (the
  // hierarchical backend, algo/hier): how many hosts, and whether every
  // host holds as many members. Every rank knows every member's host.
  int hosts = 1;
  bool hierarchical = false;
  bool equal_hosts = true;
  MemKind memory = MemKind::kHost;                      // of the op's buffers
  topo::HostClass host_class = topo::HostClass::kNoGpu;  // this host's GPU interconnect (all ranks agree)
};

// The default policy. in_place weighs only for the ops where every rank
// shares it (placement_agrees). reason (optional) gets a short why ("< 64 KiB").
Algo choose(CollKind kind, size_t bytes, int nranks, const Locality &loc, bool in_place,
            const char **reason = nullptr);

// Whether the pipeline choose() picked (two-shot, staged) should give way to
// single copy when every rank's buffers of the op lie on 2 MiB pages
// (xc_mem_alloc): the pipelines win mostly because the kernel's copy pins
// 4 KiB pages one at a time. No rank knows the others' memory, so the
// pipeline asks at arrival (shm_pipeline_start) and all go alike.
bool single_copy_on_huge_pages(Algo chosen, CollKind kind, size_t bytes, int nranks, const Locality &loc);

// Whether these ranks can run algo for kind: it moves their memory kind, and
// they share the backend it needs, with single copy where it needs that (a
// forced choice they cannot run is replaced by choose()'s).
bool algo_usable(CollKind kind, Algo algo, const Locality &loc);

// Policy thresholds (bytes as selection_bytes counts them).
// Over point-to-point (several hosts, or a forced choice):
constexpr size_t kAllreduceRingMinBytes = 64 << 10;        // below: recursive doubling
constexpr size_t kBroadcastScatterMinBytes = 512 << 10;    // at or above: scatter + allgather
constexpr size_t kReduceScatterGatherMinBytes = 512 << 10;  // at or above: reduce-scatter + gather
constexpr size_t kAllgatherRingMinBytes = 64 << 10;        // all n blocks; below: Bruck
constexpr size_t kGatherLinearMinBytes = 64 << 10;         // all n blocks; below: binomial
constexpr size_t kReduceScatterRingMinBytes = 64 << 10;    // the whole input; below: pairwise
constexpr size_t kAlltoallBruckMaxBytes = 256;              // per peer; at or below: Bruck
// Several hosts with more than one rank on some (algo/hier), measured on
// 2 hosts x 2 ranks in network namespaces, one core per host
// (docs/benchmarks.md "Across hosts": TCP through one kernel, so
// multi-leader's gain from several NICs cannot show; re-measure on real
// hosts). The leader-based algorithms won at every size of allreduce and
// allgather (8 B: 17 µs where the flat ones took 30-45), of broadcast and
// reduce; unequal hosts keep allreduce flat below the first size.
// reduce_scatter(v): multi-leader where hosts hold as many ranks (no
// extra phase), else leader. alltoall: leader below the second size (a
// rank's whole send buffer), above it the flat pairwise exchange, which
// spreads the large blocks over every rank's link.
constexpr size_t kHierUnequalAllreduceMinBytes = 64 << 10;  // the vector
constexpr size_t kHierAlltoallLeaderMaxBytes = 1 << 20;     // all n blocks
// One host, beyond one-shot (coll/shm/reach.h), where streaming the outputs
// from a staging pipeline beats single copy's kernel copies: out-of-place
// allreduce goes two-shot, allgather(v) (all n blocks) staged, from fewer
// bytes when ranks outnumber cores; in-place alltoall always goes staged.
constexpr size_t kShmTwoShotMinBytes = 16 << 20;
constexpr size_t kShmStagedMinBytes = 32 << 20;
constexpr size_t kShmStagedOversubscribedMinBytes = 1 << 20;
// Broadcast goes staged from this many ranks with a core each: single
// copy's receivers all pin the root's pages at once, which stops scaling.
constexpr int kShmStagedBroadcastMinRanks = 4;
// On 2 MiB pages the kernel's copy gets cheaper, and single copy wins
// further: allreduce below this, allgather(v) at any size with cores to
// spare, oversubscribed below the second.
constexpr size_t kShmTwoShotHugeMinBytes = 32 << 20;
constexpr size_t kShmStagedOversubscribedHugeMinBytes = 8 << 20;

}  // namespace xc::algo
