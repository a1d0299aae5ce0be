#include "cpu/reduce.h"

#include <cstdint>
#include <type_traits>

#include "cpu/half.h"

namespace xc::cpu {

namespace {

// Integer arithmetic wraps (computed unsigned), as two's-complement hardware does.
template <typename T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;  // avoid int promotion UB
  return static_cast<T>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b)));
}

template <typename T, typename F>
void apply(void *inout, const void *in, size_t n, F f) {
  T *a = static_cast<T *>(inout);
  const T *b = static_cast<const T *>(in);
  for (size_t i = 0; i < n; ++i) a[i] = f(a[i], b[i]);
}

template <typename T>
void reduce_int(void *a, const void *b, size_t n, xc_op_t op) {
  switch (op) {
    case XC_SUM: case XC_AVG: apply<T>(a, b, n, [](T x, T y) { return wrap_add(x, y); }); break;
    case XC_PROD: apply<T>(a, b, n, [](T x, T y) { return wrap_mul(x, y); }); break;
    case XC_MIN: apply<T>(a, b, n, [](T x, T y) { return y < x ? y : x; }); break;
    case XC_MAX: apply<T>(a, b, n, [](T x, T y) { return y > x ? y : x; }); break;
    case XC_BAND: apply<T>(a, b, n, [](T x, T y) { return static_cast<T>(x & y); }); break;
    case XC_BOR: apply<T>(a, b, n, [](T x, T y) { return static_cast<T>(x | y); }); break;
    case XC_BXOR: apply<T>(a, b, n, [](T x, T y) { return static_cast<T>(x ^ y); }); break;
    default: break;
  }
}

template <typename T>
void reduce_float(void *a, const void *b, size_t n, xc_op_t op) {
  switch (op) {
    case XC_SUM: case XC_AVG: apply<T>(a, b, n, [](T x, T y) { return x + y; }); break;
    case XC_PROD: apply<T>(a, b, n, [](T x, T y) { return x * y; }); break;
    // NaN propagates: a comparison with NaN keeps x only when x is the NaN.
    case XC_MIN: apply<T>(a, b, n, [](T x, T y) { return (y < x || y != y) ? y : x; }); break;
    case XC_MAX: apply<T>(a, b, n, [](T x, T y) { return (y > x || y != y) ? y : x; }); break;
    default: break;
  }
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void reduce_half(void *inout, const void *in, size_t n, xc_op_t op) {
  uint16_t *a = static_cast<uint16_t *>(inout);
  const uint16_t *b = static_cast<const uint16_t *>(in);
  constexpr size_t kBlock = 256;
  float fa[kBlock], fb[kBlock];
  for (size_t off = 0; off < n; off += kBlock) {
    size_t m = n - off < kBlock ? n - off : kBlock;
    for (size_t i = 0; i < m; ++i) {
      fa[i] = ToFloat(a[off + i]);
      fb[i] = ToFloat(b[off + i]);
    }
    reduce_float<float>(fa, fb, m, op);
    for (size_t i = 0; i < m; ++i) a[off + i] = FromFloat(fa[i]);
  }
}

template <typename T>
void scale_int(void *buf, size_t n, int ranks) {
  T *a = static_cast<T *>(buf);
  for (size_t i = 0; i < n; ++i) a[i] = static_cast<T>(a[i] / static_cast<T>(ranks));
}
template <typename T>
void scale_float(void *buf, size_t n, int ranks) {
  T *a = static_cast<T *>(buf);
  for (size_t i = 0; i < n; ++i) a[i] = a[i] / static_cast<T>(ranks);
}
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void scale_half(void *buf, size_t n, int ranks) {
  uint16_t *a = static_cast<uint16_t *>(buf);
  for (size_t i = 0; i < n; ++i) a[i] = FromFloat(ToFloat(a[i]) / static_cast<float>(ranks));
}

}  // namespace

void reduce(void *inout, const void *in, size_t count, xc_dtype_t dtype, xc_op_t op) {
  switch (dtype) {
    case XC_INT8: reduce_int<int8_t>(inout, in, count, op); break;
    case XC_UINT8: reduce_int<uint8_t>(inout, in, count, op); break;
    case XC_INT32: reduce_int<int32_t>(inout, in, count, op); break;
    case XC_UINT32: reduce_int<uint32_t>(inout, in, count, op); break;
    case XC_INT64: reduce_int<int64_t>(inout, in, count, op); break;
    case XC_UINT64: reduce_int<uint64_t>(inout, in, count, op); break;
    case XC_FLOAT16: reduce_half<half_to_float, float_to_half>(inout, in, count, op); break;
    case XC_BFLOAT16: reduce_half<bf16_to_float, float_to_bf16>(inout, in, count, op); break;
    case XC_FLOAT32: reduce_float<float>(inout, in, count, op); break;
    case XC_FLOAT64: reduce_float<double>(inout, in, count, op); break;
    default: break;
  }
}

void scale_avg(void *buf, size_t count, xc_dtype_t dtype, int n) {
  switch (dtype) {
    case XC_INT8: scale_int<int8_t>(buf, count, n); break;
    case XC_UINT8: scale_int<uint8_t>(buf, count, n); break;
    case XC_INT32: scale_int<int32_t>(buf, count, n); break;
    case XC_UINT32: scale_int<uint32_t>(buf, count, n); break;
    case XC_INT64: scale_int<int64_t>(buf, count, n); break;
    case XC_UINT64: scale_int<uint64_t>(buf, count, n); break;
    case XC_FLOAT16: scale_half<half_to_float, float_to_half>(buf, count, n); break;
    case XC_BFLOAT16: scale_half<bf16_to_float, float_to_bf16>(buf, count, n); break;
    case XC_FLOAT32: scale_float<float>(buf, count, n); break;
    case XC_FLOAT64: scale_float<double>(buf, count, n); break;
    default: break;
  }
}

void widen_to_float(const void *in, float *out, size_t count, xc_dtype_t dtype) {
  const uint16_t *h = static_cast<const uint16_t *>(in);
  if (dtype == XC_FLOAT16)
    for (size_t i = 0; i < count; ++i) out[i] = half_to_float(h[i]);
  else
    for (size_t i = 0; i < count; ++i) out[i] = bf16_to_float(h[i]);
}

void narrow_from_float(const float *in, void *out, size_t count, xc_dtype_t dtype) {
  uint16_t *h = static_cast<uint16_t *>(out);
  if (dtype == XC_FLOAT16)
    for (size_t i = 0; i < count; ++i) h[i] = float_to_half(in[i]);
  else
    for (size_t i = 0; i < count; ++i) h[i] = float_to_bf16(in[i]);
}

}  // namespace xc::cpu
