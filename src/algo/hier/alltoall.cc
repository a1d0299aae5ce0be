// alltoall(v) between hosts. multi-leader (the two-dimensional alltoall):
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

// The leaders' phase of both leader-based alltoalls: sends[t] bytes to host
// t's leader and recvs[t] from it, each side packed in host order.
Status leaders_exchange(HierColl &h, CollContext &c, const char *send, const std::vector<size_t> &sends, char *recv,
                        const std::vector<size_t> &recvs) {
  CollDesc x = phase_desc(CollKind::kAlltoallv, XC_UINT8, 0);
  x.sendbuf = send;
  x.recvbuf = recv;
  x.sendcounts = sends;
  x.sdispls = displacements(sends);
  x.recvcounts = recvs;
  x.rdispls = displacements(recvs);
  CollContext leaders = h.peers(c);
  return run_phase(leaders, x);
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
    XC_TRY(leaders_exchange(h, c, z, sc, a, rc));
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

// alltoallv, leader-based: each rank's counts, then its blocks (packed in
// rank order) gathered to member 0; one message per pair of hosts among the
// members 0, sized from the gathered counts (sends: the senders', receives:
// the receivers'; a rank whose counts disagree fails the size check of that
// message, as in pairwise); each member's blocks scattered to it in rank
// order and unpacked at its displacements. Bytes throughout.
Status alltoallv_leader(HierColl &h, CollContext &c, const CollDesc &d) {
  const HostLayout &lay = h.layout();
  int n = c.size(), H = lay.hosts(), L = h.local_size();
  size_t es = dtype_size(d.dtype), un = static_cast<size_t>(n);
  bool leader = h.local_rank() == 0;
  const CountArray &sc = d.in_place ? d.recvcounts : d.sendcounts, &sd = d.in_place ? d.rdispls : d.sdispls;
  const char *in = d.in_place ? static_cast<const char *>(d.recvbuf) : static_cast<const char *>(d.sendbuf);
  // counts[k][0, n): member k's bytes to each rank; counts[k][n, 2n): from each.
  std::vector<size_t> mine(2 * un), counts(leader ? static_cast<size_t>(L) * 2 * un : 0);
  size_t sent = 0, got = 0;
  for (size_t r = 0; r < un; ++r) {
    sent += mine[r] = sc[r] * es;
    got += mine[un + r] = d.recvcounts[r] * es;
  }
  CollContext local = h.local(c);
  CollDesc p0 = phase_desc(CollKind::kGather, XC_UINT8, 2 * un * sizeof(size_t));
  p0.sendbuf = mine.data();
  p0.recvbuf = leader ? counts.data() : nullptr;
  XC_TRY(run_phase(local, p0));
  auto to = [&](int k, size_t r) { return counts[static_cast<size_t>(k) * 2 * un + r]; };
  auto from = [&](int k, size_t r) { return counts[static_cast<size_t>(k) * 2 * un + un + r]; };

  char *a = scratch(Scratch::kHierA, sent);
  for (size_t r = 0, at = 0; r < un; at += mine[r], ++r)
    if (mine[r]) memcpy(a + at, in + sd[r] * es, mine[r]);
  CollDesc p1 = phase_desc(CollKind::kGatherv, XC_UINT8, sent);
  p1.sendbuf = a;
  std::vector<size_t> region(leader ? static_cast<size_t>(L) : 0);
  for (int k = 0; k < L && leader; ++k)
    for (size_t r = 0; r < un; ++r) region[static_cast<size_t>(k)] += to(k, r);
  std::vector<size_t> region_at = displacements(region);
  size_t gathered = leader ? region_at.back() + region.back() : 0;
  char *b = scratch(Scratch::kHierB, gathered);
  p1.recvbuf = leader ? b : nullptr;
  if (leader) {
    p1.recvcounts = region;
    p1.rdispls = region_at;
  }
  XC_TRY(run_phase(local, p1));

  std::vector<size_t> scatter_counts;
  if (leader) {
    // Member k's block for rank r sits at region_at[k] + the bytes before r.
    std::vector<size_t> block(static_cast<size_t>(L) * un);
    for (int k = 0; k < L; ++k)
      for (size_t r = 0, at = region_at[static_cast<size_t>(k)]; r < un; at += to(k, r), ++r)
        block[static_cast<size_t>(k) * un + r] = at;
    std::vector<size_t> sends(static_cast<size_t>(H), 0), recvs(static_cast<size_t>(H), 0);
    a = scratch(Scratch::kHierA, gathered);
    size_t at = 0;
    for (int t = 0; t < H; ++t)
      for (int j : lay.members[static_cast<size_t>(t)])
        for (int k = 0; k < L; ++k) {
          size_t bytes = to(k, static_cast<size_t>(j));
          if (bytes) memcpy(a + at, b + block[static_cast<size_t>(k) * un + static_cast<size_t>(j)], bytes);
          at += bytes;
          sends[static_cast<size_t>(t)] += bytes;
        }
    // From host g: for each of our members j, from each of its members k.
    std::vector<size_t> pos(static_cast<size_t>(L) * un);
    size_t total = 0;
    for (int g = 0; g < H; ++g)
      for (int j = 0; j < L; ++j)
        for (int k : lay.members[static_cast<size_t>(g)]) {
          pos[static_cast<size_t>(j) * un + static_cast<size_t>(k)] = total;
          total += from(j, static_cast<size_t>(k));
          recvs[static_cast<size_t>(g)] += from(j, static_cast<size_t>(k));
        }
    b = scratch(Scratch::kHierB, total);
    XC_TRY(leaders_exchange(h, c, a, sends, b, recvs));
    // Member j's blocks, in rank order of their senders.
    a = scratch(Scratch::kHierA, total);
    scatter_counts.assign(static_cast<size_t>(L), 0);
    at = 0;
    for (int j = 0; j < L; ++j)
      for (size_t k = 0; k < un; ++k) {
        size_t bytes = from(j, k);
        if (bytes) memcpy(a + at, b + pos[static_cast<size_t>(j) * un + k], bytes);
        at += bytes;
        scatter_counts[static_cast<size_t>(j)] += bytes;
      }
  }
  char *mine_in = scratch(Scratch::kHierB, got);
  CollDesc p3 = phase_desc(CollKind::kScatterv, XC_UINT8, got);
  p3.sendbuf = leader ? a : nullptr;
  p3.recvbuf = mine_in;
  if (leader) {
    p3.sendcounts = scatter_counts;
    p3.sdispls = displacements(scatter_counts);
  }
  XC_TRY(run_phase(local, p3));
  char *out = static_cast<char *>(d.recvbuf);
  for (size_t r = 0, at = 0; r < un; at += mine[un + r], ++r)
    if (mine[un + r]) memcpy(out + d.rdispls[r] * es, mine_in + at, mine[un + r]);
  return Status::Ok();
}

}  // namespace

Status alltoallv(CollContext &c, const CollDesc &d) { return alltoallv_leader(*hier_of(c), c, d); }

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
