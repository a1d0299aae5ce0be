// allgather and broadcast: blocks gathered or pieces carried between hosts
// by one member per host (leader) or by every member (multi-leader), and
// spread within each host through shared memory. Bytes throughout.
#include <cstring>

#include "algo/algorithms.h"
#include "algo/hier/backend.h"
#include "algo/hier/hier.h"
#include "algo/hier/phase.h"
#include "base/dtype.h"

namespace xc::algo::hier {

using coll::CollContext;

// leader: gather each host's blocks to member 0 (at the host's place in
// host order), allgather the hosts' regions among the members 0, broadcast
// the whole within each host, reorder to rank order where hosts are not
// contiguous ranges of ranks.
// multi-leader: allgather among the members l of every host (member l gets
// the blocks of the members l), allgather those within the host, reorder.
Status allgather(CollContext &c, const CollDesc &d, bool multi) {
  HierColl &h = *hier_of(c);
  const HostLayout &lay = h.layout();
  int n = c.size(), H = lay.hosts(), me = h.host(), l = h.local_rank();
  size_t b = d.count * dtype_size(d.dtype);
  char *out = static_cast<char *>(d.recvbuf);
  const char *own = d.in_place ? out + static_cast<size_t>(c.rank()) * b : static_cast<const char *>(d.sendbuf);
  CollContext local = h.local(c);
  if (!multi) {
    char *all = lay.contiguous ? out : scratch(Scratch::kHierA, static_cast<size_t>(n) * b);
    char *region = all + static_cast<size_t>(lay.offset[static_cast<size_t>(me)]) * b;
    CollDesc g = phase_desc(CollKind::kGather, XC_UINT8, b);
    g.in_place = l == 0 && own == region;
    g.sendbuf = g.in_place ? nullptr : own;
    g.recvbuf = l == 0 ? region : nullptr;
    XC_TRY(run_phase(local, g));
    if (l == 0) {
      std::vector<size_t> counts(static_cast<size_t>(H)), displs(static_cast<size_t>(H));
      for (int k = 0; k < H; ++k) {
        counts[static_cast<size_t>(k)] = static_cast<size_t>(lay.local_size(k)) * b;
        displs[static_cast<size_t>(k)] = static_cast<size_t>(lay.offset[static_cast<size_t>(k)]) * b;
      }
      CollDesc ag = phase_desc(CollKind::kAllgatherv, XC_UINT8, counts[static_cast<size_t>(me)]);
      ag.in_place = true;
      ag.recvbuf = all;
      ag.recvcounts = counts;
      ag.rdispls = displs;
      CollContext leaders = h.peers(c);
      XC_TRY(run_phase(leaders, ag));
    }
    CollDesc bc = phase_desc(CollKind::kBroadcast, XC_UINT8, static_cast<size_t>(n) * b);
    bc.recvbuf = all;
    XC_TRY(run_phase(local, bc));
    if (!lay.contiguous && b)
      for (int r = 0; r < n; ++r)
        memcpy(out + static_cast<size_t>(r) * b, all + static_cast<size_t>(lay.host_position(r)) * b, b);
    return Status::Ok();
  }
  int L = h.local_size();
  char *column = scratch(Scratch::kHierA, static_cast<size_t>(H) * b);  // the blocks of the members l, host order
  CollDesc p1 = phase_desc(CollKind::kAllgather, XC_UINT8, b);
  p1.sendbuf = own;
  p1.recvbuf = column;
  CollContext peers = h.peers(c);
  XC_TRY(run_phase(peers, p1));
  bool by_member = true;  // [member][host] is rank order (ranks dealt round-robin to hosts)
  for (int k = 0; k < L; ++k)
    for (int g = 0; g < H; ++g) by_member = by_member && lay.rank_at(g, k) == k * H + g;
  char *grid = by_member ? out : scratch(Scratch::kHierB, static_cast<size_t>(n) * b);
  CollDesc p2 = phase_desc(CollKind::kAllgather, XC_UINT8, static_cast<size_t>(H) * b);
  p2.sendbuf = column;
  p2.recvbuf = grid;
  XC_TRY(run_phase(local, p2));
  if (!by_member && b)
    for (int k = 0; k < L; ++k)
      for (int g = 0; g < H; ++g)
        memcpy(out + static_cast<size_t>(lay.rank_at(g, k)) * b, grid + static_cast<size_t>(k * H + g) * b, b);
  return Status::Ok();
}

// leader: the root and the members 0 of the other hosts broadcast among
// themselves, then each host from its representative.
// multi-leader: the root scatters its buffer in slices within its host,
// member l broadcasts slice l to the members l of the other hosts, every
// host allgathers its slices.
Status broadcast(CollContext &c, const CollDesc &d, bool multi) {
  HierColl &h = *hier_of(c);
  const HostLayout &lay = h.layout();
  size_t b = d.count * dtype_size(d.dtype);
  char *buf = static_cast<char *>(d.recvbuf);
  int root_host = lay.host_of[static_cast<size_t>(d.root)], root_local = lay.local_of[static_cast<size_t>(d.root)];
  bool root_here = h.host() == root_host;
  int l = h.local_rank();
  CollContext local = h.local(c);
  if (!multi) {
    int rep = root_here ? root_local : 0;
    if (l == rep) {
      CollDesc p1 = phase_desc(CollKind::kBroadcast, XC_UINT8, b);
      p1.recvbuf = buf;
      p1.root = root_host;
      CollContext reps = h.reps(c, d.root);
      XC_TRY(run_phase(reps, p1));
    }
    CollDesc p2 = phase_desc(CollKind::kBroadcast, XC_UINT8, b);
    p2.recvbuf = buf;
    p2.root = rep;
    return run_phase(local, p2);
  }
  int L = h.local_size();
  std::vector<size_t> counts = piece_counts(b, L), displs = displacements(counts);
  size_t mine = counts[static_cast<size_t>(l)], at = displs[static_cast<size_t>(l)];
  if (root_here) {
    CollDesc sc = phase_desc(CollKind::kScatterv, XC_UINT8, mine);
    sc.root = root_local;
    sc.in_place = l == root_local;  // its slice stays where it is
    sc.sendbuf = sc.in_place ? buf : nullptr;
    sc.recvbuf = sc.in_place ? nullptr : buf + at;
    sc.sendcounts = counts;
    sc.sdispls = displs;
    XC_TRY(run_phase(local, sc));
  }
  CollDesc p2 = phase_desc(CollKind::kBroadcast, XC_UINT8, mine);
  p2.recvbuf = buf + at;
  p2.root = root_host;
  CollContext peers = h.peers(c);
  XC_TRY(run_phase(peers, p2));
  CollDesc ag = phase_desc(CollKind::kAllgatherv, XC_UINT8, mine);
  ag.in_place = true;
  ag.recvbuf = buf;
  ag.recvcounts = counts;
  ag.rdispls = displs;
  return run_phase(local, ag);
}

}  // namespace xc::algo::hier
