// Boxes of a global N-dimensional array and the strided copies between
// the places that hold them. A View says where a box's elements live: the
// element at global index x is at offset + sum((x[d] - origin[d]) * stride[d])
// (in elements) of some buffer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "xcomm.h"

namespace xc::redist {

constexpr int kMaxDims = XC_LAYOUT_MAX_DIMS;
using Index = std::array<size_t, kMaxDims>;
using Strides = std::array<int64_t, kMaxDims>;

struct Box {
  int ndim = 0;
  Index lo{}, hi{};  // [lo, hi) per dimension

  size_t extent(int d) const { return hi[d] - lo[d]; }
  size_t volume() const;
  bool empty() const { return volume() == 0; }
  bool operator==(const Box &o) const;
  bool contains(const Box &o) const;
};

// The common part of two boxes (empty when they do not meet).
Box intersect(const Box &a, const Box &b);

// Row-major strides of a packed box of these extents.
Strides packed_strides(const Box &b);

struct View {
  size_t offset = 0;  // elements from the start of the buffer
  Index origin{};     // the global index that sits at offset
  Strides stride{};
};

// The view of box b packed row-major at offset.
View packed_view(const Box &b, size_t offset);
// Box b packed at offset in the dimension order of `like` (its smallest
// stride innermost), so that copying between the two runs along memory:
// a message packs a column-major block column-major.
View packed_like(const Box &b, const View &like, size_t offset);

// Copy box b's elements (esize bytes each) from (src, from) to (dst, to).
// The innermost loop runs along a dimension contiguous on both sides when
// there is one, so row-major to row-major copies whole rows with memcpy.
void copy_box(const Box &b, const char *src, const View &from, char *dst, const View &to, size_t esize);

}  // namespace xc::redist
