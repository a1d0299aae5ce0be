// How a global array lies over the ranks: disjoint blocks that cover it,
// each held by one or more ranks (replicas) at some place of their local
// buffers. Mesh layouts also keep their mesh and placements, which the
// planner reads to find collectives and partial values.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "redist/box.h"

namespace xc::redist {

struct Holder {
  int rank = 0;
  View view;  // where the block lies in the rank's local buffer
};

struct Block {
  Box box;
  std::vector<Holder> holders;  // in increasing rank order
};

struct Placement {
  int kind = XC_PLACEMENT_REPLICATE;  // xc_placement_kind_t
  int dim = 0;                        // shard: array dimension
  xc_op_t op = XC_SUM;                // partial: reduction

  bool operator==(const Placement &o) const;
  bool operator!=(const Placement &o) const { return !(*this == o); }
};

struct Mesh {
  std::vector<int> shape;
  std::vector<Placement> placements;

  int ndim() const { return static_cast<int>(shape.size()); }
  // Coordinate of rank along mesh dimension k (ranks in row-major order).
  int coord(int rank, int k) const;
};

struct Layout {
  int ndim = 0;
  Index shape{};
  int nranks = 0;
  std::vector<Block> blocks;
  std::vector<size_t> local_count;  // elements of each rank's local buffer
  bool is_mesh = false;
  Mesh mesh;
  uint64_t hash = 0;  // of what describes it, for checking that ranks agree

  size_t global_volume() const;
  Box whole() const;
};

// The box rank holds under a mesh layout (empty when its shard is empty).
Box mesh_box(const Index &shape, int ndim, const Mesh &mesh, int rank);

// Build a layout; each checks its arguments and fails with a message that
// names the bad one. nranks is the communicator's size.
Status make_mesh_layout(int nranks, int ndim, const size_t *shape, const Mesh &mesh, Layout *out);
Status make_boxes_layout(int nranks, int ndim, const size_t *shape, size_t nboxes, const size_t *offsets,
                         const size_t *extents, const int *owners, Layout *out);
struct BlockCyclic {
  size_t rows = 0, cols = 0, mb = 0, nb = 0;
  int nprow = 0, npcol = 0, rsrc = 0, csrc = 0;
  bool grid_col_major = false, storage_col_major = true;
};
Status make_block_cyclic_layout(int nranks, const BlockCyclic &bc, Layout *out);

// ScaLAPACK's numroc: rows (or columns) of n in blocks of nb that process
// coordinate p of np holds when the first block is on src.
size_t numroc(size_t n, size_t nb, int p, int src, int np);

}  // namespace xc::redist
