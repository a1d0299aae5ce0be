// Single copy's in-place alltoall(v) as pairwise swaps
// (single_copy.cc). Block p of rank r and block r of rank p trade places in
// the rounds of a round-robin pairing, chunk by chunk through two bounce
// buffers of its own that stay in cache: rank r reads p's
// chunk k (for r), raises its counter, and overwrites its own chunk k (for
// p) once p's counter says p has read it. No copy of the whole buffer and no
// final barrier: when a pair's swap ends, the partner has read everything of
// ours it needs. The counter is (round + 1) << 32 | chunks read, so it only
// grows through the op; it is zeroed before the arrival that publishes it.
// A pair's block lengths must agree (MPI's rule for in-place alltoallv):
// callers check the partner's count before the swap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "coll/context.h"
#include "coll/shm/state.h"

namespace xc::coll {

// The swap's chunk: every chunk costs a read call and a hand-shake, so
// larger ones trade faster while both bounce buffers still fit in cache (2
// ranks 64 MiB 8738 -> 7406 us against 128 KiB chunks; 1 MiB no better:
// docs/shm-collectives.md).
constexpr size_t kShmSwapChunkBytes = 512 << 10;

// Single copy's in-place alltoall copies what it sends into scratch and lets
// the peers read that copy (two hand-shakes per op) when the whole buffer is
// in [min, max); beyond, the swap's fewer bytes in flight win; below, its
// smaller scratch (2 and 4 ranks, docs/design.md).
constexpr size_t kShmCopyInPlaceMinBytes = 2 << 20;
constexpr size_t kShmCopyInPlaceMaxBytes = 16 << 20;

// Rounds of the pairing, and rank r's partner in round t (itself: r sits
// this round out). Every pair meets exactly once, both sides in one round.
int shm_swap_rounds(int n);
int shm_swap_partner(int n, int r, int t);

// One pair's trade, run by both sides in round `round`.
struct ShmSwap {
  int partner;
  int round;
  uint64_t op;                    // the shm op number (its arrival records)
  char *mine;                     // our block for the partner; receives its block for us
  uint64_t theirs;                // the partner's block for us, in its address space
  size_t len;                     // bytes, the same on both sides
  size_t extent;                  // bytes of the whole buffer (streaming stores when large)
  uint64_t *my_counter;           // this rank's progress counter for the op
  const uint64_t *their_counter;  // the partner's, read only after it arrived
};
// A side that fails marks the op given up (ShmState::give_up), so its
// partners, in this pair or a later one, fail at once instead of at the deadline.
Status shm_swap_block(CollContext &c, ShmState &st, const ShmSwap &w);

}  // namespace xc::coll
