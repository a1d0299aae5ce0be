#include "base/dtype.h"

#include <cstdint>

#include "base/reduce_table.h"

namespace xc {

namespace {

struct DtypeInfo {
  const char *name;
  size_t size;
  bool integer;
};
// Indexed by xc_dtype_t (the table lists the dtypes in enum order).
#define XC_DTYPE_INFO(d, T, k, name) {name, sizeof(T), reduce_table::Kind::k == reduce_table::Kind::kInt},
constexpr DtypeInfo kDtypes[] = {XC_REDUCE_DTYPES(XC_DTYPE_INFO)};
#undef XC_DTYPE_INFO
#define XC_OP_NAME(o, name) name,
constexpr const char *kOps[] = {XC_REDUCE_OPS(XC_OP_NAME)};
#undef XC_OP_NAME

// The arrays are indexed by the enum values, which the ABI fixes.
constexpr int kDtypeIndex[] = {
#define XC_DTYPE_INDEX(d, T, k, name) static_cast<int>(d),
    XC_REDUCE_DTYPES(XC_DTYPE_INDEX)
#undef XC_DTYPE_INDEX
};
constexpr int kOpIndex[] = {
#define XC_OP_INDEX(o, name) static_cast<int>(o),
    XC_REDUCE_OPS(XC_OP_INDEX)
#undef XC_OP_INDEX
};
constexpr bool in_enum_order(const int *v, int n) {
  for (int i = 0; i < n; ++i)
    if (v[i] != i) return false;
  return true;
}
static_assert(in_enum_order(kDtypeIndex, reduce_table::kNumDtypes), "XC_REDUCE_DTYPES lists the dtypes in enum order");
static_assert(in_enum_order(kOpIndex, reduce_table::kNumOps), "XC_REDUCE_OPS lists the ops in enum order");

}  // namespace

bool dtype_valid(xc_dtype_t dtype) {
  return static_cast<int>(dtype) >= 0 && static_cast<size_t>(dtype) < sizeof kDtypes / sizeof kDtypes[0];
}
size_t dtype_size(xc_dtype_t dtype) { return dtype_valid(dtype) ? kDtypes[dtype].size : 0; }
const char *dtype_name(xc_dtype_t dtype) { return dtype_valid(dtype) ? kDtypes[dtype].name : "invalid"; }
bool dtype_is_integer(xc_dtype_t dtype) { return dtype_valid(dtype) && kDtypes[dtype].integer; }

bool op_valid(xc_op_t op) { return static_cast<int>(op) >= 0 && static_cast<size_t>(op) < sizeof kOps / sizeof kOps[0]; }
const char *op_name(xc_op_t op) { return op_valid(op) ? kOps[op] : "invalid"; }

Status dtype_error(int32_t bits) { return Error(XC_ERR_INVALID_ARGUMENT, "unknown dtype %d", static_cast<int>(bits)); }

Status op_slow(int32_t bits, xc_dtype_t dtype, xc_op_t *out) {
  if (bits < 0 || bits >= reduce_table::kNumOps)
    return Error(XC_ERR_INVALID_ARGUMENT, "unknown reduction op %d", static_cast<int>(bits));
  xc_op_t op = static_cast<xc_op_t>(bits);
  if ((op == XC_BAND || op == XC_BOR || op == XC_BXOR) && !dtype_is_integer(dtype))
    return Error(XC_ERR_INVALID_ARGUMENT, "bitwise op %s needs an integer dtype, not %s", op_name(op), dtype_name(dtype));
  *out = op;
  return Status::Ok();
}

Status bytes_error(size_t count, xc_dtype_t dtype) {
  if (!dtype_valid(dtype)) return Error(XC_ERR_INVALID_ARGUMENT, "unknown dtype %d", static_cast<int>(dtype));
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, dtype_size(dtype), &bytes))
    return Error(XC_ERR_INVALID_ARGUMENT, "count %zu of %s overflows the address space", count, dtype_name(dtype));
  return Error(XC_ERR_INVALID_ARGUMENT, "count %zu of %s is %zu bytes, more than any buffer holds (%zu at most)", count,
               dtype_name(dtype), bytes, kMaxBufferBytes);
}

}  // namespace xc
