// How a rank waits for something another process will do, when it cannot
// know how long that takes: spin (the peer runs on another core and answers
// within microseconds), then yield the core (the peer may need it: ranks
// outnumber cores), then sleep until woken (a peer that computes for a long
// while costs no CPU). The point-to-point engine and the shared-memory
// collectives both wait this way, each with its own counts and its own way
// to sleep.
#pragma once

#include <sched.h>

namespace xc {

// One poll's pause inside a spin loop: lets the sibling hyperthread run and
// saves power, without giving up the core.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Gives the core to another runnable thread, if any.
inline void cpu_yield() { sched_yield(); }

// The stage a wait is in, counted per poll:
//   Backoff b(spins, yields);
//   for (;;) { if (done()) break; switch (b.next()) { spin / yield / sleep } }
// after which a waiter that made progress calls reset(), and one that slept
// and found nothing calls slept() (a little spinning and yielding again
// before the next sleep: a wake-up is often followed by more traffic).
class Backoff {
 public:
  enum class Step { kSpin, kYield, kSleep };

  Backoff(int spins, int yields) : spins_(spins), yields_(yields) {}

  Step next() {
    if (spun_ < spins_) {
      ++spun_;
      return Step::kSpin;
    }
    if (yielded_ < yields_) {
      ++yielded_;
      return Step::kYield;
    }
    return Step::kSleep;
  }
  // Polls spent yielding so far (0 while spinning).
  int yields() const { return yielded_; }
  void reset() { spun_ = yielded_ = 0; }
  void slept() {
    spun_ = spins_ / 2;
    yielded_ = yields_ / 2;
  }

 private:
  int spins_, yields_;
  int spun_ = 0, yielded_ = 0;
};

}  // namespace xc
