// AVX2 (+F16C) kernels, generated from the table in base/reduce_table.h.
//
// This file is built with the default flags: only the functions below carry
// the AVX2 target (a pragma applies the target attribute to each of them), so
// nothing compiled here can leak AVX2 code into the rest of the library, and
// the dispatcher calls into it only after cpuid says the CPU has AVX2 and F16C.
// Every kernel gives exactly the bits of the scalar kernels in
// reduce_scalar.cc; the comments say how where that is not obvious.
#include "cpu/reduce_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/reduce_table.h"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,f16c")
#endif

#include "cpu/reduce_loops.h"

namespace xc::cpu::detail {

namespace {

using reduce_loops::binary_loop;
using reduce_loops::unary_loop;

using reduce_table::Dtype;
using reduce_table::Kind;

constexpr size_t kVec = 32;  // bytes in a register

inline __m256i load(const char *p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)); }
inline void store(char *p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), v); }
inline __m128i load128(const char *p) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)); }
inline void store128(char *p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i *>(p), v); }

// ---- integers: wrap-around arithmetic is what the vector units do anyway ----

// a * b for 8-bit lanes: the low byte of a 16-bit product is the 8-bit product.
inline __m256i mul8(__m256i a, __m256i b) {
  __m256i even = _mm256_mullo_epi16(a, b);
  __m256i odd = _mm256_mullo_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
  return _mm256_or_si256(_mm256_slli_epi16(odd, 8), _mm256_and_si256(even, _mm256_set1_epi16(0xff)));
}

// a * b mod 2^64 = lo(a)lo(b) + ((lo(a)hi(b) + hi(a)lo(b)) << 32).
inline __m256i mul64(__m256i a, __m256i b) {
  __m256i lo = _mm256_mul_epu32(a, b);
  __m256i cross = _mm256_mullo_epi32(a, _mm256_shuffle_epi32(b, 0xb1));
  __m256i sum = _mm256_add_epi32(cross, _mm256_srli_epi64(cross, 32));
  return _mm256_add_epi64(lo, _mm256_slli_epi64(sum, 32));
}

// a > b for 64-bit lanes; unsigned compares signed after flipping the top bit.
template <bool kSigned>
inline __m256i gt64(__m256i a, __m256i b) {
  if constexpr (!kSigned) {
    const __m256i bias = _mm256_set1_epi64x(INT64_MIN);
    a = _mm256_xor_si256(a, bias);
    b = _mm256_xor_si256(b, bias);
  }
  return _mm256_cmpgt_epi64(a, b);
}

template <typename T, xc_op_t O>
inline __m256i int_op(__m256i x, __m256i y) {
  constexpr size_t S = sizeof(T);
  constexpr bool kSigned = std::is_signed_v<T>;
  static_assert(S == 1 || S == 4 || S == 8);
  if constexpr (O == XC_SUM) {
    if constexpr (S == 1) return _mm256_add_epi8(x, y);
    else if constexpr (S == 4) return _mm256_add_epi32(x, y);
    else return _mm256_add_epi64(x, y);
  } else if constexpr (O == XC_PROD) {
    if constexpr (S == 1) return mul8(x, y);
    else if constexpr (S == 4) return _mm256_mullo_epi32(x, y);
    else return mul64(x, y);
  } else if constexpr (O == XC_MIN) {
    if constexpr (S == 1) return kSigned ? _mm256_min_epi8(x, y) : _mm256_min_epu8(x, y);
    else if constexpr (S == 4) return kSigned ? _mm256_min_epi32(x, y) : _mm256_min_epu32(x, y);
    else return _mm256_blendv_epi8(x, y, gt64<kSigned>(x, y));
  } else if constexpr (O == XC_MAX) {
    if constexpr (S == 1) return kSigned ? _mm256_max_epi8(x, y) : _mm256_max_epu8(x, y);
    else if constexpr (S == 4) return kSigned ? _mm256_max_epi32(x, y) : _mm256_max_epu32(x, y);
    else return _mm256_blendv_epi8(x, y, gt64<kSigned>(y, x));
  } else if constexpr (O == XC_BAND) {
    return _mm256_and_si256(x, y);
  } else if constexpr (O == XC_BOR) {
    return _mm256_or_si256(x, y);
  } else {
    static_assert(O == XC_BXOR);
    return _mm256_xor_si256(x, y);
  }
}

// ---- floating point ---------------------------------------------------------
//
// sum, prod: x86 returns its first source operand's NaN (quieted) when both
// are NaN, which is the scalar rule "x NaN → x quieted". The intrinsics let the
// compiler swap the operands of a commutative op, so the instruction is
// written out with x as the first source. min, max: the scalar rule's
// comparisons, then a blend of the raw bits (not MINPS/MAXPS, which would
// return a flushed zero for a denormal input when the caller runs with DAZ).
template <typename F>
struct Fv;

template <>
struct Fv<float> {
  using V = __m256;
  static V load(const char *p) { return _mm256_loadu_ps(reinterpret_cast<const float *>(p)); }
  static void store(char *p, V v) { _mm256_storeu_ps(reinterpret_cast<float *>(p), v); }
  static V add(V x, V y) {
    V r;
    __asm__("vaddps {%2, %1, %0|%0, %1, %2}" : "=x"(r) : "x"(x), "xm"(y));
    return r;
  }
  static V mul(V x, V y) {
    V r;
    __asm__("vmulps {%2, %1, %0|%0, %1, %2}" : "=x"(r) : "x"(x), "xm"(y));
    return r;
  }
  static V min(V x, V y) {
    return _mm256_blendv_ps(x, y, _mm256_or_ps(_mm256_cmp_ps(y, x, _CMP_LT_OQ), _mm256_cmp_ps(y, y, _CMP_UNORD_Q)));
  }
  static V max(V x, V y) {
    return _mm256_blendv_ps(x, y, _mm256_or_ps(_mm256_cmp_ps(y, x, _CMP_GT_OQ), _mm256_cmp_ps(y, y, _CMP_UNORD_Q)));
  }
  static V div(V x, V y) { return _mm256_div_ps(x, y); }
  static V splat(int n) { return _mm256_set1_ps(static_cast<float>(n)); }
};

template <>
struct Fv<double> {
  using V = __m256d;
  static V load(const char *p) { return _mm256_loadu_pd(reinterpret_cast<const double *>(p)); }
  static void store(char *p, V v) { _mm256_storeu_pd(reinterpret_cast<double *>(p), v); }
  static V add(V x, V y) {
    V r;
    __asm__("vaddpd {%2, %1, %0|%0, %1, %2}" : "=x"(r) : "x"(x), "xm"(y));
    return r;
  }
  static V mul(V x, V y) {
    V r;
    __asm__("vmulpd {%2, %1, %0|%0, %1, %2}" : "=x"(r) : "x"(x), "xm"(y));
    return r;
  }
  static V min(V x, V y) {
    return _mm256_blendv_pd(x, y, _mm256_or_pd(_mm256_cmp_pd(y, x, _CMP_LT_OQ), _mm256_cmp_pd(y, y, _CMP_UNORD_Q)));
  }
  static V max(V x, V y) {
    return _mm256_blendv_pd(x, y, _mm256_or_pd(_mm256_cmp_pd(y, x, _CMP_GT_OQ), _mm256_cmp_pd(y, y, _CMP_UNORD_Q)));
  }
  static V div(V x, V y) { return _mm256_div_pd(x, y); }
  static V splat(int n) { return _mm256_set1_pd(static_cast<double>(n)); }
};

template <typename F, xc_op_t O>
inline typename Fv<F>::V float_op(typename Fv<F>::V x, typename Fv<F>::V y) {
  if constexpr (O == XC_SUM) return Fv<F>::add(x, y);
  else if constexpr (O == XC_PROD) return Fv<F>::mul(x, y);
  else if constexpr (O == XC_MIN) return Fv<F>::min(x, y);
  else return Fv<F>::max(x, y);
}

// ---- float16 and bfloat16 ↔ float32 -----------------------------------------

// 8 float16 → float32 exactly (F16C), as half_to_float does. The one
// difference is a signalling NaN, which VCVTPH2PS quiets: its quiet bit is
// cleared again. (Within a reduction this cannot show, since narrowing back
// makes every NaN sign|0x7e00; it matters for widen_to_float.)
inline __m256 f16_widen_exact(__m128i h) {
  __m256 f = _mm256_cvtph_ps(h);
  __m256i flip = _mm256_slli_epi32(_mm256_andnot_si256(_mm256_cvtepu16_epi32(h), _mm256_set1_epi32(0x200)), 13);
  return _mm256_xor_ps(f, _mm256_and_ps(_mm256_castsi256_ps(flip), _mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
}

// Whether a or b holds a NaN: the NaN fix-ups below are taken only then.
inline bool any_nan(__m256 a, __m256 b) { return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)) != 0; }

// float32 → float16 rounds to nearest even (F16C) as float_to_half does, but
// VCVTPS2PH keeps the top of a NaN's payload where float_to_half answers
// sign|0x7e00: the NaN lanes (all quiet after the conversion) lose their low 9 bits.
inline __m128i f16_fix_nan(__m128i h) {
  const __m128i qnan = _mm_set1_epi16(0x7e00);
  __m128i nan = _mm_cmpeq_epi16(_mm_and_si128(h, qnan), qnan);
  return _mm_andnot_si128(_mm_and_si128(nan, _mm_set1_epi16(0x1ff)), h);
}
// 8 float32 → float16.
inline __m128i f16_narrow(__m256 f) {
  __m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
  return any_nan(f, f) ? f16_fix_nan(h) : h;
}
// 2 × 8 float32 → float16, stored at o and o + 16.
inline void f16_narrow_store2(char *o, __m256 f0, __m256 f1) {
  __m128i h0 = _mm256_cvtps_ph(f0, _MM_FROUND_TO_NEAREST_INT), h1 = _mm256_cvtps_ph(f1, _MM_FROUND_TO_NEAREST_INT);
  if (any_nan(f0, f1)) {
    h0 = f16_fix_nan(h0);
    h1 = f16_fix_nan(h1);
  }
  store128(o, h0);
  store128(o + 16, h1);
}

// float32 → bfloat16 in the low 16 bits of each 32-bit lane, exactly
// float_to_bf16: round to nearest even; a NaN keeps its top bits and is quieted.
inline __m256i bf16_round32(__m256 f) {
  __m256i bits = _mm256_castps_si256(f);
  __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1)));
  return _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
}
inline __m256i bf16_fix_nan32(__m256 f, __m256i rounded) {
  __m256i nan = _mm256_or_si256(_mm256_srli_epi32(_mm256_castps_si256(f), 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, nan, _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
}
// 2 × 8 float32 → 16 bfloat16, in VPACKUSDW's order: per 128-bit lane, 4 from lo then 4 from hi.
inline __m256i bf16_pack2(__m256 lo, __m256 hi) {
  __m256i a = bf16_round32(lo), b = bf16_round32(hi);
  if (any_nan(lo, hi)) {
    a = bf16_fix_nan32(lo, a);
    b = bf16_fix_nan32(hi, b);
  }
  return _mm256_packus_epi32(a, b);
}

// ---- one register's worth (kElems elements) of each kernel ------------------

template <xc_dtype_t D, xc_op_t O, Kind K = Dtype<D>::kind>
struct Chunk;

template <xc_dtype_t D, xc_op_t O>
struct Chunk<D, O, Kind::kInt> {
  using T = typename Dtype<D>::type;
  static constexpr size_t kElems = kVec / sizeof(T);
  static void run(char *o, const char *a, const char *b) { store(o, int_op<T, O>(load(a), load(b))); }
};

template <xc_dtype_t D, xc_op_t O>
struct Chunk<D, O, Kind::kFloat> {
  using T = typename Dtype<D>::type;
  static constexpr size_t kElems = kVec / sizeof(T);
  static void run(char *o, const char *a, const char *b) {
    Fv<T>::store(o, float_op<T, O>(Fv<T>::load(a), Fv<T>::load(b)));
  }
};

template <xc_dtype_t D, xc_op_t O>
struct Chunk<D, O, Kind::kHalf> {
  static constexpr size_t kElems = 16;
  static void run(char *o, const char *a, const char *b) {
    // The widening's NaN quirk needs no fix here (see f16_widen_exact).
    __m256 r0 = float_op<float, O>(_mm256_cvtph_ps(load128(a)), _mm256_cvtph_ps(load128(b)));
    __m256 r1 = float_op<float, O>(_mm256_cvtph_ps(load128(a + 16)), _mm256_cvtph_ps(load128(b + 16)));
    f16_narrow_store2(o, r0, r1);
  }
};

template <xc_dtype_t D, xc_op_t O>
struct Chunk<D, O, Kind::kBf16> {
  static constexpr size_t kElems = 16;
  static void run(char *o, const char *a, const char *b) {
    // bfloat16 is the top half of a float32: interleaving with zeros widens
    // (elements 0-3, 8-11 in lo, 4-7, 12-15 in hi), and the pack undoes that order.
    const __m256i zero = _mm256_setzero_si256();
    __m256i x = load(a), y = load(b);
    __m256 lo = float_op<float, O>(_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, x)),
                                   _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, y)));
    __m256 hi = float_op<float, O>(_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, x)),
                                   _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, y)));
    store(o, bf16_pack2(lo, hi));
  }
};

template <xc_dtype_t D, xc_op_t O>
void reduce_kernel(void *out, const void *a, const void *b, size_t n) {
  binary_loop<Chunk<D, O>, sizeof(typename Dtype<D>::type)>(out, a, b, n);
}

// ---- element-wise conversions and the average's division --------------------

struct WidenF16 {
  static constexpr size_t kElems = 8, kIn = 2, kOut = 4;
  void run(char *o, const char *i) const { _mm256_storeu_ps(reinterpret_cast<float *>(o), f16_widen_exact(load128(i))); }
};
struct WidenBf16 {
  static constexpr size_t kElems = 8, kIn = 2, kOut = 4;
  void run(char *o, const char *i) const { store(o, _mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(i)), 16)); }
};
struct NarrowF16 {
  static constexpr size_t kElems = 8, kIn = 4, kOut = 2;
  void run(char *o, const char *i) const { store128(o, f16_narrow(Fv<float>::load(i))); }
};
struct NarrowBf16 {
  static constexpr size_t kElems = 16, kIn = 4, kOut = 2;
  void run(char *o, const char *i) const {
    // The pack interleaves 128-bit lanes (0-3, 8-11, 4-7, 12-15); the permute restores the order.
    __m256i packed = bf16_pack2(Fv<float>::load(i), Fv<float>::load(i + 32));
    store(o, _mm256_permute4x64_epi64(packed, 0xd8));
  }
};

template <typename F>
struct ScaleFloat {
  static constexpr size_t kElems = kVec / sizeof(F), kIn = sizeof(F), kOut = sizeof(F);
  typename Fv<F>::V divisor;
  void run(char *o, const char *i) const { Fv<F>::store(o, Fv<F>::div(Fv<F>::load(i), divisor)); }
};
struct ScaleF16 {
  static constexpr size_t kElems = 8, kIn = 2, kOut = 2;
  __m256 divisor;
  void run(char *o, const char *i) const { store128(o, f16_narrow(_mm256_div_ps(_mm256_cvtph_ps(load128(i)), divisor))); }
};
struct ScaleBf16 {
  static constexpr size_t kElems = 16, kIn = 2, kOut = 2;
  __m256 divisor;
  void run(char *o, const char *i) const {
    const __m256i zero = _mm256_setzero_si256();
    __m256i x = load(i);
    __m256 lo = _mm256_div_ps(_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, x)), divisor);
    __m256 hi = _mm256_div_ps(_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, x)), divisor);
    store(o, bf16_pack2(lo, hi));
  }
};

template <class C>
void widen_kernel(const void *in, float *out, size_t n) {
  unary_loop(C{}, in, out, n);
}
template <class C>
void narrow_kernel(const float *in, void *out, size_t n) {
  unary_loop(C{}, in, out, n);
}
template <typename F>
void scale_float(void *buf, size_t n, int ranks) {
  unary_loop(ScaleFloat<F>{Fv<F>::splat(ranks)}, buf, buf, n);
}
void scale_f16(void *buf, size_t n, int ranks) { unary_loop(ScaleF16{Fv<float>::splat(ranks)}, buf, buf, n); }
void scale_bf16(void *buf, size_t n, int ranks) { unary_loop(ScaleBf16{Fv<float>::splat(ranks)}, buf, buf, n); }

struct Fill {
  Kernels &k;
  template <xc_dtype_t D, xc_op_t O>
  void visit() {
    k.reduce[D][O] = &reduce_kernel<D, reduce_table::kernel_op(O)>;
  }
  // Integer division has no vector instruction: the scalar kernel stays.
  template <xc_dtype_t D>
  void visit() {
    if constexpr (D == XC_FLOAT32) k.scale[D] = &scale_float<float>;
    if constexpr (D == XC_FLOAT64) k.scale[D] = &scale_float<double>;
    if constexpr (D == XC_FLOAT16) {
      k.scale[D] = &scale_f16;
      k.widen[D] = &widen_kernel<WidenF16>;
      k.narrow[D] = &narrow_kernel<NarrowF16>;
    }
    if constexpr (D == XC_BFLOAT16) {
      k.scale[D] = &scale_bf16;
      k.widen[D] = &widen_kernel<WidenBf16>;
      k.narrow[D] = &narrow_kernel<NarrowBf16>;
    }
  }
};

}  // namespace

bool fill_avx2(Kernels &k) {
  Fill f{k};
  reduce_table::for_each_kernel(f);
  reduce_table::for_each_dtype(f);
  k.isa = Isa::kAvx2;
  return true;
}

}  // namespace xc::cpu::detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#else  // not x86-64 with GCC or clang

namespace xc::cpu::detail {
bool fill_avx2(Kernels &) { return false; }
}  // namespace xc::cpu::detail

#endif
