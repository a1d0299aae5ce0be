// The reduction kernel body: dst = src[0] op src[1] op ... in source order,
// for every dtype × op of base/reduce_table.h. One body for nvcc and for
// the host compiler (the emulated device).
#pragma once

#include "base/reduce_table.h"
#include "kernels/args.cuh"
#include "kernels/convert.cuh"
#include "kernels/exec.cuh"

namespace xc::kernels {

// The type a dtype accumulates in: itself, float32 for the 16-bit floats,
// and the unsigned twin for signed integers (sum and product wrap, defined).
template <class T, reduce_table::Kind K>
struct Acc {
  using type = T;
};
template <>
struct Acc<uint16_t, reduce_table::Kind::kHalf> {
  using type = float;
};
template <>
struct Acc<uint16_t, reduce_table::Kind::kBf16> {
  using type = float;
};

template <class T, reduce_table::Kind K>
XC_HD typename Acc<T, K>::type load_acc(const void *p, uint64_t i) {
  T v = static_cast<const T *>(p)[i];
  if constexpr (K == reduce_table::Kind::kHalf) return half_to_float(v);
  else if constexpr (K == reduce_table::Kind::kBf16) return bf16_to_float(v);
  else return v;
}

template <class T, reduce_table::Kind K, class A>
XC_HD void store_acc(void *p, uint64_t i, A v) {
  if constexpr (K == reduce_table::Kind::kHalf) static_cast<T *>(p)[i] = float_to_half(v);
  else if constexpr (K == reduce_table::Kind::kBf16) static_cast<T *>(p)[i] = float_to_bf16(v);
  else static_cast<T *>(p)[i] = static_cast<T>(v);
}

template <class T>
struct Unsigned {
  using type = T;
};
template <>
struct Unsigned<int8_t> {
  using type = uint8_t;
};
template <>
struct Unsigned<int32_t> {
  using type = uint32_t;
};
template <>
struct Unsigned<int64_t> {
  using type = uint64_t;
};

template <xc_op_t O, bool kIsInt, class A>
XC_HD A combine(A a, A b) {
  if constexpr (O == XC_SUM) {
    if constexpr (kIsInt) {
      using U = typename Unsigned<A>::type;
      return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  } else if constexpr (O == XC_PROD) {
    if constexpr (kIsInt) {
      using U = typename Unsigned<A>::type;
      return static_cast<A>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      return a * b;
    }
  } else if constexpr (O == XC_MIN) {
    return b < a ? b : a;
  } else if constexpr (O == XC_MAX) {
    return b > a ? b : a;
  } else if constexpr (O == XC_BAND) {
    return static_cast<A>(a & b);
  } else if constexpr (O == XC_BOR) {
    return static_cast<A>(a | b);
  } else {
    return static_cast<A>(a ^ b);
  }
}

template <xc_dtype_t D, xc_op_t O>
XC_KERNEL_FN void reduce_body(const Exec &ex, const ReduceArgs &a) {
  using T = typename reduce_table::Dtype<D>::type;
  constexpr reduce_table::Kind K = reduce_table::Dtype<D>::kind;
  constexpr bool kIsInt = K == reduce_table::Kind::kInt;
  using A = typename Acc<T, K>::type;
  if constexpr (reduce_table::op_applies(K, O) && O != XC_AVG) {
    for (uint64_t i = ex.first(); i < a.count; i += ex.stride()) {
      A acc = load_acc<T, K>(a.src[0], i);
      for (int s = 1; s < a.nsrc; ++s) acc = combine<O, kIsInt>(acc, load_acc<T, K>(a.src[s], i));
      if (a.avg_divisor > 0) acc = static_cast<A>(acc / static_cast<A>(a.avg_divisor));
      store_acc<T, K>(a.dst, i, acc);
    }
  }
}

}  // namespace xc::kernels
