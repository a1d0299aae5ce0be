// What every C++ unit test includes: CMocka (whose 1.1 header lacks C
// linkage guards) and checks of internal Status values.
#pragma once

// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}
// clang-format on

#include <cstring>

#include "base/status.h"

#define ASSERT_OK(expr)                                                   \
  do {                                                                    \
    ::xc::Status s_ = (expr);                                             \
    if (!s_.ok()) fail_msg("%s failed: %s", #expr, s_.message().c_str()); \
  } while (0)

// s must be the error code with substr somewhere in its message.
inline void expect_error(const ::xc::Status &s, xc_result_t code, const char *substr) {
  if (s.ok()) fail_msg("expected error %d containing '%s', got success", code, substr);
  if (s.code() != code || strstr(s.message().c_str(), substr) == nullptr)
    fail_msg("expected error %d containing '%s', got %d: %s", code, substr, s.code(), s.message().c_str());
}
