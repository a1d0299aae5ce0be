#include "coll/shm/state.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "coll/shm/backend.h"
#include "coll/shm/wait.h"

namespace xc::coll {

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
    XC_TRY(shm_wait(c, *this, "a peer to finish an earlier op",
                    [&] { return a.load(std::memory_order_acquire) >= until; }));
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

Status ShmState::wait_arrived_slow(CollContext &c, int r, uint64_t s) {
  const ShmArrival &their = ctrl[r].arrival[s % kShmArrivalDepth];
  XC_TRY(shm_wait(c, *this, "a peer to arrive", [&] { return their.flag.load(std::memory_order_acquire) >= s; },
                  shm_arrival_spins(*this, r, s)));
  uint32_t theirs = their.sig;
  if (theirs == kSigGaveUp) return gave_up_error(c, r, s);
  if (theirs != c.signature())
    return Error(XC_ERR_INVALID_USAGE,
                 "collective mismatch at op #%d: rank %d called %s (its op #%d), this rank (%d) %s: %s; ranks must "
                 "call the same collectives in the same order with matching arguments",
                 c.seq(), r, describe_signature(theirs).c_str(), their.seq, rank,
                 (c.desc() ? describe_call(*c.desc()) : describe_signature(c.signature())).c_str(),
                 describe_signature_difference(c.signature(), theirs).c_str());
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
  // It gave up because a member died: blame the dead one, not the
  // messenger (survivors said "rank 1 failed" when rank 2 was killed).
  if (code == XC_ERR_PEER_FAILED) {
    int dead = c.engine().first_failed(fabric_ranks);
    for (int q = 0; dead >= 0 && q < nranks; ++q)
      if (fabric_ranks[static_cast<size_t>(q)] == dead)
        return Error(code, "rank %d failed during op #%d (rank %d gave up its part, which this rank needs, for it)", q,
                     c.seq(), r);
  }
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
    XC_TRY(shm_wait(c, *this, "a peer's partial result", [&] { return f.load(std::memory_order_acquire) >= s; }));
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
    XC_TRY(shm_wait(c, *this, what, [&] { return f.load(std::memory_order_acquire) >= value; }));
  }
  return Status::Ok();
}

Status ShmState::wait_done(CollContext &c, int r, uint64_t s) {
  std::atomic<uint64_t> &f = ctrl[r].done;
  return shm_wait(c, *this, "a peer to finish reading", [&] { return f.load(std::memory_order_acquire) >= s; });
}

Status ShmState::cma(CollContext &c, int r, uint64_t remote, void *local, size_t len, bool to_remote) {
  int err = shm::cma_copy(pids[static_cast<size_t>(r)], local, remote, len, to_remote);
  if (err == 0) return Status::Ok();
  if (err == ESRCH) {
    // The process is gone; blame as every other wait does, the crashed
    // before the departed: r may have left after giving the op up for a
    // member that died (chaos on two host ids: "rank 1 is gone" when rank 2
    // was killed and rank 1 had reported it and exited).
    XC_TRY(shm_member_failed(c, c.engine().first_failed(**c.op_members()), to_remote ? "writing to" : "reading from",
                             "a peer's buffer"));
    // Named as the communicator numbers it: in a phase of a hierarchical op
    // r is the host's segment rank.
    int q = shm_op_rank(c, fabric_ranks[static_cast<size_t>(r)]);
    return Error(XC_ERR_PEER_FAILED, "rank %d is gone (op #%d)", q >= 0 ? q : r, c.seq());
  }
  return SystemError(err == shm::kCmaNoProgress ? EFAULT : err, "single-copy %s of %zu bytes %s rank %d (op #%d) failed",
                     to_remote ? "write" : "read", len, to_remote ? "to" : "from", r, c.seq());
}

}  // namespace xc::coll
