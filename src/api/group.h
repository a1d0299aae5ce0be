// xc_group_start / xc_group_end: this thread's open batch. Inside a group
// point-to-point calls only post (the blocking forms too: their statuses are
// filled at the end) and collectives only start on their communicator's
// executor; the outermost xc_group_end waits for all of it. It lives in api/
// (not runtime/) because what it holds are API requests and user statuses.
#pragma once

#include <memory>

#include "api/api_support.h"
#include "device/p2p.h"
#include "runtime/coll_task.h"

namespace xc::api {

// True between xc_group_start and the matching outermost xc_group_end.
bool in_group();

// A point-to-point request posted inside the group. owned: made for a
// blocking call, freed at the end (its status, which may be NULL, is filled
// then); else the user's own request, waited for but left to the user.
void group_add_p2p(xc_request_s *r, xc_status_t *status, bool owned);
// A device point-to-point op: the group's device ops of each communicator
// are enqueued at xc_group_end as batches (one per stream) whose sends and
// receives progress together.
void group_add_device_p2p(xc_comm_t comm, device::P2pOp op);
// A collective started inside the group.
void group_add_coll(std::shared_ptr<CollTask> task);

Status group_start();
// Wait for everything (each with its deadline); the first error, naming its op.
Status group_end();

}  // namespace xc::api
