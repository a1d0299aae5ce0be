// Where a validated collective goes: run now on the calling thread (req
// NULL), or start it and hand back a request; inside xc_group_start/end it
// only starts. Returns the xc_result_t of the entry point.
#pragma once

#include "coll/desc.h"
#include "xcomm.h"

namespace xc::api {

xc_result_t coll_submit(const char *fn, xc_comm_t comm, CollDesc &&desc, xc_request_t *req);

}  // namespace xc::api
