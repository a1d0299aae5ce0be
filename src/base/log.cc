#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "base/env.h"

namespace xc {

namespace {
std::atomic<int> g_level{-1};
std::atomic<int> g_rank{-1};
std::mutex g_mutex;
FILE *g_file = nullptr;

LogLevel parse_level(const std::string &s) {
  if (strcasecmp(s.c_str(), "WARN") == 0) return LogLevel::kWarn;
  if (strcasecmp(s.c_str(), "INFO") == 0) return LogLevel::kInfo;
  if (strcasecmp(s.c_str(), "TRACE") == 0) return LogLevel::kTrace;
  return LogLevel::kNone;
}

std::string hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

FILE *open_log_file() {
  std::string path = env_get("XC_DEBUG_FILE");
  if (path.empty()) return stderr;
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'h') {
      out += hostname();
      ++i;
    } else if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'p') {
      out += std::to_string(getpid());
      ++i;
    } else {
      out += path[i];
    }
  }
  FILE *f = fopen(out.c_str(), "a");
  return f ? f : stderr;
}
}  // namespace

LogLevel log_level() {
  int level = g_level.load(std::memory_order_relaxed);
  if (level < 0) {
    level = static_cast<int>(parse_level(env_get("XC_DEBUG")));
    g_level.store(level, std::memory_order_relaxed);
  }
  return static_cast<LogLevel>(level);
}

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }
void set_log_rank(int rank) { g_rank.store(rank); }

void log_write(LogLevel level, const char *fmt, ...) {
  static const char *names[] = {"NONE", "WARN", "INFO", "TRACE"};
  static const std::string host = hostname();
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_file) g_file = open_log_file();
  fprintf(g_file, "%s:%d:%d xcomm %s %s\n", host.c_str(), static_cast<int>(getpid()), g_rank.load(),
          names[static_cast<int>(level)], msg);
  fflush(g_file);
}

}  // namespace xc
