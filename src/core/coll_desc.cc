#include "core/coll_desc.h"

namespace xc {

const char *coll_kind_name(CollKind kind) {
  switch (kind) {
    case CollKind::kBarrier: return "barrier";
    case CollKind::kBroadcast: return "broadcast";
    case CollKind::kReduce: return "reduce";
    case CollKind::kAllreduce: return "allreduce";
    case CollKind::kAllgather: return "allgather";
    case CollKind::kAllgatherv: return "allgatherv";
    case CollKind::kGather: return "gather";
    case CollKind::kGatherv: return "gatherv";
    case CollKind::kScatter: return "scatter";
    case CollKind::kScatterv: return "scatterv";
    case CollKind::kReduceScatter: return "reduce_scatter";
    case CollKind::kReduceScatterv: return "reduce_scatterv";
    case CollKind::kAlltoall: return "alltoall";
    case CollKind::kAlltoallv: return "alltoallv";
    case CollKind::kScan: return "scan";
    case CollKind::kExscan: return "exscan";
  }
  return "?";
}

bool coll_kind_reduces(CollKind kind) {
  switch (kind) {
    case CollKind::kReduce:
    case CollKind::kAllreduce:
    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv:
    case CollKind::kScan:
    case CollKind::kExscan: return true;
    default: return false;
  }
}

}  // namespace xc
