#include "cpu/copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace xc::cpu {

void copy_streaming(void *dst, const void *src, size_t bytes) {
#if defined(__x86_64__)
  if (bytes >= 64) {
    // SSE2 is part of x86-64: no dispatch needed. Align the destination
    // (streaming stores must be), copy 64-byte lines, then the tail.
    auto *d = static_cast<char *>(dst);
    auto *s = static_cast<const char *>(src);
    size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
    memcpy(d, s, head);
    d += head;
    s += head;
    bytes -= head;
    size_t body = bytes & ~size_t{63};
    for (size_t i = 0; i < body; i += 64) {
      __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i));
      __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 16));
      __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 32));
      __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i *>(d + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 48), e);
    }
    // Streaming stores are weakly ordered: fence before anyone (a peer told
    // by a later flag store) may read the destination.
    _mm_sfence();
    memcpy(d + body, s + body, bytes - body);
    return;
  }
#endif
  if (bytes) memcpy(dst, src, bytes);
}

}  // namespace xc::cpu
