// Element-wise reductions on host memory, for every dtype × op.
//
// Three kernel sets are generated from one table (base/reduce_table.h):
// scalar, AVX2 (+F16C) and AVX-512 (F, BW, VL, DQ + F16C). The best one this
// CPU supports is chosen once, on first use, unless XC_CPU_ISA forces one.
// Every set gives the same bits for every input, NaN payloads and signed
// zeros included (tests/unit/test_reduce.cc checks it level against level).
#pragma once

#include <cstddef>

#include "base/reduce_table.h"
#include "xcomm.h"

namespace xc::cpu {

// inout[i] = inout[i] op in[i]. AVG reduces as SUM; the caller divides once
// at the end with scale_avg. float16/bfloat16 are reduced through float32
// and rounded back to nearest even. Floating-point rules, inout being the
// left operand x and in the right one y:
//   sum, prod: x NaN → x quieted; else the IEEE result (y NaN → y quieted,
//              invalid → the x86 default NaN);
//   min: (y < x || y is NaN) ? y : x;   max: (y > x || y is NaN) ? y : x
//   (so min(+0, -0) = +0, and when both are NaN the result is y, unquieted).
// A bitwise op on a floating dtype, an unknown dtype or op: nothing is done.
void reduce(void *inout, const void *in, size_t count, xc_dtype_t dtype, xc_op_t op);

// out[i] = a[i] op b[i], a the left operand, with reduce's rules. out may be
// a or b, or must not overlap them.
void reduce3(void *out, const void *a, const void *b, size_t count, xc_dtype_t dtype, xc_op_t op);

// buf[i] /= n (integers: truncating division).
void scale_avg(void *buf, size_t count, xc_dtype_t dtype, int n);

// float16/bfloat16 ↔ float32 for whole buffers (so sums accumulate in float32).
void widen_to_float(const void *in, float *out, size_t count, xc_dtype_t dtype);
void narrow_from_float(const float *in, void *out, size_t count, xc_dtype_t dtype);

// ---- kernel sets, for the dispatcher, tests and benchmarks ------------------

enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };
constexpr int kNumIsas = 3;

const char *isa_name(Isa isa);  // "scalar", "avx2", "avx512"
// Compiled in, and this CPU and OS support it.
bool isa_supported(Isa isa);
// The set the functions above use: XC_CPU_ISA if set and supported (else the
// best one, with a warning), otherwise the best one. Decided on first call.
Isa isa_active();

using ReduceFn = void (*)(void *out, const void *a, const void *b, size_t count);
using ScaleFn = void (*)(void *buf, size_t count, int n);
using WidenFn = void (*)(const void *in, float *out, size_t count);
using NarrowFn = void (*)(const float *in, void *out, size_t count);

// One complete set of kernels; entries an ISA does not vectorise hold the
// scalar kernels. A null reduce entry is a pair that has no kernel.
struct Kernels {
  Isa isa = Isa::kScalar;
  ReduceFn reduce[reduce_table::kNumDtypes][reduce_table::kNumOps] = {};
  ScaleFn scale[reduce_table::kNumDtypes] = {};
  WidenFn widen[reduce_table::kNumDtypes] = {};    // float16 and bfloat16 only
  NarrowFn narrow[reduce_table::kNumDtypes] = {};  // float16 and bfloat16 only

  // The functions above, with this set.
  void reduce3(void *out, const void *a, const void *b, size_t count, xc_dtype_t dtype, xc_op_t op) const;
  void scale_avg(void *buf, size_t count, xc_dtype_t dtype, int n) const;
  void widen_to_float(const void *in, float *out, size_t count, xc_dtype_t dtype) const;
  void narrow_from_float(const float *in, void *out, size_t count, xc_dtype_t dtype) const;
};

// The set of one level; nullptr when !isa_supported(isa).
const Kernels *kernels_for(Isa isa);
// What XC_CPU_ISA=request selects: the level it names when supported, else
// (unknown name, or a level this CPU lacks: logged as a warning) the best
// supported one; empty or null: the best supported one.
Isa isa_resolve(const char *request);
// The set isa_active() names.
const Kernels &active_kernels();

}  // namespace xc::cpu
