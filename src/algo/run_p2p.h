// A collective described (CollDesc) handed to the point-to-point algorithms
// of algorithms.h: one run function per algorithm, for every op its table
// entry lists (algo/table.cc). They turn counts into bytes, copy the caller's
// own block where the algorithm expects it, and for reductions widen float16
// and bfloat16 to float32 (rounded once at the end) and divide once for AVG.
#pragma once

#include "algo/algorithms.h"
#include "coll/desc.h"

namespace xc::algo {

Status run_dissemination(CollContext &c, const CollDesc &d);
Status run_binomial(CollContext &c, const CollDesc &d);
Status run_scatter_allgather(CollContext &c, const CollDesc &d);
Status run_reduce_scatter_gather(CollContext &c, const CollDesc &d);
Status run_recursive_doubling(CollContext &c, const CollDesc &d);
Status run_ring(CollContext &c, const CollDesc &d);
Status run_bruck(CollContext &c, const CollDesc &d);
Status run_linear(CollContext &c, const CollDesc &d);
Status run_pairwise(CollContext &c, const CollDesc &d);

}  // namespace xc::algo
