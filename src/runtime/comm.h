// The body behind xc_comm_t: a set of fabric ranks with its own context ids.
// Handles are checked by magic on every call; a freed communicator keeps its
// small shell (magic = freed) so a stale handle is reported, not followed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "coll/backend.h"
#include "coll/context.h"
#include "device/custom.h"
#include "device/stream.h"
#include "runtime/executor.h"
#include "runtime/fabric.h"
#include "runtime/flight_recorder.h"
#include "transport/nccl/nccl_comm.h"
#include "xcomm.h"

constexpr uint32_t kCommMagic = 0x434f4d31;  // "COM1"
constexpr uint32_t kCommFreed = 0x46524545;  // "FREE"

struct xc_comm_s {
  uint32_t magic = kCommMagic;
  std::shared_ptr<xc::Fabric> fabric;
  std::shared_ptr<const std::vector<int>> members;  // fabric rank of each communicator rank
  std::shared_ptr<const std::vector<int>> rank_of_fabric;  // communicator rank of each fabric rank, -1 if absent
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  // Point-to-point; ctx + 1 carries the collectives, ctx + 2 and + 3 the
  // device ops (device/comm_view.h). A multiple of 4.
  uint64_t ctx = 0;
  std::atomic<bool> broken{false};  // a collective failed: ranks may be out of step
  bool claimed_ctx = false;         // made by xc_comm_create_group: ctx is claimed in the fabric until freed
  uint32_t ctx_generation = 0;      // earlier groups with this ctx (fabric.h claim_context)
  uint64_t timeout_ms = 300000;
  std::string name;
  std::atomic<bool> aborted{false};
  std::atomic<uint64_t> coll_seq{0};
  // Its last XC_TRACE_DEPTH collectives (runtime/flight_recorder.h); null
  // when XC_TRACE_DEPTH is 0. trace_dumped: a timeout or peer failure was
  // dumped already (runtime/trace_dump.h).
  std::unique_ptr<xc::FlightRecorder> recorder;
  std::atomic<bool> trace_dumped{false};
  // The collective backends its members share (shared memory when all are
  // on this host; algo/backends.h decides).
  xc::coll::BackendSet backends;
  xc::topo::HostClass host_class = xc::topo::HostClass::kNoGpu;  // of this rank's host
  // Runs its non-blocking and grouped collectives in order
  // (runtime/executor.h); shut down by xc_comm_free.
  std::unique_ptr<xc::Executor> executor;

  // Device-memory ops (runtime/device_ops.h): the device, made on first
  // use; the streams ops go to (bound by xc_stream_bind, else the default
  // one, made on first use); the order of device collectives.
  int device_ordinal = XC_DEVICE_AUTO;
  std::mutex device_mu;
  xc::gpu::Device *device = nullptr;
  std::shared_ptr<xc::device::DeviceStream> default_stream;
  std::shared_ptr<xc::device::DeviceStream> coll_stream;
  std::unordered_map<int, std::shared_ptr<xc::device::DeviceStream>> peer_streams;
  std::atomic<uint64_t> device_coll_seq{0};
  // The intra-node kernels' workspaces (device/custom.h), made by the
  // first device op that may take them.
  std::shared_ptr<xc::device::CustomComm> custom;
  std::shared_ptr<std::atomic<int>> device_error = std::make_shared<std::atomic<int>>(0);  // first failed device op

  // NCCL underneath (runtime/nccl_ops.h): its NCCL communicator (made at
  // creation, or at the first device op when lazy), why there is none,
  // the children that carry point-to-point on streams other than the
  // collectives' (one per stream, kept), and device scratch per stream.
  std::mutex nccl_mu;
  bool nccl_lazy = false;
  bool nccl_tried = false;
  uint32_t nccl_inits = 0;
  std::shared_ptr<xc::nccl::NcclComm> nccl;
  xc::Status nccl_why;
  std::unordered_map<const void *, std::shared_ptr<xc::nccl::NcclComm>> nccl_p2p;
  std::unordered_map<const void *, std::pair<void *, size_t>> nccl_scratch;
  std::vector<void *> nccl_outgrown;  // earlier scratch: queued work may still use it

  // xc_comm_create_group through the bootstrap store (members no transport
  // reaches): how many groups this process made from this communicator per
  // (tag, list), which names the store keys of the next one.
  std::mutex group_mu;
  std::unordered_map<uint64_t, uint32_t> group_calls;

  // Fault tolerance (runtime/ft.cc): how many agreements (xc_comm_agree,
  // xc_comm_shrink) ran on this communicator (each has its own tags, and
  // names a shrunk child's context), and every rank they agreed had failed.
  uint32_t agreements = 0;
  std::mutex ft_mu;
  std::vector<char> agreed_failed;  // by communicator rank; empty: none yet
};

namespace xc {

// Validate a handle from the user (NULL, freed, garbage-but-readable).
Status check_comm(const xc_comm_s *comm);

// XC_ERR_ABORTED after xc_comm_abort, XC_ERR_REVOKED once any member
// revoked it. Inline on success: every op calls it.
Status usable_error(const xc_comm_s *comm);
inline Status check_usable(const xc_comm_s *comm) {
  if (comm && comm->magic == kCommMagic && !comm->aborted.load() && !comm->fabric->engine().any_revoked())
    return Status::Ok();
  return usable_error(comm);
}

// The config the user passed (NULL = defaults), copied and validated:
// min(size, ours) bytes, a non-zero unknown tail rejected; a timeout of 0
// becomes XC_TIMEOUT's.
Status read_config(const xc_config_t *user, xc_config_t *out);
// The largest config.size accepted (xcomm.h): a bound on what read_config
// scans for unknown fields, so a garbage size never reads past the struct.
constexpr size_t kMaxConfigSize = 4096;
// xc_comm_split_groups takes at most max(parent size, this) groups, so a
// garbage ngroups is not read as an array (xcomm.h).
constexpr int kGroupsAlwaysAllowed = 1024;

Status comm_init_world(const xc_config_t *cfg, xc_comm_s **out);
Status comm_init_rank(int nranks, const xc_unique_id_t *id, int rank, const xc_config_t *cfg, xc_comm_s **out);
Status comm_get_unique_id(xc_unique_id_t *id);
Status comm_split(xc_comm_s *parent, int color, int key, const xc_config_t *cfg, xc_comm_s **out);
Status comm_split_groups(xc_comm_s *parent, int ngroups, const int *group_sizes, const int *ranks,
                         const xc_config_t *cfg, xc_comm_s **out);
Status comm_create_group(xc_comm_s *parent, int n, const int *ranks, int tag, const xc_config_t *cfg, xc_comm_s **out);
Status comm_dup(xc_comm_s *comm, xc_comm_s **out);
// Fault tolerance (runtime/ft.cc; xcomm.h says what each does).
Status comm_revoke(xc_comm_s *comm);
Status comm_agree(xc_comm_s *comm, int *flag);
Status comm_get_failed(xc_comm_s *comm, int *n, int *ranks);
Status comm_shrink(xc_comm_s *comm, const xc_config_t *cfg, xc_comm_s **out);
Status comm_grow(xc_comm_s *comm, int nnew, const xc_unique_id_t *id, const xc_config_t *cfg, xc_comm_s **out);

// For runtime/ft.cc: a communicator over members (fabric ranks) of fabric;
// the id its children's contexts derive from; a context derived from such
// an id, a salt and a number (a multiple of 4, like every communicator's);
// a child's config (the user's, else the parent's timeout and name).
Status comm_make(std::shared_ptr<Fabric> fabric, std::vector<int> members, int my_index, uint64_t ctx,
                 const xc_config_t &cfg, const std::string &name, xc_comm_s **out);
uint64_t comm_lineage(const xc_comm_s *comm);
uint64_t comm_derive_ctx(uint64_t lineage, uint64_t salt, uint64_t seq);
// The context agreements on comm use: not one of comm's four, so revoking
// comm leaves it working.
uint64_t comm_agree_ctx(const xc_comm_s *comm);
Status comm_child_config(const xc_comm_s *parent, const xc_config_t *cfg, xc_comm_s **out, xc_config_t *child,
                         std::string *name);
Status comm_free(xc_comm_s *comm);
void comm_abort(xc_comm_s *comm);
xc_result_t comm_async_error(xc_comm_s *comm);

// The context of comm's next collective (its own tag, the op's deadline).
coll::CollContext make_coll_context(xc_comm_s *comm);

// A deadline for one op on comm.
inline Deadline op_deadline(const xc_comm_s *comm) { return Deadline::AfterMs(comm->timeout_ms); }

}  // namespace xc
