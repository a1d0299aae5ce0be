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

}  // namespace xc::kernels
