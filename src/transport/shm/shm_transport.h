// Same-host transport over POSIX shared memory. Each rank owns one segment
// holding an inbound ring per local peer and its doorbell; senders write
// straight into the receiver's segment. Large messages are pipelined through
// the rings (two copies, overlapped) or, with XC_SHM_LARGE=cma, read by the
// receiver from the sender's memory with process_vm_readv.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "transport/shm/doorbell.h"
#include "transport/shm/ring.h"
#include "transport/shm/segment.h"
#include "transport/transport.h"

namespace xc::shm {

struct ShmOptions {
  std::string name_prefix;        // "/xcomm-<job>-<fabric>-": + fabric rank makes a segment name
  int my_rank = 0;                // fabric rank of this process
  int fabric_size = 1;
  std::vector<int> local_ranks;   // fabric ranks on this host, ascending; local index = position
  size_t ring_bytes = 256 << 10;  // power of two
  size_t eager_bytes = 8192;      // larger messages wait for their receiver
  size_t chunk_bytes = 65536;     // pieces of a large message through the ring
  bool single_copy = false;       // receivers read large messages themselves (CMA)
};

class ShmTransport final : public Transport {
 public:
  // Create this rank's segment. Then every local rank must have created its
  // own before connect() (a bootstrap barrier), and every one must have
  // connected before unlink_own() (another barrier): entry.cc runs these as
  // the phases of the transport table's set-up.
  static Status create(const ShmOptions &opts, std::unique_ptr<ShmTransport> *out);
  Status connect();
  void unlink_own() { own_.unlink(); }
  ~ShmTransport() override;

  size_t max_payload() const override { return max_payload_; }
  size_t eager_bytes() const override { return opts_.eager_bytes; }
  size_t chunk_bytes() const override { return opts_.chunk_bytes; }
  bool try_send(int peer, const FrameHeader &h, const void *payload, size_t len) override;
  size_t poll(FrameSink &sink) override;
  int event_fd() const override { return -1; }  // sleeps on its futex doorbell
  uint32_t prepare_wait() override;
  bool finish_wait(uint32_t token, int max_ms) override;
  void wake_self() override { own_bell_->ring(); }
  std::string route_summary(int /*peer*/) const override { return opts_.single_copy ? "shm (cma)" : "shm"; }
  bool peer_alive(int peer) override;
  bool peer_departed(int peer) override;
  void announce_departure(const std::vector<int> &crashed) override;
  std::vector<int> departure_blames(int peer) override;
  // Single copy: a buffer is described by its address, which the reader
  // reads with process_vm_readv; nothing to set up or release.
  bool single_copy() const override { return opts_.single_copy; }
  Status describe(int peer, const void *buf, size_t len, RemoteMem *out) override;
  Status read_remote(int peer, const RemoteMem &mem, void *dst, size_t len) override;

  bool reaches(int peer) const { return peer >= 0 && peer < static_cast<int>(local_index_.size()) && local_index_[peer] >= 0; }

 private:
  struct Peer {
    Segment segment;      // the peer's segment (ours for self)
    RingWriter writer;    // our ring inside the peer's segment
    RingReader reader;    // the peer's ring inside our segment
    Doorbell *bell = nullptr;
    const std::atomic<uint32_t> *departed = nullptr;
    const void *header = nullptr;  // its segment's header (what it says on leaving)
    pid_t pid = 0;
    int pidfd = -1;
    bool dead = false;
  };

  explicit ShmTransport(const ShmOptions &opts);
  size_t segment_bytes() const;
  RingControl *ring_control(void *segment_base, int sender_local) const;

  ShmOptions opts_;
  int my_local_ = 0;
  std::vector<int> local_index_;  // fabric rank → local index, -1 if remote
  Segment own_;
  Doorbell *own_bell_ = nullptr;
  std::atomic<uint32_t> *own_departed_ = nullptr;
  std::vector<Peer> peers_;       // by local index
  size_t max_payload_ = 0;
  size_t poll_start_ = 0;
};

}  // namespace xc::shm
