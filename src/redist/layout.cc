#include "redist/layout.h"

#include <algorithm>
#include <map>

#include "base/dtype.h"

namespace xc::redist {

namespace {

// FNV-1a over the words that describe a layout.
struct Hasher {
  uint64_t h = 0xcbf29ce484222325ULL;
  void add(uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  }
};

Status check_shape(int ndim, const size_t *shape, Index *out) {
  if (ndim < 1 || ndim > kMaxDims)
    return Error(XC_ERR_INVALID_ARGUMENT, "ndim %d is out of range [1, %d]", ndim, kMaxDims);
  if (!shape) return Error(XC_ERR_INVALID_ARGUMENT, "global_shape is NULL");
  size_t total = 1;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] != 0 && __builtin_mul_overflow(total, shape[d], &total))
      return Error(XC_ERR_INVALID_ARGUMENT, "global_shape overflows size_t elements");
    (*out)[d] = shape[d];
  }
  if (total > static_cast<size_t>(PTRDIFF_MAX) / 16)
    return Error(XC_ERR_INVALID_ARGUMENT, "global_shape has %zu elements, more than any buffer holds", total);
  return Status::Ok();
}

// Finish a layout from (box, rank) pairs: replicas with equal boxes share a
// block. Each rank's pieces lie packed, one after the other, in list order.
void add_piece(Layout *l, std::map<std::vector<size_t>, size_t> *index, const Box &b, int rank) {
  if (b.empty()) return;
  std::vector<size_t> key(b.lo.begin(), b.lo.begin() + b.ndim);
  key.insert(key.end(), b.hi.begin(), b.hi.begin() + b.ndim);
  auto it = index->find(key);
  if (it == index->end()) {
    it = index->emplace(key, l->blocks.size()).first;
    l->blocks.push_back(Block{b, {}});
  }
  l->blocks[it->second].holders.push_back(Holder{rank, packed_view(b, l->local_count[static_cast<size_t>(rank)])});
  l->local_count[static_cast<size_t>(rank)] += b.volume();
}

}  // namespace

bool Placement::operator==(const Placement &o) const {
  if (kind != o.kind) return false;
  if (kind == XC_PLACEMENT_SHARD) return dim == o.dim;
  if (kind == XC_PLACEMENT_PARTIAL) return op == o.op;
  return true;
}

int Mesh::coord(int rank, int k) const {
  int c = rank;
  for (int j = ndim() - 1; j > k; --j) c /= shape[static_cast<size_t>(j)];
  return c % shape[static_cast<size_t>(k)];
}

size_t Layout::global_volume() const { return whole().volume(); }

Box Layout::whole() const {
  Box b;
  b.ndim = ndim;
  for (int d = 0; d < ndim; ++d) b.hi[d] = shape[d];
  return b;
}

Box mesh_box(const Index &shape, int ndim, const Mesh &mesh, int rank) {
  Box b;
  b.ndim = ndim;
  for (int d = 0; d < ndim; ++d) b.hi[d] = shape[d];
  for (int k = 0; k < mesh.ndim(); ++k) {
    const Placement &p = mesh.placements[static_cast<size_t>(k)];
    if (p.kind != XC_PLACEMENT_SHARD) continue;
    // torch.chunk: pieces of ceil(n / m), the last ones smaller or empty.
    size_t n = b.extent(p.dim), m = static_cast<size_t>(mesh.shape[static_cast<size_t>(k)]);
    size_t chunk = (n + m - 1) / m, c = static_cast<size_t>(mesh.coord(rank, k));
    size_t lo = std::min(n, c * chunk), hi = std::min(n, lo + chunk);
    b.hi[p.dim] = b.lo[p.dim] + hi;
    b.lo[p.dim] += lo;
  }
  return b;
}

Status make_mesh_layout(int nranks, int ndim, const size_t *shape, const Mesh &mesh, Layout *out) {
  Layout l;
  XC_TRY(check_shape(ndim, shape, &l.shape));
  l.ndim = ndim;
  l.nranks = nranks;
  int mesh_ndim = mesh.ndim();
  if (mesh_ndim < 1 || mesh_ndim > kMaxDims)
    return Error(XC_ERR_INVALID_ARGUMENT, "mesh_ndim %d is out of range [1, %d]", mesh_ndim, kMaxDims);
  long long product = 1;
  for (int k = 0; k < mesh_ndim; ++k) {
    int m = mesh.shape[static_cast<size_t>(k)];
    if (m < 1) return Error(XC_ERR_INVALID_ARGUMENT, "mesh_shape[%d] = %d must be at least 1", k, m);
    product *= m;
    if (product > nranks) break;
  }
  if (product != nranks)
    return Error(XC_ERR_INVALID_ARGUMENT, "the mesh holds %lld ranks but the communicator has %d", product, nranks);
  Hasher h;
  h.add(1);
  for (int d = 0; d < ndim; ++d) h.add(shape[d]);
  for (int k = 0; k < mesh_ndim; ++k) {
    const Placement &p = mesh.placements[static_cast<size_t>(k)];
    if (p.kind == XC_PLACEMENT_SHARD && (p.dim < 0 || p.dim >= ndim))
      return Error(XC_ERR_INVALID_ARGUMENT, "placements[%d] shards dimension %d of a %d-dimensional array", k, p.dim,
                   ndim);
    if (p.kind != XC_PLACEMENT_REPLICATE && p.kind != XC_PLACEMENT_SHARD && p.kind != XC_PLACEMENT_PARTIAL)
      return Error(XC_ERR_INVALID_ARGUMENT, "placements[%d].kind %d is not an xc_placement_kind_t", k, p.kind);
    if (p.kind == XC_PLACEMENT_PARTIAL && !op_valid(p.op))
      return Error(XC_ERR_INVALID_ARGUMENT, "placements[%d].op %d is not an xc_op_t", k, static_cast<int>(p.op));
    h.add(static_cast<uint64_t>(mesh.shape[static_cast<size_t>(k)]));
    h.add(static_cast<uint64_t>(p.kind));
    h.add(p.kind == XC_PLACEMENT_SHARD ? static_cast<uint64_t>(p.dim) : 0);
    h.add(p.kind == XC_PLACEMENT_PARTIAL ? static_cast<uint64_t>(p.op) : 0);
  }
  l.is_mesh = true;
  l.mesh = mesh;
  l.hash = h.h;
  l.local_count.assign(static_cast<size_t>(nranks), 0);
  std::map<std::vector<size_t>, size_t> index;
  for (int r = 0; r < nranks; ++r) add_piece(&l, &index, mesh_box(l.shape, ndim, mesh, r), r);
  *out = std::move(l);
  return Status::Ok();
}

Status make_boxes_layout(int nranks, int ndim, const size_t *shape, size_t nboxes, const size_t *offsets,
                         const size_t *extents, const int *owners, Layout *out) {
  Layout l;
  XC_TRY(check_shape(ndim, shape, &l.shape));
  l.ndim = ndim;
  l.nranks = nranks;
  if (nboxes > 0 && (!offsets || !extents || !owners))
    return Error(XC_ERR_INVALID_ARGUMENT, "%s is NULL", !offsets ? "offsets" : !extents ? "extents" : "owners");
  if (nboxes > (size_t{1} << 26))
    return Error(XC_ERR_INVALID_ARGUMENT, "nboxes %zu is more than the %zu a layout may have", nboxes, size_t{1} << 26);
  Hasher h;
  h.add(2);
  for (int d = 0; d < ndim; ++d) h.add(shape[d]);
  std::vector<Box> boxes;
  size_t covered = 0;
  for (size_t i = 0; i < nboxes; ++i) {
    Box b;
    b.ndim = ndim;
    for (int d = 0; d < ndim; ++d) {
      size_t off = offsets[i * static_cast<size_t>(ndim) + static_cast<size_t>(d)];
      size_t ext = extents[i * static_cast<size_t>(ndim) + static_cast<size_t>(d)];
      if (off > shape[d] || ext > shape[d] - off)
        return Error(XC_ERR_INVALID_ARGUMENT, "box %zu spans [%zu, %zu + %zu) in dimension %d, outside [0, %zu)", i,
                     off, off, ext, d, shape[d]);
      b.lo[d] = off;
      b.hi[d] = off + ext;
      h.add(off);
      h.add(ext);
    }
    if (owners[i] < 0 || owners[i] >= nranks)
      return Error(XC_ERR_INVALID_ARGUMENT, "box %zu's owner rank %d is out of range [0, %d)", i, owners[i], nranks);
    h.add(static_cast<uint64_t>(owners[i]));
    covered += b.volume();
    boxes.push_back(b);
  }
  // No two boxes meet (a sweep along dimension 0), and together they hold
  // every element: then they cover the array exactly once.
  std::vector<size_t> order;
  for (size_t i = 0; i < boxes.size(); ++i)
    if (!boxes[i].empty()) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return boxes[a].lo[0] < boxes[b].lo[0]; });
  for (size_t x = 0; x < order.size(); ++x) {
    for (size_t y = x + 1; y < order.size() && boxes[order[y]].lo[0] < boxes[order[x]].hi[0]; ++y) {
      if (!intersect(boxes[order[x]], boxes[order[y]]).empty()) {
        size_t a = std::min(order[x], order[y]), b = std::max(order[x], order[y]);
        return Error(XC_ERR_INVALID_ARGUMENT, "boxes %zu and %zu overlap", a, b);
      }
    }
  }
  if (covered != l.global_volume())
    return Error(XC_ERR_INVALID_ARGUMENT, "the boxes hold %zu of the array's %zu elements: they leave a gap", covered,
                 l.global_volume());
  l.hash = h.h;
  l.local_count.assign(static_cast<size_t>(nranks), 0);
  std::map<std::vector<size_t>, size_t> index;  // disjoint: one block per box
  for (size_t i = 0; i < boxes.size(); ++i) add_piece(&l, &index, boxes[i], owners[i]);
  *out = std::move(l);
  return Status::Ok();
}

size_t numroc(size_t n, size_t nb, int p, int src, int np) {
  size_t nblocks = n / nb, dist = static_cast<size_t>((p - src + np) % np);
  size_t count = (nblocks / static_cast<size_t>(np)) * nb;
  size_t extra = nblocks % static_cast<size_t>(np);
  if (dist < extra)
    count += nb;
  else if (dist == extra)
    count += n % nb;
  return count;
}

Status make_block_cyclic_layout(int nranks, const BlockCyclic &bc, Layout *out) {
  if (bc.mb == 0 || bc.nb == 0) return Error(XC_ERR_INVALID_ARGUMENT, "block sizes %zu x %zu must be positive", bc.mb, bc.nb);
  if (bc.nprow < 1 || bc.npcol < 1 || static_cast<long long>(bc.nprow) * bc.npcol > nranks)
    return Error(XC_ERR_INVALID_ARGUMENT, "the %d x %d process grid does not fit the communicator's %d ranks", bc.nprow,
                 bc.npcol, nranks);
  if (bc.rsrc < 0 || bc.rsrc >= bc.nprow || bc.csrc < 0 || bc.csrc >= bc.npcol)
    return Error(XC_ERR_INVALID_ARGUMENT, "source process (%d, %d) is outside the %d x %d grid", bc.rsrc, bc.csrc,
                 bc.nprow, bc.npcol);
  size_t shape[2] = {bc.rows, bc.cols};
  Layout l;
  XC_TRY(check_shape(2, shape, &l.shape));
  size_t brows = (bc.rows + bc.mb - 1) / bc.mb, bcols = (bc.cols + bc.nb - 1) / bc.nb;
  if (brows * bcols > (size_t{1} << 26))
    return Error(XC_ERR_INVALID_ARGUMENT, "%zu x %zu blocks are more than the %zu a layout may have", brows, bcols,
                 size_t{1} << 26);
  l.ndim = 2;
  l.nranks = nranks;
  Hasher h;
  h.add(3);
  for (uint64_t v : {uint64_t{bc.rows}, uint64_t{bc.cols}, uint64_t{bc.mb}, uint64_t{bc.nb}, uint64_t(bc.nprow),
                     uint64_t(bc.npcol), uint64_t(bc.rsrc), uint64_t(bc.csrc), uint64_t{bc.grid_col_major},
                     uint64_t{bc.storage_col_major}})
    h.add(v);
  l.hash = h.h;
  l.local_count.assign(static_cast<size_t>(nranks), 0);
  auto rank_of = [&](int p, int q) { return bc.grid_col_major ? q * bc.nprow + p : p * bc.npcol + q; };
  for (int p = 0; p < bc.nprow; ++p)
    for (int q = 0; q < bc.npcol; ++q)
      l.local_count[static_cast<size_t>(rank_of(p, q))] =
          numroc(bc.rows, bc.mb, p, bc.rsrc, bc.nprow) * numroc(bc.cols, bc.nb, q, bc.csrc, bc.npcol);
  l.blocks.reserve(brows * bcols);
  for (size_t bi = 0; bi < brows; ++bi) {
    int p = static_cast<int>((static_cast<size_t>(bc.rsrc) + bi) % static_cast<size_t>(bc.nprow));
    size_t li = (bi / static_cast<size_t>(bc.nprow)) * bc.mb;  // first local row of the block
    size_t locr = numroc(bc.rows, bc.mb, p, bc.rsrc, bc.nprow);
    for (size_t bj = 0; bj < bcols; ++bj) {
      int q = static_cast<int>((static_cast<size_t>(bc.csrc) + bj) % static_cast<size_t>(bc.npcol));
      size_t lj = (bj / static_cast<size_t>(bc.npcol)) * bc.nb;
      size_t locc = numroc(bc.cols, bc.nb, q, bc.csrc, bc.npcol);
      Block b;
      b.box.ndim = 2;
      b.box.lo = {bi * bc.mb, bj * bc.nb};
      b.box.hi = {std::min(bc.rows, (bi + 1) * bc.mb), std::min(bc.cols, (bj + 1) * bc.nb)};
      Holder hd;
      hd.rank = rank_of(p, q);
      hd.view.origin = b.box.lo;
      if (bc.storage_col_major) {
        hd.view.offset = li + lj * locr;
        hd.view.stride = {1, static_cast<int64_t>(locr)};
      } else {
        hd.view.offset = li * locc + lj;
        hd.view.stride = {static_cast<int64_t>(locc), 1};
      }
      b.holders.push_back(hd);
      l.blocks.push_back(std::move(b));
    }
  }
  *out = std::move(l);
  return Status::Ok();
}

}  // namespace xc::redist
