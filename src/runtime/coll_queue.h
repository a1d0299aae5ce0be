// Collectives that run off the caller's thread: the non-blocking ones and
// those started inside xc_group_start/end. Each communicator gets one worker
// thread, made at its first such op, that runs them one at a time in the
// order they were started. An op's context (sequence number, tag) and
// signature are made when the user starts it, on the user's thread, so ranks
// match ops in the order each of them issued them; its deadline starts when
// it begins to run, so time the user spends before waiting does not count.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "coll/context.h"
#include "coll/desc.h"
#include "base/deadline.h"
#include "base/status.h"

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

  // Run it here, now (the worker, or the caller when no worker may be used).
  void run(xc_comm_s *comm);
  // Fail it without running (abort, a queue that is shutting down).
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

class CollQueue {
 public:
  explicit CollQueue(xc_comm_s *comm) : comm_(comm) {}
  ~CollQueue();  // joins the worker (after shutdown() it is already gone)
  CollQueue(const CollQueue &) = delete;
  CollQueue &operator=(const CollQueue &) = delete;

  // Queue task behind the others; starts the worker at the first one. After
  // an abort or shutdown the task fails at once.
  void submit(std::shared_ptr<CollTask> task);
  // Nothing queued or running.
  bool idle();
  // Wait until everything queued has finished (each op is bounded by its
  // own deadline).
  void drain();
  // drain(), then stop and join the worker.
  void shutdown();
  // Fail every queued op with why; the running one is failed by the engine
  // (its context is aborted). Never blocks on an op.
  void abort(const Status &why);

 private:
  void work();

  xc_comm_s *comm_;
  std::mutex mu_;
  std::condition_variable cv_;       // worker: work arrived or stop
  std::condition_variable idle_cv_;  // drain: the queue emptied
  std::deque<std::shared_ptr<CollTask>> queue_;
  bool running_ = false;
  bool stop_ = false;
  bool aborted_ = false;
  Status abort_why_;
  std::thread worker_;
};

// comm's queue, made at the first use.
CollQueue &coll_queue_of(xc_comm_s *comm);
// Hooks for the communicator's life cycle (core/comm.cc); no-ops when comm
// never queued anything.
bool coll_queue_idle(xc_comm_s *comm);
void coll_queue_drain(xc_comm_s *comm);
void coll_queue_shutdown(xc_comm_s *comm);
void coll_queue_abort(xc_comm_s *comm, const Status &why);

}  // namespace xc
