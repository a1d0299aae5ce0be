// Native collectives for communicators whose members all live on this host:
// one shared segment per communicator (control blocks + staging slots), with
// four algorithms over it. The selector (algo/collective.cc) picks one:
//   one-shot     every op, small: each rank stages its input in its slot,
//                readers take what they need straight from peers' slots;
//   single-copy  every op, any size: peers' user buffers are read with
//                process_vm_readv (CMA) when the kernel allows it;
//   two-shot     allreduce/reduce/reduce_scatter(v), large, no CMA needed:
//                pipelined chunks staged through the segment;
//   staged       allgather(v), large, and in-place alltoall: the same pipeline
//                for data movement (one-shot-v runs its steps for in-place
//                alltoallv beyond what it stages).
// Every rank leaves each op only when no peer can still read its buffers, so
// callers may reuse them at once. Every wait honours c.deadline() and notices
// dead peers. docs/design.md, "Shared-memory collectives", has the protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "coll/backend.h"
#include "coll/context.h"
#include "coll/desc.h"
#include "coll/shm/reach.h"

namespace xc::coll {

// Bytes one rank stages for d under one-shot (alltoall: n*count*esize, ...);
// SIZE_MAX when d cannot go through one-shot.
size_t shm_oneshot_bytes(const CollDesc &d, int nranks);

struct ShmState;  // state.h: the mapped segment and this rank's view of it

// The backend (coll/backend.h) of communicators whose members all live on
// this host.
class ShmColl final : public Backend {
 public:
  ShmColl();
  ~ShmColl() override;
  ShmColl(const ShmColl &) = delete;
  ShmColl &operator=(const ShmColl &) = delete;

  BackendId id() const override { return BackendId::kShm; }
  const char *name() const override { return "shm"; }
  // Collective over c: every member calls it at the same op. Maps the shared
  // segment on first use (idempotent, cheap afterwards) and agrees among all
  // ranks whether single-copy (process_vm_readv/writev) works between them.
  Status ensure(CollContext &c) override;
  bool ready() const;
  bool single_copy_ok() const;

  ShmState *state() const { return state_.get(); }

 private:
  std::unique_ptr<ShmState> state_;
};

// c's shared-memory backend; nullptr when not every member is on this host.
inline ShmColl *shm_of(const CollContext &c) { return static_cast<ShmColl *>(c.backend(BackendId::kShm)); }

// Every CollKind, when shm_oneshot_bytes(d, c.size()) <= kShmOneShotMaxBytes;
// gatherv, scatterv and alltoallv at any size (shm_oneshot_v).
Status shm_oneshot(CollContext &c, const CollDesc &d);
// gatherv, scatterv, alltoallv: each rank stages its own part when small,
// else publishes its buffer for single copy, or (in-place alltoallv) sends
// it through the staged pipeline's steps (oneshot_v.cc).
Status shm_oneshot_v(CollContext &c, const CollDesc &d);
// Every CollKind, any size; needs single_copy_ok() (XC_ERR_UNSUPPORTED otherwise).
Status shm_single_copy(CollContext &c, const CollDesc &d);
// Allreduce, reduce, reduce_scatter(v): staged and pipelined, no CMA needed.
// may_single_copy: single copy instead where every rank's buffers are on
// 2 MiB pages (selector.h: single_copy_on_huge_pages), here and in staged.
Status shm_twoshot(CollContext &c, const CollDesc &d, bool may_single_copy = false);
// Allgather(v), alltoall, broadcast: blocks staged and pipelined, outputs
// streamed (not in-place alltoall's, in cache already); no CMA needed.
Status shm_staged(CollContext &c, const CollDesc &d, bool may_single_copy = false);

}  // namespace xc::coll
