// Data types and reduction ops: sizes, names, and which pairs are valid.
#pragma once

#include <cstddef>

#include "core/status.h"
#include "xcomm.h"

namespace xc {

bool dtype_valid(xc_dtype_t dtype);
size_t dtype_size(xc_dtype_t dtype);  // 0 when invalid
const char *dtype_name(xc_dtype_t dtype);
bool dtype_is_integer(xc_dtype_t dtype);

bool op_valid(xc_op_t op);
const char *op_name(xc_op_t op);

// XC_ERR_INVALID_ARGUMENT for an unknown dtype.
Status check_dtype(xc_dtype_t dtype);
// XC_ERR_INVALID_ARGUMENT for an unknown op or a bitwise op on floats.
Status check_op(xc_op_t op, xc_dtype_t dtype);
// count * dtype size in bytes, or XC_ERR_INVALID_ARGUMENT on overflow.
Status checked_bytes(size_t count, xc_dtype_t dtype, size_t *bytes);

}  // namespace xc
