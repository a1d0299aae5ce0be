#include "coll/shm/state.h"

#include <sched.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "coll/shm/backend.h"
#include "base/log.h"

namespace xc::coll {

void shm_yield() { sched_yield(); }

ShmRootSplit shm_root_split_policy(int n, long cores) {
  if (cores <= 0 || n <= cores) return ShmRootSplit::kOwnCores;
  long all = (n + cores - 1) / cores, peers = (n - 1 + cores - 1) / cores;  // busy ranks on the fullest core
  return all * (n - 1) <= n * peers ? ShmRootSplit::kAlways : ShmRootSplit::kShortOps;
}

bool shm_cpu_has_prefetchw() {
#if defined(__x86_64__)
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 8)) != 0;  // ECX bit 8: PRFCHW
  }();
  return has;
#else
  return false;
#endif
}

char *ShmState::slot(int r, uint64_t s) const {
  return oneshot + (static_cast<size_t>(r) * 2 + (s & 1)) * kShmOneShotMaxBytes;
}

char *ShmState::small_slot(int r, uint64_t s) const {
  return small + (static_cast<size_t>(r) * kShmSmallSlotDepth + s % kShmSmallSlotDepth) * kShmSmallSlotBytes;
}

char *ShmState::stage(int r, uint64_t k) const {
  return twoshot + (static_cast<size_t>(r) * 2 + (k & 1)) * kShmTwoShotSlotBytes;
}

const char *ShmState::v_staged(int r, uint64_t s) const {
  const ShmArrival &a = arrival(r, s);
  switch (a.v.where) {
    case kShmVInline: return a.v.data;
    case kShmVSmall: return small_slot(r, s);
    case kShmVLarge: return slot(r, s);
    default: return nullptr;
  }
}

Status ShmState::slow_wait_check(CollContext &c, const char *what) {
  if (c.deadline().expired())
    return Error(XC_ERR_TIMEOUT, "shared-memory collective timed out waiting for %s (op #%d)", what, c.seq());
  int dead = c.engine().first_failed(fabric_ranks);
  if (dead >= 0) {
    for (int r = 0; r < nranks; ++r)
      if (fabric_ranks[static_cast<size_t>(r)] == dead)
        return Error(XC_ERR_PEER_FAILED, "rank %d failed during a shared-memory collective (op #%d, waiting for %s)", r,
                     c.seq(), what);
  }
  // xc_comm_abort; or a member that met this op's segment set-up message
  // with another signature never joins: it reported the mismatch to everyone.
  return c.interrupted();
}

Status ShmState::enter_wait(CollContext &c, uint64_t depth, uint64_t s) {
  uint64_t need = s - depth + 1;
  if (peer_arrived.size() != static_cast<size_t>(nranks)) peer_arrived.assign(static_cast<size_t>(nranks), 0);
  for (int r = 0; r < nranks; ++r) {
    uint64_t &known = peer_arrived[static_cast<size_t>(r)];
    if (r == rank || known >= need) continue;
    // Line x holds arrivals at x, x + depth, ...: a value >= x there means r
    // arrived at x. Look half a ring further first: if r is there, the next
    // depth/2 ops need no look at all.
    uint64_t ahead = need + depth / 2;
    uint64_t f = ctrl[r].arrival[ahead % kShmArrivalDepth].flag.load(std::memory_order_acquire);
    if (f >= ahead) {
      known = f;
      continue;
    }
    // r is behind (we ran ahead of it, e.g. as a broadcast root): let it get
    // half a ring on before we go on, so we poll and it writes a line we
    // watch once per depth/2 ops, not at every op in lock step. Safe: ahead
    // <= s - 1 when depth >= 4, and r needs nothing of ours from op s or
    // later to get there. Depth 2 (one op ahead at most) waits for need.
    uint64_t until = depth >= 4 ? ahead : need;
    std::atomic<uint64_t> &a = ctrl[r].arrival[until % kShmArrivalDepth].flag;
    XC_TRY(wait(c, "a peer to finish an earlier op", [&] { return a.load(std::memory_order_acquire) >= until; }));
    known = until;
  }
  uint64_t least = UINT64_MAX;
  for (int r = 0; r < nranks; ++r)
    if (r != rank) least = std::min(least, peer_arrived[static_cast<size_t>(r)]);
  peers_known = least;
  return Status::Ok();
}

void ShmState::arrive(CollContext &c, uint64_t s, const void *src, const void *dst, const void *aux,
                      const void *counts, uint64_t parts) {
  ShmArrival &me = ctrl[rank].arrival[s % kShmArrivalDepth];
  me.addr.src = reinterpret_cast<uint64_t>(src);
  me.addr.dst = reinterpret_cast<uint64_t>(dst);
  me.addr.aux = reinterpret_cast<uint64_t>(aux);
  me.addr.counts = reinterpret_cast<uint64_t>(counts);
  me.addr.parts = parts;
  arrive_inline(c, s);
}

// Oversubscribed, a waiter yields at once: the rank it waits for may need
// its core. Not so when that rank last ran on another core and every rank
// last seen on ours has arrived at op s: they only wait too, so yielding to
// them costs a switch there and back while the other core catches up.
int ShmState::arrival_spins(int r, uint64_t s) {
  if (!oversubscribed) return spin;
  int mine = sched_getcpu();
  if (mine < 0) return spin;
  if (ctrl[rank].cpu.load(std::memory_order_relaxed) != mine) ctrl[rank].cpu.store(mine, std::memory_order_relaxed);
  int theirs = ctrl[r].cpu.load(std::memory_order_relaxed);
  if (theirs < 0 || theirs == mine) return spin;
  for (int q = 0; q < nranks; ++q)
    if (q != rank && ctrl[q].cpu.load(std::memory_order_relaxed) == mine &&
        ctrl[q].arrival[s % kShmArrivalDepth].flag.load(std::memory_order_acquire) < s)
      return spin;
  return std::max(spin, kShmMateSpins);
}

// 4 ranks on 2 cores, 8 B allreduce: 3 + 1 ranks per core took 2.4 us, 2 + 2
// 1.35, and the kernel had moved none after 20000 ops. Each rank publishes
// its cpu; only the highest of those on an overloaded cpu moves, and only
// where that leaves the two cpus closer. Pinned to it for an instant, it
// goes there; its own mask comes back at once, so the kernel may move it
// again (a mask of one cpu, as xcrun --bind-to gives, is never touched).
void ShmState::balance_cpus() {
  next_balance = op + kShmBalanceEveryOps;
  int mine = sched_getcpu();
  cpu_set_t allowed;
  if (mine < 0 || mine >= CPU_SETSIZE || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  ctrl[rank].cpu.store(mine, std::memory_order_relaxed);
  int usable = CPU_COUNT(&allowed);
  if (usable < 2 || !CPU_ISSET(mine, &allowed)) return;
  cpu_ranks.assign(CPU_SETSIZE, 0);
  for (int q = 0; q < nranks; ++q) {
    int at = ctrl[q].cpu.load(std::memory_order_relaxed);
    if (at < 0 || at >= CPU_SETSIZE) continue;
    if (at == mine && q > rank) return;  // a higher rank here moves, not us
    ++cpu_ranks[static_cast<size_t>(at)];
  }
  auto ranks_on = [&](int cpu) { return cpu_ranks[static_cast<size_t>(cpu)]; };
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

Status ShmState::wait_arrived_slow(CollContext &c, int r, uint64_t s) {
  const ShmArrival &their = ctrl[r].arrival[s % kShmArrivalDepth];
  XC_TRY(wait(c, "a peer to arrive", [&] { return their.flag.load(std::memory_order_acquire) >= s; },
              arrival_spins(r, s)));
  uint32_t theirs = their.sig;
  if (theirs == kSigGaveUp) return gave_up_error(c, r, s);
  if (theirs != c.signature())
    return Error(XC_ERR_INVALID_USAGE,
                 "collective mismatch: rank %d runs %s (op #%d) while rank %d runs %s (op #%d)", rank,
                 describe_signature(c.signature()).c_str(), c.seq(), r, describe_signature(theirs).c_str(),
                 their.seq);
  return Status::Ok();
}

void ShmState::give_up(uint64_t s, xc_result_t code) {
  ShmArrival &me = ctrl[rank].arrival[s % kShmArrivalDepth];
  __atomic_store_n(&me.seq, static_cast<int32_t>(code), __ATOMIC_RELAXED);
  __atomic_store_n(&me.sig, kSigGaveUp, __ATOMIC_RELEASE);
  me.flag.store(s, std::memory_order_release);  // also where it had not arrived yet
  notify();
}

Status ShmState::gave_up_error(CollContext &c, int r, uint64_t s) const {
  auto code = static_cast<xc_result_t>(__atomic_load_n(&arrival(r, s).seq, __ATOMIC_RELAXED));
  return Error(code, "rank %d gave up op #%d, which this rank needs its part of (rank %d's error says why)", r,
               c.seq(), r);
}

Status ShmState::wait_all_arrived(CollContext &c, uint64_t s) {
  for (int r = 0; r < nranks; ++r) XC_TRY(wait_arrived(c, r, s));
  return Status::Ok();
}

Status ShmState::wait_all_phase(CollContext &c, uint64_t s) {
  for (int r = 0; r < nranks; ++r) {
    if (r == rank) continue;
    std::atomic<uint64_t> &f = ctrl[r].phase;
    XC_TRY(wait(c, "a peer's partial result", [&] { return f.load(std::memory_order_acquire) >= s; }));
  }
  return Status::Ok();
}

Status ShmState::finish(CollContext &c, uint64_t s) {
  mark_done(s);
  for (int r = 0; r < nranks; ++r)
    if (r != rank) XC_TRY(wait_done(c, r, s));
  return Status::Ok();
}

Status ShmState::wait_steps(CollContext &c, std::atomic<uint64_t> ShmCtrl::*counter, uint64_t value,
                            const char *what) {
  for (int j = 0; j < nranks; ++j) {
    if (j == rank) continue;
    std::atomic<uint64_t> &f = ctrl[j].*counter;
    XC_TRY(wait(c, what, [&] { return f.load(std::memory_order_acquire) >= value; }));
  }
  return Status::Ok();
}

Status ShmState::peer_entry(CollContext &c, int r, uint64_t s, bool in_slot, uint64_t displs, uint64_t counts,
                            size_t *displ, size_t *count) {
  if (in_slot && shares_tables()) {
    const uint64_t *entry = reinterpret_cast<const uint64_t *>(small_slot(r, s)) + 2 * static_cast<size_t>(rank);
    *displ = entry[0];
    *count = entry[1];
    return Status::Ok();
  }
  size_t at = static_cast<size_t>(rank) * sizeof(size_t);
  XC_TRY(cma_read(c, r, displs + at, displ, sizeof *displ));
  return cma_read(c, r, counts + at, count, sizeof *count);
}

Status ShmState::peer_block(CollContext &c, int r, uint64_t s, bool in_slot, uint64_t displs, uint64_t counts,
                            size_t esize, size_t want, const char *op, size_t *displ) {
  size_t count = 0;
  XC_TRY(peer_entry(c, r, s, in_slot, displs, counts, displ, &count));
  return count == want / esize ? Status::Ok() : block_mismatch(c, op, r, want, count * esize);
}

void ShmState::publish_table(uint64_t s, const size_t *displs, const size_t *counts) {
  if (!shares_tables()) return;
  uint64_t *table = reinterpret_cast<uint64_t *>(small_slot(rank, s));
  for (size_t j = 0; j < static_cast<size_t>(nranks); ++j) {
    table[2 * j] = displs[j];
    table[2 * j + 1] = counts[j];
  }
}

Status ShmState::block_mismatch(CollContext &c, const char *op, int r, size_t want, size_t got) const {
  return Error(XC_ERR_INVALID_USAGE, "%s: rank %d expects %zu bytes from rank %d, which sends %zu (op #%d)", op, rank,
               want, r, got, c.seq());
}

Status ShmState::send_mismatch(CollContext &c, const char *op, int r, size_t sends, size_t want) const {
  return Error(XC_ERR_INVALID_USAGE, "%s: rank %d sends %zu bytes to rank %d, which expects %zu (op #%d)", op, rank,
               sends, r, want, c.seq());
}

Status ShmState::wait_done(CollContext &c, int r, uint64_t s) {
  std::atomic<uint64_t> &f = ctrl[r].done;
  return wait(c, "a peer to finish reading", [&] { return f.load(std::memory_order_acquire) >= s; });
}

Status ShmState::cma(CollContext &c, int r, uint64_t remote, void *local, size_t len, bool to_remote) {
  int err = shm::cma_copy(pids[static_cast<size_t>(r)], local, remote, len, to_remote);
  if (err == 0) return Status::Ok();
  if (err == ESRCH) return Error(XC_ERR_PEER_FAILED, "rank %d is gone (op #%d)", r, c.seq());
  return SystemError(err == shm::kCmaNoProgress ? EFAULT : err, "single-copy %s of %zu bytes %s rank %d (op #%d) failed",
                     to_remote ? "write" : "read", len, to_remote ? "to" : "from", r, c.seq());
}

void shm_sleep(shm::Doorbell *bell, int max_ms) {
  uint32_t seen = bell->prepare_sleep();
  bell->sleep(seen, max_ms);
}

}  // namespace xc::coll
