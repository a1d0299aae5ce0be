#include "base/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace xc {

namespace {
std::string vformat(const char *fmt, va_list ap) {
  char small[256];
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  if (n < 0) return fmt;
  if (static_cast<size_t>(n) < sizeof small) return std::string(small, n);
  std::string big(static_cast<size_t>(n) + 1, '\0');
  vsnprintf(big.data(), big.size(), fmt, ap);
  big.resize(n);
  return big;
}
}  // namespace

Status Error(xc_result_t code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string msg = vformat(fmt, ap);
  va_end(ap);
  return Status(code, std::move(msg));
}

Status SystemError(int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string msg = vformat(fmt, ap);
  va_end(ap);
  msg += ": ";
  msg += strerror(err);
  return Status(XC_ERR_SYSTEM, std::move(msg));
}

}  // namespace xc
