// The shared segment behind ShmColl, as every rank maps it. Layout (all
// cache-line aligned; backend.cc places the parts):
//   header | doorbell | ctrl[0..n) | small slots [n][64] | oneshot slots [n][2] | twoshot staging [n][2]
// Each rank writes only its own ctrl block and its own slots; everyone reads
// everyone's. Ops are numbered by a per-communicator counter (every rank runs
// the same shm ops in the same order). Arrival records form a ring of
// kShmArrivalDepth lines per rank (line s % depth for op s) and one-shot's
// slots rings of kShmSmallSlotDepth (small) and kShmSlotDepth (large), so a
// fast rank (a broadcast root) may run several small ops ahead while a slow
// one still reads an older one.
// Why reuse is safe: a rank arrives at op t only after it finished every op
// before t, so once every peer arrived at t, nobody reads anything of ops < t
// any more. ShmState::enter(depth) waits for that with t = s - depth + 1
// before op s overwrites the line (slot) op s - depth used.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace xc::coll {

constexpr size_t kShmTwoShotSlotBytes = 256 << 10;  // one pipeline chunk, all n pieces

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
  // the ranks sit (ranks outnumber cores; shm_arrival_spins in wait.cc and
  // ShmCpuBalance), on its own line: written rarely, read by peers.
  alignas(64) std::atomic<int32_t> cpu{-1};
};

}  // namespace xc::coll
