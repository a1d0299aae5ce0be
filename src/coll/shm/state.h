// ShmState: this rank's view of its communicator's shared segment
// (layout.h) and the op protocol every shm algorithm follows on it: enter an
// op (ring reuse), arrive, wait for peers' arrivals, finish, give up, the
// pipeline step counters, CMA to a peer. How a wait spins, yields and sleeps
// is wait.h; the v-ops' per-destination tables are tables.h.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/context.h"
#include "coll/desc.h"
#include "coll/shm/cpu_balance.h"
#include "coll/shm/layout.h"
#include "transport/shm/cma.h"
#include "transport/shm/doorbell.h"
#include "transport/shm/segment.h"

namespace xc::coll {

constexpr size_t kShmCmaChunkBytes = 128 << 10;  // bounce buffer of the CMA reductions (stays in cache)

enum class ShmRootSplit;  // root_split.h: how a gather/scatter root shares large blocks

// How many ops ahead arrive_inline() takes ownership of this rank's arrival
// line (far enough that the transfer is done when the op writes it).
constexpr uint64_t kShmPrefetchAhead = 2;
// ... and at most this much of a small slot.
constexpr size_t kShmPrefetchSlotBytes = 1024;

// Whether this CPU has prefetchw (x86: CPUID PRFCHW; older ones may fault on it).
bool shm_cpu_has_prefetchw();

// A hint (prefetchw: fetch the line exclusive); it changes no data.
inline void shm_prefetch_for_write(const void *p, bool prefetchw) {
#if defined(__x86_64__)
  if (prefetchw) {
    asm volatile("prefetchw %0" : : "m"(*static_cast<const char *>(p)));
    return;
  }
#endif
  (void)prefetchw;
  __builtin_prefetch(p, 1);
}

struct ShmState {
  shm::Segment segment;
  int nranks = 0;
  int rank = 0;
  ShmHeader *header = nullptr;
  shm::Doorbell *bell = nullptr;
  ShmCtrl *ctrl = nullptr;
  char *small = nullptr;    // [n][kShmSmallSlotDepth][kShmSmallSlotBytes]
  char *oneshot = nullptr;  // [n][2][kShmOneShotMaxBytes]
  char *twoshot = nullptr;  // [n][2][kShmTwoShotSlotBytes], two-shot's and staged's
  bool cma_ok = false;
  bool oversubscribed = false;
  // Every rank registered for membarrier: publishers ring without a fence and
  // sleepers pay a heavy barrier instead (shm::Doorbell::ring_light). Agreed
  // at set-up, since both sides of the bell must use the same pair.
  bool light_bell = false;
  bool tables = true;  // shm_publish_table writes (agreed at set-up: readers must know)
  ShmRootSplit root_split{};  // a gather/scatter root's share (shm_root_parts), set by ShmColl::ensure
  int spin = 2000;
  bool prefetchw = shm_cpu_has_prefetchw();
  uint64_t op = 0;     // number of the current (last started) shm op
  ShmCpuBalance balance;  // started only when ranks outnumber cores
  uint64_t steps = 0;  // pipeline steps (two-shot, staged) run so far
  // A lower bound of each peer's last arrival, so enter() reads a peer's
  // (often just written, so cache-missing) arrival line rarely, not per op.
  std::vector<uint64_t> peer_arrived;
  std::vector<int> fabric_ranks;
  std::vector<pid_t> pids;
  uint64_t probe_word = 0;
  // Reused scratch (grown, never shrunk): no allocation per call once warm.
  // Its first three kShmCmaChunkBytes are the bounce buffers of the CMA
  // reductions and chains, which several algorithms share. Scratch of one
  // algorithm alone is that algorithm's, thread_local in its file: a thread
  // runs one op at a time, and most communicators never run that algorithm.
  std::vector<char> scratch;

  // Scratch past the bounce buffers, grown to hold bytes: an op's private
  // copy of a buffer. Call before taking any other pointer into scratch.
  char *scratch_beyond_bounce(size_t bytes) {
    size_t at = 3 * kShmCmaChunkBytes;
    if (scratch.size() < at + bytes) scratch.resize(at + bytes);
    return scratch.data() + at;
  }
  char *slot(int r, uint64_t s) const;
  char *small_slot(int r, uint64_t s) const;
  // Where rank r's v-op record of op s says its staged bytes are (null: not staged).
  const char *v_staged(int r, uint64_t s) const;
  char *stage(int r, uint64_t k) const;

  // Publish a store made by this rank: wakes sleepers if any (wait.h).
  void notify() {
    if (light_bell)
      bell->ring_light();
    else
      bell->ring();
  }
  uint32_t prepare_sleep() { return light_bell ? bell->prepare_sleep_heavy() : bell->prepare_sleep(); }

  // Start op: wait until every peer arrived at op s - depth + 1 (so its reads
  // of the arrival line / slot that op s - depth used are over); returns the
  // new op number s. depth: kShmSlotDepth when the op writes one-shot's slot,
  // else kShmArrivalDepth.
  // Inline: most ops find every peer known to be far enough on already.
  Status enter(CollContext &c, uint64_t depth, uint64_t *s) {
    *s = ++op;
    balance.at_op(*s, ctrl, nranks, rank);
    if (*s < depth || *s - depth + 1 <= peers_known) return Status::Ok();
    return enter_wait(c, depth, *s);
  }
  // Publish arrival at op s (after staging), with signature and addresses.
  void arrive(CollContext &c, uint64_t s, const void *src, const void *dst, const void *aux = nullptr,
              const void *counts = nullptr, uint64_t parts = 0);
  // Publish arrival at op s whose inline payload (inline_data(rank, s)) is written.
  void arrive_inline(CollContext &c, uint64_t s) {
    ShmArrival &me = ctrl[rank].arrival[s % kShmArrivalDepth];
    me.sig = c.signature();
    me.seq = c.seq();
    me.flag.store(s, std::memory_order_release);
    notify();
    // Own the line of op s + 2 before we write it: peers read it 64 ops ago,
    // so writing it cold waits for their copies to be invalidated (and the
    // next locked instruction, make_coll_context's, waits for that write).
    shm_prefetch_for_write(&ctrl[rank].arrival[(s + kShmPrefetchAhead) % kShmArrivalDepth], prefetchw);
  }
  char *inline_data(int r, uint64_t s) const { return ctrl[r].arrival[s % kShmArrivalDepth].data; }
  // After staging bytes in our small slot of op s: own the first lines of
  // op s + 2's slot (peers read them 62 ops ago), as arrive_inline does for
  // the arrival line; a loop of like ops then stages into lines it holds.
  void prefetch_small_slot(uint64_t s, size_t bytes) {
    const char *next = small_slot(rank, s + kShmPrefetchAhead);
    for (size_t off = 0; off < bytes && off < kShmPrefetchSlotBytes; off += 64) shm_prefetch_for_write(next + off, prefetchw);
  }
  const ShmArrival &arrival(int r, uint64_t s) const { return ctrl[r].arrival[s % kShmArrivalDepth]; }
  // This rank failed op s (code) where peers wait for its part (a chain of
  // prefixes): mark its arrival record with kSigGaveUp and the code, so they
  // fail too (wait_arrived, shm_wait_word) instead of at the deadline.
  void give_up(uint64_t s, xc_result_t code);
  // got, after giving up op s if it failed (where peers wait for our part).
  Status give_up_if(uint64_t s, Status got) {
    if (!got.ok()) give_up(s, got.code());
    return got;
  }
  bool gave_up(int r, uint64_t s) const {
    return __atomic_load_n(&arrival(r, s).sig, __ATOMIC_ACQUIRE) == kSigGaveUp;
  }
  // The error of a rank that found rank r gave up op s.
  Status gave_up_error(CollContext &c, int r, uint64_t s) const;
  // Wait until rank r arrived at s and check that it runs the same op.
  // Inline when r already arrived at the same op (the slow path waits and
  // explains a mismatch).
  Status wait_arrived(CollContext &c, int r, uint64_t s) {
    if (r == rank) return Status::Ok();
    const ShmArrival &their = arrival(r, s);
    if (their.flag.load(std::memory_order_acquire) >= s && their.sig == c.signature()) return Status::Ok();
    return wait_arrived_slow(c, r, s);
  }
  // wait_arrived for a reader of rank r's staging at op s, which will read
  // [off, off + len) of r's small slot at the next like op (len 0: nothing
  // there; inline data rides in the record). When r had arrived already at
  // the first look, it runs ahead of us (a root, the head of a chain): start
  // loading its record and those lines of op s + 1 now, so the next op's
  // misses overlap this one's work instead of following each other (2
  // ranks, gather 128 B 0.13 -> 0.07 us). Not when we had to wait: r has yet
  // to write those lines, and our copies would make its writes miss (2 KiB
  // allgather, where every rank waits for every other, 0.48 -> 0.70 us with
  // it). The figures: docs/shm-collectives.md.
  Status wait_arrived_ahead(CollContext &c, int r, uint64_t s, size_t off, size_t len) {
    bool ahead = r != rank && arrival(r, s).flag.load(std::memory_order_relaxed) >= s;
    XC_TRY(wait_arrived(c, r, s));
    if (ahead) prefetch_next(r, s, off, len);
    return Status::Ok();
  }
  // Only within the part of the slot its owner takes ahead too
  // (prefetch_small_slot): beyond it, scatter's 1 KiB blocks at 1 KiB
  // measured 0.20 -> 0.30 us.
  void prefetch_next(int r, uint64_t s, size_t off, size_t len) const {
    __builtin_prefetch(&arrival(r, s + 1));
    const char *next = small_slot(r, s + 1) + off;
    size_t upto = off < kShmPrefetchSlotBytes ? std::min(len, kShmPrefetchSlotBytes - off) : 0;
    for (size_t at = 0; at < upto; at += 64) __builtin_prefetch(next + at);
  }
  Status wait_all_arrived(CollContext &c, uint64_t s);
  Status wait_all_phase(CollContext &c, uint64_t s);
  // Mark this rank done with op s and wait for everyone (buffers free).
  Status finish(CollContext &c, uint64_t s);
  // The two halves of finish(), for ops where only some ranks wait: this
  // rank read all it needs of op s; wait until rank r did.
  void mark_done(uint64_t s) {
    ctrl[rank].done.store(s, std::memory_order_release);
    notify();
  }
  Status wait_done(CollContext &c, int r, uint64_t s);

  // Pipelined algorithms (two-shot, staged): publish that this rank reached
  // value on one of its step counters; wait until every peer's is >= value.
  void publish_step(std::atomic<uint64_t> ShmCtrl::*counter, uint64_t value) {
    (ctrl[rank].*counter).store(value, std::memory_order_release);
    notify();
  }
  Status wait_steps(CollContext &c, std::atomic<uint64_t> ShmCtrl::*counter, uint64_t value, const char *what);

  // process_vm_readv/writev of peer r's memory; errors name the peer.
  Status cma_read(CollContext &c, int r, uint64_t remote, void *dst, size_t len) {
    return cma(c, r, remote, dst, len, false);
  }
  Status cma_write(CollContext &c, int r, uint64_t remote, const void *src, size_t len) {
    return cma(c, r, remote, const_cast<void *>(src), len, true);
  }
  Status cma(CollContext &c, int r, uint64_t remote, void *local, size_t len, bool to_remote);

 private:
  Status enter_wait(CollContext &c, uint64_t depth, uint64_t s);
  Status wait_arrived_slow(CollContext &c, int r, uint64_t s);
  // min over peers of peer_arrived: enter() needs no look while need <= it.
  uint64_t peers_known = 0;
};

}  // namespace xc::coll
