#include "p2p/engine.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "base/log.h"

namespace xc {

namespace {

constexpr int kMaxSleepMs = 50;         // a sleeping rank still checks deadlines and peers this often
constexpr int kPeerCheckIntervalMs = 50;
constexpr size_t kPoisonedKept = 64;    // mismatched ops remembered (for members that reach them late)

// Two signatures of one op that prove the ranks disagree (0 means "none").
inline bool conflicting(uint32_t a, uint32_t b) { return a != 0 && b != 0 && a != b; }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The communicator rank of fabric rank r, for messages; r itself when unknown.
int comm_rank_of(const Request *req, int r) {
  if (!req->members) return r;
  const auto &m = *req->members;
  auto it = std::find(m.begin(), m.end(), r);
  return it == m.end() ? r : static_cast<int>(it - m.begin());
}

}  // namespace

P2pEngine::P2pEngine(const EngineOptions &opts)
    : opts_(opts),
      route_(static_cast<size_t>(opts.fabric_size), nullptr),
      peers_(static_cast<size_t>(opts.fabric_size)),
      dead_(static_cast<size_t>(opts.fabric_size), 0),
      busy_flag_(static_cast<size_t>(opts.fabric_size), 0) {}

P2pEngine::~P2pEngine() = default;

std::unique_lock<std::mutex> P2pEngine::lock() {
  return opts_.thread_safe ? std::unique_lock<std::mutex>(mu_) : std::unique_lock<std::mutex>();
}

void P2pEngine::set_routes(std::vector<Transport *> route) {
  auto guard = lock();
  route_ = std::move(route);
  transports_.clear();
  for (Transport *t : route_)
    if (t && std::find(transports_.begin(), transports_.end(), t) == transports_.end()) transports_.push_back(t);
}

// ---- completion and matching ------------------------------------------------

void P2pEngine::complete(Request *req, Status st) {
  req->status = std::move(st);
  req->done = true;
  if (transports_.empty()) done_cv_.notify_all();
}

bool P2pEngine::matches(const Request *req, uint64_t ctx, int src, int tag) const {
  return req->ctx == ctx && (req->peer < 0 || req->peer == src) && (req->tag < 0 || req->tag == tag);
}

void P2pEngine::deliver_eager(Request *req, int src, int tag, const void *data, size_t bytes) {
  req->source = src;
  req->source_tag = tag;
  req->message_bytes = bytes;
  if (bytes > req->bytes) {
    complete(req, Error(XC_ERR_TRUNCATED,
                        "message of %zu bytes from rank %d (tag %d) is larger than the receive buffer of %zu bytes; "
                        "nothing was written",
                        bytes, comm_rank_of(req, src), tag, req->bytes));
    return;
  }
  if (bytes) memcpy(req->buf, data, bytes);
  complete(req, Status::Ok());
}

void P2pEngine::start_large_recv(Request *req, int src, int tag, size_t bytes, uint64_t send_id, uint64_t addr) {
  req->source = src;
  req->source_tag = tag;
  req->message_bytes = bytes;
  if (dead_[static_cast<size_t>(src)]) {
    complete(req, Error(XC_ERR_PEER_FAILED, "rank %d failed before sending its %zu-byte message (tag %d)",
                        comm_rank_of(req, src), bytes, tag));
    return;
  }
  if (bytes > req->bytes) {
    send_control(src, kFrameCts, send_id, 0, kCtsDiscard);
    complete(req, Error(XC_ERR_TRUNCATED,
                        "message of %zu bytes from rank %d (tag %d) is larger than the receive buffer of %zu bytes; "
                        "nothing was written",
                        bytes, comm_rank_of(req, src), tag, req->bytes));
    return;
  }
  // Copy: the sender streams DATA. Single copy: the sender answers GO (or
  // NACK if it withdrew the send meanwhile) before we touch its memory.
  bool single_copy = route_[static_cast<size_t>(src)]->has_read_remote();
  req->id = next_id_++;
  req->remote_id = send_id;
  req->remote_addr = addr;
  req->offset = 0;
  recvs_streaming_[req->id] = req;
  send_control(src, kFrameCts, send_id, req->id, single_copy ? uint32_t{kCtsSingleCopy} : 0u);
}

void P2pEngine::on_frame(int peer, const FrameHeader &h, const void *payload, size_t len) {
  switch (h.kind) {
    case kFrameEager:
    case kFrameRts: {
      bool rts = h.kind == kFrameRts;
      for (auto it = posted_.begin(); it != posted_.end(); ++it) {
        Request *req = *it;
        if (!matches(req, h.ctx, h.src, h.tag)) continue;
        if (conflicting(req->sig, h.flags)) return mismatch_locked(req, h.src, h.flags);  // the frame is dropped
        posted_.erase(it);
        if (rts)
          start_large_recv(req, h.src, h.tag, h.bytes, h.id, h.arg);
        else
          deliver_eager(req, h.src, h.tag, payload, len);
        return;
      }
      // A receive of the same op from another rank proves the ranks disagree just as well.
      if (Request *other = conflicting_recv_locked(h.ctx, h.tag, h.flags)) return mismatch_locked(other, h.src, h.flags);
      Unexpected u{h.ctx, h.src, h.tag, static_cast<size_t>(h.bytes), rts, h.id, h.arg, h.flags, {}};
      if (!rts) u.data.assign(static_cast<const char *>(payload), static_cast<const char *>(payload) + len);
      unexpected_.push_back(std::move(u));
      return;
    }
    case kFrameCts: {
      auto it = sends_waiting_.find(h.id);
      if (it == sends_waiting_.end()) {
        // The send was withdrawn after its RTS left: tell the receiver.
        if (!(h.flags & kCtsDiscard)) send_control(peer, kFrameNack, h.arg, 0);
        return;
      }
      Request *req = it->second;
      if (h.flags & kCtsDiscard) {
        sends_waiting_.erase(it);
        complete(req, Status::Ok());  // the receiver rejected it as truncated; the send itself succeeded
        return;
      }
      req->remote_id = h.arg;
      if (h.flags & kCtsSingleCopy) {
        req->granted = true;  // stays in sends_waiting_ until FIN: our buffer is being read
        send_control(peer, kFrameGo, h.arg, req->id);
        return;
      }
      sends_waiting_.erase(it);
      req->offset = 0;
      peers_[static_cast<size_t>(peer)].streaming.push_back(req);
      mark_busy(peer);
      return;
    }
    case kFrameData: {
      auto it = recvs_streaming_.find(h.id);
      if (it == recvs_streaming_.end()) return;  // cancelled meanwhile: drop the piece
      Request *req = it->second;
      if (h.arg > req->message_bytes || len > req->message_bytes - h.arg) {
        XC_WARN("dropping a piece [%llu, +%zu) from rank %d beyond its %zu-byte message",
                static_cast<unsigned long long>(h.arg), len, peer, req->message_bytes);
        return;
      }
      memcpy(static_cast<char *>(req->buf) + h.arg, payload, len);
      req->offset += len;
      if (req->offset >= req->message_bytes) {
        recvs_streaming_.erase(it);
        complete(req, Status::Ok());
      }
      return;
    }
    case kFrameGo: {
      auto it = recvs_streaming_.find(h.id);
      if (it == recvs_streaming_.end()) {  // we gave up meanwhile; release the sender
        send_control(peer, kFrameFin, h.arg, 0);
        return;
      }
      Request *req = it->second;
      recvs_streaming_.erase(it);
      Status st = route_[static_cast<size_t>(peer)]->read_remote(peer, req->remote_addr, req->buf, req->message_bytes);
      send_control(peer, kFrameFin, req->remote_id, 0);
      if (!st.ok())
        st = Status(st.code(), "receiving " + std::to_string(req->message_bytes) + " bytes from rank " +
                                   std::to_string(comm_rank_of(req, peer)) + ": " + st.message());
      complete(req, std::move(st));
      return;
    }
    case kFrameMismatch: {  // arg: the rank that found it + 1, or 0 for the frame's sender
      int reporter = h.arg ? static_cast<int>(h.arg - 1) : h.src;
      poison_locked(Poisoned{h.ctx, h.tag, reporter, h.flags, static_cast<int>(h.id), static_cast<uint32_t>(h.bytes)});
      return;
    }
    case kFrameNack: {
      auto it = recvs_streaming_.find(h.id);
      if (it == recvs_streaming_.end()) return;
      Request *req = it->second;
      recvs_streaming_.erase(it);
      complete(req, Error(XC_ERR_ABORTED,
                          "rank %d withdrew its %zu-byte message (tag %d) before it was transferred: its send timed "
                          "out or was aborted",
                          comm_rank_of(req, peer), req->message_bytes, req->source_tag));
      return;
    }
    case kFrameFin: {
      auto it = sends_waiting_.find(h.id);
      if (it == sends_waiting_.end()) return;
      Request *req = it->second;
      sends_waiting_.erase(it);
      // A send withdrawn while its buffer was being read ends now, as it was told.
      complete(req, req->cancelled ? req->status : Status::Ok());
      return;
    }
    default:
      XC_WARN("dropping a frame of unknown kind %u from rank %d", h.kind, peer);
  }
}

// ---- sending ------------------------------------------------------------------

void P2pEngine::mark_busy(int peer) {
  if (busy_flag_[static_cast<size_t>(peer)]) return;
  busy_flag_[static_cast<size_t>(peer)] = 1;
  busy_peers_.push_back(peer);
}

void P2pEngine::send_frame(int peer, const FrameHeader &h, const void *payload, size_t len, Request *completes,
                           Request *owner) {
  PeerState &ps = peers_[static_cast<size_t>(peer)];
  if (ps.outbox.empty() && route_[static_cast<size_t>(peer)]->try_send(peer, h, payload, len)) {
    if (completes) complete(completes, Status::Ok());
    return;
  }
  ps.outbox.push_back(Outgoing{h, payload, len, completes, owner});
  mark_busy(peer);
}

void P2pEngine::send_control(int peer, uint32_t kind, uint64_t id, uint64_t arg, uint32_t flags) {
  FrameHeader h{};
  h.kind = kind;
  h.flags = flags;
  h.src = opts_.my_rank;
  h.id = id;
  h.arg = arg;
  send_frame(peer, h, nullptr, 0, nullptr);
}

bool P2pEngine::flush_peer(int peer, PeerState &ps) {
  Transport *t = route_[static_cast<size_t>(peer)];
  bool moved = false;
  while (!ps.outbox.empty()) {
    Outgoing &o = ps.outbox.front();
    if (!t->try_send(peer, o.h, o.payload, o.len)) return moved;
    if (o.completes) complete(o.completes, Status::Ok());
    ps.outbox.pop_front();
    moved = true;
  }
  size_t chunk_limit = std::min(opts_.chunk_bytes, t->max_payload());
  while (!ps.streaming.empty()) {
    Request *req = ps.streaming.front();
    size_t chunk = std::min(chunk_limit, req->bytes - req->offset);
    FrameHeader h{};
    h.kind = kFrameData;
    h.src = opts_.my_rank;
    h.id = req->remote_id;
    h.arg = req->offset;
    h.bytes = chunk;
    if (!t->try_send(peer, h, static_cast<const char *>(req->buf) + req->offset, chunk)) return moved;
    moved = true;
    req->offset += chunk;
    if (req->offset == req->bytes) {
      ps.streaming.pop_front();
      complete(req, Status::Ok());
    }
  }
  return moved;
}

// ---- posting --------------------------------------------------------------------

Status P2pEngine::post_check(Request *req) {
  if (req->peer >= 0 && req->peer != opts_.my_rank) {
    if (req->peer >= opts_.fabric_size || !route_[static_cast<size_t>(req->peer)])
      return Error(XC_ERR_UNSUPPORTED,
                   "no transport reaches rank %d: it is on another host and this build has no inter-host transport",
                   comm_rank_of(req, req->peer));
  }
  return Status::Ok();
}

Status P2pEngine::peer_gone_error(const Request *req, int rank) {
  Transport *t = route_[static_cast<size_t>(rank)];
  if (t && t->peer_departed(rank))
    return Error(XC_ERR_PEER_FAILED, "rank %d has already left (it freed its communicators and exited)",
                 comm_rank_of(req, rank));
  return Error(XC_ERR_PEER_FAILED, "rank %d has failed (its process is gone)", comm_rank_of(req, rank));
}

void P2pEngine::abort_context(uint64_t ctx, const Status &why) {
  {
    auto guard = lock();
    aborted_.emplace_back(ctx, why);
  }
  cancel_context(ctx, why);
}

Status P2pEngine::admission_check_locked(const Request *req) {
  for (const auto &a : aborted_)
    if (a.first == req->ctx) return a.second;
  if (req->collective)
    for (const Poisoned &p : poisoned_)
      if (p.ctx == req->ctx && p.tag == req->tag) return poisoned_error(p, req);
  if (!req->collective || !req->members) return Status::Ok();
  int failed = first_crashed_locked(*req->members);
  if (failed < 0) return Status::Ok();
  return peer_gone_error(req, failed);
}

void P2pEngine::post_send(Request *req) {
  auto guard = lock();
  req->kind = RequestKind::kSend;
  Status st = post_check(req);
  if (st.ok()) st = admission_check_locked(req);
  if (!st.ok()) return complete(req, std::move(st));
  int peer = req->peer;
  if (peer == opts_.my_rank) {
    // To self: deliver at once through the normal arrival path, any size.
    FrameHeader h{};
    h.kind = kFrameEager;
    h.flags = req->sig;
    h.ctx = req->ctx;
    h.src = peer;
    h.tag = req->tag;
    h.bytes = req->bytes;
    on_frame(peer, h, req->buf, req->bytes);
    return complete(req, Status::Ok());
  }
  if (dead_[static_cast<size_t>(peer)]) return complete(req, peer_gone_error(req, peer));
  FrameHeader h{};
  h.flags = req->sig;
  h.ctx = req->ctx;
  h.src = opts_.my_rank;
  h.tag = req->tag;
  h.bytes = req->bytes;
  Transport *t = route_[static_cast<size_t>(peer)];
  if (req->bytes <= opts_.eager_bytes && req->bytes <= t->max_payload()) {
    h.kind = kFrameEager;
    send_frame(peer, h, req->buf, req->bytes, req);
    return;
  }
  req->id = next_id_++;
  sends_waiting_[req->id] = req;
  h.kind = kFrameRts;
  h.id = req->id;
  h.arg = reinterpret_cast<uint64_t>(req->buf);
  send_frame(peer, h, nullptr, 0, nullptr, req);
}

void P2pEngine::post_recv(Request *req) {
  auto guard = lock();
  req->kind = RequestKind::kRecv;
  Status st = post_check(req);
  if (st.ok()) st = admission_check_locked(req);
  if (!st.ok()) return complete(req, std::move(st));
  progress_locked();  // so a message already in the ring is matched in order
  st = admission_check_locked(req);  // that pass may have brought news of this op's failure
  if (!st.ok()) return complete(req, std::move(st));
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
    if (!matches(req, it->ctx, it->src, it->tag)) continue;
    if (conflicting(req->sig, it->sig)) {
      int src = it->src;
      uint32_t sig = it->sig;
      unexpected_.erase(it);
      return mismatch_locked(req, src, sig);
    }
    Unexpected u = std::move(*it);
    unexpected_.erase(it);
    if (u.rts)
      start_large_recv(req, u.src, u.tag, u.bytes, u.send_id, u.addr);
    else
      deliver_eager(req, u.src, u.tag, u.data.data(), u.bytes);
    return;
  }
  if (req->sig) {  // a message of this op from another rank, with another signature
    for (const Unexpected &u : unexpected_)
      if (u.ctx == req->ctx && u.tag == req->tag && conflicting(req->sig, u.sig)) return mismatch_locked(req, u.src, u.sig);
  }
  if (req->peer >= 0 && dead_[static_cast<size_t>(req->peer)]) return complete(req, peer_gone_error(req, req->peer));
  if (req->peer < 0 && req->members) {
    int failed = first_crashed_locked(*req->members);
    if (failed >= 0) return complete(req, peer_gone_error(req, failed));
  }
  posted_.push_back(req);
}

// ---- progress ----------------------------------------------------------------------

bool P2pEngine::progress_locked() {
  if (in_poll_) return false;
  in_poll_ = true;
  size_t events = 0;
  for (Transport *t : transports_) events += t->poll(*this);
  for (size_t i = 0; i < busy_peers_.size();) {
    int peer = busy_peers_[i];
    PeerState &ps = peers_[static_cast<size_t>(peer)];
    if (flush_peer(peer, ps)) ++events;
    if (ps.outbox.empty() && ps.streaming.empty()) {
      busy_flag_[static_cast<size_t>(peer)] = 0;
      busy_peers_[i] = busy_peers_.back();
      busy_peers_.pop_back();
    } else {
      ++i;
    }
  }
  in_poll_ = false;
  return events > 0;
}

bool P2pEngine::pending_locked() const {
  return !posted_.empty() || !sends_waiting_.empty() || !recvs_streaming_.empty() || !busy_peers_.empty();
}

void P2pEngine::check_peers_locked(bool even_if_idle) {
  auto now = Deadline::Clock::now();
  if (now < next_peer_check_) return;
  if (!even_if_idle && !pending_locked()) return;
  next_peer_check_ = now + std::chrono::milliseconds(kPeerCheckIntervalMs);
  for (int r = 0; r < opts_.fabric_size; ++r) {
    Transport *t = route_[static_cast<size_t>(r)];
    if (!t || r == opts_.my_rank || dead_[static_cast<size_t>(r)]) continue;
    if (t->peer_alive(r)) continue;
    // Take what it sent before it went, then fail what still needs it.
    progress_locked();
    fail_peer_locked(r);
  }
}

int P2pEngine::first_crashed_locked(const std::vector<int> &members) {
  for (int r : members) {
    if (!dead_[static_cast<size_t>(r)]) continue;
    Transport *t = route_[static_cast<size_t>(r)];
    if (!t || !t->peer_departed(r)) return r;
  }
  return -1;
}

void P2pEngine::fail_peer_locked(int rank) {
  dead_[static_cast<size_t>(rank)] = 1;
  Transport *t = route_[static_cast<size_t>(rank)];
  bool crashed = !t->peer_departed(rank);
  XC_WARN("rank %d (fabric) %s", rank, crashed ? "failed: its process is gone" : "has left");
  // What needs it: requests addressed to it; and, when it crashed, receives
  // from anyone in a communicator it belonged to, and every part of a
  // collective among its members (a survivor's partner may have given up).
  auto affected = [&](const Request *req, int peer) {
    if (peer == rank) return true;
    if (!crashed || !req->members || (peer >= 0 && !req->collective)) return false;
    return std::find(req->members->begin(), req->members->end(), rank) != req->members->end();
  };
  for (auto it = posted_.begin(); it != posted_.end();) {
    Request *req = *it;
    if (affected(req, req->peer)) {
      it = posted_.erase(it);
      complete(req, peer_gone_error(req, rank));
    } else {
      ++it;
    }
  }
  for (auto it = recvs_streaming_.begin(); it != recvs_streaming_.end();) {
    if (affected(it->second, it->second->source)) {
      Request *req = it->second;
      it = recvs_streaming_.erase(it);
      complete(req, peer_gone_error(req, rank));
    } else {
      ++it;
    }
  }
  for (auto it = sends_waiting_.begin(); it != sends_waiting_.end();) {
    // A granted send's buffer is being read by a live receiver: it ends at FIN.
    bool reader_alive = it->second->granted && it->second->peer != rank;
    if (affected(it->second, it->second->peer) && !reader_alive) {
      Request *req = it->second;
      it = sends_waiting_.erase(it);
      complete(req, peer_gone_error(req, rank));
    } else {
      ++it;
    }
  }
  if (crashed) {  // collective sends queued for live members
    std::vector<Request *> stalled;
    for (int p : busy_peers_) {
      if (p == rank) continue;
      PeerState &q = peers_[static_cast<size_t>(p)];
      for (Outgoing &o : q.outbox)
        if (o.completes && o.completes->collective && affected(o.completes, p)) stalled.push_back(o.completes);
      for (Request *req : q.streaming)
        if (req->collective && affected(req, p)) stalled.push_back(req);
    }
    for (Request *req : stalled) cancel_locked(req, peer_gone_error(req, rank));
  }
  PeerState &ps = peers_[static_cast<size_t>(rank)];
  for (Outgoing &o : ps.outbox)
    if (o.completes) complete(o.completes, peer_gone_error(o.completes, rank));
  for (Request *req : ps.streaming) complete(req, peer_gone_error(req, rank));
  ps.outbox.clear();
  ps.streaming.clear();
}

int P2pEngine::first_failed(const std::vector<int> &members) {
  auto guard = lock();
  check_peers_locked(true);
  for (int r : members)
    if (dead_[static_cast<size_t>(r)]) return r;
  return -1;
}

Status P2pEngine::op_interrupted(const Request &op) {
  auto guard = lock();
  for (const auto &a : aborted_)
    if (a.first == op.ctx) return a.second;
  progress_locked();
  for (const Poisoned &p : poisoned_)
    if (p.ctx == op.ctx && p.tag == op.tag) return poisoned_error(p, &op);
  // A message of this op number from a member in another op (one whose
  // closing barrier met our shared-memory op, say): nobody receives it.
  for (const Unexpected &u : unexpected_)
    if (u.ctx == op.ctx && u.tag == op.tag && conflicting(op.sig, u.sig)) return report_mismatch_locked(op, u.src, u.sig);
  return Status::Ok();
}

// ---- waiting -----------------------------------------------------------------------

bool P2pEngine::test(Request *req) {
  auto guard = lock();
  if (!req->done) {
    progress_locked();
    check_peers_locked();
  }
  return req->done;
}

Status P2pEngine::wait(Request *req, Deadline deadline) {
  // Spin, then poll with sched_yield, then sleep on the transport's futex.
  // Yielding costs little when the core is ours alone, and when ranks
  // outnumber cores (spin is short then) it hands the core to the peer we
  // wait for instead of sleeping through its reply and paying for a wake.
  constexpr int kYieldPolls = 2000;
  int spins = 0, yields = 0;
  for (;;) {
    {
      auto guard = lock();
      if (req->done) return req->status;
      bool moved = progress_locked();
      if (req->done) return req->status;
      check_peers_locked();
      if (req->done) return req->status;
      if (deadline.expired() && !req->cancelled) {
        cancel_locked(req, Error(XC_ERR_TIMEOUT, "timed out"));
        if (req->done) return req->status;  // else a reader holds the buffer until FIN
      }
      if (moved) spins = yields = 0;
      if (++spins < opts_.spin) {
        guard = std::unique_lock<std::mutex>();
        cpu_relax();
        continue;
      }
      if (++yields < kYieldPolls) {
        guard = std::unique_lock<std::mutex>();
        std::this_thread::yield();
        continue;
      }
      int sleep_ms = deadline.remaining_ms(kMaxSleepMs);
      if (transports_.empty()) {
        // Only self-messages exist: another thread's send completes us.
        if (opts_.thread_safe)
          done_cv_.wait_for(guard, std::chrono::milliseconds(sleep_ms));
        else
          std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
        continue;
      }
      Transport *t = transports_.front();
      uint32_t token = t->prepare_wait();
      moved = progress_locked();
      if (req->done || moved || transports_.size() > 1) sleep_ms = 0;
      guard = std::unique_lock<std::mutex>();
      t->finish_wait(token, sleep_ms);
      spins = opts_.spin / 2;  // after a sleep, spin and yield a little before sleeping again
      yields = kYieldPolls / 2;
    }
  }
}

Status P2pEngine::wait_all(Request *const *reqs, size_t n, Deadline deadline) {
  Status first;
  for (size_t i = 0; i < n; ++i) {
    if (!reqs[i]) continue;
    Status st = wait(reqs[i], deadline);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

// ---- cancelling -----------------------------------------------------------------------

void P2pEngine::cancel(Request *req, const Status &why) {
  auto guard = lock();
  cancel_locked(req, why);
}

void P2pEngine::cancel_locked(Request *req, const Status &why) {
  if (req->done || req->cancelled) return;
  req->cancelled = true;
  if (req->kind == RequestKind::kSend && req->granted) {
    // The receiver is reading our buffer right now: it stays the receiver's
    // until FIN (or the receiver's death), which ends the request.
    req->status = why;
    return;
  }
  posted_.remove(req);
  if (req->kind == RequestKind::kSend)
    sends_waiting_.erase(req->id);
  else
    recvs_streaming_.erase(req->id);
  if (req->peer >= 0 && req->peer < opts_.fabric_size) {
    PeerState &ps = peers_[static_cast<size_t>(req->peer)];
    for (auto it = ps.outbox.begin(); it != ps.outbox.end();) {
      if (it->completes == req || it->owner == req)
        it = ps.outbox.erase(it);  // an RTS not yet out: the receiver never hears of the message
      else
        ++it;
    }
    auto streaming = std::find(ps.streaming.begin(), ps.streaming.end(), req);
    if (streaming != ps.streaming.end()) {
      ps.streaming.erase(streaming);
      send_control(req->peer, kFrameNack, req->remote_id, 0);  // part of it went: fail the receive
    }
  }
  complete(req, why);
}

void P2pEngine::cancel_context(uint64_t ctx, const Status &why) {
  auto guard = lock();
  std::vector<Request *> victims;
  for (Request *req : posted_)
    if (req->ctx == ctx) victims.push_back(req);
  for (auto &kv : sends_waiting_)
    if (kv.second->ctx == ctx) victims.push_back(kv.second);
  for (auto &kv : recvs_streaming_)
    if (kv.second->ctx == ctx) victims.push_back(kv.second);
  for (PeerState &ps : peers_) {
    for (Outgoing &o : ps.outbox)
      if (o.completes && o.completes->ctx == ctx) victims.push_back(o.completes);
    for (Request *req : ps.streaming)
      if (req->ctx == ctx) victims.push_back(req);
  }
  for (Request *req : victims) cancel_locked(req, why);
  if (!victims.empty())
    for (Transport *t : transports_) t->wake_self();  // waiters asleep on these requests
  // Unexpected messages of the context can never be received now.
  unexpected_.remove_if([ctx](const Unexpected &u) { return u.ctx == ctx; });
  poisoned_.erase(std::remove_if(poisoned_.begin(), poisoned_.end(), [ctx](const Poisoned &p) { return p.ctx == ctx; }),
                  poisoned_.end());
}

// ---- mismatched collectives ----------------------------------------------------------

Request *P2pEngine::conflicting_recv_locked(uint64_t ctx, int tag, uint32_t sig) {
  if (!sig) return nullptr;
  for (Request *req : posted_)
    if (req->ctx == ctx && req->tag == tag && conflicting(req->sig, sig)) return req;
  return nullptr;
}

std::string P2pEngine::name_signature(uint32_t sig) const {
  if (opts_.name_signature) return opts_.name_signature(sig);
  char hex[16];
  snprintf(hex, sizeof hex, "op %08x", sig);
  return hex;
}

Status P2pEngine::poisoned_error(const Poisoned &p, const Request *req) {
  std::string offender = name_signature(p.offender_sig);
  if (p.reporter < 0)
    return Error(XC_ERR_INVALID_USAGE,
                 "rank %d is in op #%d as '%s' while this rank is in '%s': ranks must call the same collectives "
                 "in the same order with matching arguments",
                 comm_rank_of(req, p.offender), p.tag, offender.c_str(), name_signature(p.reporter_sig).c_str());
  std::string reporter = name_signature(p.reporter_sig);
  std::string mine = req->sig && req->sig != p.reporter_sig ? "; this rank is in '" + name_signature(req->sig) + "'" : "";
  return Error(XC_ERR_INVALID_USAGE, "rank %d found rank %d in op #%d as '%s' while rank %d is in '%s'%s",
               comm_rank_of(req, p.reporter), comm_rank_of(req, p.offender), p.tag, offender.c_str(),
               comm_rank_of(req, p.reporter), reporter.c_str(), mine.c_str());
}

void P2pEngine::mismatch_locked(Request *req, int src, uint32_t their_sig) {
  Status why = report_mismatch_locked(*req, src, their_sig);
  if (!req->done) {  // not posted yet (it met an unexpected message)
    posted_.remove(req);
    complete(req, why);
  }
}

Status P2pEngine::report_mismatch_locked(const Request &op, int src, uint32_t their_sig) {
  Poisoned p{op.ctx, op.tag, -1, op.sig, src, their_sig};
  // Every member hears of it, so none waits for a rank that has left the op.
  if (op.members) {
    for (int r : *op.members) {
      if (r == opts_.my_rank || r < 0 || r >= opts_.fabric_size) continue;
      if (!route_[static_cast<size_t>(r)] || dead_[static_cast<size_t>(r)]) continue;
      FrameHeader h{};
      h.kind = kFrameMismatch;
      h.flags = op.sig;
      h.ctx = op.ctx;
      h.src = opts_.my_rank;
      h.tag = op.tag;
      h.bytes = their_sig;
      h.id = static_cast<uint64_t>(src);
      send_frame(r, h, nullptr, 0, nullptr);
    }
  }
  Status why = poisoned_error(p, &op);
  poison_locked(p);
  return why;
}

void P2pEngine::poison_locked(const Poisoned &p) {
  poisoned_.push_back(p);
  if (poisoned_.size() > kPoisonedKept) poisoned_.pop_front();
  auto of_op = [&](const Request *req) { return req->collective && req->ctx == p.ctx && req->tag == p.tag; };
  std::vector<Request *> victims;
  for (Request *req : posted_)
    if (of_op(req)) victims.push_back(req);
  for (auto &kv : recvs_streaming_)
    if (of_op(kv.second)) victims.push_back(kv.second);  // a late DATA or NACK is dropped; a GO gets its FIN
  for (auto &kv : sends_waiting_) {
    Request *req = kv.second;
    if (!of_op(req) || req->granted) continue;
    victims.push_back(req);
    // Its receiver may have taken the RTS already; our NACK to its CTS must
    // not reach it before the news, or it would see a plain withdrawal.
    if (p.reporter >= 0 && req->peer != p.reporter) {
      FrameHeader h{};
      h.kind = kFrameMismatch;
      h.flags = p.reporter_sig;
      h.ctx = p.ctx;
      h.src = opts_.my_rank;
      h.tag = p.tag;
      h.bytes = p.offender_sig;
      h.id = static_cast<uint64_t>(p.offender);
      h.arg = static_cast<uint64_t>(p.reporter) + 1;
      send_frame(req->peer, h, nullptr, 0, nullptr);
    }
  }
  for (PeerState &ps : peers_)
    for (Outgoing &o : ps.outbox)
      if (o.completes && of_op(o.completes)) victims.push_back(o.completes);
  for (Request *req : victims) cancel_locked(req, poisoned_error(p, req));
  if (!victims.empty())
    for (Transport *t : transports_) t->wake_self();  // waiters asleep on these requests
}

void P2pEngine::announce_departure() {
  auto guard = lock();
  for (Transport *t : transports_) t->announce_departure();
}

}  // namespace xc
