// The loops every vector level runs its register-sized steps in: four
// registers at a time, then one, then the last partial register through
// zero-filled copies (only its own elements are written back), so any length
// and alignment works and nothing outside the buffers is touched.
//
// Include this AFTER the file's target pragma (AVX2, AVX-512): the loops are
// then compiled for that instruction set and C::run inlines into them.
#ifndef XCOMM_CPU_REDUCE_LOOPS_H
#define XCOMM_CPU_REDUCE_LOOPS_H

#include <cstddef>
#include <cstring>

namespace xc::cpu::reduce_loops {

constexpr size_t kTailAlign = 64;  // suits every register width in use

// out = a op b over n elements of kSize bytes; C::run(o, a, b) handles C::kElems.
template <class C, size_t kSize>
void binary_loop(void *out, const void *a, const void *b, size_t n) {
  constexpr size_t kStep = C::kElems * kSize;
  char *o = static_cast<char *>(out);
  const char *x = static_cast<const char *>(a);
  const char *y = static_cast<const char *>(b);
  size_t bytes = n * kSize, i = 0;
  for (; i + 4 * kStep <= bytes; i += 4 * kStep) {
    C::run(o + i, x + i, y + i);
    C::run(o + i + kStep, x + i + kStep, y + i + kStep);
    C::run(o + i + 2 * kStep, x + i + 2 * kStep, y + i + 2 * kStep);
    C::run(o + i + 3 * kStep, x + i + 3 * kStep, y + i + 3 * kStep);
  }
  for (; i + kStep <= bytes; i += kStep) C::run(o + i, x + i, y + i);
  if (i < bytes) {
    alignas(kTailAlign) char tx[kStep] = {}, ty[kStep] = {}, to[kStep];
    memcpy(tx, x + i, bytes - i);
    memcpy(ty, y + i, bytes - i);
    C::run(to, tx, ty);
    memcpy(o + i, to, bytes - i);
  }
}

// out = f(in) over n elements: c.run(o, i) maps C::kElems elements of C::kIn
// bytes to C::kElems of C::kOut bytes.
template <class C>
void unary_loop(const C &c, const void *in, void *out, size_t n) {
  constexpr size_t kInStep = C::kElems * C::kIn, kOutStep = C::kElems * C::kOut;
  const char *s = static_cast<const char *>(in);
  char *d = static_cast<char *>(out);
  size_t i = 0;
  for (; i + 2 * C::kElems <= n; i += 2 * C::kElems) {
    c.run(d + i * C::kOut, s + i * C::kIn);
    c.run(d + i * C::kOut + kOutStep, s + i * C::kIn + kInStep);
  }
  for (; i + C::kElems <= n; i += C::kElems) c.run(d + i * C::kOut, s + i * C::kIn);
  if (i < n) {
    alignas(kTailAlign) char ts[kInStep] = {}, td[kOutStep];
    memcpy(ts, s + i * C::kIn, (n - i) * C::kIn);
    c.run(td, ts);
    memcpy(d + i * C::kOut, td, (n - i) * C::kOut);
  }
}

}  // namespace xc::cpu::reduce_loops

#endif
