// Pieces of the single-copy algorithm that need a progress counter inside
// one op: the chained scan/exscan (scan.cc) and the in-place alltoall
// swap under single copy (single_copy.cc, swap.h). The counter is
// the aux word of the rank's arrival record for op s: arrive() zeroes it
// (these ops publish no aux address), the rank raises it as it goes, and the
// line is reused only after every peer finished op s (ShmState::enter), so
// values of one op never mix with another's. Read it only after
// wait_arrived(r, s).
#pragma once

#include <cstdint>

#include "coll/context.h"
#include "coll/desc.h"
#include "coll/shm/state.h"
#include "coll/shm/wait.h"

namespace xc::coll {

inline uint64_t *shm_progress_word(ShmState &st, int r, uint64_t s) {
  return const_cast<uint64_t *>(&st.arrival(r, s).addr.aux);
}

// A counter word in the segment: publish a new value (release, rings the
// bell for sleepers) or wait until rank r's word for op s reaches at_least
// (*seen: its value); the wait fails at once if r gave up the op
// (ShmState::give_up).
inline void shm_publish_word(ShmState &st, uint64_t *word, uint64_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
  st.notify();
}
inline Status shm_wait_word(CollContext &c, ShmState &st, int r, uint64_t s, const uint64_t *word, uint64_t at_least,
                            const char *what, uint64_t *seen = nullptr) {
  uint64_t v = 0;
  bool quit = false;
  XC_TRY(shm_wait(c, st, what, [&] {
    return (v = __atomic_load_n(word, __ATOMIC_ACQUIRE)) >= at_least || (quit = st.gave_up(r, s));
  }));
  if (quit) return st.gave_up_error(c, r, s);
  if (seen) *seen = v;
  return Status::Ok();
}

inline void shm_publish_progress(ShmState &st, uint64_t s, uint64_t value) {
  shm_publish_word(st, shm_progress_word(st, st.rank, s), value);
}

// Waits until rank r's counter for op s reaches at_least (as shm_wait_word).
inline Status shm_wait_progress(CollContext &c, ShmState &st, int r, uint64_t s, uint64_t at_least, const char *what,
                                uint64_t *seen = nullptr) {
  return shm_wait_word(c, st, r, s, shm_progress_word(st, r, s), at_least, what, seen);
}

// The chained scan runs scan/exscan of every dtype and op but float16,
// bfloat16 (their prefix must stay float32 between ranks to round once) and
// XC_AVG (the output is the divided prefix, the chain needs the sum).
bool shm_scan_chain_applies(const CollDesc &d);
// Scan/exscan of op s, arrival included: rank r waits for rank r-1's
// inclusive prefix chunk by chunk, combines it with its own input and
// publishes its own, so each rank reads one remote chunk per chunk.
Status shm_scan_chain(CollContext &c, const CollDesc &d, ShmState &st, uint64_t s);

}  // namespace xc::coll
