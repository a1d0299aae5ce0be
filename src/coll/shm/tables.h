// The per-destination tables of the v-ops whose buffers peers read or write
// in place (scatterv's root, alltoallv, gatherv's root): before arriving, a
// rank writes (displacement, count) of each destination's block into its
// small slot of the op, so a peer finds its own entry with a load instead of
// two CMA reads of the arrays. Readers check the count against the one they
// expect, and these are the messages of a disagreement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "base/status.h"
#include "coll/context.h"
#include "coll/shm/layout.h"
#include "coll/shm/state.h"

namespace xc::coll {

// One small slot holds the table of up to this many ranks; beyond, nothing
// is written and readers read the arrays themselves. A table lives in the
// small slot of its op: an op entered at kShmArrivalDepth may write that
// slot too.
constexpr int kShmTableMaxRanks = static_cast<int>(kShmSmallSlotBytes / (2 * sizeof(uint64_t)));
static_assert(kShmArrivalDepth <= kShmSmallSlotDepth, "tables share the small slots' ring");

// Whether this op's tables are written (agreed at set-up: readers must know).
inline bool shm_shares_tables(const ShmState &st) { return st.tables && st.nranks <= kShmTableMaxRanks; }

// Before arriving at op s with a buffer peers use in place, one block per
// destination: the table of displs and counts into our small slot of op s.
void shm_publish_table(ShmState &st, uint64_t s, const size_t *displs, const size_t *counts);
// The entry for this rank (displacement, count; elements) in rank r's table
// of op s, or, where there is none, of its arrays at the addresses displs
// and counts in its memory.
Status shm_peer_entry(CollContext &c, ShmState &st, int r, uint64_t s, uint64_t displs, uint64_t counts,
                      size_t *displ, size_t *count);
// scatterv, alltoallv read in place: where peer r keeps its block for this
// rank (*displ, elements), once its count matches the want bytes this rank
// expects; else XC_ERR_INVALID_USAGE naming op and peer.
Status shm_peer_block(CollContext &c, ShmState &st, int r, uint64_t s, uint64_t displs, uint64_t counts, size_t esize,
                      size_t want, const char *op, size_t *displ);

// The message of a v-op whose sender and receiver disagree on a block.
Status shm_block_mismatch(CollContext &c, const ShmState &st, const char *op, int r, size_t want, size_t got);
// ... the same, found by the sender (sends bytes to rank r, which expects want).
Status shm_send_mismatch(CollContext &c, const ShmState &st, const char *op, int r, size_t sends, size_t want);

// After an in-place alltoall(v) pair's length check (shm_peer_block, or a
// staged block's length): whether the pair agreed. A disagreement skips
// the pair (both sides check the same two counts, so both skip) and the
// first one is kept in *disagreed, reported once the other pairs have
// traded; checked is then OK. Any other error stays in checked.
inline bool shm_pair_agreed(Status &checked, Status *disagreed) {
  if (checked.code() != XC_ERR_INVALID_USAGE) return true;
  if (disagreed->ok()) *disagreed = std::move(checked);
  checked = Status::Ok();
  return false;
}

}  // namespace xc::coll
