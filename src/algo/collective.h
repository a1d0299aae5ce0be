// One entry for every collective: pick the algorithm (selector.h, XC_ALGO)
// and run its table entry (table.h) over the context.
#pragma once

#include "algo/selector.h"
#include "algo/table.h"
#include "coll/context.h"
#include "coll/desc.h"

namespace xc::algo {

using coll::CollContext;

// Chooses (XC_ALGO, else the default policy), logs the choice at INFO and runs.
Status run_collective(CollContext &c, const CollDesc &d);

// Runs d with the given algorithm, no selection (tests, benchmarks). It must
// apply to d.kind (algo_applies); kLocal runs the op's first point-to-point
// algorithm, which on one rank only copies. Handles in place, count 0,
// float16/bfloat16 widening and AVG.
Status run_algorithm(CollContext &c, const CollDesc &d, Algo algo);

}  // namespace xc::algo
