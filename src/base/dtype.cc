#include "base/dtype.h"

#include <cstdint>

namespace xc {

namespace {
struct DtypeInfo {
  const char *name;
  size_t size;
  bool integer;
};
// Indexed by xc_dtype_t; the enum values are fixed by the ABI.
constexpr DtypeInfo kDtypes[] = {
    {"int8", 1, true},     {"uint8", 1, true},    {"int32", 4, true},    {"uint32", 4, true},
    {"int64", 8, true},    {"uint64", 8, true},   {"float16", 2, false}, {"bfloat16", 2, false},
    {"float32", 4, false}, {"float64", 8, false},
};
constexpr const char *kOps[] = {"sum", "prod", "min", "max", "avg", "band", "bor", "bxor"};
}  // namespace

bool dtype_valid(xc_dtype_t dtype) {
  return static_cast<int>(dtype) >= 0 && static_cast<size_t>(dtype) < sizeof kDtypes / sizeof kDtypes[0];
}
size_t dtype_size(xc_dtype_t dtype) { return dtype_valid(dtype) ? kDtypes[dtype].size : 0; }
const char *dtype_name(xc_dtype_t dtype) { return dtype_valid(dtype) ? kDtypes[dtype].name : "invalid"; }
bool dtype_is_integer(xc_dtype_t dtype) { return dtype_valid(dtype) && kDtypes[dtype].integer; }

bool op_valid(xc_op_t op) { return static_cast<int>(op) >= 0 && static_cast<size_t>(op) < sizeof kOps / sizeof kOps[0]; }
const char *op_name(xc_op_t op) { return op_valid(op) ? kOps[op] : "invalid"; }

Status dtype_error(xc_dtype_t dtype) {
  return Error(XC_ERR_INVALID_ARGUMENT, "unknown dtype %d", static_cast<int>(dtype));
}

Status check_op_slow(xc_op_t op, xc_dtype_t dtype) {
  XC_TRY(check_dtype(dtype));
  if (!op_valid(op)) return Error(XC_ERR_INVALID_ARGUMENT, "unknown reduction op %d", static_cast<int>(op));
  if ((op == XC_BAND || op == XC_BOR || op == XC_BXOR) && !dtype_is_integer(dtype))
    return Error(XC_ERR_INVALID_ARGUMENT, "bitwise op %s needs an integer dtype, not %s", op_name(op), dtype_name(dtype));
  return Status::Ok();
}

Status bytes_error(size_t count, xc_dtype_t dtype) {
  XC_TRY(check_dtype(dtype));
  return Error(XC_ERR_INVALID_ARGUMENT, "count %zu of %s overflows the address space", count, dtype_name(dtype));
}

}  // namespace xc
