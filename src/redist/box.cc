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

View packed_like(const Box &b, const View &like, size_t offset) {
  std::array<int, kMaxDims> order{};
  for (int d = 0; d < b.ndim; ++d) order[d] = d;
  // Innermost first: smallest |stride|, ties to the later dimension
  // (row-major). An insertion sort: at most kMaxDims entries.
  auto inner_of = [&](int x, int y) {
    int64_t sx = like.stride[x] < 0 ? -like.stride[x] : like.stride[x];
    int64_t sy = like.stride[y] < 0 ? -like.stride[y] : like.stride[y];
    return sx != sy ? sx < sy : x > y;
  };
  for (int i = 1; i < b.ndim; ++i)
    for (int j = i; j > 0 && inner_of(order[j], order[j - 1]); --j) std::swap(order[j], order[j - 1]);
  View v;
  v.offset = offset;
  v.origin = b.lo;
  int64_t run = 1;
  for (int i = 0; i < b.ndim; ++i) {
    v.stride[order[i]] = run;
    run *= static_cast<int64_t>(b.extent(order[i]));
  }
  return v;
}

namespace {

// One strided row of len elements of size E.
template <size_t E>
void strided_row(const char *s, char *t, size_t len, int64_t fs, int64_t ts) {
  for (size_t i = 0; i < len; ++i, s += fs, t += ts) memcpy(t, s, E);
}

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
      switch (esize) {  // a constant size: one load and store per element, no call
        case 8: strided_row<8>(s, t, len, fs, ts); break;
        case 4: strided_row<4>(s, t, len, fs, ts); break;
        case 2: strided_row<2>(s, t, len, fs, ts); break;
        case 1: strided_row<1>(s, t, len, fs, ts); break;
        default:
          for (size_t i = 0; i < len; ++i, s += fs, t += ts) memcpy(t, s, esize);
      }
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
