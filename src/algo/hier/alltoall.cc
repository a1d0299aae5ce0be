// alltoall between hosts. multi-leader (the two-dimensional alltoall):
// member l sends the members l of the other hosts, in one message per host,
// every block it has for that host's members; then each host's members
// trade what they received. leader: each host's inputs gathered to member 0,
// one message per pair of hosts among the members 0, scattered back.
#include <cstring>

#include "algo/algorithms.h"
#include "algo/hier/backend.h"
#include "algo/hier/hier.h"
#include "algo/hier/phase.h"
#include "base/dtype.h"

namespace xc::algo::hier {

using coll::CollContext;

namespace {

void copy_block(char *to, const char *from, size_t b) {
  if (b) memcpy(to, from, b);
}

Status alltoall_multileader(HierColl &h, CollContext &c, const char *in, char *out, size_t b) {
  const HostLayout &lay = h.layout();
  int H = lay.hosts(), L = h.local_size();
  size_t cells = static_cast<size_t>(H) * static_cast<size_t>(L) * b;
  char *a = scratch(Scratch::kHierA, cells), *z = scratch(Scratch::kHierB, cells);
  // a[g][k] = my block for member k of host g (rank order when hosts are ranges).
  const char *send = in;
  if (!lay.contiguous) {
    for (int g = 0; g < H; ++g)
      for (int k = 0; k < L; ++k)
        copy_block(a + static_cast<size_t>(g * L + k) * b, in + static_cast<size_t>(lay.rank_at(g, k)) * b, b);
    send = a;
  }
  CollDesc p1 = phase_desc(CollKind::kAlltoall, XC_UINT8, static_cast<size_t>(L) * b);
  p1.sendbuf = send;
  p1.recvbuf = z;
  CollContext peers = h.peers(c);
  XC_TRY(run_phase(peers, p1));
  // z[g][k]: from member l of host g for member k here; to a[k][g].
  for (int g = 0; g < H; ++g)
    for (int k = 0; k < L; ++k)
      copy_block(a + static_cast<size_t>(k * H + g) * b, z + static_cast<size_t>(g * L + k) * b, b);
  CollDesc p2 = phase_desc(CollKind::kAlltoall, XC_UINT8, static_cast<size_t>(H) * b);
  p2.sendbuf = a;
  p2.recvbuf = z;
  CollContext local = h.local(c);
  XC_TRY(run_phase(local, p2));
  // z[k][g]: from member k of host g.
  for (int k = 0; k < L; ++k)
    for (int g = 0; g < H; ++g)
      copy_block(out + static_cast<size_t>(lay.rank_at(g, k)) * b, z + static_cast<size_t>(k * H + g) * b, b);
  return Status::Ok();
}

Status alltoall_leader(HierColl &h, CollContext &c, const char *in, char *out, size_t b) {
  const HostLayout &lay = h.layout();
  int n = c.size(), H = lay.hosts(), L = h.local_size();
  size_t row = static_cast<size_t>(n) * b, mine = static_cast<size_t>(L) * row;
  bool leader = h.local_rank() == 0;
  char *a = leader ? scratch(Scratch::kHierA, mine) : nullptr;
  char *z = leader ? scratch(Scratch::kHierB, mine) : nullptr;
  CollDesc g = phase_desc(CollKind::kGather, XC_UINT8, row);
  g.sendbuf = in;
  g.recvbuf = a;  // a[k][r]: member k's block for rank r
  CollContext local = h.local(c);
  XC_TRY(run_phase(local, g));
  if (leader) {
    // To host t: for each of its members j, each of ours k: a[k][j].
    std::vector<size_t> sc(static_cast<size_t>(H)), rc(static_cast<size_t>(H));
    size_t at = 0;
    for (int t = 0; t < H; ++t) {
      for (int j : lay.members[static_cast<size_t>(t)])
        for (int k = 0; k < L; ++k, at += b)
          copy_block(z + at, a + static_cast<size_t>(k) * row + static_cast<size_t>(j) * b, b);
      sc[static_cast<size_t>(t)] = static_cast<size_t>(lay.local_size(t)) * static_cast<size_t>(L) * b;
      rc[static_cast<size_t>(t)] = sc[static_cast<size_t>(t)];
    }
    CollDesc x = phase_desc(CollKind::kAlltoallv, XC_UINT8, 0);
    x.sendbuf = z;
    x.recvbuf = a;
    x.sendcounts = sc;
    x.sdispls = displacements(sc);
    x.recvcounts = rc;
    x.rdispls = displacements(rc);
    CollContext leaders = h.peers(c);
    XC_TRY(run_phase(leaders, x));
    // From host t, for our member j, from its member k: in rank order per j.
    size_t from = 0;
    for (int t = 0; t < H; ++t)
      for (int j = 0; j < L; ++j)
        for (int k : lay.members[static_cast<size_t>(t)]) {
          copy_block(z + static_cast<size_t>(j) * row + static_cast<size_t>(k) * b, a + from, b);
          from += b;
        }
  }
  CollDesc s = phase_desc(CollKind::kScatter, XC_UINT8, row);
  s.sendbuf = z;
  s.recvbuf = out;
  return run_phase(local, s);
}

}  // namespace

Status alltoall(CollContext &c, const CollDesc &d, bool multi) {
  HierColl &h = *hier_of(c);
  size_t b = d.count * dtype_size(d.dtype);
  const char *in = static_cast<const char *>(d.sendbuf);
  if (d.in_place) {  // read from a copy: out is written while peers still need our input
    size_t all = static_cast<size_t>(c.size()) * b;
    char *copy = scratch(Scratch::kWideIn, all);
    if (all) memcpy(copy, d.recvbuf, all);
    in = copy;
  }
  char *out = static_cast<char *>(d.recvbuf);
  return multi ? alltoall_multileader(h, c, in, out, b) : alltoall_leader(h, c, in, out, b);
}

}  // namespace xc::algo::hier
