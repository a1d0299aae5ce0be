// Data types and reduction ops: sizes, names, and which pairs are valid.
#pragma once

#include <cstddef>

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

// The checks below are inline on success (no call, no division: they sit on
// every op's path) and build their message out of line.
Status dtype_error(xc_dtype_t dtype);
Status check_op_slow(xc_op_t op, xc_dtype_t dtype);  // also passes bitwise ops on integers
Status bytes_error(size_t count, xc_dtype_t dtype);

// XC_ERR_INVALID_ARGUMENT for an unknown dtype.
inline Status check_dtype(xc_dtype_t dtype) { return dtype_valid(dtype) ? Status::Ok() : dtype_error(dtype); }
// XC_ERR_INVALID_ARGUMENT for an unknown op or a bitwise op on floats.
inline Status check_op(xc_op_t op, xc_dtype_t dtype) {
  // SUM..AVG take every dtype; bitwise ops and bad values go the long way.
  bool arithmetic = static_cast<int>(op) >= XC_SUM && static_cast<int>(op) <= XC_AVG;
  return arithmetic && dtype_valid(dtype) ? Status::Ok() : check_op_slow(op, dtype);
}
// count * dtype size in bytes, or XC_ERR_INVALID_ARGUMENT on overflow.
inline Status checked_bytes(size_t count, xc_dtype_t dtype, size_t *bytes) {
  size_t size = dtype_size(dtype);  // 0: unknown dtype
  if (size && !__builtin_mul_overflow(count, size, bytes)) return Status::Ok();
  return bytes_error(count, dtype);
}

}  // namespace xc
