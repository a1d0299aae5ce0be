// One NCCL communicator, always in NCCL's non-blocking mode (config.blocking
// = 0): every call returns at once, possibly ncclInProgress, and is then
// polled with ncclCommGetAsyncError under xcomm's deadline. That is what
// keeps NCCL inside xcomm's promise that nothing hangs forever: a call that
// does not complete by the deadline is XC_ERR_TIMEOUT and the NCCL
// communicator is aborted (ncclCommAbort returns at once in this mode).
// NCCL communicators are not thread safe: one call at a time, under mu_.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/deadline.h"
#include "base/status.h"
#include "transport/nccl/nccl_api.h"

namespace xc::nccl {

class NcclComm {
 public:
  // Join the NCCL communicator named by id as rank of nranks (collective
  // over the nranks callers), ready when this returns.
  static Status init(const NcclApi *api, int nranks, const ncclUniqueId &id, int rank, const std::string &name,
                     Deadline deadline, std::shared_ptr<NcclComm> *out, const std::function<Status()> &idle = {});
  ~NcclComm();  // finalize and destroy; abort when broken
  NcclComm(const NcclComm &) = delete;
  NcclComm &operator=(const NcclComm &) = delete;

  // ncclCommSplit of this communicator (collective over its ranks; each
  // calls once). color kSplitNoColor: takes part, *out stays null.
  Status split(int color, int key, const std::string &name, Deadline deadline, std::shared_ptr<NcclComm> *out,
               const std::function<Status()> &idle = {});

  // Issue NCCL calls (issue returns the last one's result; it may call
  // ncclGroupStart/End) and wait until they are no longer in progress. A
  // failure breaks the communicator (aborted; every later call fails).
  // idle, if set, runs between polls (the caller's other progress, and
  // its news: an error from it ends the wait and breaks the communicator,
  // e.g. a member the host engine knows is dead).
  Status run(const char *what, const std::function<ncclResult_t(ncclComm_t)> &issue, Deadline deadline,
             const std::function<Status()> &idle = {});

  // ncclCommAbort now (never waits for the communicator's lock: a call
  // polling under it sees the abort and returns). Later calls: XC_ERR_ABORTED.
  void abort(const char *why);
  // One look at NCCL's asynchronous error without waiting: a call in
  // flight (it polls anyway), in progress or none: OK; else the error.
  Status peek(const char *what);
  bool broken() const { return broken_.load(); }
  // How long the destructor lets ncclCommFinalize take (the communicator's deadline).
  void set_finalize_ms(uint64_t ms) { finalize_ms_ = ms; }
  const NcclApi *api() const { return api_; }
  const std::string &name() const { return name_; }

 private:
  NcclComm(const NcclApi *api, std::string name) : api_(api), name_(std::move(name)) {}
  // Poll ncclCommGetAsyncError until not ncclInProgress; under mu_.
  Status wait_ready(const char *what, ncclResult_t issued, Deadline deadline, const std::function<Status()> &idle = {});
  Status failure(const char *what, ncclResult_t r);

  const NcclApi *api_;
  std::string name_;
  ncclComm_t comm_ = nullptr;
  std::mutex mu_;
  std::atomic<bool> broken_{false};
  std::atomic<bool> aborted_{false};
  std::string why_broken_;
  uint64_t finalize_ms_ = 10000;
  std::mutex abort_mu_;
};

// The failure of an NCCL call as an xcomm status: XC_ERR_NCCL with NCCL's
// string for r and its last error text.
Status nccl_error(const NcclApi *api, ncclComm_t comm, ncclResult_t r, const char *what);

}  // namespace xc::nccl
