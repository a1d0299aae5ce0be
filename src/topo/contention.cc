#include "topo/contention.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>

namespace xc::topo {

namespace {

constexpr long long kMinSpanNs = 1000000;  // shorter spans say nothing

long long now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// Nanoseconds this thread has waited on a run queue, or -1.
long long run_delay_ns() {
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[96];
  ssize_t got = read(fd, text, sizeof text - 1);
  close(fd);
  if (got <= 0) return -1;
  text[got] = '\0';
  long long ran = 0, waited = 0;  // "<time on cpu> <time waiting> <timeslices>"
  return sscanf(text, "%lld %lld", &ran, &waited) == 2 ? waited : -1;
}

}  // namespace

bool core_contended() {
  thread_local long long last_at = 0, last_delay = -1;
  thread_local bool verdict = false;
  long long at = now_ns();
  if (last_delay >= 0 && at - last_at < kMinSpanNs) return verdict;
  long long delay = run_delay_ns();
  if (delay < 0) return false;
  verdict = last_delay >= 0 && (delay - last_delay) * 5 > at - last_at;
  last_at = at;
  last_delay = delay;
  return verdict;
}

}  // namespace xc::topo
