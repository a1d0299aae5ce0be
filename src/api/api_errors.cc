// Versions, result codes, error messages, dtype sizes and config defaults.
#include <cstring>

#include "api/api_support.h"
#include "base/dtype.h"

XC_EXPORT xc_result_t xc_get_version(int *major, int *minor, int *patch) {
  if (major) *major = XC_VERSION_MAJOR;
  if (minor) *minor = XC_VERSION_MINOR;
  if (patch) *patch = XC_VERSION_PATCH;
  return xc::api::ok();
}

XC_EXPORT const char *xc_strerror(xc_result_t result) {
  switch (result) {
    case XC_SUCCESS: return "success";
    case XC_IN_PROGRESS: return "in progress";
    case XC_ERR_INVALID_ARGUMENT: return "invalid argument";
    case XC_ERR_INVALID_USAGE: return "invalid usage";
    case XC_ERR_NO_MEMORY: return "out of memory";
    case XC_ERR_SYSTEM: return "system call failed";
    case XC_ERR_TIMEOUT: return "timed out";
    case XC_ERR_PEER_FAILED: return "a peer failed";
    case XC_ERR_ABORTED: return "aborted";
    case XC_ERR_UNSUPPORTED: return "unsupported";
    case XC_ERR_TRUNCATED: return "message truncated";
    case XC_ERR_CUDA: return "CUDA error";
    case XC_ERR_NCCL: return "NCCL error";
    case XC_ERR_INTERNAL: return "internal error";
    case XC_ERR_REVOKED: return "communicator revoked";
    default: return "unknown result code";
  }
}

XC_EXPORT const char *xc_last_error(void) { return xc::api::last_error(); }

XC_EXPORT size_t xc_dtype_size(xc_dtype_t dtype) {
  int32_t bits = xc::enum_bits(dtype);  // any int may come from C: checked before it is an enum
  return xc::dtype_bits_valid(bits) ? xc::dtype_size(static_cast<xc_dtype_t>(bits)) : 0;
}

XC_EXPORT xc_result_t xc_config_init(xc_config_t *cfg, size_t size) {
  if (!cfg) return xc::api::finish("xc_config_init", xc::Error(XC_ERR_INVALID_ARGUMENT, "cfg is NULL"));
  if (size < offsetof(xc_config_t, device))
    return xc::api::finish("xc_config_init",
                           xc::Error(XC_ERR_INVALID_ARGUMENT, "size %zu is smaller than the smallest config", size));
  if (size > xc::kMaxConfigSize)  // memset would run past the caller's struct
    return xc::api::finish("xc_config_init", xc::Error(XC_ERR_INVALID_ARGUMENT,
                                                       "size %zu is larger than any config can be (%zu bytes at most)",
                                                       size, xc::kMaxConfigSize));
  xc_config_t defaults = XC_CONFIG_INIT;
  size_t n = size < sizeof defaults ? size : sizeof defaults;
  memset(cfg, 0, size);  // fields newer than this library stay zero (= default)
  memcpy(cfg, &defaults, n);
  cfg->size = size;
  return xc::api::ok();
}
