// allreduce, reduce, reduce_scatter(v): reduce within each host (shared
// memory), across hosts (point-to-point), hand the result out within each
// host. Each element's value is computed once (by one rank, or by a flat
// algorithm that already gives every rank the same bits) and then only
// copied, so every rank that gets it gets the same bits.
#include <cstring>

#include "algo/algorithms.h"
#include "algo/hier/backend.h"
#include "algo/hier/hier.h"
#include "algo/hier/phase.h"
#include "base/dtype.h"

namespace xc::algo::hier {

using coll::CollContext;

namespace {

// A reduction phase: in_place reads the input from recvbuf (every rank may
// pass it so, also where only the root gets the result). count: the
// vector, or reduce_scatterv's block of this rank.
CollDesc reduction(CollKind kind, const void *in, void *out, size_t count, xc_dtype_t t, xc_op_t op, int root = 0) {
  CollDesc p = phase_desc(kind, t, count);
  p.op = phase_op(op);
  p.root = root;
  p.in_place = in == nullptr || in == out;
  p.sendbuf = p.in_place ? nullptr : in;
  p.recvbuf = out;
  return p;
}

}  // namespace

// leader: reduce to member 0, allreduce among the members 0, broadcast.
// multi-leader: reduce-scatter within the host (member l gets slice l),
// allreduce slice l among the members l of every host, allgather.
Status allreduce(CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t, bool multi) {
  HierColl &h = *hier_of(c);
  size_t es = dtype_size(t), count = d.count;
  CollContext local = h.local(c);
  if (!multi) {
    // Out of place, the local reduce reads in and writes out: no copy first.
    XC_TRY(run_phase(local, reduction(CollKind::kReduce, in, out, count, t, d.op)));
    if (h.local_rank() == 0) {
      CollContext leaders = h.peers(c);
      XC_TRY(run_phase(leaders, reduction(CollKind::kAllreduce, out, out, count, t, d.op)));
    }
    CollDesc b = phase_desc(CollKind::kBroadcast, t, count);
    b.recvbuf = out;
    return run_phase(local, b);
  }
  int L = h.local_size(), l = h.local_rank();
  std::vector<size_t> counts = piece_counts(count, L), displs = displacements(counts);
  char *slice = scratch(Scratch::kHierA, counts[static_cast<size_t>(l)] * es);
  CollDesc rs = reduction(CollKind::kReduceScatterv, in, slice, counts[static_cast<size_t>(l)], t, d.op);
  rs.recvcounts = counts;
  XC_TRY(run_phase(local, rs));
  CollContext peers = h.peers(c);
  XC_TRY(run_phase(peers, reduction(CollKind::kAllreduce, slice, slice, counts[static_cast<size_t>(l)], t, d.op)));
  CollDesc ag = phase_desc(CollKind::kAllgatherv, t, counts[static_cast<size_t>(l)]);
  ag.sendbuf = slice;
  ag.recvbuf = out;
  ag.recvcounts = counts;
  ag.rdispls = displs;
  return run_phase(local, ag);
}

// leader: reduce to each host's representative (the root on its host),
// then among them to the root. multi-leader: reduce-scatter within each
// host, reduce slice l among the members l to the root's host, gather
// the slices to the root there.
Status reduce(CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t, bool multi) {
  HierColl &h = *hier_of(c);
  const HostLayout &lay = h.layout();
  size_t es = dtype_size(t), count = d.count;
  int root_host = lay.host_of[static_cast<size_t>(d.root)], root_local = lay.local_of[static_cast<size_t>(d.root)];
  bool root_here = h.host() == root_host, is_root = c.rank() == d.root;
  CollContext local = h.local(c);
  if (!multi) {
    int rep = root_here ? root_local : 0;
    bool is_rep = h.local_rank() == rep;
    // The representative's partial sum: the root's output, or scratch.
    void *part = is_root ? out : is_rep ? scratch(Scratch::kHierA, count * es) : nullptr;
    XC_TRY(run_phase(local, reduction(CollKind::kReduce, in, part, count, t, d.op, rep)));
    if (!is_rep) return Status::Ok();
    CollContext reps = h.reps(c, d.root);
    return run_phase(reps, reduction(CollKind::kReduce, part, part, count, t, d.op, root_host));
  }
  int L = h.local_size(), l = h.local_rank();
  std::vector<size_t> counts = piece_counts(count, L), displs = displacements(counts);
  size_t mine = counts[static_cast<size_t>(l)];
  char *slice = scratch(Scratch::kHierA, mine * es);
  CollDesc rs = reduction(CollKind::kReduceScatterv, in, slice, mine, t, d.op);
  rs.recvcounts = counts;
  XC_TRY(run_phase(local, rs));
  CollContext peers = h.peers(c);
  XC_TRY(run_phase(peers, reduction(CollKind::kReduce, slice, slice, mine, t, d.op, root_host)));
  if (!root_here) return Status::Ok();
  CollDesc g = phase_desc(CollKind::kGatherv, t, mine);
  g.sendbuf = slice;
  g.recvbuf = is_root ? out : nullptr;
  g.root = root_local;
  g.recvcounts = counts;
  g.rdispls = displs;
  return run_phase(local, g);
}

// in holds every rank's block (counts[r] elements, rank order).
// leader: blocks reordered by host; reduce to member 0; reduce-scatter the
// hosts' regions among the members 0; scatter within each host.
// multi-leader: blocks reordered as (member l of host h) for l, then h;
// reduce-scatter within the host (member l gets the blocks of the members l
// of every host), then among the members l (each gets its own block).
Status reduce_scatter(CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t,
                      const size_t *counts, bool multi) {
  HierColl &h = *hier_of(c);
  const HostLayout &lay = h.layout();
  size_t es = dtype_size(t);
  int n = c.size(), H = lay.hosts(), me = h.host();
  std::vector<size_t> displs(counts, counts + n);
  displs = displacements(displs);
  size_t total = n ? displs[static_cast<size_t>(n - 1)] + counts[n - 1] : 0;
  // order[i]: the rank whose block goes i-th.
  std::vector<int> order;
  if (multi) {
    for (int l = 0; l < lay.max_local; ++l)
      for (int g = 0; g < H; ++g) order.push_back(lay.rank_at(g, l));
  } else {
    for (int g = 0; g < H; ++g)
      for (int r : lay.members[static_cast<size_t>(g)]) order.push_back(r);
  }
  bool same = true;
  for (int i = 0; i < n; ++i) same = same && order[static_cast<size_t>(i)] == i;
  const char *ordered = static_cast<const char *>(in);
  if (!same) {
    char *p = scratch(Scratch::kHierA, total * es);
    size_t at = 0;
    for (int r : order) {
      memcpy(p + at * es, static_cast<const char *>(in) + displs[static_cast<size_t>(r)] * es, counts[r] * es);
      at += counts[r];
    }
    ordered = p;
  }
  CollContext local = h.local(c);
  int l = h.local_rank();
  if (!multi) {
    char *sum = h.local_rank() == 0 ? scratch(Scratch::kHierB, total * es) : nullptr;
    XC_TRY(run_phase(local, reduction(CollKind::kReduce, ordered, sum, total, t, d.op, 0)));
    const std::vector<int> &mine = lay.members[static_cast<size_t>(me)];
    std::vector<size_t> part(mine.size());
    for (size_t i = 0; i < mine.size(); ++i) part[i] = counts[mine[i]];
    if (l == 0) {
      std::vector<size_t> regions(static_cast<size_t>(H), 0);
      for (int r = 0; r < n; ++r) regions[static_cast<size_t>(lay.host_of[static_cast<size_t>(r)])] += counts[r];
      CollDesc rs = reduction(CollKind::kReduceScatterv, sum, sum, regions[static_cast<size_t>(me)], t, d.op);
      rs.recvcounts = regions;
      CollContext leaders = h.peers(c);
      XC_TRY(run_phase(leaders, rs));
    }
    CollDesc sc = phase_desc(CollKind::kScatterv, t, counts[c.rank()]);
    sc.sendbuf = sum;
    sc.recvbuf = out;
    if (l == 0) {
      sc.sendcounts = part;
      sc.sdispls = displacements(part);
    }
    return run_phase(local, sc);
  }
  int L = h.local_size();
  std::vector<size_t> shares(static_cast<size_t>(L), 0), own(static_cast<size_t>(H));
  for (int k = 0; k < L; ++k)
    for (int g = 0; g < H; ++g) shares[static_cast<size_t>(k)] += counts[lay.rank_at(g, k)];
  for (int g = 0; g < H; ++g) own[static_cast<size_t>(g)] = counts[lay.rank_at(g, l)];
  char *share = scratch(Scratch::kHierB, shares[static_cast<size_t>(l)] * es);
  CollDesc p1 = reduction(CollKind::kReduceScatterv, ordered, share, shares[static_cast<size_t>(l)], t, d.op);
  p1.recvcounts = shares;
  XC_TRY(run_phase(local, p1));
  CollDesc p2 = reduction(CollKind::kReduceScatterv, share, out, own[static_cast<size_t>(me)], t, d.op);
  p2.recvcounts = own;
  CollContext peers = h.peers(c);
  return run_phase(peers, p2);
}

}  // namespace xc::algo::hier
