// One phase of a hierarchical algorithm: an op on a sub-context (backend.h),
// run with the algorithm the default policy picks for it there (the
// shared-memory ones on this host's members, point-to-point across hosts).
// Phases reduce as given: the hierarchical algorithm widens float16/bfloat16
// and divides XC_AVG once, for the whole op (run_reduction).
#pragma once

#include <cstddef>
#include <vector>

#include "coll/context.h"
#include "coll/desc.h"

namespace xc::algo::hier {

// Sets up the sub-context's shared-memory backend at its first phase
// (collective over its members, who all reach it at the same op).
Status run_phase(coll::CollContext &s, const CollDesc &d);

// A phase's description: kind, dtype, count (elements), the rest unset.
CollDesc phase_desc(CollKind kind, xc_dtype_t dtype, size_t count);

// The op a phase reduces with: AVG sums (divided once at the end).
inline xc_op_t phase_op(xc_op_t op) { return op == XC_AVG ? XC_SUM : op; }

// Piece i of count elements cut into n nearly equal pieces.
inline size_t piece_begin(size_t count, int i, int n) {
  return count / static_cast<size_t>(n) * static_cast<size_t>(i) +
         count % static_cast<size_t>(n) * static_cast<size_t>(i) / static_cast<size_t>(n);
}
inline size_t piece_count(size_t count, int i, int n) {
  return piece_begin(count, i + 1, n) - piece_begin(count, i, n);
}
// Every piece's count, and displacements.
std::vector<size_t> piece_counts(size_t count, int n);
std::vector<size_t> displacements(const std::vector<size_t> &counts);

}  // namespace xc::algo::hier
