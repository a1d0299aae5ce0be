// NCCL underneath a communicator (docs/nccl.md): which communicators have
// an NCCL communicator and when it is made, and the device-memory ops that
// go to it. The world's is made from a unique id that rank 0 sends through
// xcomm's bootstrap store; a child's by ncclCommSplit of its parent's,
// inside xc_comm_split / xc_comm_split_groups (one ncclCommSplit per rank
// per call, whatever the number of groups); lazily at the first device op
// when the config asks (xc_config_t.nccl_lazy). Every NCCL call is
// non-blocking and polled under the communicator's deadline.
#pragma once

#include <memory>
#include <vector>

#include "base/status.h"
#include "coll/desc.h"
#include "device/p2p.h"
#include "device/stream.h"
#include "runtime/comm.h"

namespace xc {

// Whether comm's device ops may use NCCL (XC_NCCL: auto = its ranks span
// hosts or XC_ALGO names nccl; 1; 0). The same answer on every rank.
bool nccl_wanted(const xc_comm_s *comm);
// Whether this op goes to NCCL rather than xcomm's own IPC path: across
// hosts always; on one host when XC_NCCL=1 or XC_ALGO forces nccl for the
// op. A function of the op and the environment only, so every rank decides
// alike. kind < 0: point-to-point.
bool nccl_takes(const xc_comm_s *comm, int kind);

// A communicator made by xc_init / xc_comm_init_rank: its NCCL
// communicator now (collective), unless lazy. Never fails the creation:
// what went wrong is kept and reported by the first device op.
void nccl_setup_root(xc_comm_s *comm, bool lazy);
// Every rank of parent, once per split call: child is this rank's new
// communicator (null when in no group), color its group (any value equal
// across the group's members), key its rank there. lazy: agreed by all.
void nccl_setup_split(xc_comm_s *parent, xc_comm_s *child, int color, int key, bool lazy);

// Enqueue a device collective / point-to-point batch on NCCL.
Status nccl_collective(xc_comm_s *comm, gpu::Device *dev, std::shared_ptr<device::DeviceStream> stream, CollDesc &&d,
                       std::shared_ptr<device::OpOutcome> outcome, const char *what);
Status nccl_p2p(xc_comm_s *comm, gpu::Device *dev, std::shared_ptr<device::DeviceStream> stream,
                bool collectives_stream, std::vector<device::P2pOp> ops, const char *what);

// xc_comm_get_async_error: NCCL's asynchronous error on comm's NCCL
// communicator (never waits; XC_SUCCESS when a call is in flight).
xc_result_t nccl_async_error(xc_comm_s *comm);
// xc_comm_abort: ncclCommAbort on comm's NCCL communicators; never blocks.
void nccl_abort(xc_comm_s *comm);
// xc_comm_free, after its device ops finished: drop them (finalize/destroy).
void nccl_release(xc_comm_s *comm);

}  // namespace xc
