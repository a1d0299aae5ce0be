// The executor of XC_THREAD_SERIALIZED: a "non-blocking" collective runs to
// completion when it is started, on the thread that starts it.
#include <utility>

#include "runtime/coll_task.h"
#include "runtime/executor.h"

namespace xc {

namespace {

class InlineExecutor final : public Executor {
 public:
  explicit InlineExecutor(xc_comm_s *comm) : comm_(comm) {}

  const char *name() const override { return "inline"; }
  void submit(std::shared_ptr<CollTask> task) override {
    if (stopped_.ok())
      task->run(comm_);
    else
      task->fail(comm_, stopped_);
  }
  bool idle_after_use() override { return true; }  // never called: nothing is ever queued
  void drain() override {}
  void shutdown() override {
    if (stopped_.ok()) stopped_ = Error(XC_ERR_ABORTED, "the communicator is being freed");
  }
  void abort(const Status &why) override { stopped_ = why; }

 private:
  xc_comm_s *comm_;
  Status stopped_;  // an error once aborted or shut down
};

}  // namespace

std::unique_ptr<Executor> make_inline_executor(xc_comm_s *comm) { return std::make_unique<InlineExecutor>(comm); }

}  // namespace xc
