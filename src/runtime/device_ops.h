// Device-memory ops on a communicator: where they may go (a device, every
// rank on this host), which stream takes them (bound per target, else the
// communicator's default), and enqueueing them there. Also the body behind
// xc_stream_t.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "base/status.h"
#include "coll/desc.h"
#include "device/p2p.h"
#include "device/stream.h"
#include "runtime/comm.h"

constexpr uint32_t kStreamMagic = 0x5354524d;  // "STRM"
constexpr uint32_t kStreamFreed = 0x46524553;

struct xc_stream_s {
  uint32_t magic = kStreamMagic;
  std::shared_ptr<xc::device::DeviceStream> stream;
  uint64_t timeout_ms = 0;  // of the communicator it was made with
};

namespace xc {

// comm's device, made on first use; nullptr and why (XC_ERR_UNSUPPORTED) when
// there is none. Device memory between hosts goes to NCCL (runtime/nccl_ops.h).
gpu::Device *device_for(xc_comm_s *comm, Status *why);

// True when some buffer of an op is device memory. Checks every non-null
// pointer; all must be of one kind (a mix is XC_ERR_UNSUPPORTED in *why).
bool any_device(const void *const *ptrs, size_t n, Status *why);

Status stream_make(xc_comm_s *comm, void *native, bool wrap, xc_stream_s **out);
Status stream_bind(xc_comm_s *comm, xc_stream_s *stream, int target);

// Enqueue a batch of point-to-point ops on the stream bound to target (a
// peer rank, or -1: each op's own peer when all agree, else the default).
Status device_p2p(xc_comm_s *comm, std::vector<device::P2pOp> ops, const char *what);
// Enqueue a collective on the stream bound to the collectives.
Status device_collective(xc_comm_s *comm, CollDesc &&desc, std::shared_ptr<device::OpOutcome> outcome,
                         const char *what);

// Enqueue a job that works on the host (it may call xcomm's host ops on comm
// and move device memory with env's copies) on the stream bound to the
// collectives, else the default one, like device_collective; its failure is
// recorded for xc_comm_get_async_error. failed (may be null) runs on the
// stream's thread when the job failed, also when run never ran (its inputs
// never became ready).
Status device_host_job(xc_comm_s *comm, const char *what, std::function<Status(device::JobEnv &)> run,
                       std::shared_ptr<device::OpOutcome> outcome,
                       std::function<void(const Status &)> failed = nullptr);

// xc_comm_free: wait (bounded) for the device ops comm enqueued, drop its streams.
void device_ops_finish(xc_comm_s *comm);

}  // namespace xc
