#include "gpu/kernel_names.h"

#include "base/reduce_table.h"

namespace xc::gpu {

namespace {

// The enum tokens, indexed by value: the table lists them in enum order.
#define XC_KERNEL_NAMES_DTYPE(d, T, k, name) #d,
constexpr const char *kDtypeTokens[] = {XC_REDUCE_DTYPES(XC_KERNEL_NAMES_DTYPE)};
#undef XC_KERNEL_NAMES_DTYPE
#define XC_KERNEL_NAMES_KIND(d, T, k, name) reduce_table::Kind::k,
constexpr reduce_table::Kind kDtypeKinds[] = {XC_REDUCE_DTYPES(XC_KERNEL_NAMES_KIND)};
#undef XC_KERNEL_NAMES_KIND
#define XC_KERNEL_NAMES_OP(o, name) #o,
constexpr const char *kOpTokens[] = {XC_REDUCE_OPS(XC_KERNEL_NAMES_OP)};
#undef XC_KERNEL_NAMES_OP

}  // namespace

std::string reduce_kernel_name(xc_dtype_t dtype, xc_op_t op) {
  int d = static_cast<int>(dtype), o = static_cast<int>(op);
  if (d < 0 || d >= reduce_table::kNumDtypes || o < 0 || o >= reduce_table::kNumOps) return "";
  if (op == XC_AVG || !reduce_table::op_applies(kDtypeKinds[d], op)) return "";
  return std::string("xc_reduce_") + kDtypeTokens[d] + "_" + kOpTokens[o];
}

bool custom_kernel_exists(xc_dtype_t dtype, xc_op_t op) {
  bool dtype_ok = dtype == XC_FLOAT32 || dtype == XC_FLOAT16 || dtype == XC_BFLOAT16;
  bool op_ok = op == XC_SUM || op == XC_MIN || op == XC_MAX || op == XC_AVG;
  return dtype_ok && op_ok;
}

std::string custom_kernel_name(xc_dtype_t dtype, xc_op_t op) {
  if (!custom_kernel_exists(dtype, op)) return "";
  xc_op_t kernel_op = op == XC_AVG ? XC_SUM : op;
  return std::string("xc_custom_") + kDtypeTokens[dtype] + "_" + kOpTokens[kernel_op];
}

}  // namespace xc::gpu
