// Host reductions for every dtype × op against a straightforward reference,
// the float16/bfloat16 conversions against the compiler's own types, and
// every instruction-set level this CPU has (AVX2, AVX-512) against the scalar
// kernels bit for bit: random data full of NaNs (with payloads, signalling and
// quiet), signed zeros, infinities and subnormals, every length 0..300 and a
// few large ones, misaligned pointers, in place and out of place.
#include "unit_test.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <xmmintrin.h>
#endif

#include "base/dtype.h"
#include "cpu/copy.h"
#include "cpu/half.h"
#include "cpu/reduce.h"

namespace {

template <typename T>
T ref_int(T a, T b, xc_op_t op) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case XC_SUM: case XC_AVG: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case XC_PROD: return static_cast<T>(static_cast<uint64_t>(static_cast<U>(a)) * static_cast<uint64_t>(static_cast<U>(b)));
    case XC_MIN: return a < b ? a : b;
    case XC_MAX: return a > b ? a : b;
    case XC_BAND: return static_cast<T>(a & b);
    case XC_BOR: return static_cast<T>(a | b);
    case XC_BXOR: return static_cast<T>(a ^ b);
    default: return 0;
  }
}

template <typename T>
void check_int(xc_dtype_t dtype) {
  std::mt19937_64 rng(static_cast<uint64_t>(dtype) * 977);
  const size_t n = 1031;
  for (int op = XC_SUM; op <= XC_BXOR; ++op) {
    std::vector<T> a(n), b(n), expect(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<T>(rng());
      b[i] = static_cast<T>(rng());
      expect[i] = ref_int<T>(a[i], b[i], static_cast<xc_op_t>(op));
    }
    xc::cpu::reduce(a.data(), b.data(), n, dtype, static_cast<xc_op_t>(op));
    assert_memory_equal(a.data(), expect.data(), n * sizeof(T));
  }
}

template <typename T>
void check_float(xc_dtype_t dtype) {
  std::mt19937_64 rng(static_cast<uint64_t>(dtype) * 31);
  std::uniform_real_distribution<double> dist(-100, 100);
  const size_t n = 1031;
  for (int op = XC_SUM; op <= XC_AVG; ++op) {
    std::vector<T> a(n), b(n), expect(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<T>(dist(rng));
      b[i] = static_cast<T>(dist(rng));
      switch (op) {
        case XC_SUM: case XC_AVG: expect[i] = a[i] + b[i]; break;
        case XC_PROD: expect[i] = a[i] * b[i]; break;
        case XC_MIN: expect[i] = std::fmin(a[i], b[i]); break;
        case XC_MAX: expect[i] = std::fmax(a[i], b[i]); break;
      }
    }
    xc::cpu::reduce(a.data(), b.data(), n, dtype, static_cast<xc_op_t>(op));
    assert_memory_equal(a.data(), expect.data(), n * sizeof(T));
  }
}

void reduce_integers(void **) {
  check_int<int8_t>(XC_INT8);
  check_int<uint8_t>(XC_UINT8);
  check_int<int32_t>(XC_INT32);
  check_int<uint32_t>(XC_UINT32);
  check_int<int64_t>(XC_INT64);
  check_int<uint64_t>(XC_UINT64);
}

void reduce_floats(void **) {
  check_float<float>(XC_FLOAT32);
  check_float<double>(XC_FLOAT64);
}

void nan_propagates(void **) {
  float a[2] = {NAN, 1.0f}, b[2] = {1.0f, NAN};
  xc::cpu::reduce(a, b, 2, XC_FLOAT32, XC_MAX);
  assert_true(std::isnan(a[0]) && std::isnan(a[1]));
}

// Every one of the 65536 float16 bit patterns converts like _Float16 does,
// and float → float16 rounds like the compiler on random values.
void float16_conversions(void **) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    _Float16 f16;
    memcpy(&f16, &h, 2);
    float expect = static_cast<float>(f16), got = xc::cpu::half_to_float(h);
    if (std::isnan(expect)) {
      assert_true(std::isnan(got));
      continue;
    }
    assert_memory_equal(&got, &expect, 4);
    assert_int_equal(xc::cpu::float_to_half(got), h);
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    uint32_t raw = rng();
    float f;
    memcpy(&f, &raw, 4);
    if (std::isnan(f)) continue;
    _Float16 expect = static_cast<_Float16>(f);
    uint16_t e;
    memcpy(&e, &expect, 2);
    assert_int_equal(xc::cpu::float_to_half(f), e);
  }
}

void bfloat16_round_trip(void **) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    float f = xc::cpu::bf16_to_float(h);
    if (std::isnan(f)) continue;
    assert_int_equal(xc::cpu::float_to_bf16(f), h);
  }
  // Round to nearest even: 1 + 2^-8 is halfway between two bfloat16 values.
  assert_int_equal(xc::cpu::float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  assert_int_equal(xc::cpu::float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
}

void half_sum_and_average(void **) {
  const size_t n = 300;
  std::vector<uint16_t> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = xc::cpu::float_to_half(static_cast<float>(i) * 0.5f);
    b[i] = xc::cpu::float_to_half(static_cast<float>(i) * 0.25f);
  }
  xc::cpu::reduce(a.data(), b.data(), n, XC_FLOAT16, XC_SUM);
  xc::cpu::scale_avg(a.data(), n, XC_FLOAT16, 2);
  for (size_t i = 0; i < n; ++i)
    assert_int_equal(a[i], xc::cpu::float_to_half(xc::cpu::half_to_float(xc::cpu::float_to_half(static_cast<float>(i) * 0.75f)) / 2));
}

void dtype_table(void **) {
  assert_int_equal(xc::dtype_size(XC_INT8), 1);
  assert_int_equal(xc::dtype_size(XC_BFLOAT16), 2);
  assert_int_equal(xc::dtype_size(XC_FLOAT64), 8);
  assert_int_equal(xc::dtype_size(static_cast<xc_dtype_t>(10)), 0);
  size_t bytes = 0;
  assert_int_equal(xc::checked_bytes(SIZE_MAX / 2, XC_INT32, &bytes).code(), XC_ERR_INVALID_ARGUMENT);
  // No buffer holds more than PTRDIFF_MAX bytes: SIZE_MAX / 8 float64
  // (2^64 - 8 bytes, no overflow) once reached memcpy in alltoallv.
  assert_int_equal(xc::checked_bytes(SIZE_MAX / 8, XC_FLOAT64, &bytes).code(), XC_ERR_INVALID_ARGUMENT);
  assert_int_equal(xc::checked_bytes(PTRDIFF_MAX / 8 + 1, XC_FLOAT64, &bytes).code(), XC_ERR_INVALID_ARGUMENT);
  assert_true(xc::checked_bytes(PTRDIFF_MAX / 8, XC_FLOAT64, &bytes).ok());
  assert_true(bytes == static_cast<size_t>(PTRDIFF_MAX) - 7);
  assert_true(xc::checked_bytes(PTRDIFF_MAX, XC_UINT8, &bytes).ok());
  // dtypes and ops from the caller's bits; the output only on success
  xc_dtype_t t = XC_UINT8;
  xc_op_t o = XC_SUM;
  for (int32_t bad : {-1, 10, INT32_MIN, INT32_MAX})
    assert_int_equal(xc::dtype_arg(bad, &t).code(), XC_ERR_INVALID_ARGUMENT);
  assert_int_equal(t, XC_UINT8);
  assert_true(xc::dtype_arg(XC_FLOAT64, &t).ok() && t == XC_FLOAT64);
  for (int32_t bad : {-1, 8, INT32_MIN, INT32_MAX})
    assert_int_equal(xc::op_arg(bad, XC_INT32, &o).code(), XC_ERR_INVALID_ARGUMENT);
  assert_int_equal(xc::op_arg(XC_BXOR, XC_FLOAT32, &o).code(), XC_ERR_INVALID_ARGUMENT);
  assert_int_equal(o, XC_SUM);
  assert_true(xc::op_arg(XC_BXOR, XC_UINT8, &o).ok() && o == XC_BXOR);
  assert_true(xc::op_arg(XC_AVG, XC_FLOAT16, &o).ok() && o == XC_AVG);
  xc_dtype_t from_c;
  int32_t minus_one = -1;
  memcpy(&from_c, &minus_one, sizeof from_c);  // as a C caller may pass it
  assert_int_equal(xc::enum_bits(from_c), -1);
}


// ---- the old scalar code, verbatim: the vector levels may not change a bit --

namespace legacy {
template <typename T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
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
void reduce(void *inout, const void *in, size_t count, xc_dtype_t dtype, xc_op_t op) {
  using namespace xc::cpu;
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
}  // namespace legacy

// ---- random data that hits every corner -------------------------------------

using Rng = std::mt19937_64;

const xc_dtype_t kAllDtypes[] = {XC_INT8,    XC_UINT8,    XC_INT32,   XC_UINT32,  XC_INT64,
                                 XC_UINT64,  XC_FLOAT16,  XC_BFLOAT16, XC_FLOAT32, XC_FLOAT64};
const xc_op_t kAllOps[] = {XC_SUM, XC_PROD, XC_MIN, XC_MAX, XC_AVG, XC_BAND, XC_BOR, XC_BXOR};

bool is_float(xc_dtype_t d) { return d == XC_FLOAT16 || d == XC_BFLOAT16 || d == XC_FLOAT32 || d == XC_FLOAT64; }

// One element of dtype as raw bits (the low dtype_size bytes are used).
uint64_t random_element(xc_dtype_t dtype, Rng &rng) {
  uint64_t r = rng(), pick = rng() % 16;
  switch (dtype) {
    case XC_FLOAT32: {
      static const uint32_t special[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
                                         0x7f800001, 0xffbfffff, 0x7fc12345, 0x00000001, 0x807fffff, 0x00800000,
                                         0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000};
      if (pick < 4) return static_cast<uint32_t>(r);                              // any bits at all
      if (pick < 7) return special[r % 16];                                       // the corners
      if (pick < 9) return static_cast<uint32_t>(r & 0x807fffff);                 // subnormals
      if (pick < 10) return static_cast<uint32_t>((r & 0x80ffffff) | 0x7f000000);  // near overflow
      float f = static_cast<float>(static_cast<int64_t>(r % 2001) - 1000) / 8;     // ties, cancellations
      uint32_t bits;
      memcpy(&bits, &f, 4);
      return bits;
    }
    case XC_FLOAT64: {
      static const uint64_t special[] = {0, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
                                         0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001,
                                         0xfff7ffffffffffff, 0x7ff8123456789abc, 1, 0x800fffffffffffff,
                                         0x0010000000000000, 0x7fefffffffffffff, 0xffefffffffffffff,
                                         0x3ff0000000000000, 0xbff0000000000000};
      if (pick < 4) return r;
      if (pick < 7) return special[r % 16];
      if (pick < 9) return r & 0x800fffffffffffff;
      if (pick < 10) return (r & 0x801fffffffffffff) | 0x7fe0000000000000;
      double f = static_cast<double>(static_cast<int64_t>(r % 2001) - 1000) / 8;
      uint64_t bits;
      memcpy(&bits, &f, 8);
      return bits;
    }
    case XC_FLOAT16: case XC_BFLOAT16: {
      static const uint16_t half_special[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfdff,
                                              0x7e55, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00};
      static const uint16_t bf16_special[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xffbf,
                                              0x7fd5, 0x0001, 0x807f, 0x0080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80};
      if (pick < 8) return static_cast<uint16_t>(r);
      if (pick < 11) return dtype == XC_FLOAT16 ? half_special[r % 16] : bf16_special[r % 16];
      float f = static_cast<float>(static_cast<int64_t>(r % 2001) - 1000) / 8;
      return dtype == XC_FLOAT16 ? xc::cpu::float_to_half(f) : xc::cpu::float_to_bf16(f);
    }
    default: {
      static const uint64_t special[] = {0, 1, ~uint64_t{0}, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f,
                                         0x8000000080000000, 0x7fffffff7fffffff, 0x8000000000000000,
                                         0x7fffffffffffffff, 2};
      if (pick < 3) return special[r % 10];
      return r;
    }
  }
}

// n elements for a and b; some pairs equal, or equal but for the sign, so
// that ties (min(+0, -0)), cancellations and NaN-with-NaN come up often.
void random_pair(xc_dtype_t dtype, size_t n, char *a, char *b, Rng &rng) {
  size_t es = xc::dtype_size(dtype);
  uint64_t sign = uint64_t{1} << (8 * es - 1);
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = random_element(dtype, rng), y = random_element(dtype, rng);
    switch (rng() % 10) {
      case 0: y = x; break;
      case 1: y = x ^ sign; break;
      default: break;
    }
    memcpy(a + i * es, &x, es);
    memcpy(b + i * es, &y, es);
  }
}

std::string hex(const char *p, size_t es) {
  uint64_t v = 0;
  memcpy(&v, p, es);
  char buf[32];
  snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(2 * es), static_cast<unsigned long long>(v));
  return buf;
}

// got and want hold n elements; on a difference, fail naming the element.
void expect_same(const char *what, xc_dtype_t dtype, xc_op_t op, size_t n, const char *a, const char *b,
                 const char *want, const char *got) {
  size_t es = xc::dtype_size(dtype);
  if (memcmp(want, got, n * es) == 0) return;
  for (size_t i = 0; i < n; ++i) {
    if (memcmp(want + i * es, got + i * es, es) == 0) continue;
    fail_msg("%s: %s %s, element %zu of %zu: %s op %s = %s, got %s", what, xc::dtype_name(dtype), xc::op_name(op), i,
             n, a ? hex(a + i * es, es).c_str() : "-", b ? hex(b + i * es, es).c_str() : "-", hex(want + i * es, es).c_str(),
             hex(got + i * es, es).c_str());
  }
}

std::vector<xc::cpu::Isa> vector_levels() {
  std::vector<xc::cpu::Isa> levels;
  for (int i = 1; i < xc::cpu::kNumIsas; ++i)
    if (xc::cpu::isa_supported(static_cast<xc::cpu::Isa>(i))) levels.push_back(static_cast<xc::cpu::Isa>(i));
  return levels;
}

const xc::cpu::Kernels &scalar() { return *xc::cpu::kernels_for(xc::cpu::Isa::kScalar); }

// Both NaN under sum or prod: the old code left the payload to the compiler's
// operand order; the kernels now always answer x's NaN, quieted.
bool both_nan_arith(xc_dtype_t dtype, xc_op_t op, const char *x, const char *y) {
  if (op != XC_SUM && op != XC_PROD && op != XC_AVG) return false;
  auto nan = [dtype](const char *p) {
    uint64_t v = 0;
    memcpy(&v, p, xc::dtype_size(dtype));
    switch (dtype) {
      case XC_FLOAT16: return (v & 0x7fff) > 0x7c00;
      case XC_BFLOAT16: return (v & 0x7fff) > 0x7f80;
      case XC_FLOAT32: return (v & 0x7fffffff) > 0x7f800000;
      case XC_FLOAT64: return (v & 0x7fffffffffffffff) > 0x7ff0000000000000;
      default: return false;
    }
  };
  return nan(x) && nan(y);
}

// ---- the scalar kernels are the old code ------------------------------------

void scalar_kernels_match_old_code(void **) {
  Rng rng(11);
  const size_t n = 20000;
  for (xc_dtype_t dtype : kAllDtypes) {
    size_t es = xc::dtype_size(dtype);
    std::vector<char> a(n * es), b(n * es), want, got(n * es);
    for (xc_op_t op : kAllOps) {
      // Bitwise ops on floating types are rejected by check_op; the old code
      // round-tripped float16/bfloat16 through float32 (canonicalising NaNs)
      // and the kernels now write nothing (invalid_pairs_write_nothing).
      if (op >= XC_BAND && is_float(dtype)) continue;
      random_pair(dtype, n, a.data(), b.data(), rng);
      want = a;
      legacy::reduce(want.data(), b.data(), n, dtype, op);
      scalar().reduce3(got.data(), a.data(), b.data(), n, dtype, op);
      for (size_t i = 0; i < n; ++i) {
        const char *x = a.data() + i * es, *y = b.data() + i * es;
        char *w = want.data() + i * es, *g = got.data() + i * es;
        if (both_nan_arith(dtype, op, x, y)) {
          // Old code: x's or y's NaN; new: x's. The same sign decides float16.
          char rerun[8];
          memcpy(rerun, x, es);
          legacy::reduce(rerun, x, 1, dtype, op);  // x op x: x's NaN, quieted, under either order
          if (memcmp(g, rerun, es) != 0)
            fail_msg("%s %s: NaN %s op NaN %s = %s, want %s", xc::dtype_name(dtype), xc::op_name(op), hex(x, es).c_str(),
                     hex(y, es).c_str(), hex(g, es).c_str(), hex(rerun, es).c_str());
          memcpy(w, g, es);
        }
      }
      expect_same("scalar vs old code", dtype, op, n, a.data(), b.data(), want.data(), got.data());
    }
  }
}

// A bitwise op on a floating type, or an unknown op or dtype, writes nothing.
// (Unknown values within the enums' ranges, 0..15: one outside would be
// undefined behaviour of this test itself; the API checks raw integers
// before they become enums, tests/mp/comm/bad_enums.c.)
void invalid_pairs_write_nothing(void **) {
  for (int level = 0; level < xc::cpu::kNumIsas; ++level) {
    const xc::cpu::Kernels *k = xc::cpu::kernels_for(static_cast<xc::cpu::Isa>(level));
    if (!k) continue;
    float a[40], b[40], out[40];
    for (int i = 0; i < 40; ++i) a[i] = b[i] = out[i] = static_cast<float>(i);
    for (xc_op_t op : {XC_BAND, XC_BOR, XC_BXOR, static_cast<xc_op_t>(8), static_cast<xc_op_t>(15)}) {
      k->reduce3(out, a, b, 40, XC_FLOAT32, op);
      for (int i = 0; i < 40; ++i) assert_true(out[i] == static_cast<float>(i));
    }
    k->reduce3(out, a, b, 40, static_cast<xc_dtype_t>(10), XC_SUM);
    k->reduce3(out, a, b, 40, static_cast<xc_dtype_t>(15), XC_SUM);
    for (int i = 0; i < 40; ++i) assert_true(out[i] == static_cast<float>(i));
  }
}

// ---- every vector level against the scalar kernels ----------------------------

// Runs one level's reduce3 with out, a and b at the given byte offsets from
// 64-byte boundaries (any offset, not only whole elements), in place (out = a
// or out = b) or not, with guard bytes around out, and compares with the
// scalar kernels run on element-aligned copies.
void check_level(const xc::cpu::Kernels &k, xc_dtype_t dtype, xc_op_t op, size_t n, size_t off_out, size_t off_a,
                 size_t off_b, int alias, Rng &rng) {
  size_t es = xc::dtype_size(dtype), bytes = n * es;
  std::vector<char> a(bytes + 1), b(bytes + 1), want(bytes + 1);
  random_pair(dtype, n, a.data(), b.data(), rng);
  scalar().reduce3(want.data(), a.data(), b.data(), n, dtype, op);

  const size_t kGuard = 80;
  std::vector<char> arena(3 * (bytes + 2 * kGuard + 64) + 64, static_cast<char>(0xa5));
  uintptr_t base = (reinterpret_cast<uintptr_t>(arena.data()) + 63) & ~uintptr_t{63};
  size_t slot = ((bytes + 2 * kGuard + 63) / 64) * 64;
  char *pa = reinterpret_cast<char *>(base) + kGuard + off_a;
  char *pb = reinterpret_cast<char *>(base) + slot + kGuard + off_b;
  char *po = reinterpret_cast<char *>(base) + 2 * slot + kGuard + off_out;
  memcpy(pa, a.data(), bytes);
  memcpy(pb, b.data(), bytes);
  if (alias == 1) po = pa;
  if (alias == 2) po = pb;
  std::vector<char> before(arena);
  k.reduce3(po, pa, pb, n, dtype, op);
  expect_same(xc::cpu::isa_name(k.isa), dtype, op, n, a.data(), b.data(), want.data(), po);
  // Nothing else in the arena changed: no write before or after out.
  memcpy(po, before.data() + (po - arena.data()), bytes);
  if (memcmp(before.data(), arena.data(), arena.size()) != 0)
    fail_msg("%s %s %s n=%zu: wrote outside out", xc::cpu::isa_name(k.isa), xc::dtype_name(dtype), xc::op_name(op), n);
}

void vector_levels_match_scalar(void **) {
  std::vector<xc::cpu::Isa> levels = vector_levels();
  std::string names = "scalar (reference)";
  for (xc::cpu::Isa isa : levels) names += std::string(", ") + xc::cpu::isa_name(isa);
  printf("reduce levels checked on this CPU: %s; active: %s\n", names.c_str(), xc::cpu::isa_name(xc::cpu::isa_active()));
  if (levels.empty()) printf("no vector level on this CPU: only the scalar kernels were checked\n");
  Rng rng(2026);
  for (xc::cpu::Isa isa : levels) {
    const xc::cpu::Kernels &k = *xc::cpu::kernels_for(isa);
    for (xc_dtype_t dtype : kAllDtypes) {
      size_t es = xc::dtype_size(dtype);
      for (xc_op_t op : kAllOps) {
        if (op >= XC_BAND && is_float(dtype)) continue;
        for (size_t n = 0; n <= 300; ++n) {
          // Element-aligned and not, by turns; in place and not.
          size_t off_out = (n % 3 == 0) ? 0 : (rng() % 64), off_a = (n % 5 == 0) ? 0 : (n % 2 ? rng() % 64 : es * (rng() % 8));
          size_t off_b = rng() % 64;
          check_level(k, dtype, op, n, off_out, off_a, off_b, static_cast<int>(n % 3), rng);
        }
        for (size_t n : {size_t{1023}, size_t{4096}, size_t{65537}})
          check_level(k, dtype, op, n, rng() % 64, rng() % 64, rng() % 64, static_cast<int>(rng() % 3), rng);
      }
    }
  }
}

// Callers built with -ffast-math run with FTZ and DAZ set in MXCSR: the levels
// must still agree (a DAZ-flushed input may not leak out of min/max as a zero).
#if defined(__x86_64__)
unsigned saved_csr;
// Restores MXCSR even when a failed check has jumped out of the test.
int save_csr(void **) {
  saved_csr = _mm_getcsr();
  return 0;
}
int restore_csr(void **) {
  _mm_setcsr(saved_csr);
  return 0;
}
#else
int save_csr(void **) { return 0; }
int restore_csr(void **) { return 0; }
#endif

void vector_levels_match_scalar_under_ftz_daz(void **) {
#if defined(__x86_64__)
  const unsigned saved = saved_csr;
  Rng rng(77);
  for (unsigned mode : {0x8000u, 0x0040u, 0x8040u}) {  // FTZ, DAZ, both
    _mm_setcsr(saved | mode);
    for (xc::cpu::Isa isa : vector_levels()) {
      const xc::cpu::Kernels &k = *xc::cpu::kernels_for(isa);
      for (xc_dtype_t dtype : {XC_FLOAT16, XC_BFLOAT16, XC_FLOAT32, XC_FLOAT64})
        for (xc_op_t op : {XC_SUM, XC_PROD, XC_MIN, XC_MAX})
          for (size_t n : {size_t{1}, size_t{17}, size_t{100}, size_t{4099}})
            check_level(k, dtype, op, n, rng() % 64, rng() % 64, rng() % 64, static_cast<int>(rng() % 3), rng);
      std::vector<uint16_t> all(65536);
      std::vector<float> fw(65536), fg(65536);
      for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
      for (xc_dtype_t dtype : {XC_FLOAT16, XC_BFLOAT16}) {
        scalar().widen_to_float(all.data(), fw.data(), all.size(), dtype);
        k.widen_to_float(all.data(), fg.data(), all.size(), dtype);
        assert_memory_equal(fw.data(), fg.data(), 4 * all.size());
        std::vector<uint16_t> hw(all.size()), hg(all.size());
        scalar().narrow_from_float(fw.data(), hw.data(), all.size(), dtype);
        k.narrow_from_float(fw.data(), hg.data(), all.size(), dtype);
        assert_memory_equal(hw.data(), hg.data(), 2 * all.size());
      }
    }
  }
#endif
}

// float16 and bfloat16: every bit pattern against a random partner and
// against every pattern shifted, for each op.
void vector_levels_every_half_pattern(void **) {
  Rng rng(5);
  const size_t n = 65536;
  std::vector<uint16_t> all(n), partner(n), want(n), got(n);
  for (size_t i = 0; i < n; ++i) all[i] = static_cast<uint16_t>(i);
  for (xc::cpu::Isa isa : vector_levels()) {
    const xc::cpu::Kernels &k = *xc::cpu::kernels_for(isa);
    for (xc_dtype_t dtype : {XC_FLOAT16, XC_BFLOAT16}) {
      for (int round = 0; round < 4; ++round) {
        for (size_t i = 0; i < n; ++i)
          partner[i] = round == 0 ? all[i] : round == 1 ? static_cast<uint16_t>(rng()) : static_cast<uint16_t>(i * 40503u + round);
        for (xc_op_t op : {XC_SUM, XC_PROD, XC_MIN, XC_MAX}) {
          scalar().reduce3(want.data(), all.data(), partner.data(), n, dtype, op);
          k.reduce3(got.data(), all.data(), partner.data(), n, dtype, op);
          expect_same(xc::cpu::isa_name(isa), dtype, op, n, reinterpret_cast<char *>(all.data()),
                      reinterpret_cast<char *>(partner.data()), reinterpret_cast<char *>(want.data()),
                      reinterpret_cast<char *>(got.data()));
        }
      }
    }
  }
}

// Random float bits where float16 rounds: ties to even, subnormals, overflow.
float near_half_boundary(Rng &rng) {
  uint64_t r = rng();
  uint32_t exp = 100 + static_cast<uint32_t>(r % 45);  // 2^-27 .. 2^17
  uint32_t mant = static_cast<uint32_t>(r >> 8) & 0x7fffff;
  switch ((r >> 40) % 4) {
    case 0: mant = (mant & ~0x1fffu) | 0x1000; break;  // a float16 tie (normal range)
    case 1: mant &= ~0xfffu; break;
    default: break;
  }
  uint32_t bits = (static_cast<uint32_t>(r >> 63) << 31) | (exp << 23) | mant;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

void vector_levels_scale_and_convert(void **) {
  Rng rng(99);
  for (xc::cpu::Isa isa : vector_levels()) {
    const xc::cpu::Kernels &k = *xc::cpu::kernels_for(isa);
    // widen: every float16/bfloat16 pattern, at every length up to 300 too.
    std::vector<uint16_t> all(65536);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
    std::vector<float> fw(65536), fg(65536);
    for (xc_dtype_t dtype : {XC_FLOAT16, XC_BFLOAT16}) {
      scalar().widen_to_float(all.data(), fw.data(), all.size(), dtype);
      k.widen_to_float(all.data(), fg.data(), all.size(), dtype);
      expect_same("widen", XC_FLOAT32, XC_SUM, all.size(), nullptr, nullptr,
                  reinterpret_cast<char *>(fw.data()), reinterpret_cast<char *>(fg.data()));
      for (size_t n = 0; n <= 300; ++n) {
        size_t start = rng() % 60000;
        std::vector<float> g(n + 1, 7.0f);
        k.widen_to_float(all.data() + start, g.data(), n, dtype);
        assert_memory_equal(g.data(), fw.data() + start, n * 4);
        assert_true(g[n] == 7.0f);
      }
    }
    // narrow: float bits near the rounding boundaries, random bits, specials.
    const size_t m = 200000;
    std::vector<float> f(m);
    for (size_t i = 0; i < m; ++i) {
      uint64_t e = random_element(XC_FLOAT32, rng);
      uint32_t bits = static_cast<uint32_t>(e);
      if (i % 2) f[i] = near_half_boundary(rng);
      else memcpy(&f[i], &bits, 4);
    }
    std::vector<uint16_t> hw(m), hg(m);
    for (xc_dtype_t dtype : {XC_FLOAT16, XC_BFLOAT16}) {
      scalar().narrow_from_float(f.data(), hw.data(), m, dtype);
      k.narrow_from_float(f.data(), hg.data(), m, dtype);
      expect_same("narrow", dtype, XC_SUM, m, nullptr, nullptr,
                  reinterpret_cast<char *>(hw.data()), reinterpret_cast<char *>(hg.data()));
      for (size_t n = 0; n <= 300; ++n) {
        size_t start = rng() % (m - 400);
        std::vector<uint16_t> g(n + 1, 0x1234);
        k.narrow_from_float(f.data() + start, g.data(), n, dtype);
        assert_memory_equal(g.data(), hw.data() + start, n * 2);
        assert_int_equal(g[n], 0x1234);
      }
    }
    // scale_avg: every dtype, every length up to 300 and a large one, a few divisors.
    for (xc_dtype_t dtype : kAllDtypes) {
      size_t es = xc::dtype_size(dtype);
      for (size_t n = 0; n <= 301; ++n) {
        size_t len = n == 301 ? 70001 : n;
        std::vector<char> a(len * es + 1), b(len * es + 1), want, got;
        random_pair(dtype, len, a.data(), b.data(), rng);
        int ranks = 2 + static_cast<int>(rng() % 7);
        want = a;
        got = a;
        got[len * es] = want[len * es] = 0x5a;
        scalar().scale_avg(want.data(), len, dtype, ranks);
        k.scale_avg(got.data(), len, dtype, ranks);
        expect_same("scale_avg", dtype, XC_AVG, len, a.data(), nullptr, want.data(), got.data());
        assert_int_equal(got[len * es], 0x5a);
      }
    }
  }
}

// reduce() follows the active level; XC_CPU_ISA's names resolve, falling back
// to the best level for a name this CPU lacks or does not know.
void dispatch(void **) {
  using xc::cpu::Isa;
  assert_true(xc::cpu::isa_supported(Isa::kScalar));
  Isa best = Isa::kScalar;
  for (int i = 0; i < xc::cpu::kNumIsas; ++i)
    if (xc::cpu::isa_supported(static_cast<Isa>(i))) best = static_cast<Isa>(i);
  assert_true(xc::cpu::isa_resolve(nullptr) == best);
  assert_true(xc::cpu::isa_resolve("") == best);
  assert_true(xc::cpu::isa_resolve("sse9") == best);
  for (int i = 0; i < xc::cpu::kNumIsas; ++i) {
    Isa isa = static_cast<Isa>(i);
    Isa want = xc::cpu::isa_supported(isa) ? isa : best;
    assert_true(xc::cpu::isa_resolve(xc::cpu::isa_name(isa)) == want);
    assert_true((xc::cpu::kernels_for(isa) != nullptr) == xc::cpu::isa_supported(isa));
  }
  const char *forced = getenv("XC_CPU_ISA");
  assert_true(xc::cpu::isa_active() == xc::cpu::isa_resolve(forced));
  assert_true(&xc::cpu::active_kernels() == xc::cpu::kernels_for(xc::cpu::isa_active()));
#if defined(__x86_64__)
  // What the CPU has, the build has: cpuid and the kernel sets agree.
  __builtin_cpu_init();
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  bool avx2 = f16c && __builtin_cpu_supports("avx2");
  bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  assert_true(xc::cpu::isa_supported(Isa::kAvx2) == avx2);
  assert_true(xc::cpu::isa_supported(Isa::kAvx512) == avx512);
#endif
  // reduce (in place) and reduce3 (out of place) agree.
  int32_t a[100], b[100], c[100];
  for (int i = 0; i < 100; ++i) {
    a[i] = i * 7 - 300;
    b[i] = 150 - i * 3;
  }
  xc::cpu::reduce3(c, a, b, 100, XC_INT32, XC_MAX);
  xc::cpu::reduce(a, b, 100, XC_INT32, XC_MAX);
  assert_memory_equal(a, c, sizeof a);
}

// The streaming copy the shm collectives use for large parts: every byte,
// whatever the alignment of either side and the length, and nothing beyond.
void streaming_copy_is_memcpy(void **) {
  std::mt19937 rng(7);
  std::vector<unsigned char> src(4096 + 64), dst(4096 + 128);
  for (auto &x : src) x = static_cast<unsigned char>(rng());
  for (size_t len : {size_t{0}, size_t{1}, size_t{15}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}, size_t{4096}})
    for (size_t so = 0; so < 64; so += 13)
      for (size_t d_off = 0; d_off < 64; d_off += 7) {
        std::fill(dst.begin(), dst.end(), 0xA5);
        xc::cpu::copy_streaming(dst.data() + d_off, src.data() + so, len);
        assert_memory_equal(dst.data() + d_off, src.data() + so, len);
        for (size_t i = 0; i < dst.size(); ++i)
          if (i < d_off || i >= d_off + len) assert_int_equal(dst[i], 0xA5);
      }
  std::vector<char> big(xc::cpu::kStreamingCopyMinBytes + 99), copy(big.size() + 1);
  for (auto &x : big) x = static_cast<char>(rng());
  xc::cpu::copy_large(copy.data() + 1, big.data(), big.size());
  assert_memory_equal(copy.data() + 1, big.data(), big.size());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reduce_integers),   cmocka_unit_test(reduce_floats),
      cmocka_unit_test(nan_propagates),    cmocka_unit_test(float16_conversions),
      cmocka_unit_test(bfloat16_round_trip), cmocka_unit_test(half_sum_and_average),
      cmocka_unit_test(dtype_table),
      cmocka_unit_test(scalar_kernels_match_old_code),
      cmocka_unit_test(invalid_pairs_write_nothing),
      cmocka_unit_test(vector_levels_match_scalar),
      cmocka_unit_test_setup_teardown(vector_levels_match_scalar_under_ftz_daz, save_csr, restore_csr),
      cmocka_unit_test(vector_levels_every_half_pattern),
      cmocka_unit_test(vector_levels_scale_and_convert),
      cmocka_unit_test(dispatch),
      cmocka_unit_test(streaming_copy_is_memcpy),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
