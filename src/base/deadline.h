// A point in time after which a blocking wait gives up. Every wait in xcomm
// takes one, so nothing blocks forever.
#pragma once

#include <chrono>
#include <cstdint>

namespace xc {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  static Deadline AfterMs(uint64_t ms) {
    Deadline d;
    d.at_ = Clock::now() + std::chrono::milliseconds(ms);
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
