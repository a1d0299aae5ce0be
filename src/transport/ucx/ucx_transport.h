// The transport between hosts, over UCX (the layer Open MPI, MPICH and UCC
// build on). One UCP context and worker per process, one endpoint per
// remote peer, made once at start-up from the worker addresses every rank
// published in the bootstrap store; communicators never make more.
//
// Frames are UCX active messages: the 48-byte FrameHeader plus a sequence
// number travel as the AM header, the payload as its data. UCX may deliver
// large AMs by its own rendezvous, which can overtake smaller ones, so the
// receiver puts each peer's frames back in sequence order. The payload is
// copied on send (the engine may reuse its buffer as soon as try_send
// returns) and its bytes in flight per peer are bounded (try_send answers
// false past the bound, and the engine queues).
//
// Single copy, as a pull: the sender's RTS names a region of its buffer;
// the receiver asks for it (a PULL active message) and the sender answers
// with one AM whose data is the user's buffer itself, which UCX moves by its
// rendezvous protocol, pipelined, straight into the receiver's buffer (zero
// copy on both sides where the UCX transport offers it). Reading with
// ucp_get_nbx instead would need RMA, which UCX emulates over TCP with small
// active messages, several times slower. A sender serves only the regions
// it described for that peer, while the send lasts.
//
// A peer is gone when UCX reports an error on its endpoint (connection
// reset, UCX's keep-alive; UCP_ERR_HANDLING_MODE_PEER), or it said goodbye.
// A goodbye names the ranks its sender knew crashed (departure_blames).
// The engine sleeps on UCX's event fd (ucp_worker_get_efd / ucp_worker_arm).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "transport/transport.h"
#include "transport/ucx/ucx_api.h"

namespace xc::ucx {

struct UcxOptions {
  int my_rank = 0;
  int fabric_size = 1;
  std::vector<int> peers;          // fabric ranks this transport reaches, ascending
  // Larger messages wait for their receiver. Over TCP a waiting message pays
  // three more one-way trips (RTS, PULL, UCX's rendezvous) than an eager one
  // pays in copies up to about 256 KiB (2 hosts x 2 ranks, 1 MiB alltoall:
  // 1028 µs with 64 KiB, 746 with 256 KiB).
  size_t eager_bytes = 256 << 10;
  size_t chunk_bytes = 1 << 20;    // pieces of a streamed large message
  size_t inflight_bytes = 8 << 20; // payload bytes in flight per peer before try_send says "full"
  bool single_copy = true;         // receivers pull large messages (one rendezvous AM)
  uint64_t timeout_ms = 300000;    // bounds every wait inside the transport (reads, goodbyes)
};

class UcxTransport final : public Transport {
 public:
  // Make the context and worker and publish this worker's address in the
  // store. connect() then needs every peer to have published its own.
  static Status create(const UcxOptions &opts, bootstrap::StoreClient *store, std::unique_ptr<UcxTransport> *out);
  Status connect(bootstrap::StoreClient *store, Deadline deadline);
  ~UcxTransport() override;

  size_t max_payload() const override { return opts_.chunk_bytes; }
  size_t eager_bytes() const override { return opts_.eager_bytes; }
  size_t chunk_bytes() const override { return opts_.chunk_bytes; }
  bool try_send(int peer, const FrameHeader &h, const void *payload, size_t len) override;
  size_t poll(FrameSink &sink) override;
  int event_fd() const override { return efd_; }
  bool arm() override;
  std::string route_summary(int peer) const override;
  bool peer_alive(int peer) override;
  bool peer_departed(int peer) override;
  void announce_departure(const std::vector<int> &crashed) override;
  std::vector<int> departure_blames(int peer) override;
  bool single_copy() const override { return opts_.single_copy; }
  Status describe(int peer, const void *buf, size_t len, RemoteMem *out) override;
  Status read_remote(int peer, const RemoteMem &mem, void *dst, size_t len) override;
  void release(int peer, const RemoteMem &mem) override;
  bool revoke_access(int peer, const RemoteMem &mem) override;

  // The UCX transports (lanes) that carry frames to peer, in UCX's words
  // ("tcp/eth0"), once the endpoint has been wired up by a first message;
  // empty before.
  std::string lanes(int peer) const;

 private:
  struct WireHeader;
  struct SendBuf;
  struct PullHeader;
  struct PullReply;
  // Bytes that are never zeroed (a frame's payload is written whole).
  struct Bytes {
    std::unique_ptr<char[]> data;
    size_t size = 0, capacity = 0;
    void resize(size_t n) {
      if (n > capacity) {
        data.reset(new char[n]);
        capacity = n;
      }
      size = n;
    }
  };
  struct Frame {
    FrameHeader h;
    Bytes payload;
    bool complete = true;  // false while a rendezvous AM is still being received into payload
  };
  // A region of our memory a peer may pull (describe .. release).
  struct Region {
    int peer;
    const void *buf;
    size_t len;
    int replies = 0;  // answers to pulls that UCX may still be reading from buf
  };
  // A pull this process asked for and waits on in read_remote.
  struct Inbound {
    void *dst;
    size_t len;
    bool done = false;
    ucs_status_t status = UCS_OK;
  };
  struct PullAsk {  // a peer's PULL, served outside UCX's callbacks
    int peer;
    uint64_t region;
    uint64_t pull;
    uint64_t len;
  };
  struct Peer {
    ucp_ep_h ep = nullptr;
    bool dead = false;
    bool departed = false;
    std::vector<int> blames;          // the ranks its goodbye said had crashed
    uint64_t next_send_seq = 0;
    uint64_t next_recv_seq = 0;
    std::map<uint64_t, Frame> early;  // arrived ahead of next_recv_seq, or still receiving
    size_t inflight = 0;              // payload bytes of sends UCX has not finished
    bool announced = false;           // lanes logged
  };

  explicit UcxTransport(const UcxOptions &opts, const UcxApi &api) : opts_(opts), api_(api) {}
  Status start();
  static ucs_status_t on_frame_am(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                  const ucp_am_recv_param_t *param);
  static ucs_status_t on_pull_am(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                 const ucp_am_recv_param_t *param);
  static ucs_status_t on_pull_data_am(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                      const ucp_am_recv_param_t *param);
  static ucs_status_t on_goodbye_am(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                    const ucp_am_recv_param_t *param);
  static void on_sent(void *request, ucs_status_t status, void *user_data);
  static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status);
  void accept_frame(int peer, uint64_t seq, Frame frame);
  // Answer the peers' pulls that came in (from poll and from every wait of ours).
  void serve_pulls();
  void progress();
  void release_in_order(Peer &p, int peer);
  void mark_dead(int peer, ucs_status_t why);
  Peer *peer_of(int rank) {
    return rank >= 0 && rank < opts_.fabric_size && peers_[static_cast<size_t>(rank)].ep ? &peers_[static_cast<size_t>(rank)]
                                                                                           : nullptr;
  }
  // Progress the worker (and answer pulls) until done() or the deadline
  // passes or peer is gone; then the endpoint to peer is closed by force,
  // so nothing in flight to or from it touches the caller's memory later.
  template <typename Done>
  ucs_status_t wait_until(Done done, Deadline deadline, int peer);
  // Progress the worker until req is no longer in progress (true) or until
  // passes (false); req is not freed.
  bool drain(void *req, Deadline until);
  // Drop the endpoint to peer at once: what is in flight on it ends
  // (cancelled) and the peer counts as gone. Bounded by a second.
  void close_by_force(int peer);
  void log_lanes_once(int peer);

  UcxOptions opts_;
  const UcxApi &api_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int efd_ = -1;
  std::vector<Peer> peers_;  // by fabric rank; ep == nullptr for ranks not ours
  std::deque<std::pair<int, Frame>> ready_;  // in order per peer, for the next poll
  std::vector<SendBuf *> spare_;             // finished send buffers, reused
  std::vector<Bytes> spare_bytes_;           // delivered frames' payloads, reused
  std::map<uint64_t, Region> regions_;       // by id
  uint64_t next_region_ = 1;
  std::map<uint64_t, Inbound *> inbound_;    // by pull id
  std::vector<std::unique_ptr<Inbound>> abandoned_;  // reads given up on: a late callback may still write them
  uint64_t next_pull_ = 1;
  std::vector<PullAsk> asks_;
  int32_t goodbye_ = 0;                      // the goodbye AM's header: our rank
  std::vector<int32_t> goodbye_crashed_;     // its data: the ranks we know crashed
};

}  // namespace xc::ucx
