// An in-process Transport for unit tests: N "ranks" are N P2pEngine objects
// in one process. Every rank has its own FakeTransport; they share a FakeHub
// that holds, per ordered pair (from, to), a bounded FIFO of frames (header +
// a copy of the payload). The test controls the hub: FIFO capacity in frames
// (so try_send sees "ring full" back-pressure), the largest payload (so large
// messages are chunked), the eager limit, whether the single-copy path
// (describe, read_remote, release) exists, and which ranks are dead or
// departed. Frames a rank queued before it was killed are still delivered,
// as with a real shared-memory ring.
//
// Engines may be driven from one thread (pump them in turn with test()) or
// each from its own std::thread: the hub is guarded by one mutex. A
// FakeTransport sleeps the engine one of the two ways a transport may
// (transport.h): by itself, like shm's futex (prepare_wait/finish_wait on a
// condition variable with a per-rank "doorbell" counter, so no wake-up is
// lost), or, made with Wakeup::kEventFd, through an eventfd the hub writes
// on every event for that rank, like UCX's.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "p2p/engine.h"
#include "transport/transport.h"

namespace xc_fake {

struct FakeHubOptions {
  int ranks = 2;
  size_t capacity_frames = 64;  // per ordered pair; try_send fails when full
  size_t max_payload = 4096;
  size_t eager_bytes = 1024;    // larger messages go by rendezvous
  size_t chunk_bytes = 65536;   // DATA pieces (capped at max_payload by the engine)
  bool read_remote = false;     // offer the single-copy path
  bool revocable = false;       // revoke_access promises the reads are over (UCX), else refuses (shm)
};

class FakeHub {
 public:
  struct Frame {
    xc::FrameHeader h;
    std::vector<char> payload;
  };

  explicit FakeHub(const FakeHubOptions &o)
      : opts_(o),
        q_(static_cast<size_t>(o.ranks) * static_cast<size_t>(o.ranks)),
        bell_(static_cast<size_t>(o.ranks), 0),
        event_fd_(static_cast<size_t>(o.ranks), -1),
        dead_(static_cast<size_t>(o.ranks), 0),
        departed_(static_cast<size_t>(o.ranks), 0) {}

  const FakeHubOptions &options() const { return opts_; }
  int ranks() const { return opts_.ranks; }

  // ---- test controls ----
  // The rank's process "crashed": peer_alive turns false for everyone. Frames
  // it already queued stay and are still delivered.
  void kill(int r) {
    std::lock_guard<std::mutex> g(mu_);
    dead_[idx(r)] = 1;
    ring_all_locked();
  }
  // The rank said goodbye (announce_departure), then its process went away.
  void depart(int r) {
    std::lock_guard<std::mutex> g(mu_);
    departed_[idx(r)] = 1;
    dead_[idx(r)] = 1;
    ring_all_locked();
  }
  bool dead(int r) {
    std::lock_guard<std::mutex> g(mu_);
    return dead_[idx(r)] != 0;
  }
  // Rank r dies right after it sends a frame that pred accepts (that frame
  // goes out, nothing after it does): a crash at a chosen point of a
  // protocol. pred runs under the hub's lock and must only look.
  void kill_after_send(int r, std::function<bool(int to, const xc::FrameHeader &h)> pred) {
    std::lock_guard<std::mutex> g(mu_);
    kill_after_.resize(static_cast<size_t>(opts_.ranks));
    kill_after_[idx(r)] = std::move(pred);
  }
  // Called (outside the hub lock) at the start of every peer_alive(peer)
  // query made by rank asker, before the answer is read: lets a test make a
  // rank send its last frames and die right between an engine's last poll
  // and its liveness check.
  void set_before_peer_alive(std::function<void(int asker, int peer)> f) {
    std::lock_guard<std::mutex> g(mu_);
    before_peer_alive_ = std::move(f);
  }
  // Make read_remote fail with this status (ok(): succeed again).
  void set_read_remote_result(xc::Status st) {
    std::lock_guard<std::mutex> g(mu_);
    read_remote_result_ = std::move(st);
  }
  // Make describe fail with this status (ok(): succeed again).
  void set_describe_result(xc::Status st) {
    std::lock_guard<std::mutex> g(mu_);
    describe_result_ = std::move(st);
  }

  // ---- observations ----
  size_t queued(int from, int to) {
    std::lock_guard<std::mutex> g(mu_);
    return q_[pair(from, to)].size();
  }
  // Frames accepted by try_send, by FrameKind (index 0: unknown kinds).
  uint64_t frames_of_kind(uint32_t kind) {
    std::lock_guard<std::mutex> g(mu_);
    return kind < kKinds ? sent_by_kind_[kind] : 0;
  }
  uint64_t refused_full() { return refused_full_.load(); }
  uint64_t read_remote_calls() { return read_remote_calls_.load(); }
  uint64_t revoke_calls() { return revoke_calls_.load(); }
  uint64_t read_remote_bytes() { return read_remote_bytes_.load(); }
  uint64_t sent_to_dead() { return sent_to_dead_.load(); }
  // Single-copy descriptions made (describe) and not yet released.
  uint64_t described() { return described_.load(); }
  size_t unreleased() {
    std::lock_guard<std::mutex> g(mu_);
    size_t n = 0;
    for (const Description &d : descriptions_) n += d.live ? 1 : 0;
    return n;
  }
  // Contract breaches by an engine: an oversize payload, a header whose src
  // is not the sender, a frame sent to itself, a description read after its
  // release, by another peer or beyond its end, or released twice. Tests
  // expect none.
  uint64_t violations() { return violations_.load(); }
  std::string first_violation() {
    std::lock_guard<std::mutex> g(mu_);
    return first_violation_;
  }

 private:
  friend class FakeTransport;
  static constexpr uint32_t kKinds = 10;
  // What describe() made: the index into descriptions_ rides in the bytes.
  struct Description {
    int owner;
    uint64_t addr;
    size_t len;
    bool live;
  };

  size_t idx(int r) const { return static_cast<size_t>(r); }
  size_t pair(int from, int to) const { return idx(from) * idx(opts_.ranks) + idx(to); }
  void ring_locked(int r) {
    ++bell_[idx(r)];
    if (event_fd_[idx(r)] >= 0) {
      uint64_t one = 1;
      (void)!write(event_fd_[idx(r)], &one, sizeof one);
    }
  }
  void ring_all_locked() {
    for (int r = 0; r < opts_.ranks; ++r) ring_locked(r);
    cv_.notify_all();
  }
  void violation_locked(const std::string &what) {
    if (violations_.fetch_add(1) == 0) first_violation_ = what;
  }

  FakeHubOptions opts_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::deque<Frame>> q_;  // [from * ranks + to]
  std::vector<uint32_t> bell_;        // per receiver: bumped on every event that may unblock it
  std::vector<int> event_fd_;         // per receiver with Wakeup::kEventFd: written with every bump
  std::vector<char> dead_;
  std::vector<char> departed_;
  xc::Status read_remote_result_;
  xc::Status describe_result_;
  std::function<void(int, int)> before_peer_alive_;
  std::vector<std::function<bool(int, const xc::FrameHeader &)>> kill_after_;  // by rank
  std::function<bool(int, const xc::FrameHeader &)> no_kill_;
  uint64_t sent_by_kind_[kKinds] = {};
  std::atomic<uint64_t> refused_full_{0};
  std::atomic<uint64_t> read_remote_calls_{0};
  std::atomic<uint64_t> revoke_calls_{0};
  std::atomic<uint64_t> read_remote_bytes_{0};
  std::atomic<uint64_t> sent_to_dead_{0};
  std::atomic<uint64_t> described_{0};
  std::vector<Description> descriptions_;
  std::atomic<uint64_t> violations_{0};
  std::string first_violation_;
};

// How a FakeTransport lets its engine sleep (transport.h).
enum class Wakeup { kSelf, kEventFd };

class FakeTransport final : public xc::Transport {
 public:
  FakeTransport(FakeHub &hub, int me, Wakeup wakeup = Wakeup::kSelf) : hub_(hub), me_(me) {
    if (wakeup == Wakeup::kSelf) return;
    event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    std::lock_guard<std::mutex> g(hub_.mu_);
    hub_.event_fd_[hub_.idx(me_)] = event_fd_;
  }
  ~FakeTransport() override {
    if (event_fd_ < 0) return;
    {
      std::lock_guard<std::mutex> g(hub_.mu_);
      hub_.event_fd_[hub_.idx(me_)] = -1;
    }
    close(event_fd_);
  }

  size_t max_payload() const override { return hub_.opts_.max_payload; }
  size_t eager_bytes() const override { return hub_.opts_.eager_bytes; }
  size_t chunk_bytes() const override { return hub_.opts_.chunk_bytes; }

  bool try_send(int peer, const xc::FrameHeader &h, const void *payload, size_t len) override {
    std::lock_guard<std::mutex> g(hub_.mu_);
    if (peer < 0 || peer >= hub_.opts_.ranks) {
      hub_.violation_locked("try_send to rank " + std::to_string(peer) + " out of range");
      return true;
    }
    if (len > hub_.opts_.max_payload)
      hub_.violation_locked("payload of " + std::to_string(len) + " bytes exceeds max_payload " +
                            std::to_string(hub_.opts_.max_payload));
    if (h.src != me_)
      hub_.violation_locked("frame from rank " + std::to_string(me_) + " carries src " + std::to_string(h.src));
    if (peer == me_) hub_.violation_locked("rank " + std::to_string(me_) + " sent a frame to itself");
    if (hub_.dead_[hub_.idx(me_)]) return true;  // a dead process sends nothing
    // A dead receiver's FIFO is queued into as usual but nobody drains it
    // any more, so it fills up and stays full, like a real ring.
    auto &q = hub_.q_[hub_.pair(me_, peer)];
    if (q.size() >= hub_.opts_.capacity_frames) {
      hub_.refused_full_.fetch_add(1);
      return false;
    }
    FakeHub::Frame f;
    f.h = h;
    if (len) f.payload.assign(static_cast<const char *>(payload), static_cast<const char *>(payload) + len);
    q.push_back(std::move(f));
    if (hub_.dead_[hub_.idx(peer)]) hub_.sent_to_dead_.fetch_add(1);
    ++hub_.sent_by_kind_[h.kind < FakeHub::kKinds ? h.kind : 0];
    auto &dies = hub_.kill_after_.size() > hub_.idx(me_) ? hub_.kill_after_[hub_.idx(me_)] : hub_.no_kill_;
    if (dies && dies(peer, h)) {
      hub_.dead_[hub_.idx(me_)] = 1;
      dies = nullptr;
      hub_.ring_all_locked();
    }
    hub_.ring_locked(peer);
    hub_.cv_.notify_all();
    return true;
  }

  size_t poll(xc::FrameSink &sink) override {
    inbox_.clear();
    {
      std::lock_guard<std::mutex> g(hub_.mu_);
      int n = hub_.opts_.ranks;
      bool freed = false;
      for (int k = 0; k < n; ++k) {
        int src = (poll_start_ + k) % n;  // rotate so no sender starves the others
        auto &q = hub_.q_[hub_.pair(src, me_)];
        if (q.empty()) continue;
        while (!q.empty()) {
          inbox_.emplace_back(src, std::move(q.front()));
          q.pop_front();
        }
        hub_.ring_locked(src);  // the sender may be asleep waiting for space
        freed = true;
      }
      poll_start_ = (poll_start_ + 1) % n;
      if (freed) hub_.cv_.notify_all();
    }
    for (auto &e : inbox_) sink.on_frame(e.first, e.second.h, e.second.payload.data(), e.second.payload.size());
    size_t got = inbox_.size();
    inbox_.clear();
    return got;
  }

  int event_fd() const override { return event_fd_; }

  // Empties the eventfd, then says whether frames wait already: whatever
  // arrives later writes the eventfd again.
  bool arm() override {
    uint64_t count;
    (void)!read(event_fd_, &count, sizeof count);
    std::lock_guard<std::mutex> g(hub_.mu_);
    return !inbound_locked();
  }

  uint32_t prepare_wait() override {
    std::lock_guard<std::mutex> g(hub_.mu_);
    return hub_.bell_[hub_.idx(me_)];
  }

  bool finish_wait(uint32_t token, int max_ms) override {
    std::unique_lock<std::mutex> g(hub_.mu_);
    if (inbound_locked() || max_ms <= 0) return true;
    return hub_.cv_.wait_for(g, std::chrono::milliseconds(max_ms), [&] { return hub_.bell_[hub_.idx(me_)] != token; });
  }

  void wake_self() override {
    std::lock_guard<std::mutex> g(hub_.mu_);
    hub_.ring_locked(me_);
    hub_.cv_.notify_all();
  }

  std::string route_summary(int /*peer*/) const override { return "fake"; }
  bool peer_alive(int peer) override {
    std::function<void(int, int)> hook;
    {
      std::lock_guard<std::mutex> g(hub_.mu_);
      hook = hub_.before_peer_alive_;
    }
    if (hook) hook(me_, peer);
    std::lock_guard<std::mutex> g(hub_.mu_);
    return !hub_.dead_[hub_.idx(peer)];
  }

  bool peer_departed(int peer) override {
    std::lock_guard<std::mutex> g(hub_.mu_);
    return hub_.departed_[hub_.idx(peer)] != 0;
  }

  void announce_departure(const std::vector<int> & /*crashed*/) override {
    std::lock_guard<std::mutex> g(hub_.mu_);
    hub_.departed_[hub_.idx(me_)] = 1;
  }

  bool single_copy() const override { return hub_.opts_.read_remote; }

  // A description longer than an address (kDescriptionBytes), as a UCX
  // remote key would be: the engine must carry it whole.
  xc::Status describe(int peer, const void *buf, size_t len, xc::RemoteMem *out) override {
    std::lock_guard<std::mutex> g(hub_.mu_);
    if (peer == me_) hub_.violation_locked("rank " + std::to_string(me_) + " described memory for itself");
    if (!hub_.describe_result_.ok()) return hub_.describe_result_;
    uint64_t index = hub_.descriptions_.size();
    hub_.descriptions_.push_back(FakeHub::Description{me_, reinterpret_cast<uintptr_t>(buf), len, true});
    hub_.described_.fetch_add(1);
    out->bytes.assign(kDescriptionBytes, '\x5d');
    memcpy(out->bytes.data(), &index, sizeof index);
    return xc::Status::Ok();
  }

  xc::Status read_remote(int peer, const xc::RemoteMem &mem, void *dst, size_t len) override {
    if (!hub_.opts_.read_remote) return xc::Error(XC_ERR_UNSUPPORTED, "the fake transport has no single-copy path");
    FakeHub::Description d;
    {
      std::lock_guard<std::mutex> g(hub_.mu_);
      if (!hub_.read_remote_result_.ok()) return hub_.read_remote_result_;
      if (hub_.dead_[hub_.idx(peer)]) return xc::Error(XC_ERR_PEER_FAILED, "the sender's process is gone");
      const FakeHub::Description *found = description_locked(mem);
      if (!found || !found->live || found->owner != peer || len > found->len) {
        hub_.violation_locked("rank " + std::to_string(me_) + " read " + std::to_string(len) + " bytes of rank " +
                              std::to_string(peer) + "'s memory through a description that is not live, not that " +
                              "rank's, or shorter");
        return xc::Error(XC_ERR_INTERNAL, "bad description");
      }
      d = *found;
    }
    hub_.read_remote_calls_.fetch_add(1);
    hub_.read_remote_bytes_.fetch_add(len);
    // All ranks share one address space.
    if (len) memcpy(dst, reinterpret_cast<const void *>(static_cast<uintptr_t>(d.addr)), len);
    return xc::Status::Ok();
  }

  bool revoke_access(int /*peer*/, const xc::RemoteMem & /*mem*/) override {
    hub_.revoke_calls_.fetch_add(1);
    return hub_.opts_.revocable;
  }

  void release(int peer, const xc::RemoteMem &mem) override {
    std::lock_guard<std::mutex> g(hub_.mu_);
    FakeHub::Description *d = description_locked(mem);
    if (!d || !d->live || d->owner != me_ || peer == me_)
      hub_.violation_locked("rank " + std::to_string(me_) + " released a description twice, or not its own");
    else
      d->live = false;
  }

 private:
  static constexpr size_t kDescriptionBytes = 40;

  bool inbound_locked() const {
    for (int s = 0; s < hub_.opts_.ranks; ++s)
      if (!hub_.q_[hub_.pair(s, me_)].empty()) return true;
    return false;
  }

  FakeHub::Description *description_locked(const xc::RemoteMem &mem) {
    uint64_t index;
    if (mem.bytes.size() != kDescriptionBytes) return nullptr;
    memcpy(&index, mem.bytes.data(), sizeof index);
    return index < hub_.descriptions_.size() ? &hub_.descriptions_[index] : nullptr;
  }

  FakeHub &hub_;
  int me_;
  int event_fd_ = -1;
  int poll_start_ = 0;
  std::vector<std::pair<int, FakeHub::Frame>> inbox_;
};

// N engines wired to one hub: engine r routes every rank (itself included)
// through its own FakeTransport.
class FakeWorld {
 public:
  FakeWorld(const FakeHubOptions &ho, const xc::EngineOptions &base) : hub_(ho) {
    for (int r = 0; r < ho.ranks; ++r) {
      transports_.push_back(std::make_unique<FakeTransport>(hub_, r));
      xc::EngineOptions eo = base;
      eo.my_rank = r;
      eo.fabric_size = ho.ranks;
      engines_.push_back(std::make_unique<xc::P2pEngine>(eo));
    }
    for (int r = 0; r < ho.ranks; ++r) {
      xc::Status st = engines_[static_cast<size_t>(r)]->set_routes(
          std::vector<xc::Transport *>(static_cast<size_t>(ho.ranks), transports_[static_cast<size_t>(r)].get()));
      if (!st.ok()) throw std::runtime_error(st.message());
    }
  }

  FakeHub &hub() { return hub_; }
  int size() const { return hub_.ranks(); }
  xc::P2pEngine &engine(int r) { return *engines_[static_cast<size_t>(r)]; }
  FakeTransport &transport(int r) { return *transports_[static_cast<size_t>(r)]; }

  // One progress pass on every live rank (single-threaded driving): test()
  // on a request nobody posted polls, flushes and checks the peers.
  void pump() {
    for (int r = 0; r < size(); ++r) {
      if (hub_.dead(r)) continue;
      xc::Request idle;
      (void)engine(r).test(&idle);
    }
  }
  // One progress pass on rank r only.
  void pump_rank(int r) {
    xc::Request idle;
    (void)engine(r).test(&idle);
  }
  // Pump until every request is done; false if the time runs out first.
  bool drive(std::initializer_list<xc::Request *> reqs, int timeout_ms = 5000) {
    return drive(std::vector<xc::Request *>(reqs), timeout_ms);
  }
  bool drive(const std::vector<xc::Request *> &reqs, int timeout_ms = 5000) {
    xc::Deadline dl = xc::Deadline::AfterMs(static_cast<uint64_t>(timeout_ms));
    for (;;) {
      bool all = true;
      for (xc::Request *r : reqs) all = all && r->done;
      if (all) return true;
      if (dl.expired()) return false;
      pump();
    }
  }
  // Pump for a while (peer checks run at most every 50 ms).
  void pump_for(int ms) {
    xc::Deadline dl = xc::Deadline::AfterMs(static_cast<uint64_t>(ms));
    while (!dl.expired()) pump();
  }

 private:
  FakeHub hub_;
  std::vector<std::unique_ptr<FakeTransport>> transports_;
  std::vector<std::unique_ptr<xc::P2pEngine>> engines_;
};

}  // namespace xc_fake
