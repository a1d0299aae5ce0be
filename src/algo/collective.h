// One entry for every collective: pick the algorithm (selector.h, XC_ALGO)
// and run it over the context.
#pragma once

#include "algo/coll_context.h"
#include "core/coll_desc.h"

namespace xc::algo {

Status run_collective(CollContext &c, const CollDesc &d);

}  // namespace xc::algo
