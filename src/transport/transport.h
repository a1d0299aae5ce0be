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
  // Sleeping in two steps so no wake-up is lost: announce the sleep, make
  // one more pass over the work (poll, retry sends), then sleep at most
  // max_ms (0: do not sleep) until a frame arrives or ring space frees up.
  virtual uint32_t prepare_wait() = 0;
  virtual void finish_wait(uint32_t token, int max_ms) = 0;
  // Wake this process's own sleepers (after an abort cancelled their work).
  virtual void wake_self() = 0;
  // False once the peer's process is known to be gone.
  virtual bool peer_alive(int peer) = 0;
  // True when a gone peer had said goodbye (freed its last communicator)
  // rather than crashed.
  virtual bool peer_departed(int peer) = 0;
  // Tell the peers this process is leaving on purpose.
  virtual void announce_departure() = 0;
  // Copy len bytes at the peer's address remote into dst (single-copy path).
  // XC_ERR_UNSUPPORTED when the transport or the kernel cannot.
  virtual Status read_remote(int peer, uint64_t remote, void *dst, size_t len) = 0;
  virtual bool has_read_remote() const = 0;
};

}  // namespace xc
