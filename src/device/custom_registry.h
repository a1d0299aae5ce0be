// Registered buffers (xc_buffer_register) read in place by the intra-node
// kernels. Registration is local, so a peer learns of one from a host
// message, never on an op's path: the first op that finds this rank's input
// in a registered buffer announces it (its IPC description) to every peer
// and stages its input as usual; each peer maps it the next time its
// stream's thread looks (after any of the communicator's kernel ops) and
// acknowledges; once every peer has, this rank's ops read that buffer in
// place. A kernel learns how to reach each rank's input from that rank's
// pad (kernels/custom.cuh), so no rank needs to know what the others chose,
// and a graph captured after that replays in place too.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "device/comm_view.h"
#include "device/ipc.h"
#include "gpu/device.h"
#include "p2p/request.h"

namespace xc::device {

class CustomRegistry {
 public:
  // Registrations of this rank a communicator publishes, at most.
  static constexpr int kSlots = 64;

  explicit CustomRegistry(const CommView &c) : c_(c) {}
  ~CustomRegistry();  // withdraws its messages; lets go of the peers' mappings
  CustomRegistry(const CustomRegistry &) = delete;
  CustomRegistry &operator=(const CustomRegistry &) = delete;

  // The table the kernels read: [slot * kCustomMaxRanks + rank] is the
  // address here of rank's published registration slot, 0 while unmapped.
  Status init();
  const uint64_t *table() const { return static_cast<const uint64_t *>(table_.dev); }

  // For this rank's input [p, p + bytes) at enqueue: its slot and the
  // offset in it when every peer has it mapped; -1 otherwise (announcing
  // its registration now when it is new).
  int in_place(const void *p, size_t bytes, uint64_t *offset);
  // On a stream's thread: map what peers announced, acknowledge it; take
  // in the acknowledgements of this rank's announcements.
  void serve();

 private:
  struct Announce {
    BufDesc start;  // the registration's start
    uint64_t bytes;
    int32_t slot;
    int32_t reserved;
  };
  struct Ack {
    int32_t slot;
    int32_t ok;
  };
  struct Mine {
    uintptr_t start;
    size_t bytes;
    uint64_t buffer_id;
    Announce announce;  // sent to every peer
    int acks = 0;
    bool refused = false;  // a peer could not map it: staged for good
  };
  void post_receives_locked();
  void reap_locked();

  CommView c_;
  std::mutex mu_;  // enqueueing threads and stream threads
  gpu::SharedFlags table_;
  std::deque<Mine> mine_;  // a deque: in-flight announcements point into it
  struct Outgoing {
    std::unique_ptr<Request> req;
    std::unique_ptr<Ack> ack;  // an acknowledgement's bytes (null for an announcement)
  };
  std::vector<Outgoing> sends_;  // in flight
  std::unique_ptr<Request> announce_in_, ack_in_;
  Announce announce_buf_{};
  Ack ack_buf_{};
  Reached reached_;  // the peers' registered buffers, mapped through the process's cache and held
};

}  // namespace xc::device
