// xc-bench: helpers shared by the subcommands.
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "bench.h"

namespace xcb {

const char *g_prog = "xc-bench";
int g_rank = -1;

void die(const char *call, xc_result_t rc) {
  fprintf(stderr, "%s: rank %d: %s failed: %s (%s)\n", g_prog, g_rank, call, xc_strerror(rc), xc_last_error());
  exit(1);
}

double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

xc_comm_t timed_init(double *init_us, int *size) {
  xc_comm_t world = nullptr;
  double t0 = now_us();
  xc_result_t rc = xc_init(nullptr, &world);
  *init_us = now_us() - t0;
  if (rc != XC_SUCCESS) die("xc_init", rc);
  BENCH_CHECK(xc_comm_rank(world, &g_rank));
  BENCH_CHECK(xc_comm_size(world, size));
  return world;
}

double max_over_ranks(double local, xc_comm_t comm) {
  BENCH_CHECK(xc_allreduce(XC_IN_PLACE, &local, 1, XC_FLOAT64, XC_MAX, comm));
  return local;
}

double sum_over_ranks(double local, xc_comm_t comm) {
  BENCH_CHECK(xc_allreduce(XC_IN_PLACE, &local, 1, XC_FLOAT64, XC_SUM, comm));
  return local;
}

Stats summarize(const std::vector<double> &samples) {
  Stats s;
  if (samples.empty()) return s;
  s.count = samples.size();
  s.min = *std::min_element(samples.begin(), samples.end());
  s.max = *std::max_element(samples.begin(), samples.end());
  double sum = 0;
  for (double v : samples) sum += v;
  s.avg = sum / static_cast<double>(samples.size());
  return s;
}

bool parse_count(const char *text, int min, int *out) {
  if (!text || !*text) return false;
  char *end = nullptr;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || *end || v < min || v > 1000000) return false;
  *out = static_cast<int>(v);
  return true;
}

bool parse_bytes(const char *text, size_t *out) {
  if (!text || !*text || *text == '-') return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text) return false;
  int shift = 0;
  switch (*end) {
    case 'K': case 'k': shift = 10; ++end; break;
    case 'M': case 'm': shift = 20; ++end; break;
    case 'G': case 'g': shift = 30; ++end; break;
    default: break;
  }
  if (*end || (shift && v > (~0ull >> shift))) return false;
  *out = static_cast<size_t>(v << shift);
  return true;
}

}  // namespace xcb
