// The engine's construction, its routes, and posting sends and receives.
#include "p2p/engine.h"

#include <algorithm>

#include "base/log.h"

namespace xc {

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

Status P2pEngine::set_routes(std::vector<Transport *> route) {
  auto guard = lock();
  route_ = std::move(route);
  transports_.clear();
  for (Transport *t : route_)
    if (t && std::find(transports_.begin(), transports_.end(), t) == transports_.end()) transports_.push_back(t);
  sleeper_.reset();
  if (!transports_.empty()) XC_TRY(Sleeper::create(transports_, &sleeper_));
  return Status::Ok();
}

void P2pEngine::announce_departure() {
  auto guard = lock();
  next_peer_check_ = Deadline::Clock::time_point();
  check_peers_locked(true);  // what this rank may have given up an op for
  std::vector<int> crashed;
  for (int r = 0; r < opts_.fabric_size; ++r)
    if (dead_[static_cast<size_t>(r)] && !route_[static_cast<size_t>(r)]->peer_departed(r)) crashed.push_back(r);
  for (Transport *t : transports_) t->announce_departure(crashed);
}

// ---- completion and matching ------------------------------------------------

void P2pEngine::complete(Request *req, Status st) {
  // However a described send ends, its transport may let the description go.
  if (req->kind == RequestKind::kSend && !req->send_mem.bytes.empty()) {
    route_[static_cast<size_t>(req->peer)]->release(req->peer, req->send_mem);
    req->send_mem.bytes.clear();  // released once, also if the request is posted again
  }
  req->status = std::move(st);
  req->done = true;
  if (transports_.empty()) done_cv_.notify_all();
}

bool P2pEngine::matches(const Request *req, uint64_t ctx, int src, int tag) const {
  return req->ctx == ctx && (req->peer < 0 || req->peer == src) && (req->tag < 0 || req->tag == tag);
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
  if (req->bytes <= t->eager_bytes() && req->bytes <= t->max_payload()) {
    h.kind = kFrameEager;
    send_frame(peer, h, req->buf, req->bytes, req);
    return;
  }
  req->id = next_id_++;
  sends_waiting_[req->id] = req;
  h.kind = kFrameRts;
  h.id = req->id;
  if (t->single_copy()) {
    Status described = t->describe(peer, req->buf, req->bytes, &req->send_mem);
    if (!described.ok()) {
      XC_WARN("a %zu-byte message to rank %d streams: its buffer cannot be described for single copy: %s",
              req->bytes, comm_rank_of(req, peer), described.message().c_str());
      req->send_mem = RemoteMem();
    }
  }
  // The RTS carries the description (its bytes live in the request).
  send_frame(peer, h, req->send_mem.bytes.data(), req->send_mem.bytes.size(), nullptr, req);
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
    if (signatures_conflict(req->sig, it->sig)) {
      int src = it->src;
      uint32_t sig = it->sig;
      unexpected_.erase(it);
      return mismatch_locked(req, src, sig);
    }
    Unexpected u = std::move(*it);
    unexpected_.erase(it);
    if (u.rts)
      start_large_recv(req, u.src, u.tag, u.bytes, u.send_id, RemoteMem{std::move(u.data)});
    else
      deliver_eager(req, u.src, u.tag, u.data.data(), u.bytes);
    return;
  }
  if (req->sig) {  // a message of this op from another rank, with another signature
    for (const Unexpected &u : unexpected_)
      if (u.ctx == req->ctx && u.tag == req->tag && signatures_conflict(req->sig, u.sig))
        return mismatch_locked(req, u.src, u.sig);
  }
  // A crashed member before a peer that left: the one that left may have
  // given up the op for the crashed one.
  if ((req->peer < 0 || req->collective) && req->members) {
    int failed = first_crashed_locked(*req->members);
    if (failed >= 0) return complete(req, peer_gone_error(req, failed));
  }
  if (req->peer >= 0 && dead_[static_cast<size_t>(req->peer)]) return complete(req, peer_gone_error(req, req->peer));
  posted_.push_back(req);
}

}  // namespace xc
