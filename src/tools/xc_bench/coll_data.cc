#include "coll_data.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace xcb {

const DtypeInfo kDtypes[] = {
    {"int8", XC_INT8, 1, true, true},          {"uint8", XC_UINT8, 1, true, false},
    {"int32", XC_INT32, 4, true, true},        {"uint32", XC_UINT32, 4, true, false},
    {"int64", XC_INT64, 8, true, true},        {"uint64", XC_UINT64, 8, true, false},
    {"float16", XC_FLOAT16, 2, false, true},   {"bfloat16", XC_BFLOAT16, 2, false, true},
    {"float32", XC_FLOAT32, 4, false, true},   {"float64", XC_FLOAT64, 8, false, true},
};
const size_t kNumDtypes = sizeof(kDtypes) / sizeof(kDtypes[0]);

const RedopInfo kRedops[] = {
    {"sum", XC_SUM, false}, {"prod", XC_PROD, false}, {"min", XC_MIN, false}, {"max", XC_MAX, false},
    {"avg", XC_AVG, false}, {"band", XC_BAND, true},  {"bor", XC_BOR, true},  {"bxor", XC_BXOR, true},
};
const size_t kNumRedops = sizeof(kRedops) / sizeof(kRedops[0]);

namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// float → IEEE binary16 / bfloat16, round to nearest even (no NaNs here).
uint16_t float_to_half(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow → inf
  if (abs < 0x38800000u) {                                                // half subnormal or zero
    if (abs < 0x33000000u) return sign;
    uint32_t exp = abs >> 23, mant = (abs & 0x7fffffu) | 0x800000u, shift = 126 - exp;
    uint32_t half_mant = mant >> shift, rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

uint16_t float_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// Tags for the two 16-bit float types, which C++17 has no arithmetic type for.
struct Half {};
struct BF16 {};

// One element of type T from an exact real value (integers wrap).
template <typename T>
void put(void *buf, size_t i, double real, int64_t integer) {
  if constexpr (std::is_same_v<T, Half>) {
    uint16_t h = float_to_half(static_cast<float>(real));
    memcpy(static_cast<char *>(buf) + i * 2, &h, 2);
  } else if constexpr (std::is_same_v<T, BF16>) {
    uint16_t h = float_to_bf16(static_cast<float>(real));
    memcpy(static_cast<char *>(buf) + i * 2, &h, 2);
  } else if constexpr (std::is_floating_point_v<T>) {
    static_cast<T *>(buf)[i] = static_cast<T>(real);
  } else {
    static_cast<T *>(buf)[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(integer)));
  }
}

template <typename T>
void put_int(void *buf, size_t i, int64_t v) {
  put<T>(buf, i, static_cast<double>(v), v);
}

// Calls f.template operator()<T>() with the C++ type of a dtype.
template <typename F>
void with_type(xc_dtype_t dtype, F &&f) {
  switch (dtype) {
    case XC_INT8: f(int8_t{}); break;
    case XC_UINT8: f(uint8_t{}); break;
    case XC_INT32: f(int32_t{}); break;
    case XC_UINT32: f(uint32_t{}); break;
    case XC_INT64: f(int64_t{}); break;
    case XC_UINT64: f(uint64_t{}); break;
    case XC_FLOAT16: f(Half{}); break;
    case XC_BFLOAT16: f(BF16{}); break;
    case XC_FLOAT32: f(float{}); break;
    case XC_FLOAT64: f(double{}); break;
    default: break;
  }
}

// Integer reduction in T, wrapping as two's complement (computed unsigned).
template <typename T>
T int_combine(int op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;  // no int promotion
  switch (op) {
    case XC_SUM: case XC_AVG: return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) + static_cast<U>(b)));
    case XC_PROD: return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
    case XC_MIN: return b < a ? b : a;
    case XC_MAX: return b > a ? b : a;
    case XC_BAND: return static_cast<T>(a & b);
    case XC_BOR: return static_cast<T>(a | b);
    case XC_BXOR: return static_cast<T>(a ^ b);
    default: return a;
  }
}

double real_combine(int op, double a, double b) {
  switch (op) {
    case XC_SUM: case XC_AVG: return a + b;
    case XC_PROD: return a * b;
    case XC_MIN: return std::min(a, b);
    case XC_MAX: return std::max(a, b);
    default: return a;
  }
}

}  // namespace

int64_t input_value(int op, bool is_signed, int nranks, int rank, size_t i, int variant) {
  uint64_t h = mix(static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull ^ (static_cast<uint64_t>(rank) + 1) << 40 ^
                   static_cast<uint64_t>(variant) << 62);
  switch (op) {
    case XC_SUM:
    case XC_AVG: {
      int64_t m = std::clamp<int64_t>(100 / std::max(nranks, 1) + 1, 2, 16);
      // The variants differ in every element.
      return (static_cast<int64_t>(mix(h ^ 1) % static_cast<uint64_t>(m)) + variant) % m;
    }
    case XC_PROD:
      return rank < 6 && (i + static_cast<size_t>(rank) + static_cast<size_t>(variant)) % 3 == 0 ? 2 : 1;
    case XC_MIN:
    case XC_MAX:
      return static_cast<int64_t>(h % 100) - (is_signed ? 50 : 0);
    case XC_BAND:
      return static_cast<int64_t>((h | mix(h)) | 2u);
    case XC_BOR:
    case XC_BXOR:
      return static_cast<int64_t>((h & ~uint64_t{2}) | (rank == 0 ? 2u : 0u));
    default:  // kCopy
      return static_cast<int64_t>(h % 128);
  }
}

void store_value(const DtypeInfo &d, void *buf, size_t i, int64_t v) {
  with_type(d.dtype, [&](auto tag) { put_int<decltype(tag)>(buf, i, v); });
}

void fill_input(const DtypeInfo &d, int op, int nranks, int rank, int variant, void *buf, size_t count, size_t base) {
  with_type(d.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t k = 0; k < count; ++k) put_int<T>(buf, k, input_value(op, d.is_signed, nranks, rank, base + k, variant));
  });
}

void expected_value(const DtypeInfo &d, int op, int nranks, int lo, int hi, size_t j, int variant, void *out) {
  with_type(d.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (op == kCopy || hi == lo + 1) {
      put_int<T>(out, 0, input_value(op, d.is_signed, nranks, lo, j, variant));
    } else if constexpr (std::is_integral_v<T>) {
      T acc = 0;
      for (int r = lo; r < hi; ++r) {
        T v;
        put_int<T>(&v, 0, input_value(op, d.is_signed, nranks, r, j, variant));
        acc = r == lo ? v : int_combine<T>(op, acc, v);
      }
      if (op == XC_AVG) acc = static_cast<T>(acc / static_cast<T>(hi - lo));
      memcpy(out, &acc, sizeof(T));
    } else {
      // Exact in double (small integers); avg rounded once in double, which
      // rounds to the same float32/16 value as sum/n rounded directly.
      double acc = 0;
      for (int r = lo; r < hi; ++r) {
        double v = static_cast<double>(input_value(op, d.is_signed, nranks, r, j, variant));
        acc = r == lo ? v : real_combine(op, acc, v);
      }
      if (op == XC_AVG) acc /= static_cast<double>(hi - lo);
      put<T>(out, 0, acc, 0);
    }
  });
}

}  // namespace xcb
