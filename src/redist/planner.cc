#include "redist/planner.h"

#include <algorithm>
#include <numeric>

#include "base/dtype.h"

namespace xc::redist {

namespace {

size_t idx(int i) { return static_cast<size_t>(i); }

bool same_mesh(const Layout &a, const Layout &b) { return a.is_mesh && b.is_mesh && a.mesh.shape == b.mesh.shape; }

// Ops whose Partial is made by one holder and identities elsewhere; the
// others (max, min, avg, band, bor) reduce identical values to themselves.
bool needs_identity(xc_op_t op) { return op == XC_SUM || op == XC_PROD || op == XC_BXOR; }

// The ranks of rank's sub-communicator along mesh dimension k, in
// coordinate order (= their rank in it).
std::vector<int> members(const Mesh &m, int rank, int k) {
  int stride = 1;
  for (int j = m.ndim() - 1; j > k; --j) stride *= m.shape[idx(j)];
  int base = rank - m.coord(rank, k) * stride;
  std::vector<int> out;
  for (int c = 0; c < m.shape[idx(k)]; ++c) out.push_back(base + c * stride);
  return out;
}

// The same layout with mesh dimension k placed as p.
Status replaced(const Layout &l, int k, const Placement &p, Layout *out) {
  Mesh m = l.mesh;
  m.placements[idx(k)] = p;
  return make_mesh_layout(l.nranks, l.ndim, l.shape.data(), m, out);
}

// A mesh layout's box of rank (its whole local buffer, row-major).
Box box_of(const Layout &l, int rank) { return mesh_box(l.shape, l.ndim, l.mesh, rank); }

void note(PlanInfo &info, StepKind kind) {
  static const uint32_t bits[] = {XC_REDIST_STEP_P2P, XC_REDIST_STEP_ALLGATHER, XC_REDIST_STEP_ALLTOALL,
                                  XC_REDIST_STEP_REDUCE_SCATTER, XC_REDIST_STEP_ALLREDUCE, XC_REDIST_STEP_FILL};
  info.step_kinds |= bits[static_cast<int>(kind)];
  if (kind == StepKind::kP2p)
    ++info.p2p_steps;
  else if (kind != StepKind::kFill)
    ++info.collective_steps;
}

// Payload of a collective step for this rank: what it gets from and gives
// to the other members (its own block is a local copy).
void count_collective(PlanInfo &info, const std::vector<size_t> &sent_to, const std::vector<size_t> &got_from,
                      int self, size_t esize) {
  for (size_t m = 0; m < sent_to.size(); ++m) {
    if (static_cast<int>(m) == self) {
      info.bytes_copied += got_from[m] * esize;
      continue;
    }
    if (sent_to[m]) info.bytes_sent += sent_to[m] * esize, ++info.messages_sent;
    if (got_from[m]) info.bytes_received += got_from[m] * esize, ++info.messages_received;
  }
}

std::vector<size_t> displs_of(const std::vector<size_t> &counts, size_t *total) {
  std::vector<size_t> d(counts.size());
  size_t run = 0;
  for (size_t i = 0; i < counts.size(); ++i) d[i] = run, run += counts[i];
  *total = run;
  return d;
}

// Partial on mesh dimension k reduced onto Shard(j) by a reduce_scatter:
// possible when, in every sub-communicator, the members' new boxes split
// their common block.
bool scatter_fits(const Layout &cur, const Layout &next, int k) {
  for (int r = 0; r < cur.nranks; ++r) {
    Box whole = box_of(cur, r);
    size_t sum = 0;
    for (int m : members(cur.mesh, r, k)) {
      Box b = box_of(next, m);
      if (!b.empty() && !whole.contains(b)) return false;
      sum += b.volume();
    }
    if (sum != whole.volume()) return false;
  }
  return true;
}

Step reduce_step(const Layout &cur, const Layout &next, int k, xc_op_t op, bool scatter, int rank, size_t esize,
                 PlanInfo &info) {
  Step s;
  s.mesh_dim = k;
  s.op = op;
  Box mine = box_of(cur, rank);
  std::vector<int> mem = members(cur.mesh, rank, k);
  int self = cur.mesh.coord(rank, k);
  if (!scatter) {
    s.kind = StepKind::kAllreduce;
    s.count = mine.volume();
    std::vector<size_t> all(mem.size(), s.count);
    count_collective(info, all, all, self, esize);
    info.lower_bound_bytes += (mem.size() - 1) * s.count * esize;
    return s;
  }
  s.kind = StepKind::kReduceScatter;
  View whole = packed_view(mine, 0);
  std::vector<Box> parts;
  for (int m : mem) parts.push_back(box_of(next, m)), s.recv_counts.push_back(parts.back().volume());
  s.recv_displs = displs_of(s.recv_counts, &s.send_total);
  for (size_t i = 0; i < mem.size(); ++i)
    if (!parts[i].empty()) s.pack.push_back(Piece{parts[i], whole, packed_view(parts[i], s.recv_displs[i])});
  s.count = s.recv_counts[idx(self)];
  // Every member's contribution to the part this rank keeps, and this
  // rank's to each other member's part.
  std::vector<size_t> mine_each(mem.size(), s.count);
  count_collective(info, s.recv_counts, mine_each, self, esize);
  info.lower_bound_bytes += (mem.size() - 1) * s.count * esize;
  return s;
}

// cur -> dst is exactly an allgather (k: Shard -> Replicate) or an alltoall
// (k: Shard(i) -> Shard(j)) within every sub-communicator of k.
bool within_members(const Layout &cur, const Layout &dst, int k) {
  for (int r = 0; r < cur.nranks; ++r) {
    Box want = box_of(dst, r);
    size_t got = 0;
    for (int m : members(cur.mesh, r, k)) got += intersect(box_of(cur, m), want).volume();
    if (got != want.volume()) return false;
  }
  return true;
}

Step allgather_step(const Layout &cur, const Layout &dst, int k, int rank, size_t esize, PlanInfo &info) {
  Step s;
  s.kind = StepKind::kAllgather;
  s.mesh_dim = k;
  std::vector<int> mem = members(cur.mesh, rank, k);
  int self = cur.mesh.coord(rank, k);
  Box want = box_of(dst, rank);
  for (int m : mem) s.recv_counts.push_back(box_of(cur, m).volume());
  s.recv_displs = displs_of(s.recv_counts, &s.recv_total);
  s.count = s.recv_counts[idx(self)];
  // Received straight into place when each member's block is one run of
  // the packed destination box at its displacement.
  View place = packed_view(want, 0);
  bool direct = true;
  for (size_t i = 0; i < mem.size(); ++i) {
    Box b = box_of(cur, mem[i]);
    if (b.empty()) continue;
    s.unpack.push_back(Piece{b, packed_view(b, s.recv_displs[i]), place});
    size_t at = 0;
    for (int d = 0; d < want.ndim; ++d) at += (b.lo[d] - want.lo[d]) * static_cast<size_t>(place.stride[d]);
    int first = -1;  // the first dimension where b is narrower than want
    for (int d = 0; d < want.ndim && first < 0; ++d)
      if (b.lo[d] != want.lo[d] || b.hi[d] != want.hi[d]) first = d;
    bool run = at == s.recv_displs[i];
    for (int d = 0; first >= 0 && d < want.ndim; ++d) {
      if (d < first && want.extent(d) != 1) run = false;
      if (d > first && (b.lo[d] != want.lo[d] || b.hi[d] != want.hi[d])) run = false;
    }
    direct = direct && run;
  }
  if (direct) s.unpack.clear();
  std::vector<size_t> sent(mem.size(), s.count);
  count_collective(info, sent, s.recv_counts, self, esize);
  info.lower_bound_bytes += (s.recv_total - s.count) * esize;
  return s;
}

Step alltoall_step(const Layout &cur, const Layout &dst, int k, int rank, size_t esize, PlanInfo &info) {
  Step s;
  s.kind = StepKind::kAlltoall;
  s.mesh_dim = k;
  std::vector<int> mem = members(cur.mesh, rank, k);
  int self = cur.mesh.coord(rank, k);
  Box have = box_of(cur, rank), want = box_of(dst, rank);
  View have_v = packed_view(have, 0), want_v = packed_view(want, 0);
  for (int m : mem) {
    Box out = intersect(have, box_of(dst, m)), in = intersect(box_of(cur, m), want);
    s.send_counts.push_back(out.volume());
    s.recv_counts.push_back(in.volume());
  }
  s.send_displs = displs_of(s.send_counts, &s.send_total);
  s.recv_displs = displs_of(s.recv_counts, &s.recv_total);
  for (size_t i = 0; i < mem.size(); ++i) {
    Box out = intersect(have, box_of(dst, mem[i])), in = intersect(box_of(cur, mem[i]), want);
    if (!out.empty()) s.pack.push_back(Piece{out, have_v, packed_view(out, s.send_displs[i])});
    if (!in.empty()) s.unpack.push_back(Piece{in, packed_view(in, s.recv_displs[i]), want_v});
  }
  count_collective(info, s.send_counts, s.recv_counts, self, esize);
  info.lower_bound_bytes += (s.recv_total - s.recv_counts[idx(self)]) * esize;
  return s;
}

// A change in several mesh dimensions as a chain of one-dimension steps,
// each a collective (Shard -> Replicate: allgather; Shard(i) -> Shard(j):
// alltoall) or a local slice (Replicate -> Shard), in the given order of
// dimensions. Taken only when, on every rank, the chain receives no more
// than the lower bound (so it keeps point-to-point's bytes and runs
// xcomm's collectives); *stages gets the layouts after each step.
bool chain_fits(const Layout &cur, const Layout &dst, const std::vector<int> &order, std::vector<Layout> *stages) {
  int n = cur.nranks;
  std::vector<size_t> got(idx(n), 0);
  Layout at = cur;
  stages->clear();
  for (int k : order) {
    const Placement &a = at.mesh.placements[idx(k)], &b = dst.mesh.placements[idx(k)];
    Layout next;
    if (!replaced(at, k, b, &next).ok()) return false;
    bool gather = a.kind == XC_PLACEMENT_SHARD && b.kind == XC_PLACEMENT_REPLICATE;
    bool swap = a.kind == XC_PLACEMENT_SHARD && b.kind == XC_PLACEMENT_SHARD;
    bool slice = a.kind == XC_PLACEMENT_REPLICATE && b.kind == XC_PLACEMENT_SHARD;
    if ((gather || swap) && !within_members(at, next, k)) return false;
    if (!gather && !swap && !slice) return false;
    for (int r = 0; r < n; ++r) {
      Box have = box_of(at, r), want = box_of(next, r);
      if (slice && !have.contains(want) && !want.empty()) return false;
      got[idx(r)] += want.volume() - intersect(have, want).volume();
    }
    stages->push_back(next);
    at = std::move(next);
  }
  for (int r = 0; r < n; ++r) {
    Box want = box_of(dst, r);
    if (got[idx(r)] != want.volume() - intersect(box_of(cur, r), want).volume()) return false;
  }
  return true;
}

// How many of the reductions of step 1 would be reduce_scatters when they
// start from layout `from` (the others are allreduces, which move more).
Status count_scatters(const Layout &from, const Layout &dst, int *out) {
  Layout cur = from;
  *out = 0;
  for (int k = 0; k < from.mesh.ndim(); ++k) {
    const Placement &p = cur.mesh.placements[idx(k)], &want = dst.mesh.placements[idx(k)];
    if (p.kind != XC_PLACEMENT_PARTIAL || want == p) continue;
    Layout next;
    if (want.kind == XC_PLACEMENT_SHARD) {
      XC_TRY(replaced(cur, k, want, &next));
      if (scatter_fits(cur, next, k)) {
        ++*out;
        cur = std::move(next);
        continue;
      }
    }
    XC_TRY(replaced(cur, k, Placement{}, &next));
    cur = std::move(next);
  }
  return Status::Ok();
}

// Index of src's blocks by cell of the grid their boundaries draw, to find
// the blocks a box meets without trying them all.
class BlockIndex {
 public:
  Status build(const Layout &l) {
    l_ = &l;
    size_t cells = 1;
    for (int d = 0; d < l.ndim; ++d) {
      std::vector<size_t> &c = cuts_[d];
      c = {0, l.shape[d]};
      for (const Block &b : l.blocks) c.push_back(b.box.lo[d]), c.push_back(b.box.hi[d]);
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
      cells *= std::max<size_t>(1, c.size() - 1);
      if (cells > (size_t{1} << 26))
        return Error(XC_ERR_UNSUPPORTED, "the source layout is too fragmented to index (over %zu cells)",
                     size_t{1} << 26);
    }
    grid_.assign(cells, -1);
    for (size_t b = 0; b < l.blocks.size(); ++b) {
      Index lo{}, hi{};
      range(l.blocks[b].box, &lo, &hi);
      each_cell(lo, hi, [&](size_t cell, const Index &) { grid_[cell] = static_cast<int>(b); });
    }
    return Status::Ok();
  }

  // Call f(block) once for each block that meets box.
  template <typename F>
  void meet(const Box &box, F f) const {
    Index lo{}, hi{};
    range(box, &lo, &hi);
    each_cell(lo, hi, [&](size_t cell, const Index &c) {
      int b = grid_[cell];
      if (b < 0) return;
      // Once per block: at its first cell inside the range.
      Index first{};
      range(l_->blocks[idx(b)].box, &first, nullptr);
      for (int d = 0; d < l_->ndim; ++d)
        if (c[d] != std::max(first[d], lo[d])) return;
      f(b);
    });
  }

 private:
  void range(const Box &b, Index *lo, Index *hi) const {
    for (int d = 0; d < l_->ndim; ++d) {
      const auto &c = cuts_[d];
      (*lo)[d] = static_cast<size_t>(std::upper_bound(c.begin(), c.end(), b.lo[d]) - c.begin()) - 1;
      if (hi) (*hi)[d] = static_cast<size_t>(std::lower_bound(c.begin(), c.end(), b.hi[d]) - c.begin());
    }
  }
  template <typename F>
  void each_cell(const Index &lo, const Index &hi, F f) const {
    int n = l_->ndim;
    for (int d = 0; d < n; ++d)
      if (lo[d] >= hi[d]) return;
    Index c = lo;
    for (;;) {
      size_t cell = 0;
      for (int d = 0; d < n; ++d) cell = cell * (cuts_[d].size() - 1) + c[d];
      f(cell, c);
      int d = n - 1;
      for (; d >= 0; --d) {
        if (++c[d] < hi[d]) break;
        c[d] = lo[d];
      }
      if (d < 0) return;
    }
  }

  const Layout *l_ = nullptr;
  std::array<std::vector<size_t>, kMaxDims> cuts_;
  std::vector<int> grid_;
};

// Everything else: each element straight from one holder to each rank
// that needs it. Partial dimensions kept from cur to dst pair a receiver
// only with holders of its own partial copy (its "color").
Status p2p_step(const Layout &cur, const Layout &dst, int rank, size_t esize, bool relabel, Plan &plan,
                std::vector<Step> &steps) {
  int n = cur.nranks;
  bool mesh = same_mesh(cur, dst);
  std::vector<int> color(idx(n), 0);
  std::vector<bool> identity(idx(n), false);
  xc_op_t fill_op = XC_SUM;
  if (dst.is_mesh) {
    for (int k = 0; k < dst.mesh.ndim(); ++k) {
      const Placement &p = dst.mesh.placements[idx(k)];
      if (p.kind != XC_PLACEMENT_PARTIAL) continue;
      bool kept = mesh && cur.mesh.placements[idx(k)] == p;
      for (int r = 0; r < n; ++r) {
        int c = dst.mesh.coord(r, k);
        if (kept)
          color[idx(r)] = color[idx(r)] * dst.mesh.shape[idx(k)] + c;
        else if (needs_identity(p.op) && c != 0)
          identity[idx(r)] = true, fill_op = p.op;
      }
    }
  }
  BlockIndex index;
  XC_TRY(index.build(cur));
  Step s;
  s.kind = StepKind::kP2p;
  std::vector<uint64_t> load(idx(n), 0);  // bytes each rank sends
  std::vector<int> send_of(idx(n), -1), recv_of(idx(n), -1);  // peer -> message
  std::vector<uint64_t> v;
  if (relabel) v.assign(idx(n) * idx(n), 0);
  for (const Block &db : dst.blocks) {
    index.meet(db.box, [&](int sb) {
      const Block &src = cur.blocks[idx(sb)];
      Box piece = intersect(db.box, src.box);
      size_t vol = piece.volume();
      if (!vol) return;
      for (const Holder &to : db.holders) {
        if (relabel)
          for (const Holder &from : src.holders) v[idx(from.rank) * idx(n) + idx(to.rank)] += vol * esize;
        if (identity[idx(to.rank)]) continue;
        const Holder *pick = nullptr;
        for (const Holder &from : src.holders) {
          if (color[idx(from.rank)] != color[idx(to.rank)]) continue;
          if (from.rank == to.rank) {
            pick = &from;
            break;
          }
          if (!pick || load[idx(from.rank)] < load[idx(pick->rank)]) pick = &from;
        }
        if (!pick) continue;  // cannot happen for valid layouts: every copy holds everything
        if (pick->rank == to.rank) {
          if (to.rank == rank) {
            s.copies.push_back(Piece{piece, pick->view, to.view});
            plan.info.bytes_copied += vol * esize;
          }
          continue;
        }
        load[idx(pick->rank)] += vol * esize;
        if (pick->rank == rank) {
          int &m = send_of[idx(to.rank)];
          if (m < 0) m = static_cast<int>(s.sends.size()), s.sends.push_back(Message{to.rank, 0, 0, {}});
          Message &msg = s.sends[idx(m)];
          msg.pieces.push_back(Piece{piece, pick->view, packed_like(piece, pick->view, msg.count)});
          msg.count += vol;
        }
        if (to.rank == rank) {
          int &m = recv_of[idx(pick->rank)];
          if (m < 0) m = static_cast<int>(s.recvs.size()), s.recvs.push_back(Message{pick->rank, 0, 0, {}});
          Message &msg = s.recvs[idx(m)];
          msg.pieces.push_back(Piece{piece, packed_like(piece, pick->view, msg.count), to.view});
          msg.count += vol;
          plan.info.lower_bound_bytes += vol * esize;
        }
      }
    });
  }
  // Messages lie one after the other in the staging buffers; their pieces
  // were placed relative to the message's start.
  auto place = [&](std::vector<Message> &msgs, size_t *total, uint64_t *bytes, uint64_t *count, bool sending) {
    size_t run = 0;
    for (Message &m : msgs) {
      m.offset = run;
      for (Piece &p : m.pieces) (sending ? p.to : p.from).offset += run;
      run += m.count;
      *bytes += m.count * esize;
      ++*count;
    }
    *total = run;
  };
  place(s.sends, &s.send_total, &plan.info.bytes_sent, &plan.info.messages_sent, true);
  place(s.recvs, &s.recv_total, &plan.info.bytes_received, &plan.info.messages_received, false);
  if (!s.copies.empty()) plan.info.step_kinds |= XC_REDIST_STEP_COPY;
  if (!s.sends.empty() || !s.recvs.empty() || s.copies.empty()) note(plan.info, StepKind::kP2p);
  steps.push_back(std::move(s));
  if (identity[idx(rank)]) {
    Step f;
    f.kind = StepKind::kFill;
    f.op = fill_op;
    f.count = dst.local_count[idx(rank)];
    note(plan.info, StepKind::kFill);
    steps.push_back(std::move(f));
  }
  if (relabel) {
    // Saved: what the matching keeps in place beyond what stays put now.
    uint64_t kept = 0, held_now = 0;
    plan.relabel = greedy_relabel(v, n, &kept);
    for (int j = 0; j < n; ++j) held_now += v[idx(j) * idx(n) + idx(j)];
    plan.relabel_saved = kept > held_now ? kept - held_now : 0;
  }
  return Status::Ok();
}

}  // namespace

Status make_plan(const Layout &src, const Layout &dst, xc_dtype_t dtype, size_t esize, int rank,
                 const PlanOptions &opt, Plan *out) {
  if (src.nranks != dst.nranks)
    return Error(XC_ERR_INVALID_ARGUMENT, "src and dst are on communicators of %d and %d ranks", src.nranks,
                 dst.nranks);
  if (src.ndim != dst.ndim)
    return Error(XC_ERR_INVALID_ARGUMENT, "src is %d-dimensional and dst %d-dimensional", src.ndim, dst.ndim);
  for (int d = 0; d < src.ndim; ++d)
    if (src.shape[d] != dst.shape[d])
      return Error(XC_ERR_INVALID_ARGUMENT, "global shapes differ in dimension %d: %zu in src, %zu in dst", d,
                   src.shape[d], dst.shape[d]);
  xc_op_t checked = XC_SUM;
  if (dst.is_mesh)
    for (const Placement &p : dst.mesh.placements)
      if (p.kind == XC_PLACEMENT_PARTIAL) XC_TRY_CTX(op_arg(p.op, dtype, &checked), "a Partial placement");
  if (src.is_mesh)
    for (const Placement &p : src.mesh.placements)
      if (p.kind == XC_PLACEMENT_PARTIAL) XC_TRY_CTX(op_arg(p.op, dtype, &checked), "a Partial placement");
  Plan plan;
  plan.esize = esize;
  plan.dtype = dtype;
  plan.src_count = src.local_count[idx(rank)];
  plan.dst_count = dst.local_count[idx(rank)];
  std::vector<Step> steps;
  std::vector<size_t> counts;  // local elements after each step
  Layout cur = src;
  bool mesh = same_mesh(src, dst);
  // 0. Before reducing, take locally the shards dst wants of replicated
  // dimensions: the reductions then work on less data ([R, P] -> [S1, R]
  // reduces half the array instead of all of it).
  bool reduces = false;
  if (src.is_mesh)
    for (int k = 0; k < src.mesh.ndim(); ++k) {
      const Placement &p = src.mesh.placements[idx(k)];
      if (p.kind == XC_PLACEMENT_PARTIAL && !(mesh && dst.mesh.placements[idx(k)] == p)) reduces = true;
    }
  if (reduces && mesh) {
    Layout sliced = cur;
    bool any = false;
    for (int k = 0; k < cur.mesh.ndim(); ++k) {
      if (cur.mesh.placements[idx(k)].kind != XC_PLACEMENT_REPLICATE ||
          dst.mesh.placements[idx(k)].kind != XC_PLACEMENT_SHARD)
        continue;
      Layout next;
      XC_TRY(replaced(sliced, k, dst.mesh.placements[idx(k)], &next));
      bool inside = true;
      for (int r = 0; r < cur.nranks && inside; ++r) {
        Box want = box_of(next, r);
        inside = want.empty() || box_of(sliced, r).contains(want);
      }
      if (inside) sliced = std::move(next), any = true;
    }
    // Not when slicing first would turn a reduce_scatter into an allreduce
    // ([P, R] -> [S0, S0]: the nested shard no longer splits the block).
    int before = 0, after = 0;
    if (any) XC_TRY(count_scatters(cur, dst, &before));
    if (any) XC_TRY(count_scatters(sliced, dst, &after));
    if (any && after >= before) {
      XC_TRY(p2p_step(cur, sliced, rank, esize, false, plan, steps));
      counts.push_back(sliced.local_count[idx(rank)]);
      cur = std::move(sliced);
    }
  }
  // 1. Reduce the Partial dimensions dst does not keep, one collective each.
  if (src.is_mesh) {
    for (int k = 0; k < src.mesh.ndim(); ++k) {
      const Placement &p = cur.mesh.placements[idx(k)];
      if (p.kind != XC_PLACEMENT_PARTIAL || (mesh && dst.mesh.placements[idx(k)] == p)) continue;
      Placement target;  // Replicate unless a reduce_scatter lands on dst's Shard
      Layout next;
      bool scatter = false;
      if (mesh && dst.mesh.placements[idx(k)].kind == XC_PLACEMENT_SHARD) {
        XC_TRY(replaced(cur, k, dst.mesh.placements[idx(k)], &next));
        scatter = scatter_fits(cur, next, k);
      }
      if (!scatter) XC_TRY(replaced(cur, k, target, &next));
      steps.push_back(reduce_step(cur, next, k, p.op, scatter, rank, esize, plan.info));
      note(plan.info, steps.back().kind);
      counts.push_back(next.local_count[idx(rank)]);
      cur = std::move(next);
    }
  }
  // 2. Move: nothing left, one collective, or point-to-point.
  bool done = !steps.empty() && mesh && cur.mesh.placements == dst.mesh.placements;
  if (!done) {
    int differ = -1, ndiff = 0;
    if (mesh)
      for (int k = 0; k < cur.mesh.ndim(); ++k)
        if (cur.mesh.placements[idx(k)] != dst.mesh.placements[idx(k)]) differ = k, ++ndiff;
    bool moved = false;
    if (mesh && ndiff == 1 && !opt.p2p_only) {
      const Placement &a = cur.mesh.placements[idx(differ)], &b = dst.mesh.placements[idx(differ)];
      if (a.kind == XC_PLACEMENT_SHARD && b.kind != XC_PLACEMENT_PARTIAL && within_members(cur, dst, differ)) {
        steps.push_back(b.kind == XC_PLACEMENT_REPLICATE ? allgather_step(cur, dst, differ, rank, esize, plan.info)
                                                         : alltoall_step(cur, dst, differ, rank, esize, plan.info));
        note(plan.info, steps.back().kind);
        moved = true;
      }
    }
    if (mesh && ndiff > 1 && !opt.p2p_only && !moved) {
      // Several dimensions: a chain of collectives if one keeps the bytes
      // at the lower bound, inner mesh dimensions first, else outer first.
      std::vector<int> order;
      for (int k = cur.mesh.ndim() - 1; k >= 0; --k)
        if (cur.mesh.placements[idx(k)] != dst.mesh.placements[idx(k)]) order.push_back(k);
      std::vector<Layout> stages;
      bool fits = chain_fits(cur, dst, order, &stages);
      if (!fits) {
        std::reverse(order.begin(), order.end());
        fits = chain_fits(cur, dst, order, &stages);
      }
      // A chain of local slices only is one copy done twice: point-to-point
      // copies the pieces straight (R,R -> S0,S1: 6.6 ms as a chain, 1.2 ms).
      bool any_collective = false;
      for (int k : order) any_collective |= cur.mesh.placements[idx(k)].kind == XC_PLACEMENT_SHARD;
      fits = fits && any_collective;
      for (size_t i = 0; fits && i < order.size(); ++i) {
        const Layout &from = i == 0 ? cur : stages[i - 1];
        int k = order[i];
        const Placement &a = from.mesh.placements[idx(k)], &b = dst.mesh.placements[idx(k)];
        if (a.kind == XC_PLACEMENT_REPLICATE) {
          XC_TRY(p2p_step(from, stages[i], rank, esize, false, plan, steps));
        } else {
          steps.push_back(b.kind == XC_PLACEMENT_REPLICATE ? allgather_step(from, stages[i], k, rank, esize, plan.info)
                                                           : alltoall_step(from, stages[i], k, rank, esize, plan.info));
          note(plan.info, steps.back().kind);
        }
        counts.push_back(stages[i].local_count[idx(rank)]);
      }
      moved = fits;
    }
    if (!moved) XC_TRY(p2p_step(cur, dst, rank, esize, opt.relabel && src.nranks <= 4096, plan, steps));
    counts.resize(steps.size(), plan.dst_count);
  }
  // The relabelling when the move was not planned point-to-point.
  if (plan.relabel.empty() && opt.relabel && src.nranks <= 4096) {
    Plan scratch;
    std::vector<Step> unused;
    XC_TRY(p2p_step(src, dst, rank, esize, true, scratch, unused));
    plan.relabel = std::move(scratch.relabel);
    plan.relabel_saved = scratch.relabel_saved;
  }
  // Buffers: src into the first step, dst out of the last, the two
  // intermediate ones alternating between (a fill step writes dst in place).
  int mid = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    Step &s = steps[i];
    if (s.kind == StepKind::kFill) {
      s.in = s.out = Buf::kDst;
      continue;
    }
    s.in = i == 0 ? Buf::kSrc : steps[i - 1].out;
    bool last = i + 1 == steps.size() || steps[i + 1].kind == StepKind::kFill;
    if (last) {
      s.out = Buf::kDst;
    } else {
      s.out = mid == 0 ? Buf::kMidA : Buf::kMidB;
      plan.mid_count[mid] = std::max(plan.mid_count[mid], counts[i]);
      mid ^= 1;
    }
    plan.send_staging = std::max(plan.send_staging, s.pack.empty() && s.kind != StepKind::kP2p ? 0 : s.send_total);
    plan.recv_staging = std::max(plan.recv_staging, s.unpack.empty() && s.kind != StepKind::kP2p ? 0 : s.recv_total);
    if (s.mesh_dim >= 0) {
      plan.mesh_dims_used.resize(src.mesh.shape.size(), false);
      plan.mesh_dims_used[idx(s.mesh_dim)] = true;
    }
  }
  plan.steps = std::move(steps);
  *out = std::move(plan);
  return Status::Ok();
}

}  // namespace xc::redist
