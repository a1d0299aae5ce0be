// float16 (IEEE binary16) and bfloat16 conversions, round to nearest even:
// the one implementation in kernels/convert.cuh, which the device kernels
// use too, so host and device reductions convert alike.
#pragma once

#include "kernels/convert.cuh"

namespace xc::cpu {

using kernels::bf16_to_float;
using kernels::float_to_bf16;
using kernels::float_to_half;
using kernels::half_to_float;

}  // namespace xc::cpu
