#include "redist/box.h"

#include <algorithm>
#include <cstring>

namespace xc::redist {

size_t Box::volume() const {
  size_t v = 1;
  for (int d = 0; d < ndim; ++d) v *= extent(d);
  return v;
}

bool Box::operator==(const Box &o) const {
  if (ndim != o.ndim) return false;
  for (int d = 0; d < ndim; ++d)
    if (lo[d] != o.lo[d] || hi[d] != o.hi[d]) return false;
  return true;
}

bool Box::contains(const Box &o) const {
  for (int d = 0; d < ndim; ++d)
    if (o.lo[d] < lo[d] || o.hi[d] > hi[d]) return false;
  return true;
}

Box intersect(const Box &a, const Box &b) {
  Box r;
  r.ndim = a.ndim;
  for (int d = 0; d < a.ndim; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
  }
  return r;
}

Strides packed_strides(const Box &b) {
  Strides s{};
  int64_t run = 1;
  for (int d = b.ndim - 1; d >= 0; --d) {
    s[d] = run;
    run *= static_cast<int64_t>(b.extent(d));
  }
  return s;
}

View packed_view(const Box &b, size_t offset) {
  View v;
  v.offset = offset;
  v.origin = b.lo;
  v.stride = packed_strides(b);
  return v;
}

namespace {

// Offset in elements of global index x under view v.
int64_t at(const View &v, const Index &x, int ndim) {
  int64_t off = static_cast<int64_t>(v.offset);
  for (int d = 0; d < ndim; ++d) off += static_cast<int64_t>(x[d] - v.origin[d]) * v.stride[d];
  return off;
}

// The dimension to run innermost: contiguous on both sides if possible,
// then on either side, else the last one.
int inner_dim(const Box &b, const View &from, const View &to) {
  int best = b.ndim - 1, score = 3;
  for (int d = b.ndim - 1; d >= 0; --d) {
    if (b.extent(d) <= 1) continue;
    int s = (from.stride[d] == 1 ? 0 : 1) + (to.stride[d] == 1 ? 0 : 1);
    if (s < score) best = d, score = s;
  }
  return best;
}

}  // namespace

void copy_box(const Box &b, const char *src, const View &from, char *dst, const View &to, size_t esize) {
  if (b.empty()) return;
  int n = b.ndim, inner = inner_dim(b, from, to);
  size_t len = b.extent(inner);
  bool runs = from.stride[inner] == 1 && to.stride[inner] == 1;
  int64_t fs = from.stride[inner] * static_cast<int64_t>(esize), ts = to.stride[inner] * static_cast<int64_t>(esize);
  Index x = b.lo;
  for (;;) {
    const char *s = src + at(from, x, n) * static_cast<int64_t>(esize);
    char *t = dst + at(to, x, n) * static_cast<int64_t>(esize);
    if (runs) {
      memcpy(t, s, len * esize);
    } else {
      for (size_t i = 0; i < len; ++i, s += fs, t += ts) memcpy(t, s, esize);
    }
    // Odometer over the other dimensions, last fastest.
    int d = n - 1;
    for (; d >= 0; --d) {
      if (d == inner) continue;
      if (++x[d] < b.hi[d]) break;
      x[d] = b.lo[d];
    }
    if (d < 0) return;
  }
}

}  // namespace xc::redist
