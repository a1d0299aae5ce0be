// The pipeline's steps, shared by staged.cc (allgather(v), alltoall,
// broadcast), one-shot-v (in-place alltoallv beyond one-shot) and two-shot
// (with a reduce phase). In step k every rank copies its pieces of step k
// into its staging buffer (the global step's parity), says so, and copies
// what peers staged for it. A buffer is refilled only when every peer has
// finished the step two back, which last read it. Every rank of the op runs
// the same number of steps, so the step counters (ShmState::steps) stay
// equal on all of them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "coll/context.h"
#include "coll/desc.h"
#include "coll/shm/state.h"

namespace xc::coll {

// How a pipeline (two-shot, staged) begins: enter op *s, arrive and wait for
// every rank (same op everywhere, so the same step count). With
// may_single_copy (selector.h: single_copy_on_huge_pages) each rank also
// publishes its buffers as single copy does, and whether they lie on 2 MiB
// pages; if every rank's do, *single_copy is set and the op goes on with
// shm_single_copy_arrived from this arrival (single_copy.cc).
Status shm_pipeline_start(CollContext &c, const CollDesc &d, ShmState &st, bool may_single_copy, uint64_t *s,
                          bool *single_copy);
Status shm_single_copy_arrived(CollContext &c, const CollDesc &d, ShmState &st, uint64_t s);

// Two-shot's phase between staging and taking (shm_reduce_phase): once
// every rank staged step k, reduce(k, mine, staged) reduces our own piece
// (staged(j): rank j's staging buffer of the step) and step_red says so;
// with take, the copy-out waits for every rank's step_red, else this rank
// copies nothing out.
template <class Reduce>
struct ShmReducePhase {
  Reduce reduce;
  bool take;
};
template <class Reduce>
ShmReducePhase<Reduce> shm_reduce_phase(Reduce reduce, bool take) {
  return {reduce, take};
}
struct ShmNoReduce {};  // staged, one-shot-v: no phase, no step_red

// stage(k, mine) fills our staging buffer for step k; own(k, mine) moves our
// own part of step k (it needs no peer); take(k, j, theirs) copies what peer
// j staged for us in step k (after the reduce phase, if any).
template <class Stage, class Own, class Take, class Reduce = ShmNoReduce>
Status shm_run_steps(CollContext &c, ShmState &st, uint64_t steps, Stage stage, Own own, Take take,
                     Reduce reduce = {}) {
  int n = c.size(), r = c.rank();
  for (uint64_t k = 0; k < steps; ++k) {
    uint64_t g = st.steps + k;
    if (g >= 2) XC_TRY(st.wait_steps(c, &ShmCtrl::step_out, g - 1, "a peer to free a staging buffer"));
    char *mine = st.stage(r, g);
    stage(k, mine);
    st.publish_step(&ShmCtrl::step_in, g + 1);
    own(k, mine);
    XC_TRY(st.wait_steps(c, &ShmCtrl::step_in, g + 1, "a peer to stage its block"));
    bool takes = true;
    if constexpr (!std::is_same_v<Reduce, ShmNoReduce>) {
      reduce.reduce(k, mine, [&](int j) -> const char * { return st.stage(j, g); });
      st.publish_step(&ShmCtrl::step_red, g + 1);
      takes = reduce.take;
      if (takes) XC_TRY(st.wait_steps(c, &ShmCtrl::step_red, g + 1, "a peer's reduced piece"));
    }
    for (int i = 1; i < n && takes; ++i) {
      int j = (r + i) % n;  // start at different peers: spread the load
      take(k, j, st.stage(j, g));
    }
    st.publish_step(&ShmCtrl::step_out, g + 1);
  }
  st.steps += steps;
  return Status::Ok();
}

// A pipelined op (two-shot, staged): every rank arrives, then the steps run,
// or single copy goes on from that arrival (shm_pipeline_start).
template <class Stage, class Own, class Take, class Reduce = ShmNoReduce>
Status shm_run_pipeline(CollContext &c, const CollDesc &d, ShmState &st, bool may_single_copy, uint64_t steps,
                        Stage stage, Own own, Take take, Reduce reduce = {}) {
  uint64_t s;
  bool single_copy = false;
  XC_TRY(shm_pipeline_start(c, d, st, may_single_copy, &s, &single_copy));
  if (single_copy) return shm_single_copy_arrived(c, d, st, s);
  return shm_run_steps(c, st, steps, stage, own, take, reduce);
}

// alltoall(v): each step carries a piece of every block, so a staging
// buffer holds n - 1 pieces, the one for peer j at index j - (j > owner).
inline size_t shm_steps_piece(int n) {
  return kShmTwoShotSlotBytes / static_cast<size_t>(std::max(n - 1, 1)) & ~size_t{63};
}
inline size_t shm_steps_index(int j, int owner) { return static_cast<size_t>(j - (j > owner)); }
// Step k's part of a block of len (bytes or elements) cut in pieces of piece.
inline size_t shm_steps_chunk(size_t len, size_t piece, uint64_t k) {
  size_t at = static_cast<size_t>(k) * piece;
  return at >= len ? size_t{0} : std::min(piece, len - at);
}

}  // namespace xc::coll
