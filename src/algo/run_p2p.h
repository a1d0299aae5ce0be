// A collective described (CollDesc) handed to the point-to-point algorithms
// of algorithms.h: one run function per algorithm, for every op its table
// entry lists (algo/table.cc). They turn counts into bytes, copy the caller's
// own block where the algorithm expects it, and for reductions widen float16
// and bfloat16 to float32 (rounded once at the end) and divide once for AVG.
#pragma once

#include "algo/algorithms.h"
#include "coll/desc.h"

namespace xc::algo {

// One algorithm's reduction of in into out in dtype (float32 when widened);
// counts: reduce_scatter(v)'s blocks per rank, in elements.
using ReduceFn = Status (*)(CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t dtype,
                            const size_t *counts);
// Runs fn for a reduction d (reduce, allreduce, reduce_scatter(v), scan,
// exscan): float16/bfloat16 widened to float32 (in kWideIn) and rounded
// once at the end, XC_AVG divided once by the ranks reduced. fn sees d's op
// (AVG included: it must reduce as SUM).
Status run_reduction(CollContext &c, const CollDesc &d, ReduceFn fn);

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
