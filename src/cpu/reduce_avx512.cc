// AVX-512 (F, BW, VL, DQ + F16C) kernels, generated from the table in
// base/reduce_table.h. Built like reduce_avx2.cc (see there): default flags, the
// target attribute on these functions only, called after cpuid says yes, and
// the same bits as the scalar kernels.
#include "cpu/reduce_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/reduce_table.h"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,f16c")
// GCC 12's own _mm512_undefined_*() (`__m512i __Y = __Y;`) trips this
// warning in every intrinsic that uses it (GCC PR 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "cpu/reduce_loops.h"

namespace xc::cpu::detail {

namespace {

using reduce_loops::binary_loop;
using reduce_loops::unary_loop;

using reduce_table::Dtype;
using reduce_table::Kind;

constexpr size_t kVec = 64;  // bytes in a register

inline __m512i load(const char *p) { return _mm512_loadu_si512(p); }
inline void store(char *p, __m512i v) { _mm512_storeu_si512(p, v); }
inline __m256i load256(const char *p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)); }
inline void store256(char *p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), v); }

// ---- integers: wrap-around arithmetic is what the vector units do anyway ----

// a * b for 8-bit lanes: the low byte of a 16-bit product is the 8-bit product.
inline __m512i mul8(__m512i a, __m512i b) {
  __m512i even = _mm512_mullo_epi16(a, b);
  __m512i odd = _mm512_mullo_epi16(_mm512_srli_epi16(a, 8), _mm512_srli_epi16(b, 8));
  return _mm512_mask_blend_epi8(0xaaaaaaaaaaaaaaaaull, even, _mm512_slli_epi16(odd, 8));
}

template <typename T, xc_op_t O>
inline __m512i int_op(__m512i x, __m512i y) {
  constexpr size_t S = sizeof(T);
  constexpr bool kSigned = std::is_signed_v<T>;
  static_assert(S == 1 || S == 4 || S == 8);
  if constexpr (O == XC_SUM) {
    if constexpr (S == 1) return _mm512_add_epi8(x, y);
    else if constexpr (S == 4) return _mm512_add_epi32(x, y);
    else return _mm512_add_epi64(x, y);
  } else if constexpr (O == XC_PROD) {
    if constexpr (S == 1) return mul8(x, y);
    else if constexpr (S == 4) return _mm512_mullo_epi32(x, y);
    else return _mm512_mullo_epi64(x, y);
  } else if constexpr (O == XC_MIN) {
    if constexpr (S == 1) return kSigned ? _mm512_min_epi8(x, y) : _mm512_min_epu8(x, y);
    else if constexpr (S == 4) return kSigned ? _mm512_min_epi32(x, y) : _mm512_min_epu32(x, y);
    else return kSigned ? _mm512_min_epi64(x, y) : _mm512_min_epu64(x, y);
  } else if constexpr (O == XC_MAX) {
    if constexpr (S == 1) return kSigned ? _mm512_max_epi8(x, y) : _mm512_max_epu8(x, y);
    else if constexpr (S == 4) return kSigned ? _mm512_max_epi32(x, y) : _mm512_max_epu32(x, y);
    else return kSigned ? _mm512_max_epi64(x, y) : _mm512_max_epu64(x, y);
  } else if constexpr (O == XC_BAND) {
    return _mm512_and_si512(x, y);
  } else if constexpr (O == XC_BOR) {
    return _mm512_or_si512(x, y);
  } else {
    static_assert(O == XC_BXOR);
    return _mm512_xor_si512(x, y);
  }
}

// ---- floating point ---------------------------------------------------------
//
// As in reduce_avx2.cc: sum and prod are written out with x as the first
// source operand (whose NaN x86 returns when both are NaN); min and max are
// the scalar rule's comparisons and a blend of the raw bits.
template <typename F>
struct Fv;

template <>
struct Fv<float> {
  using V = __m512;
  static V load(const char *p) { return _mm512_loadu_ps(p); }
  static void store(char *p, V v) { _mm512_storeu_ps(p, v); }
  static V add(V x, V y) {
    V r;
    __asm__("vaddps {%2, %1, %0|%0, %1, %2}" : "=v"(r) : "v"(x), "vm"(y));
    return r;
  }
  static V mul(V x, V y) {
    V r;
    __asm__("vmulps {%2, %1, %0|%0, %1, %2}" : "=v"(r) : "v"(x), "vm"(y));
    return r;
  }
  static V min(V x, V y) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(y, x, _CMP_LT_OQ) | _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q), x, y);
  }
  static V max(V x, V y) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(y, x, _CMP_GT_OQ) | _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q), x, y);
  }
  static V div(V x, V y) { return _mm512_div_ps(x, y); }
  static V splat(int n) { return _mm512_set1_ps(static_cast<float>(n)); }
};

template <>
struct Fv<double> {
  using V = __m512d;
  static V load(const char *p) { return _mm512_loadu_pd(p); }
  static void store(char *p, V v) { _mm512_storeu_pd(p, v); }
  static V add(V x, V y) {
    V r;
    __asm__("vaddpd {%2, %1, %0|%0, %1, %2}" : "=v"(r) : "v"(x), "vm"(y));
    return r;
  }
  static V mul(V x, V y) {
    V r;
    __asm__("vmulpd {%2, %1, %0|%0, %1, %2}" : "=v"(r) : "v"(x), "vm"(y));
    return r;
  }
  static V min(V x, V y) {
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(y, x, _CMP_LT_OQ) | _mm512_cmp_pd_mask(y, y, _CMP_UNORD_Q), x, y);
  }
  static V max(V x, V y) {
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(y, x, _CMP_GT_OQ) | _mm512_cmp_pd_mask(y, y, _CMP_UNORD_Q), x, y);
  }
  static V div(V x, V y) { return _mm512_div_pd(x, y); }
  static V splat(int n) { return _mm512_set1_pd(static_cast<double>(n)); }
};

template <typename F, xc_op_t O>
inline typename Fv<F>::V float_op(typename Fv<F>::V x, typename Fv<F>::V y) {
  if constexpr (O == XC_SUM) return Fv<F>::add(x, y);
  else if constexpr (O == XC_PROD) return Fv<F>::mul(x, y);
  else if constexpr (O == XC_MIN) return Fv<F>::min(x, y);
  else return Fv<F>::max(x, y);
}

// ---- float16 and bfloat16 ↔ float32 -----------------------------------------

// 16 float16 → float32 exactly, as half_to_float does; VCVTPH2PS quiets a
// signalling NaN, whose quiet bit is cleared again (see reduce_avx2.cc).
inline __m512 f16_widen_exact(__m256i h) {
  __m512 f = _mm512_cvtph_ps(h);
  __m512i flip = _mm512_slli_epi32(_mm512_andnot_si512(_mm512_cvtepu16_epi32(h), _mm512_set1_epi32(0x200)), 13);
  return _mm512_mask_xor_ps(f, _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q), f, _mm512_castsi512_ps(flip));
}

// Which lanes of a or b hold a NaN: the NaN fix-ups below are taken only when some do.
inline __mmask16 nan_lanes(__m512 a, __m512 b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }

// float32 → float16 rounds to nearest even as float_to_half does, but a NaN
// must become sign|0x7e00 where VCVTPS2PH would keep the top of its payload:
// NaN lanes are made sign|0x7fc00000 first, which converts to exactly that.
inline __m512 f16_fix_nan(__m512 f) {
  __m512i bits = _mm512_mask_ternarylogic_epi32(_mm512_castps_si512(f), nan_lanes(f, f), _mm512_set1_epi32(INT32_MIN),
                                                _mm512_set1_epi32(0x7fc00000), 0xea);  // (bits & sign) | qnan
  return _mm512_castsi512_ps(bits);
}
// 16 float32 → float16.
inline __m256i f16_narrow(__m512 f) {
  if (nan_lanes(f, f)) f = f16_fix_nan(f);
  return _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
}
// 2 × 16 float32 → float16, stored at o and o + 32.
inline void f16_narrow_store2(char *o, __m512 f0, __m512 f1) {
  if (nan_lanes(f0, f1)) {
    f0 = f16_fix_nan(f0);
    f1 = f16_fix_nan(f1);
  }
  store256(o, _mm512_cvtps_ph(f0, _MM_FROUND_TO_NEAREST_INT));
  store256(o + 32, _mm512_cvtps_ph(f1, _MM_FROUND_TO_NEAREST_INT));
}

// float32 → bfloat16 in the low 16 bits of each 32-bit lane, exactly
// float_to_bf16: round to nearest even; a NaN keeps its top bits and is quieted.
inline __m512i bf16_round32(__m512 f) {
  __m512i bits = _mm512_castps_si512(f);
  __m512i bias = _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1)));
  return _mm512_srli_epi32(_mm512_add_epi32(bits, bias), 16);
}
inline __m512i bf16_fix_nan32(__m512 f, __m512i rounded) {
  return _mm512_mask_or_epi32(rounded, nan_lanes(f, f), _mm512_srli_epi32(_mm512_castps_si512(f), 16), _mm512_set1_epi32(0x40));
}
inline __m512i bf16_narrow32(__m512 f) {
  __m512i r = bf16_round32(f);
  return nan_lanes(f, f) ? bf16_fix_nan32(f, r) : r;
}
// 2 × 16 float32 → 32 bfloat16, in VPACKUSDW's order: per 128-bit lane, 4 from lo then 4 from hi.
inline __m512i bf16_pack2(__m512 lo, __m512 hi) {
  __m512i a = bf16_round32(lo), b = bf16_round32(hi);
  if (nan_lanes(lo, hi)) {
    a = bf16_fix_nan32(lo, a);
    b = bf16_fix_nan32(hi, b);
  }
  return _mm512_packus_epi32(a, b);
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
  static constexpr size_t kElems = 32;
  static void run(char *o, const char *a, const char *b) {
    // The widening's NaN quirk needs no fix here: narrowing makes every NaN sign|0x7e00.
    __m512 r0 = float_op<float, O>(_mm512_cvtph_ps(load256(a)), _mm512_cvtph_ps(load256(b)));
    __m512 r1 = float_op<float, O>(_mm512_cvtph_ps(load256(a + 32)), _mm512_cvtph_ps(load256(b + 32)));
    f16_narrow_store2(o, r0, r1);
  }
};

template <xc_dtype_t D, xc_op_t O>
struct Chunk<D, O, Kind::kBf16> {
  static constexpr size_t kElems = 32;
  static void run(char *o, const char *a, const char *b) {
    // bfloat16 is the top half of a float32: interleaving with zeros widens,
    // and the pack undoes the interleaving's order (per 128-bit lane).
    const __m512i zero = _mm512_setzero_si512();
    __m512i x = load(a), y = load(b);
    __m512 lo = float_op<float, O>(_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, x)),
                                   _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, y)));
    __m512 hi = float_op<float, O>(_mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, x)),
                                   _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, y)));
    store(o, bf16_pack2(lo, hi));
  }
};

template <xc_dtype_t D, xc_op_t O>
void reduce_kernel(void *out, const void *a, const void *b, size_t n) {
  binary_loop<Chunk<D, O>, sizeof(typename Dtype<D>::type)>(out, a, b, n);
}

// ---- element-wise conversions and the average's division --------------------

struct WidenF16 {
  static constexpr size_t kElems = 16, kIn = 2, kOut = 4;
  void run(char *o, const char *i) const { _mm512_storeu_ps(o, f16_widen_exact(load256(i))); }
};
struct WidenBf16 {
  static constexpr size_t kElems = 16, kIn = 2, kOut = 4;
  void run(char *o, const char *i) const { store(o, _mm512_slli_epi32(_mm512_cvtepu16_epi32(load256(i)), 16)); }
};
struct NarrowF16 {
  static constexpr size_t kElems = 16, kIn = 4, kOut = 2;
  void run(char *o, const char *i) const { store256(o, f16_narrow(Fv<float>::load(i))); }
};
struct NarrowBf16 {
  static constexpr size_t kElems = 16, kIn = 4, kOut = 2;
  void run(char *o, const char *i) const { store256(o, _mm512_cvtepi32_epi16(bf16_narrow32(Fv<float>::load(i)))); }
};

template <typename F>
struct ScaleFloat {
  static constexpr size_t kElems = kVec / sizeof(F), kIn = sizeof(F), kOut = sizeof(F);
  typename Fv<F>::V divisor;
  void run(char *o, const char *i) const { Fv<F>::store(o, Fv<F>::div(Fv<F>::load(i), divisor)); }
};
struct ScaleF16 {
  static constexpr size_t kElems = 16, kIn = 2, kOut = 2;
  __m512 divisor;
  void run(char *o, const char *i) const { store256(o, f16_narrow(_mm512_div_ps(_mm512_cvtph_ps(load256(i)), divisor))); }
};
struct ScaleBf16 {
  static constexpr size_t kElems = 32, kIn = 2, kOut = 2;
  __m512 divisor;
  void run(char *o, const char *i) const {
    const __m512i zero = _mm512_setzero_si512();
    __m512i x = load(i);
    __m512 lo = _mm512_div_ps(_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, x)), divisor);
    __m512 hi = _mm512_div_ps(_mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, x)), divisor);
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

bool fill_avx512(Kernels &k) {
  Fill f{k};
  reduce_table::for_each_kernel(f);
  reduce_table::for_each_dtype(f);
  k.isa = Isa::kAvx512;
  return true;
}

}  // namespace xc::cpu::detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

#else  // not x86-64 with GCC or clang

namespace xc::cpu::detail {
bool fill_avx512(Kernels &) { return false; }
}  // namespace xc::cpu::detail

#endif
