// Element-wise reductions on host memory, for every dtype × op.
#pragma once

#include <cstddef>

#include "xcomm.h"

namespace xc::cpu {

// inout[i] = inout[i] op in[i]. AVG reduces as SUM; the caller divides once
// at the end with scale_avg. float16/bfloat16 are reduced through float32.
void reduce(void *inout, const void *in, size_t count, xc_dtype_t dtype, xc_op_t op);

// buf[i] /= n (integers: truncating division).
void scale_avg(void *buf, size_t count, xc_dtype_t dtype, int n);

// float16/bfloat16 ↔ float32 for whole buffers (so sums accumulate in float32).
void widen_to_float(const void *in, float *out, size_t count, xc_dtype_t dtype);
void narrow_from_float(const float *in, void *out, size_t count, xc_dtype_t dtype);

}  // namespace xc::cpu
