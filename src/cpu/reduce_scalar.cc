// The portable kernels: the reference every vectorised level must match bit
// for bit, and the fallback on CPUs without AVX2.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/reduce_table.h"
#include "cpu/half.h"
#include "cpu/reduce_kernels.h"

namespace xc::cpu::detail {

namespace {

using reduce_table::Dtype;
using reduce_table::Kind;

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

template <typename T, xc_op_t O>
T int_op(T x, T y) {
  if constexpr (O == XC_SUM) return wrap_add(x, y);
  if constexpr (O == XC_PROD) return wrap_mul(x, y);
  if constexpr (O == XC_MIN) return y < x ? y : x;
  if constexpr (O == XC_MAX) return y > x ? y : x;
  if constexpr (O == XC_BAND) return static_cast<T>(x & y);
  if constexpr (O == XC_BOR) return static_cast<T>(x | y);
  if constexpr (O == XC_BXOR) return static_cast<T>(x ^ y);
}

// x with its quiet bit set (x is a NaN).
template <typename T>
T quiet(T x) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits bits;
  memcpy(&bits, &x, sizeof bits);
  bits |= Bits{1} << (sizeof(T) == 4 ? 22 : 51);
  memcpy(&x, &bits, sizeof bits);
  return x;
}

// x + y or x * y where, when both are NaN, the result is x's NaN, quieted.
// IEEE 754 leaves open whose payload comes out and C++ lets the compiler swap
// the operands. x86 returns its first source operand's, so on x86 the one
// instruction is written out with x first (as fast as the plain expression);
// elsewhere the rule is spelt out.
template <typename T, xc_op_t O>
T arith(T x, T y) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
#if defined(__AVX__)  // the whole build targets AVX: stay in VEX encoding
#define XC_ARITH(insn) __asm__("v" insn " {%2, %1, %0|%0, %1, %2}" : "=x"(x) : "x"(x), "xm"(y))
#else
#define XC_ARITH(insn) __asm__(insn " {%1, %0|%0, %1}" : "+x"(x) : "xm"(y))
#endif
  if constexpr (O == XC_SUM && sizeof(T) == 4) XC_ARITH("addss");
  if constexpr (O == XC_SUM && sizeof(T) == 8) XC_ARITH("addsd");
  if constexpr (O == XC_PROD && sizeof(T) == 4) XC_ARITH("mulss");
  if constexpr (O == XC_PROD && sizeof(T) == 8) XC_ARITH("mulsd");
#undef XC_ARITH
  return x;
#else
  if (x != x) return quiet(x);
  return O == XC_SUM ? x + y : x * y;
#endif
}

template <typename T, xc_op_t O>
T float_op(T x, T y) {
  if constexpr (O == XC_SUM || O == XC_PROD) return arith<T, O>(x, y);
  // NaN propagates: a comparison with NaN keeps x only when x is the NaN.
  if constexpr (O == XC_MIN) return (y < x || y != y) ? y : x;
  if constexpr (O == XC_MAX) return (y > x || y != y) ? y : x;
}

template <Kind K>
float to_float(uint16_t h) {
  if constexpr (K == Kind::kHalf) return half_to_float(h);
  else return bf16_to_float(h);
}
template <Kind K>
uint16_t from_float(float f) {
  if constexpr (K == Kind::kHalf) return float_to_half(f);
  else return float_to_bf16(f);
}

template <xc_dtype_t D, xc_op_t O>
void reduce_kernel(void *out, const void *a, const void *b, size_t n) {
  using T = typename Dtype<D>::type;
  constexpr Kind K = Dtype<D>::kind;
  T *o = static_cast<T *>(out);
  const T *x = static_cast<const T *>(a);
  const T *y = static_cast<const T *>(b);
  if constexpr (K == Kind::kInt) {
    for (size_t i = 0; i < n; ++i) o[i] = int_op<T, O>(x[i], y[i]);
  } else if constexpr (K == Kind::kFloat) {
    for (size_t i = 0; i < n; ++i) o[i] = float_op<T, O>(x[i], y[i]);
  } else {
    for (size_t i = 0; i < n; ++i) o[i] = from_float<K>(float_op<float, O>(to_float<K>(x[i]), to_float<K>(y[i])));
  }
}

template <xc_dtype_t D>
void scale_kernel(void *buf, size_t n, int ranks) {
  using T = typename Dtype<D>::type;
  constexpr Kind K = Dtype<D>::kind;
  T *a = static_cast<T *>(buf);
  if constexpr (K == Kind::kInt || K == Kind::kFloat) {
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<T>(a[i] / static_cast<T>(ranks));
  } else {
    for (size_t i = 0; i < n; ++i) a[i] = from_float<K>(to_float<K>(a[i]) / static_cast<float>(ranks));
  }
}

template <Kind K>
void widen_kernel(const void *in, float *out, size_t n) {
  const uint16_t *h = static_cast<const uint16_t *>(in);
  for (size_t i = 0; i < n; ++i) out[i] = to_float<K>(h[i]);
}
template <Kind K>
void narrow_kernel(const float *in, void *out, size_t n) {
  uint16_t *h = static_cast<uint16_t *>(out);
  for (size_t i = 0; i < n; ++i) h[i] = from_float<K>(in[i]);
}

struct Fill {
  Kernels &k;
  template <xc_dtype_t D, xc_op_t O>
  void visit() {
    k.reduce[D][O] = &reduce_kernel<D, reduce_table::kernel_op(O)>;
  }
  template <xc_dtype_t D>
  void visit() {
    constexpr Kind K = Dtype<D>::kind;
    k.scale[D] = &scale_kernel<D>;
    if constexpr (K == Kind::kHalf || K == Kind::kBf16) {
      k.widen[D] = &widen_kernel<K>;
      k.narrow[D] = &narrow_kernel<K>;
    }
  }
};

}  // namespace

void fill_scalar(Kernels &k) {
  k = Kernels{};
  k.isa = Isa::kScalar;
  Fill f{k};
  reduce_table::for_each_kernel(f);
  reduce_table::for_each_dtype(f);
}

}  // namespace xc::cpu::detail
