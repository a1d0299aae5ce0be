// What a collective algorithm needs: the ranks of its communicator, a private
// context id and tag (so its messages match nothing else), the engine to
// send through, and the op's deadline. Algorithms are functions of this and
// their buffers; they never know which transport carries a byte.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "coll/backend.h"
#include "p2p/engine.h"
#include "p2p/request.h"
#include "topo/topology.h"

namespace xc {
struct CollDesc;
}  // namespace xc

namespace xc::coll {

// One transfer of an exchange: bytes to or from a communicator rank.
struct Xfer {
  int peer;
  const void *buf;
  size_t bytes;
};

class CollContext {
 public:
  CollContext(P2pEngine &engine, std::shared_ptr<const std::vector<int>> members, int rank, uint64_t ctx, int tag,
              Deadline deadline)
      : engine_(engine), members_(std::move(members)), rank_(rank), ctx_(ctx), tag_(tag), deadline_(deadline),
        have_deadline_(true) {}
  // The same with the clock started lazily, at the first deadline() call: an
  // op that never waits past its spin phase never reads the clock. Every wait
  // that can block still gets a deadline timeout_ms after that call. members
  // is borrowed, not copied (no atomic reference count on the hot path: a
  // locked instruction would wait for the op's published stores): its owner
  // (the communicator) must outlive the context.
  CollContext(P2pEngine &engine, const std::shared_ptr<const std::vector<int>> *members, int rank, uint64_t ctx,
              int tag, uint64_t timeout_ms)
      : engine_(engine), borrowed_(members), rank_(rank), ctx_(ctx), tag_(tag), timeout_ms_(timeout_ms) {}

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(members()->size()); }
  // The op's sequence number on its communicator (also its tag).
  int seq() const { return tag_; }
  // The context id its messages carry (algo/hier runs phases of one op on
  // sub-contexts over subsets of the members with the same id and tag).
  uint64_t context_id() const { return ctx_; }

  // Blocking exchanges with communicator ranks. Errors name the peer.
  Status send(int peer, const void *buf, size_t bytes);
  Status recv(int peer, void *buf, size_t bytes);
  // The op must stop: its communicator was aborted, or a member found the
  // op mismatched and said so in a message (the op's shared-memory waits
  // see no message of their own).
  Status interrupted();
  Status sendrecv(int dest, const void *sendbuf, size_t sendbytes, int source, void *recvbuf, size_t recvbytes);
  // Everything at once: receives posted first, then sends, then all waited
  // for (pairwise and linear algorithms). Receive buffers are written.
  Status exchange(const Xfer *sends, size_t nsends, const Xfer *recvs, size_t nrecvs);

  // The communicator's backend of that kind (coll/backend.h), nullptr when
  // it has none; set up lazily by the first op that uses it.
  Backend *backend(BackendId id) const { return backends_ ? backends_->get(id) : nullptr; }
  // Borrowed: the communicator that owns them outlives its ops.
  void set_backends(const BackendSet *backends) { backends_ = backends; }
  // This host's GPU interconnect, as every rank of the job agreed on it
  // (the selector weighs it).
  topo::HostClass host_class() const { return host_class_; }
  void set_host_class(topo::HostClass cls) { host_class_ = cls; }
  P2pEngine &engine() const { return engine_; }
  // Fabric rank of communicator rank r.
  int fabric_rank(int r) const { return (*members())[static_cast<size_t>(r)]; }
  // The op's members as its requests carry them (the engine fails them when
  // any of these crashed, sends mismatch reports to all of them and names
  // peers by their index here). A sub-context (algo/hier), whose ranks
  // number a subset, keeps its communicator's: borrowed, it outlives the op.
  const std::shared_ptr<const std::vector<int>> *op_members() const {
    return op_members_ ? op_members_ : borrowed_ ? borrowed_ : &members_;
  }
  void set_op_members(const std::shared_ptr<const std::vector<int>> *all) { op_members_ = all; }
  const Deadline &deadline() const {
    if (!have_deadline_) {
      deadline_ = Deadline::AfterMs(timeout_ms_);
      have_deadline_ = true;
    }
    return deadline_;
  }
  // Restart the op's clock: a queued op (non-blocking, grouped) is made when
  // the user starts it but gets its timeout from when it begins to run.
  void set_deadline(Deadline deadline) {
    deadline_ = deadline;
    have_deadline_ = true;
  }
  // The op's signature (coll/desc.h: coll_signature), carried with its
  // messages and shm flags so ranks in different ops fail instead of mixing.
  uint32_t signature() const { return sig_; }
  // desc, when given, is borrowed (it outlives the op) and only read to say
  // what this rank called when the ranks disagree.
  void set_signature(uint32_t sig, const CollDesc *desc = nullptr) {
    sig_ = sig;
    desc_ = desc;
  }
  const CollDesc *desc() const { return desc_; }

 private:
  void prepare(Request &req, int peer, const void *buf, size_t bytes);
  Status finish(Request &req, const char *what, int peer);

  const std::shared_ptr<const std::vector<int>> &members() const { return borrowed_ ? *borrowed_ : members_; }

  P2pEngine &engine_;
  std::shared_ptr<const std::vector<int>> members_;  // owned, or empty when borrowed
  const std::shared_ptr<const std::vector<int>> *borrowed_ = nullptr;
  const std::shared_ptr<const std::vector<int>> *op_members_ = nullptr;  // set_op_members
  int rank_;
  uint64_t ctx_;
  int tag_;
  // Set at construction or computed at the first deadline() (one thread uses
  // a context at a time).
  mutable Deadline deadline_;
  mutable bool have_deadline_ = false;
  uint64_t timeout_ms_ = 0;
  const BackendSet *backends_ = nullptr;
  topo::HostClass host_class_ = topo::HostClass::kNoGpu;
  uint32_t sig_ = 0;
  const CollDesc *desc_ = nullptr;
};

}  // namespace xc::coll
