#include "api/api_support.h"

#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace xc::api {

thread_local bool t_has_error = false;
thread_local std::string t_last_error;

void clear_last_error() {
  t_last_error.clear();
  t_has_error = false;
}

xc_result_t finish(const char *function, const Status &st) {
  if (st.ok()) return ok();
  t_last_error = std::string(function) + ": " + st.message();
  t_has_error = true;
  return st.code();
}

xc_result_t finish_op(const char *function, const Status &st) {
  (void)function;
  if (st.ok()) return ok();
  t_last_error = st.message();
  t_has_error = true;
  return st.code();
}

const char *last_error() { return t_last_error.c_str(); }

namespace {
std::mutex g_pool_mu;
std::deque<xc_request_s *> g_pool;  // freed requests, oldest first
constexpr size_t kPoolQuarantine = 1024;  // freed requests kept unused before reuse
}  // namespace

xc_request_s *request_alloc() {
  {
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (g_pool.size() > kPoolQuarantine) {
      xc_request_s *r = g_pool.front();
      g_pool.pop_front();
      *r = xc_request_s();
      return r;
    }
  }
  return new xc_request_s();
}

void request_free(xc_request_s *r) {
  r->coll.reset();
  r->device.reset();
  r->fabric.reset();
  r->rank_of_fabric.reset();
  r->req.members.reset();
  r->req.magic = kRequestFreed;
  std::lock_guard<std::mutex> lock(g_pool_mu);
  g_pool.push_back(r);
}

Status check_request(const xc_request_s *r) {
  if (r->req.magic == kRequestFreed) return Error(XC_ERR_INVALID_USAGE, "the request was already completed and freed");
  if (r->req.magic != kRequestMagic) return Error(XC_ERR_INVALID_ARGUMENT, "not a request handle");
  return Status::Ok();
}

void fill_status(const Request &req, const std::vector<int> *rank_of_fabric, xc_status_t *status) {
  if (!status) return;
  status->error = req.status.code();
  status->reserved = 0;
  if (req.kind == RequestKind::kRecv && req.source >= 0) {
    status->source = rank_of_fabric ? (*rank_of_fabric)[static_cast<size_t>(req.source)] : req.source;
    status->tag = req.source_tag;
    status->bytes = req.message_bytes;
  } else {
    status->source = XC_ANY_SOURCE;
    status->tag = XC_ANY_TAG;
    status->bytes = req.kind == RequestKind::kSend && req.status.ok() ? req.bytes : 0;
  }
}

void fill_coll_status(const Status &st, xc_status_t *status) {
  if (status) *status = xc_status_t{XC_ANY_SOURCE, XC_ANY_TAG, st.code(), 0, 0};
}

Status explain_p2p(const Request &req, const char *op, int peer, int tag, uint64_t timeout_ms, const std::string &comm) {
  if (req.status.ok() || req.status.code() != XC_ERR_TIMEOUT) return req.status;
  if (peer == XC_ANY_SOURCE)
    return Error(XC_ERR_TIMEOUT, "%s (any source, tag %d, comm '%s') timed out after %llu ms: no matching message arrived",
                 op, tag, comm.c_str(), static_cast<unsigned long long>(timeout_ms));
  return Error(XC_ERR_TIMEOUT, "%s %s rank %d (tag %d, comm '%s') timed out after %llu ms: %s", op,
               req.kind == RequestKind::kSend ? "to" : "from", peer, tag, comm.c_str(),
               static_cast<unsigned long long>(timeout_ms),
               req.kind == RequestKind::kSend ? "the receiver never posted a matching receive"
                                              : "no matching message arrived");
}

xc_request_s *device_request(const char *op, xc_comm_t comm, int peer, std::shared_ptr<device::OpOutcome> outcome) {
  xc_request_s *r = request_alloc();
  r->kind = xc_request_s::Kind::kDevice;
  r->device = std::move(outcome);
  r->op = op;
  r->peer = peer;
  r->comm_name = comm->name;
  r->timeout_ms = comm->timeout_ms;
  return r;
}

bool request_done(xc_request_s *r) {
  switch (r->kind) {
    case xc_request_s::Kind::kCollective: return r->coll->done();
    case xc_request_s::Kind::kDevice: return r->device->done();
    default: return r->fabric->engine().test(&r->req);
  }
}

Status request_wait(xc_request_s *r, xc_status_t *status) {
  Status st;
  if (r->kind == xc_request_s::Kind::kDevice) {
    // The op finishes within its own deadline once its stream reaches it;
    // this bound also covers a few ops queued ahead of it.
    st = r->device->wait(Deadline::AfterMs(sat_ms(r->timeout_ms, 4, 1000)));
    if (status) {
      *status = xc_status_t{r->device->source(), r->device->tag(), st.code(), 0, r->device->bytes()};
    }
    if (!st.ok()) st = std::move(st.with_context(r->op));
  } else if (r->kind == xc_request_s::Kind::kCollective) {
    st = r->coll->wait();
    fill_coll_status(st, status);
  } else {
    if (!r->req.done) (void)r->fabric->engine().wait(&r->req, Deadline::AfterMs(r->timeout_ms));
    fill_status(r->req, r->rank_of_fabric.get(), status);
    st = explain_p2p(r->req, r->op, r->peer, r->req.tag, r->timeout_ms, r->comm_name);
  }
  request_free(r);
  return st;
}

}  // namespace xc::api
