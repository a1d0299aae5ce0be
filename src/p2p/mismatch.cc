// Collective ops that ranks disagree on. Requests of a collective carry the
// op's signature; a receive that meets a message of its op (ctx, tag) with
// another signature proves the ranks are in different collectives. Then the
// whole op fails here, every member hears of it (MISMATCH), and its requests
// fail everywhere instead of mixing data or waiting forever. The engine only
// compares signatures; what they mean is the collective layer's.
#include <algorithm>
#include <cstdio>

#include "p2p/engine.h"

namespace xc {

namespace {

constexpr size_t kPoisonedKept = 64;  // mismatched ops remembered (for members that reach them late)

}  // namespace

Request *P2pEngine::conflicting_recv_locked(uint64_t ctx, int tag, uint32_t sig) {
  if (!sig) return nullptr;
  for (Request *req : posted_)
    if (req->ctx == ctx && req->tag == tag && signatures_conflict(req->sig, sig)) return req;
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
  // In words, what the offender's call has that the reporter's has not.
  std::string why = opts_.describe_difference
                        ? ": " + opts_.describe_difference(p.reporter_sig, p.offender_sig)
                        : std::string();
  if (p.reporter < 0)
    return Error(XC_ERR_INVALID_USAGE,
                 "rank %d is in op #%d as '%s' while this rank is in '%s'%s; ranks must call the same collectives "
                 "in the same order with matching arguments",
                 comm_rank_of(req, p.offender), p.tag, offender.c_str(), name_signature(p.reporter_sig).c_str(),
                 why.c_str());
  std::string reporter = name_signature(p.reporter_sig);
  std::string mine = req->sig && req->sig != p.reporter_sig ? "; this rank is in '" + name_signature(req->sig) + "'" : "";
  return Error(XC_ERR_INVALID_USAGE, "rank %d found rank %d in op #%d as '%s' while rank %d is in '%s'%s%s",
               comm_rank_of(req, p.reporter), comm_rank_of(req, p.offender), p.tag, offender.c_str(),
               comm_rank_of(req, p.reporter), reporter.c_str(), why.c_str(), mine.c_str());
}

Status P2pEngine::poisoned_status_locked(const Request &req) {
  for (const Poisoned &p : poisoned_)
    if (p.ctx == req.ctx && p.tag == req.tag) return poisoned_error(p, &req);
  return Status::Ok();
}

void P2pEngine::mismatch_locked(Request *req, int src, uint32_t their_sig) {
  Status why = report_mismatch_locked(*req, src, their_sig);
  if (!req->done) {  // not posted yet (it met an unexpected message)
    posted_.remove(req);
    complete(req, why);
  }
}

void P2pEngine::send_mismatch(int to, const Poisoned &p) {
  FrameHeader h{};
  h.kind = kFrameMismatch;
  h.flags = p.reporter_sig;
  h.ctx = p.ctx;
  h.src = opts_.my_rank;
  h.tag = p.tag;
  h.bytes = p.offender_sig;
  h.id = static_cast<uint64_t>(p.offender);
  h.arg = p.reporter >= 0 ? static_cast<uint64_t>(p.reporter) + 1 : 0;  // 0: found by the frame's sender
  send_frame(to, h, nullptr, 0, nullptr);
}

Status P2pEngine::report_mismatch_locked(const Request &op, int src, uint32_t their_sig) {
  Poisoned p{op.ctx, op.tag, -1, op.sig, src, their_sig};
  // Every member hears of it, so none waits for a rank that has left the op.
  if (op.members) {
    for (int r : *op.members) {
      if (r == opts_.my_rank || r < 0 || r >= opts_.fabric_size) continue;
      if (!route_[static_cast<size_t>(r)] || dead_[static_cast<size_t>(r)]) continue;
      send_mismatch(r, p);
    }
  }
  Status why = poisoned_error(p, &op);
  poison_locked(p);
  return why;
}

void P2pEngine::poison_locked(const Poisoned &p) {
  poisoned_.push_back(p);
  if (poisoned_.size() > kPoisonedKept) poisoned_.pop_front();
  auto of_op = [&](const Request *req, int) {
    return req->collective && req->ctx == p.ctx && req->tag == p.tag && !req->granted;
  };
  // Receives streaming in drop a late DATA or NACK; a GO gets its FIN. Sends
  // already streaming out are left to finish: their receiver is in the op
  // too and drops the pieces once it hears, while a NACK could reach it
  // before the news. A granted send ends at FIN, as ever.
  std::vector<Request *> victims = pending_requests_locked(kPosted | kRecvsStreaming | kOutboxes, of_op);
  for (Request *req : pending_requests_locked(kSendsWaiting, of_op)) {
    victims.push_back(req);
    // Its receiver may have taken the RTS already; our NACK to its CTS must
    // not reach it before the news, or it would see a plain withdrawal.
    if (p.reporter >= 0 && req->peer != p.reporter) send_mismatch(req->peer, p);
  }
  for (Request *req : victims) cancel_locked(req, poisoned_error(p, req));
  if (!victims.empty()) wake_waiters_locked();  // waiters asleep on these requests
}

Status P2pEngine::op_interrupted(const Request &op) {
  auto guard = lock();
  XC_TRY(aborted_status_locked(op.ctx));
  progress_locked();
  XC_TRY(aborted_status_locked(op.ctx));  // that pass may have brought a REVOKE (revoke.cc)
  XC_TRY(poisoned_status_locked(op));
  // A message of this op number from a member in another op (one whose
  // closing barrier met our shared-memory op, say): nobody receives it.
  for (const Unexpected &u : unexpected_)
    if (u.ctx == op.ctx && u.tag == op.tag && signatures_conflict(op.sig, u.sig))
      return report_mismatch_locked(op, u.src, u.sig);
  return Status::Ok();
}

}  // namespace xc
