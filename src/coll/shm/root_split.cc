#include "coll/shm/root_split.h"

#include "base/dtype.h"

namespace xc::coll {

ShmRootSplit shm_root_split_policy(int n, long cores) {
  if (cores <= 0 || n <= cores) return ShmRootSplit::kOwnCores;
  long all = (n + cores - 1) / cores, peers = (n - 1 + cores - 1) / cores;  // busy ranks on the fullest core
  return all * (n - 1) <= n * peers ? ShmRootSplit::kAlways : ShmRootSplit::kShortOps;
}

Status shm_write_fronts(CollContext &c, ShmState &st, uint64_t s, const CollDesc &d, uint32_t parts,
                        ShmRecvRecord rec, Status *disagreed) {
  bool v = d.kind == CollKind::kScatterv;
  size_t es = dtype_size(d.dtype);
  const char *in = static_cast<const char *>(d.sendbuf);
  for (int q = 0; q < st.nranks; ++q) {
    size_t count = v ? d.sendcounts[static_cast<size_t>(q)] : d.count;
    size_t share = q == st.rank ? 0 : shm_root_share(count * es, parts);
    if (share == 0) continue;
    size_t off = (v ? d.sdispls[static_cast<size_t>(q)] : static_cast<size_t>(q) * d.count) * es;
    XC_TRY(shm_write_part(c, st, s, coll_kind_name(d.kind), q, in + off, count * es, [&](ShmPeerPart *part) {
      const ShmArrival &a = st.arrival(q, s);
      *part = rec == ShmRecvRecord::kAddr ? ShmPeerPart{a.addr.dst, a.addr.aux * es, 0, share}
                                          : ShmPeerPart{a.v.target.recvbuf, a.v.target.count * es, 0, share};
      return Status::Ok();
    }, disagreed));
  }
  return Status::Ok();
}

}  // namespace xc::coll
