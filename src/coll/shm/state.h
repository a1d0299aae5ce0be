// The shared segment behind ShmColl and the waiting every shm algorithm does
// on it. Layout (all cache-line aligned):
//   header | doorbell | ctrl[0..n) | small slots [n][16] | oneshot slots [n][2] | twoshot staging [n][2]
// Each rank writes only its own ctrl block and its own slots; everyone reads
// everyone's. Ops are numbered by a per-communicator counter (every rank runs
// the same shm ops in the same order). Arrival records form a ring of
// kShmArrivalDepth lines per rank (line s % depth for op s) and one-shot's
// slots rings of 16 (small) and 2 (large), so a fast rank (a broadcast root) may
// run several small ops ahead while a slow one still reads an older one.
// Why reuse is safe: a rank arrives at op t only after it finished every op
// before t, so once every peer arrived at t, nobody reads anything of ops < t
// any more. ShmState::enter(depth) waits for that with t = s - depth + 1
// before op s overwrites the line (slot) op s - depth used.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/context.h"
#include "coll/desc.h"
#include "base/deadline.h"
#include "transport/shm/cma.h"
#include "transport/shm/doorbell.h"
#include "transport/shm/segment.h"

namespace xc::coll {

constexpr size_t kShmTwoShotSlotBytes = 256 << 10;  // one pipeline chunk, all n pieces
constexpr size_t kShmCmaChunkBytes = 128 << 10;     // bounce buffer of the CMA reductions (stays in cache)

struct alignas(64) ShmHeader {
  std::atomic<uint32_t> joined{0};   // ranks that mapped the segment and filled their ctrl
  std::atomic<uint32_t> tested{0};   // ranks that finished the single-copy probe
  std::atomic<uint32_t> cma_bad{0};  // some rank's probe failed (or it disabled CMA)
  std::atomic<uint32_t> heavy_bad{0};  // some rank could not register for membarrier
  std::atomic<uint32_t> tables_off{0};  // some rank set XC_SHM_COLL_TABLES=0
};

// Bytes one-shot carries inside the arrival record itself (no slot): a small
// op then costs one cache-line transfer per peer instead of two.
constexpr size_t kShmInlineBytes = 48;

// Arrival records per rank: how many small ops a rank may run ahead of the
// slowest peer (plus one). Ops that use one-shot's slots stay at two.
constexpr uint64_t kShmArrivalDepth = 64;
// One-shot ops up to kShmSmallSlotBytes per rank use a ring of small slots
// (a root may run kShmSmallSlotDepth - 1 ops ahead: as far as inline ops,
// since with more ranks than cores each wrap costs a context switch); larger
// ones a pair of kShmOneShotMaxBytes slots (one op ahead).
constexpr size_t kShmSmallSlotBytes = 4 << 10;
constexpr uint64_t kShmSmallSlotDepth = 64;
constexpr uint64_t kShmSlotDepth = 2;
// A v-op's table of blocks (publish_table) lives in the small slot of its
// op: an op entered at kShmArrivalDepth may write that slot too.
constexpr int kShmTableMaxRanks = static_cast<int>(kShmSmallSlotBytes / (2 * sizeof(uint64_t)));
static_assert(kShmArrivalDepth <= kShmSmallSlotDepth, "tables share the small slots' ring");

// gatherv, scatterv, alltoallv under one-shot: where one rank's contribution
// to an op lies. Only that rank knows its sizes, so it decides alone (the
// smallest staging that holds it, or its own buffer read through CMA) and
// says so in its arrival record; readers follow each record.
enum ShmVWhere : uint32_t {
  kShmVNothing = 0,  // contributes nothing (gatherv root, scatterv non-root)
  kShmVInline,       // in the record's data
  kShmVSmall,        // in its small slot of the op
  kShmVLarge,        // in its large slot of the op
  kShmVCma,          // in its own buffer (src, per-destination displacements)
  kShmVFail,         // too large to stage and no CMA: every reader fails alike
  kShmVSteps,        // in-place alltoallv beyond one-shot: in the staged pipeline's steps, which every rank joins
};
constexpr size_t kShmVInlineBytes = kShmInlineBytes - 8;

// Rooted gather(v) and scatter(v) of large blocks: each block is copied
// from both ends, so two cores copy. The root takes the front of each block
// (gather: pulls it; scatter: writes it into the receiver), the peer the
// rest. In place the root has no block of its own to copy and takes 1/n of
// each (it and every peer then copy alike). Out of place it copies its own
// block with memcpy, which goes faster than a peer's copy through CMA, so
// with a core per rank it takes 1/(4n) of each as well (2 ranks, medians
// of 5: gather 1 MiB 27.1 -> 20.4 us, 16 MiB 885 -> 787, 64 MiB 6534 ->
// 5640; scatter 16 MiB 910 -> 815, 64 MiB 6827 -> 5853; 1/3 was slower
// than none, 1/6 and 1/12 between).
// Whether the root splits in place with more ranks than cores
// (ShmRootSplit, set up once; XC_SHM_COLL_ROOT_SPLIT forces it): n ranks
// that copy alike share c cores evenly when c divides n, the n-1 peers when
// c divides n-1, and an idle root sleeps once an op runs long. So split
// when ceil(n/c) (n-1)/n <= ceil((n-1)/c), the cores' share of each way,
// and else only blocks below kShmRootSplitShortBytes: in short ops the
// polling root still holds a core, and the copying peers often share the
// other. 2 cores, in place, medians of 5 (design.md): 4 ranks split at every
// size, gather 16 MiB 1057 -> 744 us, scatter 4 MiB 288 -> 185; 3 ranks,
// gather of 5.6 MiB blocks 648 -> 910 split, of 349 KiB 62 -> 33.
// Only the root knows its placement, so it publishes parts (0: the peers
// copy it all). Shares are whole pages, at least kShmRootShareMinBytes: a
// smaller one costs one more copy call than it saves (gather, 2 ranks in
// place, 8 KiB blocks: 1.0 -> 1.4 us split; 32 KiB blocks about even,
// 1.75-2.23 against 1.97-2.00 us unsplit; 64 KiB 3.0-3.1 -> 2.4-2.75; 512
// KiB 25 -> 11 us).
constexpr size_t kShmRootShareMinBytes = 16 << 10;
constexpr size_t kShmRootSplitShortBytes = 2 << 20;
enum class ShmRootSplit {
  kOwnCores,  // a core per rank: in place and out of place
  kAlways,    // in place
  kShortOps,  // in place, blocks below kShmRootSplitShortBytes
  kNever,
};
ShmRootSplit shm_root_split_policy(int n, long cores);
// block: the largest block the root sends or takes.
inline uint32_t shm_root_parts(bool root_in_place, int n, ShmRootSplit split, size_t block) {
  if (!root_in_place) return split == ShmRootSplit::kOwnCores ? 4 * static_cast<uint32_t>(n) : 0;
  bool yes = split == ShmRootSplit::kOwnCores || split == ShmRootSplit::kAlways ||
             (split == ShmRootSplit::kShortOps && block < kShmRootSplitShortBytes);
  return yes ? static_cast<uint32_t>(n) : 0;
}
inline size_t shm_root_share(size_t block, uint64_t parts) {
  size_t share = parts ? block / parts & ~size_t{4095} : 0;
  return share >= kShmRootShareMinBytes ? share : 0;
}

// A v-op rank whose buffer a peer writes part of a block into
// (shm_root_share): gatherv's root (each sender writes the tail of its
// block at the root's displacement for it) or a scatterv receiver (the root
// writes the front of its block).
struct ShmVTarget {
  uint64_t recvbuf;         // 0: nothing may be written here
  uint64_t displs, counts;  // gatherv's root: its arrays (the table in its small slot has them too)
  uint64_t count;           // scatterv's receiver: the elements it expects
};

// What a rank publishes on arrival at op s, in line s % kShmArrivalDepth:
// the flag, the signature and either the addresses single copy reads
// (src/dst/aux), one-shot's inline payload, or a v-op's record. Readers
// acquire flag and then read the rest of the same line.
struct alignas(64) ShmArrival {
  std::atomic<uint64_t> flag{0};  // last op of this line this rank arrived at
  uint32_t sig;                   // op signature
  int32_t seq;                    // the communicator's op sequence number, for messages
  union {
    struct {
      uint64_t src, dst, aux;  // input, output and an op-specific address (CMA)
      uint64_t counts;         // scatterv, alltoallv: the counts beside aux's displacements
      uint64_t parts;          // gather(v)/scatter(v)'s root: its split (shm_root_parts)
    } addr;
    char data[kShmInlineBytes];  // one-shot, small ops: the staged input
    struct {
      uint32_t where;  // ShmVWhere
      union {
        uint32_t bytes;  // staged: bytes staged (with the table of blocks, where there is one)
        uint32_t parts;  // not staged: a gatherv/scatterv root's split (shm_root_parts)
        uint32_t steps;  // kShmVSteps: the steps its longest block takes
      };
      union {
        struct {
          // kShmVCma: the buffer, its displacements (elements; null: one
          // block); kShmVSteps: its displacements, for the check of its counts.
          uint64_t src, displs;
          union {
            uint64_t bytes;   // one block: its bytes (gatherv: checked by the root)
            uint64_t counts;  // displacements: the counts beside them (elements), checked by each reader
          };
        } cma;
        ShmVTarget target;  // where a peer may write (kShmVNothing)
        char data[kShmVInlineBytes];  // kShmVInline
      };
    } v;
  };
};
static_assert(sizeof(ShmArrival) == 64, "one arrival record per cache line");

// One rank's control block: its ring of arrival records, then progress flags
// inside an op on their own line.
struct alignas(64) ShmCtrl {
  ShmArrival arrival[kShmArrivalDepth];
  int64_t pid;
  uint64_t probe_addr;  // address of a known word, for the CMA probe
  alignas(64) std::atomic<uint64_t> phase{0};  // last op whose first phase this rank finished
  std::atomic<uint64_t> done{0};               // last op this rank is done with (its buffers are free)
  std::atomic<uint64_t> step_in{0};            // two-shot, staged: last pipeline step staged (+1)
  std::atomic<uint64_t> step_red{0};           // two-shot: last step whose own piece is reduced (+1)
  std::atomic<uint64_t> step_out{0};           // two-shot, staged: last step copied out (+1)
  // The cpu this rank ran on when it last waited for a peer or looked where
  // the ranks sit (ranks outnumber cores; ShmState::arrival_spins and
  // balance_cpus), on its own line: written rarely, read by peers.
  alignas(64) std::atomic<int32_t> cpu{-1};
};

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
  bool tables = true;  // publish_table writes (agreed at set-up: readers must know)
  ShmRootSplit root_split = ShmRootSplit::kOwnCores;  // a gather/scatter root's share (shm_root_parts)
  int spin = 2000;
  bool prefetchw = shm_cpu_has_prefetchw();
  uint64_t op = 0;     // number of the current (last started) shm op
  // Ranks outnumber cores: the op at which balance_cpus() looks next (never
  // otherwise, or with XC_SHM_COLL_BALANCE=0).
  uint64_t next_balance = UINT64_MAX;
  std::vector<int> cpu_ranks;  // balance_cpus: our ranks per cpu
  uint64_t steps = 0;  // pipeline steps (two-shot, staged) run so far
  // A lower bound of each peer's last arrival, so enter() reads a peer's
  // (often just written, so cache-missing) arrival line rarely, not per op.
  std::vector<uint64_t> peer_arrived;
  std::vector<int> fabric_ranks;
  std::vector<pid_t> pids;
  uint64_t probe_word = 0;
  // Reused scratch (grown, never shrunk): no allocation per call once warm.
  // Its first three kShmCmaChunkBytes are the bounce buffers of the CMA
  // reductions and chains.
  std::vector<char> scratch;
  // The in-place swap's two chunks (shm_swap.cc).
  std::vector<char> swap_bounce;
  std::vector<float> facc, ftmp;
  // Two-shot's blocks; block_len also what in-place alltoallv takes from each peer in the steps.
  std::vector<size_t> block_off, block_len;

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

  // Wait until pred() holds; honours c.deadline(), notices dead peers. what
  // names the wait for the timeout message.
  template <class Pred>
  Status wait(CollContext &c, const char *what, Pred pred) { return wait(c, what, pred, spin); }
  template <class Pred>
  Status wait(CollContext &c, const char *what, Pred pred, int spins);
  // Publish a store made by this rank: wakes sleepers if any.
  void notify() {
    if (light_bell)
      bell->ring_light();
    else
      bell->ring();
  }
  uint32_t prepare_sleep() { return light_bell ? bell->prepare_sleep_heavy() : bell->prepare_sleep(); }

  // Ranks outnumber cores, and the scheduler may leave more of them on one
  // core than on another for a long while: the highest rank of a core that
  // has more than its share moves itself to the allowed core with the
  // fewest, without binding (docs/design.md).
  void balance_cpus();

  // Start op: wait until every peer arrived at op s - depth + 1 (so its reads
  // of the arrival line / slot that op s - depth used are over); returns the
  // new op number s. depth: kShmSlotDepth when the op writes one-shot's slot,
  // else kShmArrivalDepth.
  // Inline: most ops find every peer known to be far enough on already.
  Status enter(CollContext &c, uint64_t depth, uint64_t *s) {
    *s = ++op;
    if (*s >= next_balance) balance_cpus();
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
  // ranks: gather 128 B 0.13 -> 0.07 us, 2 KiB 0.20 -> 0.12; reduce 512 B
  // 0.16 -> 0.08; 4 ranks: gatherv 128 B 0.37 -> 0.24). Not when we had to
  // wait: r has yet to write those lines, and our copies would make its
  // writes miss (allgather, where every rank waits for every other, measured
  // 0.48 -> 0.70 us at 2 KiB with it).
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
  // scatterv, alltoallv read in place: where peer r keeps its block for this
  // rank (*displ, elements), from the per-destination displacements and counts
  // it published for op s, once its count matches the want bytes this rank
  // expects; else XC_ERR_INVALID_USAGE naming op and peer. in_slot: r wrote
  // them into its small slot (publish_table); else they are read from the
  // addresses displs and counts in its memory.
  Status peer_block(CollContext &c, int r, uint64_t s, bool in_slot, uint64_t displs, uint64_t counts, size_t esize,
                    size_t want, const char *op, size_t *displ);
  // The entry for this rank (displacement, count; elements) of such a table.
  Status peer_entry(CollContext &c, int r, uint64_t s, bool in_slot, uint64_t displs, uint64_t counts, size_t *displ,
                    size_t *count);
  // Before arriving at op s with a buffer peers read in place, one block per
  // destination: (displacement, count) of each into our small slot of op s,
  // so a reader finds its own with a load instead of two CMA reads (one
  // small slot holds the table of up to kShmTableMaxRanks ranks; beyond,
  // nothing is written and peer_block reads the arrays themselves).
  void publish_table(uint64_t s, const size_t *displs, const size_t *counts);
  bool shares_tables() const { return tables && nranks <= kShmTableMaxRanks; }
  // The message of a v-op whose sender and receiver disagree on a block.
  Status block_mismatch(CollContext &c, const char *op, int r, size_t want, size_t got) const;
  // ... the same, found by the sender (sends bytes to rank r, which expects want).
  Status send_mismatch(CollContext &c, const char *op, int r, size_t sends, size_t want) const;
  // After an in-place alltoall(v) pair's length check (peer_block, or a
  // staged block's length): whether the pair agreed. A disagreement skips
  // the pair (both sides check the same two counts, so both skip) and the
  // first one is kept in *disagreed, reported once the other pairs have
  // traded; checked is then OK. Any other error stays in checked.
  static bool pair_agreed(Status &checked, Status *disagreed) {
    if (checked.code() != XC_ERR_INVALID_USAGE) return true;
    if (disagreed->ok()) *disagreed = std::move(checked);
    checked = Status::Ok();
    return false;
  }

  Status slow_wait_check(CollContext &c, const char *what);

 private:
  Status enter_wait(CollContext &c, uint64_t depth, uint64_t s);
  int arrival_spins(int r, uint64_t s);
  Status wait_arrived_slow(CollContext &c, int r, uint64_t s);
  // min over peers of peer_arrived: enter() needs no look while need <= it.
  uint64_t peers_known = 0;

 public:
};

// ---- waiting ---------------------------------------------------------------------------

inline void shm_cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void shm_yield();
// Sleep on the bell until rung or max_ms passed, unless pred already holds.
void shm_sleep(shm::Doorbell *bell, int max_ms);

// Ranks outnumber cores, and every rank sharing our core has arrived (waits
// too): polls (about 10 ns each here) spent on a rank of another core before
// yielding. 4 ranks on 2 cores, 8 B allreduce 1.7 -> 1.3 us, barrier 2.0 ->
// 1.1 (one switch per op and core instead of 1.5); 8 ranks 4.8 -> 4.0.
constexpr int kShmMateSpins = 300;

// Ranks outnumber cores: balance_cpus() first looks at op kShmBalanceFirstOp,
// then every kShmBalanceEveryOps ops (about 1.5 ms of 8 B allreduces on 4
// ranks and 2 cores).
constexpr uint64_t kShmBalanceFirstOp = 64;
constexpr uint64_t kShmBalanceEveryOps = 1024;

// Polls with sched_yield before a waiter sleeps on the futex (a few ms): short
// waits never pay a futex wake, long ones (a peer computing) stop burning CPU.
constexpr unsigned kYieldsBeforeSleep = 4096;
// A waiter that yields looks for failed peers and xc_comm_abort this often
// (its deadline at every yield).
constexpr std::chrono::milliseconds kShmSlowCheckEvery{1};

template <class Pred>
Status ShmState::wait(CollContext &c, const char *what, Pred pred, int spins) {
  if (pred()) return Status::Ok();
  // Spin while the peer is likely running on another core; when ranks
  // outnumber cores, give the core away at once instead (the peer we wait for
  // may need it).
  for (int i = 0; i < spins; ++i) {
    shm_cpu_relax();
    if (pred()) return Status::Ok();
  }
  Deadline::Clock::time_point next_check{};
  for (unsigned n = 1;; ++n) {
    if (n < kYieldsBeforeSleep) {
      shm_yield();
    } else {
      uint32_t seen = prepare_sleep();
      if (pred()) {
        bell->sleep(seen, 0);
        return Status::Ok();
      }
      bell->sleep(seen, c.deadline().remaining_ms(20));
    }
    if (pred()) return Status::Ok();
    // By the clock, not by count: on a busy core one yield may hand out a
    // whole time slice, and 4096 of them ran a 300 ms deadline 7 s over.
    auto now = Deadline::Clock::now();
    if (n == 1) next_check = now + kShmSlowCheckEvery;  // here, not before the loop: one clock read less
    if (now >= next_check || now >= c.deadline().at() || n >= kYieldsBeforeSleep) {
      XC_TRY(slow_wait_check(c, what));
      next_check = now + kShmSlowCheckEvery;
    }
  }
}

}  // namespace xc::coll
