#include "transport/nccl/nccl_comm.h"

#include <chrono>
#include <thread>

#include "base/log.h"

namespace xc::nccl {

Status nccl_error(const NcclApi *api, ncclComm_t comm, ncclResult_t r, const char *what) {
  const char *text = api->ncclGetErrorString ? api->ncclGetErrorString(r) : nullptr;
  const char *last = api->ncclGetLastError ? api->ncclGetLastError(comm) : nullptr;
  return Error(XC_ERR_NCCL, "NCCL %s failed: %s (ncclResult_t %d)%s%s", what, text ? text : "?", static_cast<int>(r),
               last && *last ? ": " : "", last && *last ? last : "");
}

namespace {

ncclConfig_t nonblocking_config(const std::string &name) {
  ncclConfig_t c = config_initializer();
  c.blocking = 0;
  c.commName = name.c_str();
  return c;
}

// Polls start fast (a call that returns in progress often completes within
// microseconds) and settle at 1 ms: a creation takes milliseconds to
// seconds, and the poller must not take a core from NCCL's own threads.
void pause(int round) {
  if (round < 64) {
    std::this_thread::yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::microseconds(round < 256 ? 50 : 1000));
}

}  // namespace

Status NcclComm::failure(const char *what, ncclResult_t r) {
  Status st = nccl_error(api_, comm_, r, what);
  return st;
}

Status NcclComm::wait_ready(const char *what, ncclResult_t issued, Deadline deadline,
                            const std::function<Status()> &idle) {
  if (issued != ncclSuccess && issued != ncclInProgress) return failure(what, issued);
  for (int round = 0;; ++round) {
    if (aborted_.load()) return Error(XC_ERR_ABORTED, "NCCL %s: the communicator was aborted", what);
    ncclResult_t async = ncclSuccess;
    ncclResult_t r = api_->ncclCommGetAsyncError(comm_, &async);
    if (r != ncclSuccess) return failure("ncclCommGetAsyncError", r);
    if (async == ncclSuccess) return Status::Ok();
    if (async != ncclInProgress) return failure(what, async);
    if (deadline.expired())
      return Error(XC_ERR_TIMEOUT, "NCCL %s did not complete before the deadline (communicator %s); aborted it", what,
                   name_.c_str());
    if (idle) {
      Status news = idle();
      if (!news.ok()) return news;
    }
    pause(round);
  }
}

Status NcclComm::init(const NcclApi *api, int nranks, const ncclUniqueId &id, int rank, const std::string &name,
                      Deadline deadline, std::shared_ptr<NcclComm> *out, const std::function<Status()> &idle) {
  std::shared_ptr<NcclComm> c(new NcclComm(api, name));
  ncclConfig_t cfg = nonblocking_config(c->name_);
  std::lock_guard<std::mutex> g(c->mu_);
  ncclResult_t r = api->ncclCommInitRankConfig(&c->comm_, nranks, id, rank, &cfg);
  if (!c->comm_) return nccl_error(api, nullptr, r == ncclSuccess ? ncclInternalError : r, "ncclCommInitRankConfig");
  Status st = c->wait_ready("ncclCommInitRankConfig", r, deadline, idle);
  if (!st.ok()) {
    c->broken_.store(true);
    return st;  // the destructor aborts it
  }
  *out = std::move(c);
  return Status::Ok();
}

Status NcclComm::split(int color, int key, const std::string &name, Deadline deadline, std::shared_ptr<NcclComm> *out,
                       const std::function<Status()> &idle) {
  std::shared_ptr<NcclComm> child(new NcclComm(api_, name));
  ncclConfig_t cfg = nonblocking_config(child->name_);
  cfg.splitShare = 1;  // the child shares the parent's channels and buffers where NCCL can
  std::lock_guard<std::mutex> g(mu_);
  if (broken_.load())
    return Error(XC_ERR_NCCL, "NCCL communicator %s is broken: %s", name_.c_str(), why_broken_.c_str());
  ncclResult_t r = api_->ncclCommSplit(comm_, color, key, &child->comm_, &cfg);
  Status st = wait_ready("ncclCommSplit", r, deadline, idle);
  if (st.ok() && child->comm_) {
    // The child is made in the background too: ready when its own async error says so.
    std::lock_guard<std::mutex> cg(child->mu_);
    st = child->wait_ready("ncclCommSplit (child)", ncclInProgress, deadline, idle);
  }
  if (!st.ok()) {
    child->broken_.store(true);
    broken_.store(true);
    why_broken_ = st.message();
    if (aborted_.load() || st.code() == XC_ERR_TIMEOUT || st.code() == XC_ERR_NCCL) {
      aborted_.store(true);
      (void)api_->ncclCommAbort(comm_);
      comm_ = nullptr;
    }
    return st;
  }
  if (child->comm_) *out = std::move(child);
  return Status::Ok();
}

Status NcclComm::run(const char *what, const std::function<ncclResult_t(ncclComm_t)> &issue, Deadline deadline,
                     const std::function<Status()> &idle) {
  std::lock_guard<std::mutex> g(mu_);
  if (aborted_.load()) return Error(XC_ERR_ABORTED, "NCCL communicator %s was aborted", name_.c_str());
  if (broken_.load())
    return Error(XC_ERR_NCCL, "NCCL communicator %s is broken: %s", name_.c_str(), why_broken_.c_str());
  Status st = wait_ready(what, issue(comm_), deadline, idle);
  if (!st.ok()) {
    // NCCL's rule after an error (and what a timed-out call needs): the
    // communicator can only be aborted.
    broken_.store(true);
    why_broken_ = st.message();
    aborted_.store(true);
    if (comm_) (void)api_->ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  return st;
}

Status NcclComm::peek(const char *what) {
  if (aborted_.load()) return Error(XC_ERR_ABORTED, "NCCL communicator %s was aborted", name_.c_str());
  std::unique_lock<std::mutex> g(mu_, std::try_to_lock);
  if (!g.owns_lock() || !comm_) return Status::Ok();
  ncclResult_t async = ncclSuccess;
  if (api_->ncclCommGetAsyncError(comm_, &async) != ncclSuccess) return Status::Ok();
  if (async == ncclSuccess || async == ncclInProgress) return Status::Ok();
  return failure(what, async);
}

void NcclComm::abort(const char *why) {
  broken_.store(true);
  aborted_.store(true);
  // A call in flight holds mu_ and polls: it sees aborted_ and returns
  // within a poll; whoever holds mu_ last aborts it. Never wait here.
  std::unique_lock<std::mutex> g(mu_, std::try_to_lock);
  if (!g.owns_lock()) return;
  if (why_broken_.empty()) why_broken_ = why;
  if (comm_) {
    XC_INFO("ncclCommAbort on %s: %s", name_.c_str(), why);
    (void)api_->ncclCommAbort(comm_);
    comm_ = nullptr;
  }
}

NcclComm::~NcclComm() {
  std::lock_guard<std::mutex> g(mu_);
  if (!comm_) return;
  if (broken_.load() || aborted_.load()) {
    (void)api_->ncclCommAbort(comm_);
    return;
  }
  // Finalize flushes what is queued; bounded, then aborted if it does not end.
  ncclResult_t r = api_->ncclCommFinalize(comm_);
  Status st = wait_ready("ncclCommFinalize", r, Deadline::AfterMs(finalize_ms_));
  if (!st.ok()) {
    XC_WARN("NCCL communicator %s: %s", name_.c_str(), st.message().c_str());
    (void)api_->ncclCommAbort(comm_);
    return;
  }
  (void)api_->ncclCommDestroy(comm_);
}

}  // namespace xc::nccl
