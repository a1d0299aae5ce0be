// The interface every transport implements: moving framed messages between
// this process and its peers in a fabric. The point-to-point engine
// (matching, rendezvous; p2p/) sits above it and never knows which transport
// carries a byte. Each transport is one folder here that exports one entry
// of the transport table (registry.h), which sets it up.
//
// What the engine relies on:
// - Frames to one peer arrive whole, once, and in the order they were sent:
//   a FrameHeader and at most max_payload() bytes. Frames a peer sent
//   before it died are still delivered.
// - try_send never blocks: when the frame does not fit now it answers
//   false and keeps nothing; the engine queues it and tries again.
// - The engine calls every method with its lock held (or from its only
//   thread under XC_THREAD_SERIALIZED), except wake_self(): any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"

namespace xc {

// What a transport carries in front of every payload: fixed size, 48 bytes,
// filled and read only by the point-to-point engine (p2p/frames.h says what
// each field means for each kind of frame). A transport only copies it.
struct FrameHeader {
  uint32_t kind;
  uint32_t flags;
  uint64_t ctx;      // communicator context id
  int32_t src;       // fabric rank of the sender
  int32_t tag;
  uint64_t bytes;
  uint64_t id;
  uint64_t arg;
};
static_assert(sizeof(FrameHeader) == 48, "FrameHeader is part of the shm wire format");

// Memory of one process described for a peer that reads it itself (single
// copy): made by the owner's transport (describe), carried to the reader in
// the RTS, used by the reader's transport (read_remote). What it holds is
// the transport's business (shm: an address; UCX: a packed remote key;
// CUDA IPC: a 64-byte handle); the engine only carries its bytes.
struct RemoteMem {
  static constexpr size_t kMaxBytes = 256;  // the most describe() may make
  std::vector<char> bytes;
};

// Called for each frame that arrives; payload is valid only during the call.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void on_frame(int peer, const FrameHeader &h, const void *payload, size_t len) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Largest payload one frame may carry.
  virtual size_t max_payload() const = 0;
  // Messages up to this size go eagerly (header and data in one frame; the
  // engine caps it at max_payload()); larger ones wait for their receiver.
  virtual size_t eager_bytes() const = 0;
  // The pieces a large message streams in (DATA frames; capped at max_payload()).
  virtual size_t chunk_bytes() const = 0;
  // Append a frame for peer if it fits now; false (and nothing sent) when full.
  virtual bool try_send(int peer, const FrameHeader &h, const void *payload, size_t len) = 0;
  // Deliver every frame that has arrived, in order per peer. Returns how many.
  virtual size_t poll(FrameSink &sink) = 0;

  // Sleeping until this transport has news (a frame, ring space, a peer
  // gone), one of two ways; p2p/sleeper.h combines the engine's transports.
  //
  // An fd transport answers event_fd() with a descriptor that turns
  // readable on news once arm() has answered true; arm() answers false when
  // news is already there, so the engine must not sleep (UCX:
  // ucp_worker_get_efd and ucp_worker_arm, whose BUSY is our false).
  //
  // A transport that answers -1 sleeps the engine itself, on a primitive
  // that cannot be an fd (shm: a futex doorbell in shared memory that peers
  // ring), in two steps so no wake-up is lost: prepare_wait announces the
  // sleep, the engine makes one more pass over its work, then finish_wait
  // sleeps at most max_ms (0: not at all), and not at all when news came
  // after prepare_wait; false when it slept all of max_ms. wake_self wakes
  // this process's sleepers from any thread. At most one transport of an
  // engine may sleep this way (any other must offer an fd), or the engine
  // polls instead of sleeping.
  virtual int event_fd() const = 0;
  virtual bool arm() { return true; }
  virtual uint32_t prepare_wait() { return 0; }
  virtual bool finish_wait(uint32_t /*token*/, int /*max_ms*/) { return true; }
  virtual void wake_self() {}

  // How frames reach peer, in a few words for xc-info and the logs ("shm
  // (cma)", "ucx tcp/eth0").
  virtual std::string route_summary(int peer) const = 0;

  // False once the peer's process is known to be gone.
  virtual bool peer_alive(int peer) = 0;
  // True when a gone peer had said goodbye (freed its last communicator)
  // rather than crashed.
  virtual bool peer_departed(int peer) = 0;
  // Tell the peers this process is leaving on purpose, and which fabric
  // ranks it knows crashed (what it may have given up an op for), so that a
  // peer that has not seen the death itself (the dead one is on another
  // host, reached by another transport or not yet reported) blames the dead
  // one, not the messenger.
  virtual void announce_departure(const std::vector<int> &crashed) = 0;
  // The ranks a departed peer said had crashed; empty for any other peer.
  virtual std::vector<int> departure_blames(int /*peer*/) { return {}; }

  // Single copy: a large message's receiver reads the sender's buffer
  // itself. The sender's transport describes the buffer (its RTS carries
  // the description), the receiver's reads with it once the sender says GO,
  // and the sender releases it when the send ends, however it ends (FIN;
  // cancelled before GO; the receiver died, discarded it as truncated, or
  // had it streamed). Such a transport carries RTS payloads of
  // RemoteMem::kMaxBytes. One without it keeps the defaults: large
  // messages stream.
  virtual bool single_copy() const { return false; }
  // describe(peer, buf, len, out): describe len bytes at buf for peer to
  // read (at most RemoteMem::kMaxBytes). An error: nothing was set up, and
  // the message streams.
  virtual Status describe(int /*peer*/, const void * /*buf*/, size_t /*len*/, RemoteMem * /*out*/) {
    return Error(XC_ERR_UNSUPPORTED, "this transport has no single copy");
  }
  // read_remote(peer, mem, dst, len): copy len bytes of the memory peer
  // described in mem into dst.
  virtual Status read_remote(int /*peer*/, const RemoteMem & /*mem*/, void * /*dst*/, size_t /*len*/) {
    return Error(XC_ERR_UNSUPPORTED, "this transport has no single copy");
  }
  // release(peer, mem): the send whose buffer mem describes has ended; what
  // describe set up for it may go.
  virtual void release(int /*peer*/, const RemoteMem & /*mem*/) {}
  // revoke_access(peer, mem): the sender gives up on a send (its deadline
  // passed) after telling peer to read it. True when, once this returns,
  // nothing from outside reads the buffer any more (the engine then ends
  // the send without waiting for FIN, which a silent link never brings);
  // false when the transport cannot promise it (shm: process_vm_readv needs
  // nothing from the sender), and the send waits for FIN or the reader's
  // death, which that transport can see.
  virtual bool revoke_access(int /*peer*/, const RemoteMem & /*mem*/) { return false; }
};

}  // namespace xc
