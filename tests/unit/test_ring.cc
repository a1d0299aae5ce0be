// The shared-memory ring on plain memory: records come out in order and
// intact, including across the wrap-around, and a full ring refuses writes.
#include "unit_test.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "transport/shm/ring.h"

using xc::FrameHeader;
using xc::shm::RingControl;
using xc::shm::RingReader;
using xc::shm::RingWriter;

namespace {

constexpr size_t kCapacity = 64 << 10;

struct Ring {
  RingControl ctl;
  alignas(64) char data[kCapacity];
};

uint8_t byte_of(uint64_t msg, size_t i) { return static_cast<uint8_t>((msg * 131 + i * 7) ^ (i >> 8)); }

void ring_in_order_across_wrap(void **) {
  auto ring = std::make_unique<Ring>();
  RingWriter w(&ring->ctl, ring->data, kCapacity);
  RingReader r(&ring->ctl, ring->data, kCapacity);
  std::vector<uint8_t> payload(w.max_payload());
  uint64_t sent = 0, received = 0;
  // Sizes cycle through awkward values so records land at every offset.
  const size_t sizes[] = {0, 1, 63, 64, 65, 1000, 4096, 9999, w.max_payload()};
  while (received < 2000) {
    while (sent < 2000) {
      size_t len = sizes[sent % (sizeof sizes / sizeof sizes[0])];
      for (size_t i = 0; i < len; ++i) payload[i] = byte_of(sent, i);
      FrameHeader h{};
      h.kind = 1;
      h.id = sent;
      h.bytes = len;
      if (!w.try_write(h, payload.data(), len)) break;
      ++sent;
    }
    size_t got = r.drain([&](const FrameHeader &h, const void *p, size_t len) {
      assert_int_equal(h.id, received);
      assert_int_equal(h.bytes, len);
      const uint8_t *b = static_cast<const uint8_t *>(p);
      for (size_t i = 0; i < len; ++i) assert_int_equal(b[i], byte_of(received, i));
      ++received;
    });
    assert_true(got > 0);
  }
  assert_true(r.empty());
}

void ring_full_refuses(void **) {
  auto ring = std::make_unique<Ring>();
  RingWriter w(&ring->ctl, ring->data, kCapacity);
  RingReader r(&ring->ctl, ring->data, kCapacity);
  std::vector<char> payload(w.max_payload(), 'x');
  FrameHeader h{};
  int written = 0;
  while (w.try_write(h, payload.data(), payload.size())) ++written;
  // A largest record is exactly a quarter of the ring: four fill it.
  assert_int_equal(written, 4);
  assert_false(w.try_write(h, nullptr, 0));
  size_t drained = r.drain([](const FrameHeader &, const void *, size_t) {});
  assert_int_equal(drained, 4);
  assert_true(w.try_write(h, payload.data(), payload.size()));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ring_in_order_across_wrap),
      cmocka_unit_test(ring_full_refuses),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
