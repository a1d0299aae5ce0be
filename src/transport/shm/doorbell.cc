#include "transport/shm/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

uint32_t Doorbell::prepare_sleep() {
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  return bell.load(std::memory_order_seq_cst);
}

void Doorbell::sleep(uint32_t seen, int max_ms) {
  if (max_ms > 0) {
    struct timespec ts;
    ts.tv_sec = max_ms / 1000;
    ts.tv_nsec = static_cast<long>(max_ms % 1000) * 1000000L;
    futex(&bell, FUTEX_WAIT, seen, &ts);
  }
  sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace xc::shm
