// A started collective: what the non-blocking ones, those inside
// xc_group_start/end and blocking ones behind them hand to their
// communicator's executor (runtime/executor.h). An op's context (sequence
// number, tag) and signature are made when the user starts it, on the user's
// thread, so ranks match ops in the order each of them issued them; its
// deadline starts when it begins to run, so time the user spends before
// waiting does not count.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/deadline.h"
#include "base/status.h"
#include "coll/context.h"
#include "coll/desc.h"

struct xc_comm_s;

namespace xc {

// An op's failure, prefixed with what names it: "xc_allreduce (op #12 on comm
// 'world', rank 3): ...". A failed collective leaves ranks out of step, so
// the communicator is marked broken (xc_comm_free then skips its closing
// barrier).
Status coll_op_error(Status st, const char *fn, xc_comm_s *comm, int seq);

// One started collective and its outcome, shared by the queue and whatever
// waits for it (a request, a group, a blocking call queued behind others).
class CollTask {
 public:
  // Takes the op's context and signature now (submit time) from comm.
  CollTask(const char *fn, xc_comm_s *comm, CollDesc desc);
  CollTask(const CollTask &) = delete;
  CollTask &operator=(const CollTask &) = delete;

  // Run it here, now (an executor's thread).
  void run(xc_comm_s *comm);
  // Fail it without running (abort, an executor that is shutting down).
  void fail(xc_comm_s *comm, const Status &why);

  // Wait until it is done, at most the communicator's timeout after it
  // started (plus a grace: the op times out on its own first, with a better
  // message). XC_ERR_TIMEOUT when even that passes.
  Status wait();
  bool done() const;
  const char *fn() const { return fn_; }
  int seq() const { return ctx_.seq(); }

 private:
  void complete(Status st);

  const char *fn_;
  CollDesc desc_;
  coll::CollContext ctx_;
  uint64_t timeout_ms_;
  std::string where_;  // "op #12 on comm 'world', rank 3", for the backstop timeout

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;
  bool done_ = false;
  Deadline::Clock::time_point started_at_;
  Status status_;
};

}  // namespace xc
