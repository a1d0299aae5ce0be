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
  // Nothing queued or running. Cheap while nothing was ever submitted: every
  // blocking collective asks.
  virtual bool idle() = 0;
  // Wait until everything submitted has finished (each op is bounded by its
  // own deadline).
  virtual void drain() = 0;
  // drain(), then stop (a worker is joined); later tasks fail.
  virtual void shutdown() = 0;
  // Fail every queued task with why; the running one is failed by the
  // engine (its context is aborted). Never blocks on an op.
  virtual void abort(const Status &why) = 0;
};

std::unique_ptr<Executor> make_worker_executor(xc_comm_s *comm);
std::unique_ptr<Executor> make_inline_executor(xc_comm_s *comm);

}  // namespace xc
