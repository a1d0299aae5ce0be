#include "device/control.h"

#include <string>

namespace xc::device {

Messages::~Messages() {
  for (auto &r : reqs_)
    if (!r->done) c_.engine->cancel(r.get(), Error(XC_ERR_ABORTED, "the device op gave up"));
}

std::unique_ptr<Request> post_message(const CommView &c, bool send, uint64_t ctx_offset, int peer, int tag,
                                      void *data, size_t bytes, bool collective) {
  auto r = std::make_unique<Request>();
  r->kind = send ? RequestKind::kSend : RequestKind::kRecv;
  r->collective = collective;
  r->ctx = c.ctx + ctx_offset;
  r->peer = peer < 0 ? -1 : c.fabric_rank(peer);
  r->tag = tag;
  r->members = c.members;
  r->buf = data;
  r->bytes = bytes;
  if (send)
    c.engine->post_send(r.get());
  else
    c.engine->post_recv(r.get());
  return r;
}

Request *Messages::post(bool send, uint64_t ctx_offset, int peer, int tag, void *data, size_t bytes,
                        bool collective) {
  reqs_.push_back(post_message(c_, send, ctx_offset, peer, tag, data, bytes, collective));
  return reqs_.back().get();
}

Request *Messages::send(uint64_t ctx_offset, int peer, int tag, const void *data, size_t bytes, bool collective) {
  return post(true, ctx_offset, peer, tag, const_cast<void *>(data), bytes, collective);
}

Request *Messages::recv(uint64_t ctx_offset, int peer, int tag, void *data, size_t bytes, bool collective) {
  return post(false, ctx_offset, peer, tag, data, bytes, collective);
}

Status Messages::wait(Request *r, Deadline deadline, const char *what) {
  Status st = r->done ? r->status : c_.engine->wait(r, deadline);
  if (st.ok()) return st;
  int peer = r->peer < 0 ? -1 : comm_rank_of(r, r->peer);
  std::string who = peer < 0 ? std::string("any rank") : "rank " + std::to_string(peer);
  if (st.code() == XC_ERR_TIMEOUT)
    return Error(XC_ERR_TIMEOUT, "%s: %s of %s did not come within %llu ms on communicator %s", what,
                 r->kind == RequestKind::kSend ? "the receiver" : "the message", who.c_str(),
                 static_cast<unsigned long long>(c_.timeout_ms), c_.name.c_str());
  return std::move(st.with_context(std::string(what) + " (" + who + ")"));
}

Status Messages::wait_all(Deadline deadline, const char *what) {
  Status first;
  for (auto &r : reqs_) {
    Status st = wait(r.get(), deadline, what);
    if (!st.ok() && first.ok()) {
      first = std::move(st);
      deadline = Deadline::AfterMs(0);  // the op failed: withdraw the rest now
    }
  }
  return first;
}

int Messages::source_rank(const Request *r) const { return comm_rank_of(r, r->source); }

}  // namespace xc::device
