// Cross-process sleeping and waking on a 32-bit word in shared memory (a
// futex). A waiting rank spins briefly, then sleeps here; whoever gives it
// work rings the bell only when someone is asleep, so the fast path costs one
// load.
#pragma once

#include <atomic>
#include <cstdint>

namespace xc::shm {

struct alignas(64) Doorbell {
  std::atomic<uint32_t> bell{0};
  char pad0[60];
  std::atomic<uint32_t> sleepers{0};
  char pad1[60];

  // Wake every sleeper, if any (after publishing the work).
  void ring();
  // Announce intent to sleep; returns the bell value to pass to sleep().
  uint32_t prepare_sleep();

  // The same pair with the fence moved to the sleeper (asymmetric fences):
  // ring_light() orders nothing in hardware, so publishing costs one load;
  // prepare_sleep_heavy() issues a process-wide barrier (membarrier) on every
  // CPU running a registered process. Every publisher and sleeper on this bell
  // must use this pair, and every publisher must have called
  // register_heavy_barrier() first.
  void ring_light();
  uint32_t prepare_sleep_heavy();
  // Register this process for the sleepers' heavy barrier (once per process;
  // cheap afterwards). False when the kernel cannot: use ring/prepare_sleep.
  static bool register_heavy_barrier();
  // Sleep while the bell still reads seen, at most max_ms; then leave.
  // False when all of max_ms passed without a ring.
  bool sleep(uint32_t seen, int max_ms);
};

}  // namespace xc::shm
