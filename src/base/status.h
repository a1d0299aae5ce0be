// Internal status value: a result code plus a message. Every internal function
// that can fail returns one; XC_TRY propagates it. The api/ layer turns it into
// an xc_result_t and the thread-local last-error message.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "xcomm.h"

namespace xc {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(xc_result_t code, std::string message)
      : code_(code), message_(std::make_unique<std::string>(std::move(message))) {}
  Status(const Status &o) : code_(o.code_), message_(o.message_ ? std::make_unique<std::string>(*o.message_) : nullptr) {}
  Status &operator=(const Status &o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status(Status &&) noexcept = default;
  Status &operator=(Status &&) noexcept = default;

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == XC_SUCCESS; }
  xc_result_t code() const { return code_; }
  const std::string &message() const { return message_ ? *message_ : empty(); }

  // Prefix the message with where it happened ("xc_recv: ...").
  Status &with_context(const std::string &context) {
    if (!ok()) message_ = std::make_unique<std::string>(context + ": " + message());
    return *this;
  }

 private:
  static const std::string &empty() {
    static const std::string none;
    return none;
  }

  xc_result_t code_ = XC_SUCCESS;
  // Held by pointer so that a success (the common case, on every op's path)
  // is two words with nothing to construct or destroy.
  std::unique_ptr<std::string> message_;
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
