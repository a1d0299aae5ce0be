// The kernels of kernels/ compiled for the host: what the emulated device
// runs on its stream threads, the same bodies nvcc builds for the GPU.
#pragma once

#include "kernels/args.cuh"

namespace xc::gpu {

// dtype × op of a.dtype/a.op (XC_AVG runs as XC_SUM); the caller checked
// that the pair exists (base/reduce_table.h op_applies).
void emulated_reduce(const kernels::ReduceArgs &a);
void emulated_gate(const kernels::GateArgs &g);
void emulated_custom(const kernels::CustomArgs &a);

}  // namespace xc::gpu
