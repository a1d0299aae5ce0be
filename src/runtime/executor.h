// Where a communicator's started collectives run (runtime/coll_task.h): one
// executor per communicator, which runs them one at a time in the order they
// were started. Two kinds today:
//   worker  a thread of the communicator's own, started at its first task:
//           non-blocking and grouped collectives return at once
//           (XC_THREAD_MULTIPLE, the default);
//   inline  the submitting thread runs the task to completion before
//           submit() returns (XC_THREAD_SERIALIZED: no second thread may
//           touch the engine).
// Device memory will add a third, ordered by a device stream rather than by
// a thread. A blocking collective with nothing queued before it skips the
// executor altogether and runs on the caller's thread (api/coll_submit.cc).
#pragma once

#include <atomic>
#include <memory>

#include "base/status.h"

struct xc_comm_s;

namespace xc {

class CollTask;

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const char *name() const = 0;
  // Run task after the ones submitted before it; after abort() or
  // shutdown() it fails at once instead.
  virtual void submit(std::shared_ptr<CollTask> task) = 0;
  // Nothing queued or running. Inline and lock-free while nothing was ever
  // submitted: every blocking collective asks, and a locked instruction
  // would wait for the op's stores.
  bool idle() { return !used_.load(std::memory_order_acquire) || idle_after_use(); }
  // Wait until everything submitted has finished (each op is bounded by its
  // own deadline).
  virtual void drain() = 0;
  // drain(), then stop (a worker is joined); later tasks fail.
  virtual void shutdown() = 0;
  // Fail every queued task with why; the running one is failed by the
  // engine (its context is aborted). Never blocks on an op.
  virtual void abort(const Status &why) = 0;

 protected:
  // Called by submit() of an executor that queues (before the task is
  // queued), so idle() looks further.
  void mark_used() { used_.store(true, std::memory_order_release); }
  virtual bool idle_after_use() = 0;

 private:
  std::atomic<bool> used_{false};
};

std::unique_ptr<Executor> make_worker_executor(xc_comm_s *comm);
std::unique_ptr<Executor> make_inline_executor(xc_comm_s *comm);

}  // namespace xc
