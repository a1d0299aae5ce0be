// Internal status value: a result code plus a message. Every internal function
// that can fail returns one; XC_TRY propagates it. The api/ layer turns it into
// an xc_result_t and the thread-local last-error message.
#pragma once

#include <string>
#include <utility>

#include "xcomm.h"

namespace xc {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(xc_result_t code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == XC_SUCCESS; }
  xc_result_t code() const { return code_; }
  const std::string &message() const { return message_; }

  // Prefix the message with where it happened ("xc_recv: ...").
  Status &with_context(const std::string &context) {
    if (!ok()) message_ = context + ": " + message_;
    return *this;
  }

 private:
  xc_result_t code_ = XC_SUCCESS;
  std::string message_;
};

// printf-style constructor of an error status.
Status Error(xc_result_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// An OS call failed: the message carries strerror(err).
Status SystemError(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace xc

#define XC_TRY(expr)                  \
  do {                                \
    ::xc::Status xc_try_s_ = (expr);  \
    if (!xc_try_s_.ok()) return xc_try_s_; \
  } while (0)

#define XC_TRY_CTX(expr, context)                                   \
  do {                                                               \
    ::xc::Status xc_try_s_ = (expr);                                 \
    if (!xc_try_s_.ok()) return std::move(xc_try_s_.with_context(context)); \
  } while (0)
