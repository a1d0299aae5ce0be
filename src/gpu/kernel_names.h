// The names of the device kernels in the fatbin, made from the one dtype ×
// op table (base/reduce_table.h) as kernels/device_kernels.cu makes them, so
// the loader asks for exactly what nvcc built; tests/unit/test_cuda_device.cc
// finds every one of them in the embedded fatbin.
#pragma once

#include <string>

#include "xcomm.h"

namespace xc::gpu {

// "xc_reduce_XC_FLOAT32_XC_SUM": the kernel of a dtype and a kernel op
// (AVG is SUM with a divisor: reduce_table::kernel_op). Empty when the pair
// has none: an unknown dtype or op, AVG itself, a bitwise op on a float.
std::string reduce_kernel_name(xc_dtype_t dtype, xc_op_t op);

// "xc_custom_XC_FLOAT32_XC_SUM": the intra-node kernel (kernels/custom.cuh)
// of a dtype and op; AVG is SUM's. Empty where there is none: only
// float32, float16 and bfloat16 with sum, min, max and avg have one.
std::string custom_kernel_name(xc_dtype_t dtype, xc_op_t op);
bool custom_kernel_exists(xc_dtype_t dtype, xc_op_t op);
constexpr const char *kCustomGatherKernelName = "xc_custom_gather";

// The stream gate (kernels/gate.cuh).
constexpr const char *kGateKernelName = "xc_gate";

}  // namespace xc::gpu
