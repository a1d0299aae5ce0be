// Sleeping until any of the engine's transports has news, so an idle rank
// costs no CPU however many transports it has. A transport sleeps one of
// two ways (transport/transport.h): by itself on a primitive that cannot be
// an fd (shm's futex doorbell, which peers ring), or on an event fd after
// arming it (UCX). The sleeper picks, once, from what the engine has:
//
//   one self-sleeping transport    sleep on it, as if it were alone (no cost added)
//   fd transports only             poll() their fds and an eventfd for wake()
//   one self-sleeper and fds       sleep on the self-sleeper; a relay thread,
//                                  blocked in poll() on the fds while the engine
//                                  sleeps, rings the self-sleeper's wake_self()
//                                  when one turns readable
//   several self-sleepers          never sleeps: the engine keeps polling
//                                  (transport.h allows at most one)
//
// Why a relay rather than the reverse (a thread sleeping on the futex and
// writing an eventfd): the self-sleeper is the hot one (every peer on the
// host, wake-ups of microseconds); its own sleep stays on the engine's
// thread unchanged, and the relay only adds a hop to the slower transports'
// wake-ups. The relay is armed by the engine each time it goes to sleep
// and disarms itself when it fires, so it never spins on an fd the engine
// has not drained yet, and it blocks in poll() whenever it is not armed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "transport/transport.h"

namespace xc {

// How the sleeps of one sleeper have ended so far.
struct SleepCounts {
  int asleep = 0;          // threads inside sleep() now
  uint64_t woken = 0;      // ended by news or wake() before their time ran out
  uint64_t timed_out = 0;  // slept all of their time
};

class Sleeper {
 public:
  // transports: distinct, at least one.
  static Status create(const std::vector<Transport *> &transports, std::unique_ptr<Sleeper> *out);
  ~Sleeper();  // stops the relay thread and joins it (it never waits on the engine)

  // Two steps, so no wake-up is lost: prepare() announces the sleep, with
  // the engine's lock held; the engine then makes one more pass over its
  // work, releases its lock and calls sleep() with at most how long to
  // sleep (0 when that pass found work). sleep() returns at once when news
  // came after prepare(). An fd transport whose arm finds news makes
  // prepare() wake the engine's other sleepers: that arm emptied the fd one
  // of them may be about to sleep on.
  struct Ticket {
    uint32_t token = 0;  // the self-sleeper's
    bool busy = false;   // an fd transport already had news when armed
  };
  Ticket prepare();
  void sleep(const Ticket &ticket, int max_ms);
  // Wake every thread asleep here; any thread may call it.
  void wake();

  SleepCounts counts() const;

 private:
  class Relay;
  enum class Mode { kSelf, kFds, kSelfAndRelay, kPollOnly };

  Sleeper() = default;
  bool poll_fds(int max_ms);

  Mode mode_ = Mode::kPollOnly;
  Transport *self_ = nullptr;               // the transport that sleeps by itself, if any
  std::vector<Transport *> fd_transports_;  // the ones with an event fd, armed before each sleep
  std::unique_ptr<Relay> relay_;            // kSelfAndRelay
  int wake_fd_ = -1;                        // kFds: an eventfd that wake() writes
  // kFds: threads between prepare() and the end of sleep(). wake_fd_ is
  // emptied only when there are none, so no sleeper loses its wake-up.
  std::mutex fd_sleepers_mu_;
  int fd_sleepers_ = 0;
  std::atomic<int> asleep_{0};
  std::atomic<uint64_t> woken_{0};
  std::atomic<uint64_t> timed_out_{0};
};

}  // namespace xc
