#include "coll/shm/cpu_balance.h"

#include <sched.h>

#include "base/log.h"

namespace xc::coll {

// Each rank publishes its cpu; only the highest of those on an overloaded
// cpu moves, and only where that leaves the two cpus closer. Pinned to it
// for an instant, it goes there; its own mask comes back at once, so the
// kernel may move it again (a mask of one cpu, as xcrun --bind-to gives, is
// never touched).
void ShmCpuBalance::look(uint64_t s, ShmCtrl *ctrl, int nranks, int rank) {
  next_ = s + kShmBalanceEveryOps;
  int mine = sched_getcpu();
  cpu_set_t allowed;
  if (mine < 0 || mine >= CPU_SETSIZE || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  ctrl[rank].cpu.store(mine, std::memory_order_relaxed);
  int usable = CPU_COUNT(&allowed);
  if (usable < 2 || !CPU_ISSET(mine, &allowed)) return;
  ranks_on_cpu_.assign(CPU_SETSIZE, 0);
  for (int q = 0; q < nranks; ++q) {
    int at = ctrl[q].cpu.load(std::memory_order_relaxed);
    if (at < 0 || at >= CPU_SETSIZE) continue;
    if (at == mine && q > rank) return;  // a higher rank here moves, not us
    ++ranks_on_cpu_[static_cast<size_t>(at)];
  }
  auto ranks_on = [&](int cpu) { return ranks_on_cpu_[static_cast<size_t>(cpu)]; };
  int here = ranks_on(mine), share = (nranks + usable - 1) / usable;
  if (here <= share) return;
  int target = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed) && (target < 0 || ranks_on(cpu) < ranks_on(target))) target = cpu;
  if (ranks_on(target) + 1 >= here) return;  // no closer
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(target, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return;
  if (sched_setaffinity(0, sizeof allowed, &allowed) != 0)
    XC_WARN("shared-memory collectives: cannot restore this thread's cpu mask after moving it to cpu %d", target);
  ctrl[rank].cpu.store(target, std::memory_order_relaxed);
  XC_INFO("shared-memory collectives: %d of %d ranks on cpu %d (share %d): rank %d moves to cpu %d", here, nranks,
          mine, share, rank, target);
}

}  // namespace xc::coll
