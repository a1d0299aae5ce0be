// Who sends what to whom: reductions of Partial mesh dimensions by
// collectives, then either one collective on one mesh dimension (when the
// rest of the move is exactly that) or every element straight from a
// holder to each rank that needs it, local pieces copied.
#pragma once

#include "base/status.h"
#include "redist/layout.h"
#include "redist/plan.h"

namespace xc::redist {

struct PlanOptions {
  bool p2p_only = false;  // never use a collective to move data (reductions still do)
  bool relabel = true;    // compute the relabelling (n x n bytes matrix)
};

// Plan the move from src to dst for `rank`. Every rank computes the same
// global decisions from the same layouts, so their steps match.
Status make_plan(const Layout &src, const Layout &dst, xc_dtype_t dtype, size_t esize, int rank,
                 const PlanOptions &opt, Plan *out);

// The greedy matching behind the relabelling: v[i * n + j] = bytes rank i
// holds of destination part j; perm[j] = the rank that takes part j.
std::vector<int> greedy_relabel(const std::vector<uint64_t> &v, int n, uint64_t *kept);

}  // namespace xc::redist
