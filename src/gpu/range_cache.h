// The device address ranges CudaDevice::is_device_pointer found last, so
// that the buffers of a loop of ops cost one driver query each, not one per
// op. Only "device" answers are kept: under unified addressing the driver
// keeps a device range reserved in the process's address space, so an
// address that was device memory never becomes host memory (a freed one is
// no buffer at all, and the application's error either way; our own frees
// forget their range). A host answer is not kept: host memory can be
// registered or unregistered with the driver at any time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace xc::gpu {

class RangeCache {
 public:
  bool contains(uintptr_t p) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Range &r : slots_)
      if (p >= r.lo && p < r.hi) return true;
    return false;
  }

  // Replaces the oldest entry: a job's buffers are few (send, receive,
  // scratch), 16 covers them with room.
  void add(uintptr_t base, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    slots_[next_] = Range{base, base + bytes};
    next_ = (next_ + 1) % kSlots;
  }

  void forget(uintptr_t base) {
    std::lock_guard<std::mutex> lock(mu_);
    for (Range &r : slots_)
      if (r.lo == base) r = Range{};
  }

 private:
  static constexpr size_t kSlots = 16;
  struct Range {
    uintptr_t lo = 0, hi = 0;  // [lo, hi); empty when lo == hi
  };
  mutable std::mutex mu_;
  std::array<Range, kSlots> slots_{};
  size_t next_ = 0;
};

}  // namespace xc::gpu
