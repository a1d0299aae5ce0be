#include "transport/shm/doorbell.h"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace xc::shm {

namespace {
long futex(std::atomic<uint32_t> *addr, int op, uint32_t val, const struct timespec *ts) {
  // Not FUTEX_PRIVATE: the word is shared between processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t *>(addr), op, val, ts, nullptr, 0);
}
}  // namespace

void Doorbell::ring() {
  // Pairs with prepare_sleep: either the sleeper sees our work on its re-check
  // or we see it counted here.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_relaxed) == 0) return;
  bell.fetch_add(1, std::memory_order_seq_cst);
  futex(&bell, FUTEX_WAKE, INT_MAX, nullptr);
}

void Doorbell::ring_light() {
  // Keep the compiler from hoisting the load above the caller's publishing
  // store; the CPU may still do so, and prepare_sleep_heavy() covers that.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_relaxed) == 0) return;
  bell.fetch_add(1, std::memory_order_seq_cst);
  futex(&bell, FUTEX_WAKE, INT_MAX, nullptr);
}

uint32_t Doorbell::prepare_sleep_heavy() {
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  // Every running publisher executes a full barrier somewhere in its program
  // while this call runs (one not running passes one when switched out). A
  // publish store before that point is visible to our re-check after we
  // return; a publisher whose store comes after it loads sleepers after it
  // too, so it sees our count and rings. No wake-up is lost either way.
  syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
  return bell.load(std::memory_order_seq_cst);
}

bool Doorbell::register_heavy_barrier() {
  static const bool ok = [] {
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) || !(cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED))
      return false;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
  }();
  return ok;
}

uint32_t Doorbell::prepare_sleep() {
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  return bell.load(std::memory_order_seq_cst);
}

bool Doorbell::sleep(uint32_t seen, int max_ms) {
  bool rung = true;
  if (max_ms > 0) {
    struct timespec ts;
    ts.tv_sec = max_ms / 1000;
    ts.tv_nsec = static_cast<long>(max_ms % 1000) * 1000000L;
    rung = futex(&bell, FUTEX_WAIT, seen, &ts) == 0 || errno != ETIMEDOUT;
  }
  sleepers.fetch_sub(1, std::memory_order_seq_cst);
  return rung;
}

}  // namespace xc::shm
