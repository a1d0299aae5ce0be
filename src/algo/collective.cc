#include "algo/collective.h"

#include <cstring>

#include "algo/algorithms.h"
#include "core/dtype.h"

namespace xc::algo {

Status run_collective(CollContext &c, const CollDesc &d) {
  size_t es = dtype_size(d.dtype);
  switch (d.kind) {
    case CollKind::kBarrier: return c.size() == 1 ? Status::Ok() : barrier_dissemination(c);
    case CollKind::kBroadcast:
      return c.size() == 1 ? Status::Ok() : broadcast_binomial(c, d.recvbuf, d.count * es, d.root);
    case CollKind::kAllreduce:
      if (!d.in_place && d.count) memcpy(d.recvbuf, d.sendbuf, d.count * es);
      return allreduce(c, d.recvbuf, d.count, d.dtype, d.op);
    case CollKind::kAllgather: {
      size_t bytes = d.count * es;
      if (!d.in_place && bytes) memcpy(static_cast<char *>(d.recvbuf) + bytes * static_cast<size_t>(c.rank()), d.sendbuf, bytes);
      return c.size() == 1 ? Status::Ok() : allgather_ring(c, d.recvbuf, bytes);
    }
    default: return Error(XC_ERR_UNSUPPORTED, "%s is not built yet", coll_kind_name(d.kind));
  }
}

}  // namespace xc::algo
