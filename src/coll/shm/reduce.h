// The reduction every shm algorithm runs on one piece: sources taken in rank
// order, left to right, so whichever rank reduces an element gets the same
// bits. float16/bfloat16 accumulate in float32; XC_AVG divides once, at the
// end. Pieces are at most kShmCmaChunkBytes, so the scratch stays in cache.
#pragma once

#include <cstring>
#include <vector>
#include <vector>

#include "base/dtype.h"
#include "coll/shm/state.h"
#include "cpu/reduce.h"

namespace xc::coll {

// The float32 accumulator and operand of a float16/bfloat16 chain of count
// elements (ShmState::scratch says why per thread).
inline float *shm_half_scratch(size_t count) {
  thread_local std::vector<float> floats;
  if (floats.size() < 2 * count) floats.resize(2 * count);
  return floats.data();
}

// out = src(0) op src(1) op ... op src(m-1). fetch(j, scratch, &ptr) points
// ptr at source j, reading it into scratch (kShmCmaChunkBytes) if it must.
// avg_n > 0 divides by it at the end (XC_AVG). out may be any source.
template <class Fetch>
Status shm_reduce_chain(ShmState &st, void *out, size_t count, xc_dtype_t dtype, xc_op_t op, int m, int avg_n,
                        Fetch fetch) {
  if (count == 0) return Status::Ok();
  size_t bytes = count * dtype_size(dtype);
  char *a = st.scratch.data();
  char *b = a + kShmCmaChunkBytes;
  const void *left = nullptr;
  if (dtype_is_half(dtype)) {
    float *acc = shm_half_scratch(count), *tmp = acc + count;
    XC_TRY(fetch(0, a, &left));
    cpu::widen_to_float(left, acc, count, dtype);
    for (int j = 1; j < m; ++j) {
      const void *right = nullptr;
      XC_TRY(fetch(j, b, &right));
      cpu::widen_to_float(right, tmp, count, dtype);
      cpu::reduce(acc, tmp, count, XC_FLOAT32, op);
    }
    if (avg_n > 0) cpu::scale_avg(acc, count, XC_FLOAT32, avg_n);
    cpu::narrow_from_float(acc, out, count, dtype);
    return Status::Ok();
  }
  XC_TRY(fetch(0, a, &left));
  if (m == 1) {
    if (out != left) memmove(out, left, bytes);
  }
  for (int j = 1; j < m; ++j) {
    const void *right = nullptr;
    XC_TRY(fetch(j, b, &right));
    void *dst = j == m - 1 ? out : a;
    cpu::reduce3(dst, left, right, count, dtype, op);
    left = dst;
  }
  if (avg_n > 0) cpu::scale_avg(out, count, dtype, avg_n);
  return Status::Ok();
}

// The sources of one reduction, one pointer per rank: on the stack up to 64
// ranks (no allocation on the small ops' path), beyond that in a vector.
class ShmSources {
 public:
  explicit ShmSources(int m) {
    if (m > kOnStack) {
      many_.resize(static_cast<size_t>(m));
      p_ = many_.data();
    }
  }
  const char *&operator[](int j) { return p_[j]; }
  const char *const *data() const { return p_; }

 private:
  static constexpr int kOnStack = 64;
  const char *few_[kOnStack];
  std::vector<const char *> many_;
  const char **p_ = few_;
};

// Sources already in memory (one-shot slots): srcs[j] for j in [0, m).
inline void shm_reduce_ptrs(ShmState &st, void *out, size_t count, xc_dtype_t dtype, xc_op_t op, int m, int avg_n,
                            const char *const *srcs, size_t offset_bytes) {
  (void)shm_reduce_chain(st, out, count, dtype, op, m, avg_n, [&](int j, char *, const void **p) {
    *p = srcs[j] + offset_bytes;
    return Status::Ok();
  });
}

}  // namespace xc::coll
