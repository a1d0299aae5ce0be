#include "gpu/emulated_kernels.h"

#include <sched.h>

#include <chrono>

#include "kernels/gate.cuh"
#include "kernels/reduce.cuh"

namespace xc::kernels {

uint64_t Exec::now_ns() const {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void Exec::pause() const { sched_yield(); }

}  // namespace xc::kernels

namespace xc::gpu {
namespace {

using ReduceFn = void (*)(const kernels::Exec &, const kernels::ReduceArgs &);

// [dtype][op], generated from base/reduce_table.h like the GPU's entry points.
struct Table {
  ReduceFn fn[reduce_table::kNumDtypes][reduce_table::kNumOps] = {};
  template <xc_dtype_t D, xc_op_t O>
  void visit() {
    fn[D][O] = &kernels::reduce_body<D, reduce_table::kernel_op(O)>;
  }
};

const Table &table() {
  static const Table t = [] {
    Table k;
    reduce_table::for_each_kernel(k);
    return k;
  }();
  return t;
}

}  // namespace

void emulated_reduce(const kernels::ReduceArgs &a) { table().fn[a.dtype][a.op](kernels::Exec(), a); }

void emulated_gate(const kernels::GateArgs &g) { kernels::gate_body(kernels::Exec(), g); }

}  // namespace xc::gpu
