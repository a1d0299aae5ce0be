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

}  // namespace xc::api
