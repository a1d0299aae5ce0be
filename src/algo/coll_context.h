// What a collective algorithm needs: the ranks of its communicator, a private
// context id and tag (so its messages match nothing else), the engine to
// send through, and the op's deadline. Algorithms are functions of this and
// their buffers; they never know which transport carries a byte.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/deadline.h"
#include "core/p2p_engine.h"
#include "core/request.h"
#include "core/status.h"

namespace xc::algo {

class ShmColl;  // algo/shm_coll.h: the communicator's shared-memory staging (same host)

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
      : engine_(engine), members_(std::move(members)), rank_(rank), ctx_(ctx), tag_(tag), deadline_(deadline) {}

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(members_->size()); }
  // The op's sequence number on its communicator (also its tag).
  int seq() const { return tag_; }

  // Blocking exchanges with communicator ranks. Errors name the peer.
  Status send(int peer, const void *buf, size_t bytes);
  Status recv(int peer, void *buf, size_t bytes);
  Status sendrecv(int dest, const void *sendbuf, size_t sendbytes, int source, void *recvbuf, size_t recvbytes);
  // Everything at once: receives posted first, then sends, then all waited
  // for (pairwise and linear algorithms). Receive buffers are written.
  Status exchange(const Xfer *sends, size_t nsends, const Xfer *recvs, size_t nrecvs);

  // The communicator's shared-memory staging when every member is on this
  // host (nullptr otherwise); set up lazily by the first op that uses it.
  ShmColl *shm() const { return shm_; }
  void set_shm(ShmColl *shm) { shm_ = shm; }
  P2pEngine &engine() const { return engine_; }
  // Fabric rank of communicator rank r.
  int fabric_rank(int r) const { return (*members_)[static_cast<size_t>(r)]; }
  const Deadline &deadline() const { return deadline_; }
  // Restart the op's clock: a queued op (non-blocking, grouped) is made when
  // the user starts it but gets its timeout from when it begins to run.
  void set_deadline(Deadline deadline) { deadline_ = deadline; }
  // The op's signature (core/coll_desc.h: coll_signature), carried with its
  // messages and shm flags so ranks in different ops fail instead of mixing.
  uint32_t signature() const { return sig_; }
  void set_signature(uint32_t sig) { sig_ = sig; }

 private:
  void prepare(Request &req, int peer, const void *buf, size_t bytes);
  Status finish(Request &req, const char *what, int peer);

  P2pEngine &engine_;
  std::shared_ptr<const std::vector<int>> members_;
  int rank_;
  uint64_t ctx_;
  int tag_;
  Deadline deadline_;
  ShmColl *shm_ = nullptr;
  uint32_t sig_ = 0;
};

}  // namespace xc::algo
