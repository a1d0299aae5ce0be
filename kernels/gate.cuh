// The stream gate's body (kernels/args.cuh GateArgs): one thread polls the
// flag the host side of an op sets, the communicator's abort flag, and the
// clock, so the stream behind it is held no longer than the op's deadline.
#pragma once

#include "kernels/args.cuh"
#include "kernels/exec.cuh"

namespace xc::kernels {

XC_KERNEL_FN void gate_body(const Exec &ex, const GateArgs &g) {
  if (ex.first() != 0) return;
  uint64_t start = ex.now_ns();
  while (*g.flag < g.value) {
    if (g.abort && *g.abort) return;
    if (ex.now_ns() - start > g.timeout_ns) {
      *g.expired = 1;
      return;
    }
    ex.pause();
  }
}

}  // namespace xc::kernels
