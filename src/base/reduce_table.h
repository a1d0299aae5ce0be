// The one table of dtypes × reduction ops. The dtype and op names, sizes and
// checks (base/dtype.cc) and every kernel set — the host's scalar, AVX2 and
// AVX-512 kernels, and the CUDA instantiations when they come — are
// generated from these two lists; there is no second list to keep in sync. Plain C++17 and the public header only, so that nvcc
// can read it too.
#pragma once

#include <cstddef>
#include <cstdint>

#include "xcomm.h"

// X(dtype enum, storage type, kind, name), in enum order (the ABI fixes the
// values; every array indexed by them is generated from this list).
// float16 and bfloat16 are stored as their 16 raw bits and reduced through
// float32, rounding back to nearest even.
#define XC_REDUCE_DTYPES(X)                   \
  X(XC_INT8, int8_t, kInt, "int8")            \
  X(XC_UINT8, uint8_t, kInt, "uint8")         \
  X(XC_INT32, int32_t, kInt, "int32")         \
  X(XC_UINT32, uint32_t, kInt, "uint32")      \
  X(XC_INT64, int64_t, kInt, "int64")         \
  X(XC_UINT64, uint64_t, kInt, "uint64")      \
  X(XC_FLOAT16, uint16_t, kHalf, "float16")   \
  X(XC_BFLOAT16, uint16_t, kBf16, "bfloat16") \
  X(XC_FLOAT32, float, kFloat, "float32")     \
  X(XC_FLOAT64, double, kFloat, "float64")

// X(op enum, name), in enum order. AVG is reduced as SUM (the caller
// divides once at the end); the bitwise ops exist for integers only.
#define XC_REDUCE_OPS(X) \
  X(XC_SUM, "sum") X(XC_PROD, "prod") X(XC_MIN, "min") X(XC_MAX, "max") X(XC_AVG, "avg") X(XC_BAND, "band") \
  X(XC_BOR, "bor") X(XC_BXOR, "bxor")

namespace xc::reduce_table {

enum class Kind { kInt, kFloat, kHalf, kBf16 };

template <xc_dtype_t D>
struct Dtype;
#define XC_REDUCE_TABLE_TRAITS(d, T, k, name) \
  template <>                           \
  struct Dtype<d> {                     \
    using type = T;                     \
    static constexpr Kind kind = Kind::k; \
  };
XC_REDUCE_DTYPES(XC_REDUCE_TABLE_TRAITS)
#undef XC_REDUCE_TABLE_TRAITS

#define XC_REDUCE_TABLE_COUNT(...) +1
constexpr int kNumDtypes = 0 XC_REDUCE_DTYPES(XC_REDUCE_TABLE_COUNT);
constexpr int kNumOps = 0 XC_REDUCE_OPS(XC_REDUCE_TABLE_COUNT);
#undef XC_REDUCE_TABLE_COUNT

// The op a kernel really computes for op: AVG shares SUM's kernel.
constexpr xc_op_t kernel_op(xc_op_t op) { return op == XC_AVG ? XC_SUM : op; }

// Whether the pair has a kernel (bitwise ops on floating types have none).
constexpr bool op_applies(Kind kind, xc_op_t op) {
  return kind == Kind::kInt || (op != XC_BAND && op != XC_BOR && op != XC_BXOR);
}

namespace detail {
template <xc_dtype_t D, class F>
void visit_ops(F &f) {
#define XC_REDUCE_TABLE_OP(o, name) \
  if constexpr (op_applies(Dtype<D>::kind, o)) f.template visit<D, o>();
  XC_REDUCE_OPS(XC_REDUCE_TABLE_OP)
#undef XC_REDUCE_TABLE_OP
}
}  // namespace detail

// Calls f.template visit<D, O>() for every dtype D and every op O that applies to it.
template <class F>
void for_each_kernel(F &f) {
#define XC_REDUCE_TABLE_DTYPE(d, T, k, name) detail::visit_ops<d>(f);
  XC_REDUCE_DTYPES(XC_REDUCE_TABLE_DTYPE)
#undef XC_REDUCE_TABLE_DTYPE
}

// Calls f.template visit<D>() for every dtype D.
template <class F>
void for_each_dtype(F &f) {
#define XC_REDUCE_TABLE_DTYPE(d, T, k, name) f.template visit<d>();
  XC_REDUCE_DTYPES(XC_REDUCE_TABLE_DTYPE)
#undef XC_REDUCE_TABLE_DTYPE
}

}  // namespace xc::reduce_table
