// Hierarchical collectives (docs/collectives.md): a phase within each host
// through the shared-memory algorithms, a phase between hosts over
// point-to-point, on the sub-contexts of backend.h.
//   leader:       member 0 of each host (the root on its host) carries its
//                 host's data between hosts; any spread of ranks over hosts;
//   multi-leader: member l of each host carries slice l (or the blocks of
//                 member l) between hosts, so every rank's link is used;
//                 needs as many members on every host.
// Every reduction combines in a fixed order, so a result delivered to
// several ranks has the same bits on each.
#pragma once

#include "coll/context.h"
#include "coll/desc.h"

namespace xc::algo::hier {

// The table's run functions (algo/table.cc): allreduce, reduce,
// reduce_scatter(v), allgather, broadcast, alltoall, and (leader) alltoallv;
// c has a HierColl.
Status run_leader(coll::CollContext &c, const CollDesc &d);
Status run_multileader(coll::CollContext &c, const CollDesc &d);

// The reductions (reductions.cc) and data movement (movement.cc, alltoall.cc),
// with the arguments of run_p2p.h's ReduceFn: in/out already widened.
Status allreduce(coll::CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t, bool multi);
Status reduce(coll::CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t, bool multi);
Status reduce_scatter(coll::CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t,
                      const size_t *counts, bool multi);
Status allgather(coll::CollContext &c, const CollDesc &d, bool multi);
Status broadcast(coll::CollContext &c, const CollDesc &d, bool multi);
Status alltoall(coll::CollContext &c, const CollDesc &d, bool multi);
Status alltoallv(coll::CollContext &c, const CollDesc &d);  // leader only

}  // namespace xc::algo::hier
