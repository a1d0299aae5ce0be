#include "gpu/emulated_kernels.h"

#include <sched.h>

#include <atomic>
#include <chrono>

#include "kernels/custom.cuh"
#include "kernels/gate.cuh"
#include "kernels/reduce.cuh"

namespace xc::kernels {

uint64_t Exec::now_ns() const {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void Exec::pause() const { sched_yield(); }

void Exec::fence_system() const { std::atomic_thread_fence(std::memory_order_seq_cst); }

}  // namespace xc::kernels

namespace xc::gpu {
namespace {

using ReduceFn = void (*)(const kernels::Exec &, const kernels::ReduceArgs &);
using CustomFn = void (*)(const kernels::Exec &, const kernels::CustomArgs &);

// [dtype][op], generated from base/reduce_table.h like the GPU's entry points.
struct Table {
  ReduceFn fn[reduce_table::kNumDtypes][reduce_table::kNumOps] = {};
  CustomFn custom[reduce_table::kNumDtypes][reduce_table::kNumOps] = {};
  template <xc_dtype_t D, xc_op_t O>
  void visit() {
    fn[D][O] = &kernels::reduce_body<D, reduce_table::kernel_op(O)>;
    custom[D][O] = &kernels::custom_reduce_body<D, reduce_table::kernel_op(O)>;
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

void emulated_custom(const kernels::CustomArgs &a) {
  if (a.mode == kernels::kCustomAllgather)
    kernels::custom_gather_body(kernels::Exec(), a);
  else
    table().custom[a.dtype][a.op](kernels::Exec(), a);
}

}  // namespace xc::gpu
