// The engine's protocol (p2p/frames.h): what each arriving frame does, and
// frames going out in order through each peer's outbox.
#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "p2p/engine.h"

namespace xc {

namespace {

std::vector<char> as_bytes(const void *payload, size_t len) {
  const char *p = static_cast<const char *>(payload);
  return std::vector<char>(p, p + len);
}

}  // namespace

// ---- frames in --------------------------------------------------------------------

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

void P2pEngine::start_large_recv(Request *req, int src, int tag, size_t bytes, uint64_t send_id, RemoteMem send_mem) {
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
  // Copy: the sender streams DATA. Single copy (the sender described its
  // buffer and we can read it): the sender answers GO (or NACK if it
  // withdrew the send meanwhile) before we touch its memory.
  bool single_copy = !send_mem.bytes.empty() && route_[static_cast<size_t>(src)]->single_copy();
  req->id = next_id_++;
  req->remote_id = send_id;
  req->send_mem = std::move(send_mem);
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
        if (signatures_conflict(req->sig, h.flags)) return mismatch_locked(req, h.src, h.flags);  // the frame is dropped
        posted_.erase(it);
        if (rts)
          start_large_recv(req, h.src, h.tag, h.bytes, h.id, RemoteMem{as_bytes(payload, len)});
        else
          deliver_eager(req, h.src, h.tag, payload, len);
        return;
      }
      // A receive of the same op from another rank proves the ranks disagree just as well.
      if (Request *other = conflicting_recv_locked(h.ctx, h.tag, h.flags)) return mismatch_locked(other, h.src, h.flags);
      unexpected_.push_back(
          Unexpected{h.ctx, h.src, h.tag, static_cast<size_t>(h.bytes), rts, h.id, h.flags, as_bytes(payload, len)});
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
      Status st = route_[static_cast<size_t>(peer)]->read_remote(peer, req->send_mem, req->buf, req->message_bytes);
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
    case kFrameRevoke: {
      std::vector<int32_t> members(len / sizeof(int32_t));
      if (len) memcpy(members.data(), payload, members.size() * sizeof(int32_t));
      revoke_locked(h.ctx, std::move(members), static_cast<int>(h.arg), peer);
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

// ---- frames out -------------------------------------------------------------------

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
  size_t chunk_limit = std::min(t->chunk_bytes(), t->max_payload());
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

}  // namespace xc
