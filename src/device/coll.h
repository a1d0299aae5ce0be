// The collectives on device memory between ranks of one host. Every rank
// describes its input and output buffers to every other (device/ipc.h),
// then pulls what it needs straight from its peers' memory: copies for the
// data-movement ops, the reduction kernel of kernels/reduce.cuh over all
// ranks' inputs in rank order for the reductions (so every rank that
// computes an element gets the same bits). A closing exchange tells each
// rank that nobody reads its buffers any more. Nobody writes into a peer's
// memory; an op whose output overwrites its own input (in place) computes
// into the stream's scratch first and copies after the closing exchange.
#pragma once

#include "coll/desc.h"
#include "device/comm_view.h"
#include "device/stream.h"

namespace xc::device {

// Runs on the stream's thread. tag: the op's sequence number on the communicator.
Status run_collective(const CommView &c, const CollDesc &d, int tag, JobEnv &env);

}  // namespace xc::device
