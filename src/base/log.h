// Logging: silent unless XC_DEBUG (or the config's debug level) asks. Every
// line is prefixed with host, pid and rank.
#pragma once

namespace xc {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

// Current level (read from XC_DEBUG once; raised or lowered by set_log_level).
LogLevel log_level();
void set_log_level(LogLevel level);
// The rank shown in the prefix (-1 until known).
void set_log_rank(int rank);

void log_write(LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace xc

#define XC_LOG(level, ...)                                                   \
  do {                                                                       \
    if (static_cast<int>(::xc::log_level()) >= static_cast<int>(level))     \
      ::xc::log_write(level, __VA_ARGS__);                                   \
  } while (0)
#define XC_WARN(...) XC_LOG(::xc::LogLevel::kWarn, __VA_ARGS__)
#define XC_INFO(...) XC_LOG(::xc::LogLevel::kInfo, __VA_ARGS__)
#define XC_TRACE(...) XC_LOG(::xc::LogLevel::kTrace, __VA_ARGS__)
