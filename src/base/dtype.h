// Data types and reduction ops: sizes, names, and which pairs are valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/reduce_table.h"
#include "base/status.h"
#include "xcomm.h"

namespace xc {

bool dtype_valid(xc_dtype_t dtype);
size_t dtype_size(xc_dtype_t dtype);  // 0 when invalid
const char *dtype_name(xc_dtype_t dtype);
bool dtype_is_integer(xc_dtype_t dtype);
// float16 or bfloat16: reduced through float32 and rounded once at the end.
inline bool dtype_is_half(xc_dtype_t dtype) { return dtype == XC_FLOAT16 || dtype == XC_BFLOAT16; }

bool op_valid(xc_op_t op);
const char *op_name(xc_op_t op);

// A dtype or op as the caller passed it, as an integer. A C caller may pass
// any int, and loading one outside the enum's range as the enum is
// undefined in C++ (-fsanitize=enum stops there), so entry points copy the
// bits and check them before they become a dtype or an op.
template <typename E>
inline int32_t enum_bits(const E &e) {
  static_assert(sizeof(E) == sizeof(int32_t), "the ABI's enums are 32-bit");
  int32_t bits;
  memcpy(&bits, &e, sizeof bits);
  return bits;
}
inline bool dtype_bits_valid(int32_t bits) { return bits >= 0 && bits < reduce_table::kNumDtypes; }

// The checks below are inline on success (no call, no division: they sit on
// every op's path) and build their message out of line.
Status dtype_error(int32_t bits);
Status op_slow(int32_t bits, xc_dtype_t dtype, xc_op_t *out);  // also passes bitwise ops on integers
Status bytes_error(size_t count, xc_dtype_t dtype);

// The caller's dtype from its bits, or XC_ERR_INVALID_ARGUMENT when unknown.
inline Status dtype_arg(int32_t bits, xc_dtype_t *out) {
  if (!dtype_bits_valid(bits)) return dtype_error(bits);
  *out = static_cast<xc_dtype_t>(bits);
  return Status::Ok();
}
// The caller's op from its bits, for a valid dtype; XC_ERR_INVALID_ARGUMENT
// for an unknown op or a bitwise op on floats.
inline Status op_arg(int32_t bits, xc_dtype_t dtype, xc_op_t *out) {
  if (bits < XC_SUM || bits > XC_AVG) return op_slow(bits, dtype, out);  // SUM..AVG take every dtype
  *out = static_cast<xc_op_t>(bits);
  return Status::Ok();
}
// Bytes any buffer can hold: no object is larger than PTRDIFF_MAX (pointer
// differences must fit), and sums of a few such counts still fit a size_t.
constexpr size_t kMaxBufferBytes = PTRDIFF_MAX;
// count * dtype size in bytes, or XC_ERR_INVALID_ARGUMENT when that is more
// than kMaxBufferBytes (SIZE_MAX / 8 float64 elements once reached memcpy).
inline Status checked_bytes(size_t count, xc_dtype_t dtype, size_t *bytes) {
  size_t size = dtype_size(dtype);  // 0: unknown dtype
  if (size && !__builtin_mul_overflow(count, size, bytes) && *bytes <= kMaxBufferBytes) return Status::Ok();
  return bytes_error(count, dtype);
}

}  // namespace xc
