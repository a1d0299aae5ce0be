// The arguments of xcomm's device kernels: plain structs that nvcc and the
// host compiler lay out alike, passed by value to a kernel launch (CUDA) or
// to the host build of the same kernel body (the emulated device).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace xc::kernels {

// Sources one reduction reads at most: the ranks of one host.
constexpr int kMaxSources = 64;

// dst[i] = src[0][i] op src[1][i] op ... op src[nsrc-1][i] for i < count,
// always in that order (every rank that computes an element gets the same
// bits). float16/bfloat16 accumulate in float32 and round once. avg_divisor
// > 0: the sum is divided by it (XC_AVG; op is XC_SUM then). dst may be one
// of the sources.
struct ReduceArgs {
  void *dst;
  const void *src[kMaxSources];
  int nsrc;
  int dtype;  // xc_dtype_t
  int op;     // xc_op_t, never XC_AVG
  int avg_divisor;
  uint64_t count;
};

// Holds a stream until *flag >= value: the gate through which the host
// side of a stream-ordered op releases the work queued after it. It also
// opens when *abort becomes non-zero (the communicator was aborted) or after
// timeout_ns (then *expired is set), so a stream never waits forever.
struct GateArgs {
  const volatile uint64_t *flag;
  uint64_t value;
  const volatile uint32_t *abort;
  volatile uint32_t *expired;
  uint64_t timeout_ns;
};

// The intra-node kernels (kernels/custom.cuh): one-shot, two-shot and
// hybrid-cube-mesh allreduce, and two-shot's halves as reduce_scatter and
// allgather, between the ranks of one communicator on one host. Every rank
// keeps a workspace in IPC memory that the others have mapped: a signal pad
// (flags the peers raise), its own barrier counters, the staged input, and
// (HCM) relay slots. The kernels keep step through the pads alone: no host
// round trip, no reset between calls, and the epochs live in device memory,
// so a launch captured in a CUDA graph replays correctly.
constexpr int kCustomMaxRanks = 8;
constexpr int kCustomMaxBlocks = 32;  // blocks of one launch at most (pad slots per rank)

enum CustomAlgo : int32_t { kCustomOneShot = 0, kCustomTwoShot = 1, kCustomHcm = 2 };
enum CustomMode : int32_t { kCustomAllreduce = 0, kCustomReduceScatter = 1, kCustomAllgather = 2 };
enum CustomStop : uint32_t { kCustomRunning = 0, kCustomAborted = 1, kCustomPeerFailed = 2, kCustomTimedOut = 3 };

// A signal pad: pad[block * kCustomMaxRanks + from] is the last barrier value
// rank `from` raised in this rank's pad for that block. Barrier values only
// grow, so a waiter compares with >=, and nothing is ever reset.
struct CustomPad {
  uint64_t flag[kCustomMaxBlocks * kCustomMaxRanks];
  uint64_t counter[kCustomMaxBlocks];  // this rank's barriers passed, per block (only it writes them)
  // Where this rank's input of the current op is, per block, written before
  // the first barrier: 1 + its registry slot and the offset in it, or 0:
  // staged in its workspace.
  uint64_t source[kCustomMaxBlocks][2];
};

struct CustomArgs {
  int32_t algo;  // CustomAlgo
  int32_t mode;  // CustomMode
  int32_t n, rank;
  int32_t dtype, op;  // reductions: float32/16, bfloat16 × sum/min/max (AVG: SUM with a divisor)
  int32_t avg_divisor;
  uint32_t blocks;  // of the launch: the same on every rank (each block keeps step with its twins)
  // Elements: allreduce: the vector; reduce_scatter: each rank's block;
  // allgather: bytes of each rank's block (the copy is bytewise).
  uint64_t count;
  CustomPad *pads[kCustomMaxRanks];  // every rank's pad, reached here
  char *data[kCustomMaxRanks];       // every rank's staged input, reached here
  char *relay[kCustomMaxRanks];      // HCM: every rank's relay slots (one per source, count elements each)
  // HCM: for each source j, the rank whose relay slot j this rank reads
  // (-1: read data[j] itself); forward[j]: this rank copies source j into
  // its own relay slot j for others.
  int32_t via[kCustomMaxRanks];
  int32_t forward[kCustomMaxRanks];
  // This rank's input read in place (a registered buffer every peer has
  // mapped: device/custom_registry.h), published in its pad as (my_slot,
  // my_offset); my_slot -1: staged in data[rank].
  int32_t my_slot;
  uint64_t my_offset;
  const char *my_input;
  const uint64_t *registry;  // [slot * kCustomMaxRanks + rank]: that rank's slot mapped here
  void *out;                 // this rank's output
  // Host-mapped words of the communicator, sticky: non-zero stop makes every
  // kernel stop waiting (1 aborted, 2 a peer failed, 3 a kernel timed out,
  // which sets it and who: 1 + the rank it waited for).
  volatile uint32_t *stop;
  volatile uint32_t *who;
  uint64_t timeout_ns;
};

}  // namespace xc::kernels
