// The table's entry points: set the backend up, widen and divide once for
// the reductions (run_reduction), hand each op to its algorithm.
#include "algo/hier/backend.h"
#include "algo/hier/hier.h"
#include "algo/run_p2p.h"

namespace xc::algo::hier {

namespace {

template <bool kMulti>
Status run(coll::CollContext &c, const CollDesc &d) {
  HierColl *h = hier_of(c);
  if (!h) return Error(XC_ERR_INTERNAL, "%s: hierarchical algorithm without its backend", coll_kind_name(d.kind));
  XC_TRY(h->ensure(c));
  if (kMulti && !h->layout().equal())
    return Error(XC_ERR_INTERNAL, "%s: multi-leader needs as many ranks on every host", coll_kind_name(d.kind));
  switch (d.kind) {
    case CollKind::kAllreduce:
      return run_reduction(c, d, [](coll::CollContext &c, const CollDesc &d, const void *in, void *out,
                                    xc_dtype_t t, const size_t *) { return allreduce(c, d, in, out, t, kMulti); });
    case CollKind::kReduce:
      return run_reduction(c, d, [](coll::CollContext &c, const CollDesc &d, const void *in, void *out,
                                    xc_dtype_t t, const size_t *) { return reduce(c, d, in, out, t, kMulti); });
    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv:
      return run_reduction(c, d,
                           [](coll::CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t,
                              const size_t *counts) { return reduce_scatter(c, d, in, out, t, counts, kMulti); });
    case CollKind::kAllgather: return allgather(c, d, kMulti);
    case CollKind::kBroadcast: return broadcast(c, d, kMulti);
    case CollKind::kAlltoall: return alltoall(c, d, kMulti);
    case CollKind::kAlltoallv:
      if (!kMulti) return alltoallv(c, d);
      break;
    default: break;
  }
  return Error(XC_ERR_INTERNAL, "%s has no such hierarchical algorithm", coll_kind_name(d.kind));
}

}  // namespace

Status run_leader(coll::CollContext &c, const CollDesc &d) { return run<false>(c, d); }
Status run_multileader(coll::CollContext &c, const CollDesc &d) { return run<true>(c, d); }

}  // namespace xc::algo::hier
