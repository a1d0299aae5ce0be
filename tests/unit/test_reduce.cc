// Host reductions for every dtype × op against a straightforward reference,
// and the float16/bfloat16 conversions against the compiler's own types.
#include "unit_test.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
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
  assert_int_equal(xc::check_op(XC_BXOR, XC_FLOAT32).code(), XC_ERR_INVALID_ARGUMENT);
  assert_true(xc::check_op(XC_BXOR, XC_UINT8).ok());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reduce_integers),   cmocka_unit_test(reduce_floats),
      cmocka_unit_test(nan_propagates),    cmocka_unit_test(float16_conversions),
      cmocka_unit_test(bfloat16_round_trip), cmocka_unit_test(half_sum_and_average),
      cmocka_unit_test(dtype_table),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
