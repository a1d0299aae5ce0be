// Large host copies whose destination is not read again soon.
#pragma once

#include <cstddef>
#include <cstring>

namespace xc::cpu {

// From this size of the whole operation on, its copies stream: below it
// the buffers likely stay in cache (L2 is 1-4 MiB per core), which the next
// reader wants. Measured on the 2-core VM (4 MiB L2): 2 MiB in-place
// alltoall was slower streaming, 32 MiB alltoall/allgather ~7 % faster.
constexpr size_t kStreamingCopyMinBytes = 4 << 20;

// memcpy(dst, src, bytes) with non-temporal stores, for buffers that do not
// overlap: the destination's lines are not read before being overwritten
// (a plain copy reads each one) and do not evict the cache, so a copy from
// DRAM to DRAM moves a third less memory. Ends with a store fence, so a
// flag published afterwards orders after the data.
void copy_streaming(void *dst, const void *src, size_t bytes);

// A copy of a part of an operation that moves total bytes in all: streams
// when the whole is too large to stay in cache.
inline void copy_part(void *dst, const void *src, size_t bytes, size_t total) {
  if (total >= kStreamingCopyMinBytes)
    copy_streaming(dst, src, bytes);
  else if (bytes)
    memcpy(dst, src, bytes);
}

inline void copy_large(void *dst, const void *src, size_t bytes) { copy_part(dst, src, bytes, bytes); }

}  // namespace xc::cpu
