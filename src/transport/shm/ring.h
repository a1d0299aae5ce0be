// A single-producer single-consumer ring of framed records in shared memory.
// Records are 64-byte aligned: a 16-byte prefix, the 48-byte FrameHeader,
// then the payload, so payloads start cache-line aligned. A record never
// wraps; the producer pads to the end instead. head and tail only grow.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "transport/transport.h"

namespace xc::shm {

struct alignas(64) RingControl {
  std::atomic<uint64_t> tail{0};  // written by the producer
  char pad0[56];
  std::atomic<uint64_t> head{0};  // written by the consumer
  char pad1[56];
};

struct RecordPrefix {
  uint32_t record_bytes;  // whole record, multiple of 64
  uint32_t payload_bytes;
  uint32_t is_pad;        // 1: skip to the end of the ring
  uint32_t reserved;
};
static_assert(sizeof(RecordPrefix) + sizeof(FrameHeader) == 64, "record header is one cache line");

constexpr size_t kRecordHeaderBytes = 64;
inline size_t record_bytes(size_t payload) { return kRecordHeaderBytes + ((payload + 63) & ~size_t{63}); }

// The producer side, held by the sending process.
class RingWriter {
 public:
  RingWriter() = default;
  RingWriter(RingControl *ctl, char *data, size_t capacity)
      : ctl_(ctl), data_(data), capacity_(capacity), tail_(ctl->tail.load(std::memory_order_relaxed)) {}

  // Largest payload a record may carry: a quarter of the ring keeps a
  // pipeline of several records in flight.
  size_t max_payload() const { return capacity_ / 4 - kRecordHeaderBytes; }

  bool try_write(const FrameHeader &h, const void *payload, size_t len) {
    size_t need = record_bytes(len);
    size_t pos = tail_ & (capacity_ - 1);
    size_t pad = capacity_ - pos < need ? capacity_ - pos : 0;
    if (!has_room(pad + need)) return false;
    if (pad) {
      auto *p = reinterpret_cast<RecordPrefix *>(data_ + pos);
      *p = RecordPrefix{static_cast<uint32_t>(pad), 0, 1, 0};
      tail_ += pad;
      pos = 0;
    }
    auto *p = reinterpret_cast<RecordPrefix *>(data_ + pos);
    *p = RecordPrefix{static_cast<uint32_t>(need), static_cast<uint32_t>(len), 0, 0};
    memcpy(data_ + pos + sizeof(RecordPrefix), &h, sizeof h);
    if (len) memcpy(data_ + pos + kRecordHeaderBytes, payload, len);
    tail_ += need;
    ctl_->tail.store(tail_, std::memory_order_release);
    return true;
  }

 private:
  bool has_room(size_t bytes) {
    if (tail_ + bytes - cached_head_ <= capacity_) return true;
    cached_head_ = ctl_->head.load(std::memory_order_acquire);
    return tail_ + bytes - cached_head_ <= capacity_;
  }

  RingControl *ctl_ = nullptr;
  char *data_ = nullptr;
  size_t capacity_ = 0;
  uint64_t tail_ = 0;
  uint64_t cached_head_ = 0;
};

// The consumer side, held by the receiving process.
class RingReader {
 public:
  RingReader() = default;
  RingReader(RingControl *ctl, char *data, size_t capacity)
      : ctl_(ctl), data_(data), capacity_(capacity), head_(ctl->head.load(std::memory_order_relaxed)) {}

  // For the thread that drains (under the engine's lock): caches the tail.
  bool empty() {
    if (head_ != cached_tail_) return false;
    cached_tail_ = ctl_->tail.load(std::memory_order_acquire);
    return head_ == cached_tail_;
  }

  // Whether a record may be waiting, for a thread that does not hold the
  // engine's lock (about to sleep): reads only the shared atomics, never
  // the drainer's private head_ and cached_tail_.
  bool maybe_nonempty() const {
    return ctl_->head.load(std::memory_order_acquire) != ctl_->tail.load(std::memory_order_acquire);
  }

  // Hand each available record to fn(header, payload, len); frees each
  // record's space as soon as fn returns. Returns the number of frames.
  template <typename Fn>
  size_t drain(Fn &&fn) {
    size_t frames = 0;
    while (!empty()) {
      size_t pos = head_ & (capacity_ - 1);
      const auto *p = reinterpret_cast<const RecordPrefix *>(data_ + pos);
      if (!p->is_pad) {
        FrameHeader h;
        memcpy(&h, data_ + pos + sizeof(RecordPrefix), sizeof h);
        fn(h, data_ + pos + kRecordHeaderBytes, static_cast<size_t>(p->payload_bytes));
        ++frames;
      }
      head_ += p->record_bytes;
      ctl_->head.store(head_, std::memory_order_release);
    }
    return frames;
  }

 private:
  RingControl *ctl_ = nullptr;
  const char *data_ = nullptr;
  size_t capacity_ = 0;
  uint64_t head_ = 0;
  uint64_t cached_tail_ = 0;
};

}  // namespace xc::shm
