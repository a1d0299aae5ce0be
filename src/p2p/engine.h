// Point-to-point messaging over the transports: MPI-style matching (context,
// source, tag, in arrival order), eager sends for small messages and a
// rendezvous (RTS → CTS → pipelined DATA, or single-copy + FIN) for large
// ones. Everything else in xcomm — communicator splits, collectives — is
// built on this engine. One engine per fabric; it never makes connections.
//
// One class, one file per job: engine.cc (construction, routes, posting),
// protocol.cc (frames in and out), progress.cc (polling and waiting; the
// sleeping itself is sleeper.h's), failure.cc (dead peers, cancel, abort,
// admission), mismatch.cc (collective ops that ranks disagree on),
// revoke.cc (communicators revoked by any member).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "p2p/frames.h"
#include "p2p/request.h"
#include "p2p/sleeper.h"
#include "transport/transport.h"

namespace xc {

// Names the op behind a signature ("allreduce float32 sum ...") in the
// messages of mismatched ops. Signatures are the collective layer's
// (coll/desc.h); the engine never reads one, it only compares them
// (p2p/frames.h). nullptr: shown in hex.
using SignatureNamer = std::string (*)(uint32_t sig);
// What sets two signatures apart, in words; nullptr: not said.
using SignatureDiffer = std::string (*)(uint32_t mine, uint32_t theirs);

struct EngineOptions {
  int my_rank = 0;
  int fabric_size = 1;
  int spin = 2000;         // polls before sleeping
  int max_sleep_ms = 50;   // a sleeping rank still checks deadlines and peers this often
  bool thread_safe = true; // false: XC_THREAD_SERIALIZED, no lock
  SignatureNamer name_signature = nullptr;
  SignatureDiffer describe_difference = nullptr;
};

class P2pEngine final : private FrameSink {
 public:
  explicit P2pEngine(const EngineOptions &opts);
  ~P2pEngine() override;

  // route[r] carries frames to fabric rank r (nullptr: no transport reaches
  // it). Once, before anything else.
  Status set_routes(std::vector<Transport *> route);

  // Post a send or receive. On failure to post, req->done with the error.
  void post_send(Request *req);
  void post_recv(Request *req);

  // Drive progress until req is done or the deadline passes (XC_ERR_TIMEOUT;
  // the request is cancelled then). Returns the request's status.
  Status wait(Request *req, Deadline deadline);
  // One progress pass, for a thread that waits on something else (an NCCL
  // call polled under its deadline): messages this rank queued still go out.
  void progress();
  // Wait for all of them; returns the first error (every one is finished or
  // cancelled on return).
  Status wait_all(Request *const *reqs, size_t n, Deadline deadline);
  // One progress pass; true when req is done.
  bool test(Request *req);

  // Withdraw a request that has not completed (after a timeout or an abort).
  void cancel(Request *req, const Status &why);
  // Fail every pending request of these contexts (communicator freed or aborted).
  void cancel_context(uint64_t ctx, const Status &why);
  // Cancel, and fail at once everything posted on ctx from now on.
  void abort_context(uint64_t ctx, const Status &why);

  // Revoke the communicator whose contexts are ctx .. ctx + 3 (p2p/revoke.cc):
  // fail its pending and later requests with XC_ERR_REVOKED here and tell
  // every live member (fabric ranks), each of which tells the others once.
  // origin: the fabric rank that called xc_comm_revoke. Idempotent.
  void revoke(uint64_t ctx, const std::vector<int> &members, int origin);
  // Whether ctx's communicator was revoked (here or by news); then *why
  // (may be nullptr) is the error its ops get. Cheap while nothing was revoked.
  bool revoked(uint64_t ctx, Status *why = nullptr);
  bool any_revoked() const { return revoked_count_.load(std::memory_order_relaxed) != 0; }
  // Drop the unexpected messages of ctx with a tag in [0, below): a
  // protocol's leftovers (agreements pass their decision on to everyone).
  void discard_unexpected(uint64_t ctx, int below);

  // First dead rank among members, or -1.
  int first_failed(const std::vector<int> &members);
  // The indices into members of every dead one (crashed or left), in
  // order; the transports are asked first.
  std::vector<int> failed_among(const std::vector<int> &members);
  // Whether the collective op of `op` (ctx, tag, members, sig; never
  // posted) must stop: its context was aborted, or some member reported it
  // mismatched, or a message of it arrived from a member in another op
  // (reported to every member here). That error, else OK. For waits outside
  // requests (shared memory).
  Status op_interrupted(const Request &op);

  // Tell peers this process leaves on purpose (so they do not see a crash),
  // and which ranks it knows crashed (so they blame those, not it).
  void announce_departure();

  int my_rank() const { return opts_.my_rank; }
  // False under XC_THREAD_SERIALIZED: only one thread may use the engine.
  bool thread_safe() const { return opts_.thread_safe; }
  // How this engine's sleeps in wait() have ended (all zero without
  // transports): shows that wake-ups come by their own path.
  SleepCounts sleep_counts() const { return sleeper_ ? sleeper_->counts() : SleepCounts(); }
  // True when some transport carries messages to rank (always for ourselves).
  bool reaches(int rank) const {
    return rank == opts_.my_rank || (rank >= 0 && rank < opts_.fabric_size && route_[static_cast<size_t>(rank)]);
  }

 private:
  struct Unexpected {
    uint64_t ctx;
    int src;
    int tag;
    size_t bytes;
    bool rts;
    uint64_t send_id;
    uint32_t sig;  // the collective op's signature, 0 for none
    std::vector<char> data;  // eager: the message; RTS: the sender's buffer described, or nothing
  };
  // A collective op (ctx, tag) that ranks were found to disagree on: every
  // request of it fails, now and when posted later. reporter -1: found here.
  struct Poisoned {
    uint64_t ctx;
    int tag;
    int reporter;
    uint32_t reporter_sig;
    int offender;
    uint32_t offender_sig;
  };
  struct Outgoing {  // a frame that did not fit yet; sent in order
    FrameHeader h;
    const void *payload;
    size_t len;
    Request *completes;  // eager send completed once written, or nullptr
    Request *owner;      // the send this frame announces (RTS): withdrawn with it
  };
  struct PeerState {
    std::deque<Outgoing> outbox;
    std::deque<Request *> streaming;  // sends cleared to stream DATA, in CTS order
  };
  // Where an unfinished request can wait, for pending_requests_locked.
  enum Waits : unsigned {
    kPosted = 1,          // posted_: receives not matched yet
    kRecvsStreaming = 2,  // recvs_streaming_: receives matched to an RTS (CTS sent)
    kSendsWaiting = 4,    // sends_waiting_: rendezvous sends before CTS, granted ones until FIN
    kOutboxes = 8,        // eager sends queued behind a full transport
    kSendsStreaming = 16, // sends cleared to stream DATA
    kAnywhere = 31,
  };
  // Decides for one request, given the peer it waits on at that place
  // (receives matched: their source; the rest: their peer, -1 for any).
  using RequestFilter = std::function<bool(const Request *req, int peer)>;

  // engine.cc: construction, routes, posting, completion.
  std::unique_lock<std::mutex> lock();
  Status post_check(Request *req);
  bool matches(const Request *req, uint64_t ctx, int src, int tag) const;
  void complete(Request *req, Status st);

  // protocol.cc: frames in and out.
  void on_frame(int peer, const FrameHeader &h, const void *payload, size_t len) override;
  void deliver_eager(Request *req, int src, int tag, const void *data, size_t bytes);
  void start_large_recv(Request *req, int src, int tag, size_t bytes, uint64_t send_id, RemoteMem send_mem);
  void send_frame(int peer, const FrameHeader &h, const void *payload, size_t len, Request *completes,
                  Request *owner = nullptr);
  void send_control(int peer, uint32_t kind, uint64_t id, uint64_t arg, uint32_t flags = 0);
  bool flush_peer(int peer, PeerState &ps);
  void mark_busy(int peer);

  // progress.cc: polling the transports, waiting.
  bool progress_locked();
  bool anything_pending_locked() const;
  // Wake threads asleep in wait() (their requests were completed by another thread).
  void wake_waiters_locked();

  // failure.cc: dead peers, cancelled requests, refused posts.
  void check_peers_locked(bool even_if_idle = false);
  void fail_peer_locked(int rank);
  int first_crashed_locked(const std::vector<int> &members);
  // Refuse a request whose context was aborted, whose collective op was
  // found mismatched, or a collective's whose member crashed.
  Status admission_check_locked(const Request *req);
  // The error a request of ctx gets once ctx was aborted; OK when it was not.
  Status aborted_status_locked(uint64_t ctx) const;
  void cancel_locked(Request *req, const Status &why);
  void cancel_context_locked(uint64_t ctx, const Status &why);
  // revoke.cc: the news arrived (from `from`, -1: here), with the members.
  void revoke_locked(uint64_t ctx, std::vector<int32_t> members, int origin, int from);
  // Take req out of wherever it waits, tell the peer if part of it went
  // (NACK), and complete it with why. Unlike cancel_locked, also ends a
  // granted send (its reader died) and one cancelled earlier.
  void withdraw_locked(Request *req, const Status &why);
  // Every unfinished request waiting in one of the places `where` that
  // `take` accepts, each once.
  std::vector<Request *> pending_requests_locked(unsigned where, const RequestFilter &take);
  Status peer_gone_error(const Request *req, int rank);

  // mismatch.cc: collective ops that ranks disagree on.
  // A receive met a message of its op (ctx, tag) with another signature.
  // Fail the whole op here and tell every other member.
  void mismatch_locked(Request *req, int src, uint32_t their_sig);
  // The same for op (a receive, or an op that waits outside requests); its
  // error. Completes nothing.
  Status report_mismatch_locked(const Request &op, int src, uint32_t their_sig);
  void poison_locked(const Poisoned &p);
  // Tell rank `to` of p (MISMATCH).
  void send_mismatch(int to, const Poisoned &p);
  // The error of a request of an op found mismatched; OK for any other.
  Status poisoned_status_locked(const Request &req);
  Status poisoned_error(const Poisoned &p, const Request *req);
  std::string name_signature(uint32_t sig) const;
  // A posted receive of the same op as the arrival (ctx, tag) whose signature differs, or nullptr.
  Request *conflicting_recv_locked(uint64_t ctx, int tag, uint32_t sig);

  EngineOptions opts_;
  std::mutex mu_;
  std::condition_variable done_cv_;  // only used when no transport exists (a world of one)
  std::unique_ptr<Sleeper> sleeper_;  // over transports_; nullptr without any
  std::vector<Transport *> route_;
  std::vector<Transport *> transports_;  // distinct, for polling
  std::vector<PeerState> peers_;
  std::vector<char> dead_;
  std::list<Request *> posted_;       // receives in post order
  std::list<Unexpected> unexpected_;  // arrivals in order
  std::unordered_map<uint64_t, Request *> sends_waiting_;  // by our id
  std::unordered_map<uint64_t, Request *> recvs_streaming_;  // by our id
  std::vector<std::pair<uint64_t, Status>> aborted_;  // contexts whose later requests fail at once
  // Revoked communicators by first context: the members the news goes to
  // (the REVOKE frames' payload; node-based map, so it stays put while
  // frames wait in outboxes) and the error.
  struct Revoked {
    std::vector<int32_t> members;
    Status why;
  };
  std::unordered_map<uint64_t, Revoked> revoked_;
  std::atomic<int> revoked_count_{0};
  std::deque<Poisoned> poisoned_;  // the latest collective ops found mismatched
  std::vector<int> busy_peers_;  // peers with a non-empty outbox or stream
  std::vector<char> busy_flag_;
  uint64_t next_id_ = 1;
  Deadline::Clock::time_point next_peer_check_;
  bool in_poll_ = false;
};

}  // namespace xc
