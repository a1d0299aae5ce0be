// How the shared-memory collectives wait for a peer: every wait polls a
// predicate over the segment, in the stages of base/backoff.h: spin
// (ShmState::spin polls; none when ranks outnumber cores, where the rank we
// wait for may need our core), then sched_yield, then sleep on the
// segment's doorbell, which publishers ring only when someone sleeps
// (ShmState::notify). Every wait honours the op's deadline and notices dead
// peers and xc_comm_abort (shm_slow_wait_check) once it stops spinning.
#pragma once

#include <chrono>
#include <cstdint>

#include "base/backoff.h"
#include "base/deadline.h"
#include "base/status.h"
#include "coll/context.h"
#include "coll/shm/state.h"
#include "topo/contention.h"

namespace xc::coll {

// Polls with sched_yield before a waiter sleeps on the futex (a few ms): short
// waits never pay a futex wake, long ones (a peer computing) stop burning CPU.
constexpr unsigned kShmYieldsBeforeSleep = 4096;
// A waiter that yields looks for failed peers and xc_comm_abort this often
// (its deadline at every yield).
constexpr std::chrono::milliseconds kShmSlowCheckEvery{1};

// Why a wait must stop: the deadline passed, a peer died, or the op was
// interrupted (xc_comm_abort, a mismatch reported by a member). what names
// the wait for the message.
Status shm_slow_wait_check(CollContext &c, const ShmState &st, const char *what);

// The rank in the op (as its communicator numbers it) of fabric rank f, or
// -1: in a phase of a hierarchical op a segment's ranks are one host's.
int shm_op_rank(CollContext &c, int f);

// XC_ERR_PEER_FAILED naming the op's member dead (a fabric rank, from the
// engine's first_failed; -1: none) by its rank in the op ("rank 2 failed
// during a shared-memory collective (op #5, <doing> <what>)"), or OK.
Status shm_member_failed(CollContext &c, int dead, const char *doing, const char *what);

// The spins before yielding while waiting for rank r to arrive at op s: st.spin,
// or more when ranks outnumber cores and only r's core can help (wait.cc).
int shm_arrival_spins(ShmState &st, int r, uint64_t s);

// Wait until pred() holds, spinning up to spins polls first.
template <class Pred>
Status shm_wait(CollContext &c, ShmState &st, const char *what, Pred pred, int spins) {
  if (pred()) return Status::Ok();
  Backoff backoff(spins, static_cast<int>(kShmYieldsBeforeSleep) - 1);
  Backoff::Step step;
  // A loop of its own, with no call in it: the spin stays `pause; pred()`.
  while ((step = backoff.next()) == Backoff::Step::kSpin) {
    cpu_relax();
    if (pred()) return Status::Ok();
  }
  Deadline::Clock::time_point next_check{};
  // A rank that has to wait for its core (a busy neighbour on it) sleeps
  // at once: a yield would hand the core to the neighbour for its whole time
  // slice (4 ms per op here, whatever its size), where a sleeper is woken
  // by the publisher's ring and, having slept, runs at once. Not when our
  // own ranks outnumber the cores: yielding to each other is what they need.
  bool sleep_now = !st.oversubscribed && topo::core_contended();
  for (;; step = backoff.next()) {
    if (step == Backoff::Step::kYield && !sleep_now) {
      cpu_yield();
    } else {
      uint32_t seen = st.prepare_sleep();
      if (pred()) {
        st.bell->sleep(seen, 0);
        return Status::Ok();
      }
      st.bell->sleep(seen, c.deadline().remaining_ms(20));
    }
    if (pred()) return Status::Ok();
    // By the clock, not by count: on a busy core one yield may hand out a
    // whole time slice (a 300 ms deadline ran 7 s over: docs/shm-collectives.md).
    auto now = Deadline::Clock::now();
    // Timed from the first yield, not before the spins: one clock read less.
    if (backoff.yields() == 1) next_check = now + kShmSlowCheckEvery;
    if (now >= next_check || now >= c.deadline().at() || step == Backoff::Step::kSleep) {
      XC_TRY(shm_slow_wait_check(c, st, what));
      next_check = now + kShmSlowCheckEvery;
    }
  }
}

// The same with st.spin polls.
template <class Pred>
Status shm_wait(CollContext &c, ShmState &st, const char *what, Pred pred) {
  return shm_wait(c, st, what, pred, st.spin);
}

}  // namespace xc::coll
