// A point in time after which a blocking wait gives up. Every wait in xcomm
// takes one, so nothing blocks forever.
#pragma once

#include <chrono>
#include <cstdint>

namespace xc {

// a * mul + add in milliseconds, saturating at UINT64_MAX instead of
// wrapping (a timeout near UINT64_MAX times 4 would wrap to a few seconds).
inline uint64_t sat_ms(uint64_t a, uint64_t mul, uint64_t add) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, mul, &r) || __builtin_add_overflow(r, add, &r)) return UINT64_MAX;
  return r;
}

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // Longer waits are "never": steady_clock counts int64 nanoseconds, so
  // beyond ~9.2e12 ms (292 years) now + ms overflows and may land in the
  // past (XC_TIMEOUT=9300000000000 or INT64_MAX failed xc_init at once).
  // 100 years leaves room for callers that convert at() to microseconds.
  static constexpr uint64_t kForeverMs = 100ull * 366 * 24 * 3600 * 1000;

  static Deadline AfterMs(uint64_t ms, Clock::time_point from = Clock::now()) {
    Deadline d;
    d.at_ = from + std::chrono::milliseconds(static_cast<int64_t>(ms < kForeverMs ? ms : kForeverMs));
    return d;
  }
  bool expired() const { return Clock::now() >= at_; }
  // Milliseconds left, clamped to [0, cap].
  int remaining_ms(int cap = 1 << 30) const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
    if (left < 0) return 0;
    return left > cap ? cap : static_cast<int>(left);
  }
  Clock::time_point at() const { return at_; }

 private:
  Clock::time_point at_;
};

}  // namespace xc
