// What ends requests before their message does: peers that die or leave,
// cancellation (timeouts, aborts, freed communicators), and the checks that
// refuse a new request at once.
#include <algorithm>

#include "base/log.h"
#include "p2p/engine.h"

namespace xc {

namespace {

constexpr int kPeerCheckIntervalMs = 50;

}  // namespace

// ---- finding what waits ------------------------------------------------------------

std::vector<Request *> P2pEngine::pending_requests_locked(unsigned where, const RequestFilter &take) {
  std::vector<Request *> found;
  if (where & kPosted)
    for (Request *req : posted_)
      if (take(req, req->peer)) found.push_back(req);
  if (where & kRecvsStreaming)
    for (auto &kv : recvs_streaming_)
      if (take(kv.second, kv.second->source)) found.push_back(kv.second);
  if (where & kSendsWaiting)
    for (auto &kv : sends_waiting_)
      if (take(kv.second, kv.second->peer)) found.push_back(kv.second);
  for (int p : busy_peers_) {  // the only peers with anything queued
    PeerState &ps = peers_[static_cast<size_t>(p)];
    if (where & kOutboxes)
      for (Outgoing &o : ps.outbox)
        if (o.completes && take(o.completes, p)) found.push_back(o.completes);
    if (where & kSendsStreaming)
      for (Request *req : ps.streaming)
        if (take(req, p)) found.push_back(req);
  }
  return found;
}

// ---- peers that die or leave ---------------------------------------------------------

void P2pEngine::check_peers_locked(bool even_if_idle) {
  auto now = Deadline::Clock::now();
  if (now < next_peer_check_) return;
  if (!even_if_idle && !anything_pending_locked()) return;
  next_peer_check_ = now + std::chrono::milliseconds(kPeerCheckIntervalMs);
  std::vector<int> gone, heard;
  for (int r = 0; r < opts_.fabric_size; ++r) {
    Transport *t = route_[static_cast<size_t>(r)];
    if (!t || r == opts_.my_rank || dead_[static_cast<size_t>(r)]) continue;
    if (!t->peer_alive(r)) gone.push_back(r);
    for (int x : t->departure_blames(r)) heard.push_back(x);  // empty unless r left
  }
  // A rank that left named the ranks it knew crashed: they are gone too,
  // though this rank may not see it itself (one on another host, which a
  // departing host mate gave an op up for: host-0 survivors named the mate).
  for (int x : heard)
    if (x >= 0 && x < opts_.fabric_size && x != opts_.my_rank && route_[static_cast<size_t>(x)] &&
        !dead_[static_cast<size_t>(x)] && std::find(gone.begin(), gone.end(), x) == gone.end())
      gone.push_back(x);
  if (gone.empty()) return;
  // Take what they sent before they went, then fail what still needs them:
  // the crashed first, so a collective's request addressed to a member that
  // gave up for a dead one and left names the dead one (chaos trials of
  // fault_blame: "rank 0 has already left" when rank 3 was killed).
  progress_locked();
  std::stable_partition(gone.begin(), gone.end(),
                        [&](int r) { return !route_[static_cast<size_t>(r)]->peer_departed(r); });
  for (int r : gone) fail_peer_locked(r);
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
  std::vector<Request *> failed = pending_requests_locked(kAnywhere, [&](const Request *req, int peer) {
    // A granted send's buffer is being read by a live receiver: it ends at FIN.
    bool reader_alive = req->granted && peer != rank;
    return affected(req, peer) && !reader_alive;
  });
  // Nothing queued for it can go any more; what it was for fails below
  // (and a send streaming to it sends it no NACK).
  PeerState &ps = peers_[static_cast<size_t>(rank)];
  ps.outbox.clear();
  ps.streaming.clear();
  for (Request *req : failed) withdraw_locked(req, peer_gone_error(req, rank));
}

int P2pEngine::first_failed(const std::vector<int> &members) {
  auto guard = lock();
  // An explicit question, off the hot path: ask the transports now, not at
  // the next periodic check (a peer that failed a read a moment ago is
  // already known dead to its transport).
  next_peer_check_ = Deadline::Clock::time_point();
  check_peers_locked(true);
  // The crashed before the departed: a survivor that gave up an op for a
  // dead member may free and exit before the others look, and blaming it
  // named the messenger ("rank 0 failed" when rank 2 was killed: 5 of 6
  // chaos trials of fault_blame).
  int crashed = first_crashed_locked(members);
  if (crashed >= 0) return crashed;
  for (int r : members)
    if (dead_[static_cast<size_t>(r)]) return r;
  return -1;
}

std::vector<int> P2pEngine::failed_among(const std::vector<int> &members) {
  auto guard = lock();
  next_peer_check_ = Deadline::Clock::time_point();
  check_peers_locked(true);
  std::vector<int> out;
  for (size_t i = 0; i < members.size(); ++i)
    if (dead_[static_cast<size_t>(members[i])]) out.push_back(static_cast<int>(i));
  return out;
}

Status P2pEngine::peer_gone_error(const Request *req, int rank) {
  Transport *t = route_[static_cast<size_t>(rank)];
  if (t && t->peer_departed(rank))
    return Error(XC_ERR_PEER_FAILED, "rank %d has already left (it freed its communicators and exited)",
                 comm_rank_of(req, rank));
  return Error(XC_ERR_PEER_FAILED, "rank %d has failed (its process is gone)", comm_rank_of(req, rank));
}

// ---- refusing new requests --------------------------------------------------------------

Status P2pEngine::aborted_status_locked(uint64_t ctx) const {
  for (const auto &a : aborted_)
    if (a.first == ctx) return a.second;
  return Status::Ok();
}

Status P2pEngine::admission_check_locked(const Request *req) {
  XC_TRY(aborted_status_locked(req->ctx));
  if (req->collective) XC_TRY(poisoned_status_locked(*req));
  if (!req->collective || !req->members) return Status::Ok();
  int failed = first_crashed_locked(*req->members);
  if (failed < 0) return Status::Ok();
  return peer_gone_error(req, failed);
}

// ---- cancelling -----------------------------------------------------------------------

void P2pEngine::abort_context(uint64_t ctx, const Status &why) {
  {
    auto guard = lock();
    aborted_.emplace_back(ctx, why);
  }
  cancel_context(ctx, why);
}

void P2pEngine::cancel(Request *req, const Status &why) {
  auto guard = lock();
  cancel_locked(req, why);
}

void P2pEngine::cancel_locked(Request *req, const Status &why) {
  if (req->done || req->cancelled) return;
  req->cancelled = true;
  if (req->kind == RequestKind::kSend && req->granted) {
    // The receiver is reading our buffer right now: it stays the receiver's
    // until FIN (or the receiver's death), which ends the request, unless
    // the transport can take the access back (a peer behind a silent link
    // sends no FIN and does not visibly die).
    if (route_[static_cast<size_t>(req->peer)]->revoke_access(req->peer, req->send_mem)) {
      sends_waiting_.erase(req->id);
      complete(req, why);
      return;
    }
    req->status = why;
    return;
  }
  withdraw_locked(req, why);
}

void P2pEngine::withdraw_locked(Request *req, const Status &why) {
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
  cancel_context_locked(ctx, why);
}

void P2pEngine::cancel_context_locked(uint64_t ctx, const Status &why) {
  std::vector<Request *> victims =
      pending_requests_locked(kAnywhere, [ctx](const Request *req, int) { return req->ctx == ctx; });
  for (Request *req : victims) cancel_locked(req, why);
  if (!victims.empty()) wake_waiters_locked();  // waiters asleep on these requests
  // Unexpected messages of the context can never be received now.
  unexpected_.remove_if([ctx](const Unexpected &u) { return u.ctx == ctx; });
  poisoned_.erase(std::remove_if(poisoned_.begin(), poisoned_.end(), [ctx](const Poisoned &p) { return p.ctx == ctx; }),
                  poisoned_.end());
}

}  // namespace xc
