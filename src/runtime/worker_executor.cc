// The executor of XC_THREAD_MULTIPLE: one thread per communicator, started
// at its first task, runs the tasks one by one. We chose a worker over
// libNBC-style schedules because every algorithm stays a plain function over
// blocking exchanges (the engine is thread-safe), so the blocking fast path
// pays nothing for the non-blocking machinery (docs/design.md).
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "runtime/coll_task.h"
#include "runtime/executor.h"

namespace xc {

namespace {

class WorkerExecutor final : public Executor {
 public:
  explicit WorkerExecutor(xc_comm_s *comm) : comm_(comm) {}
  ~WorkerExecutor() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    if (worker_.joinable()) worker_.join();
  }

  const char *name() const override { return "worker"; }

  void submit(std::shared_ptr<CollTask> task) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (aborted_ || stop_) {
      Status why = aborted_ ? abort_why_ : Error(XC_ERR_ABORTED, "the communicator is being freed");
      lock.unlock();
      task->fail(comm_, why);
      return;
    }
    mark_used();
    queue_.push_back(std::move(task));
    if (!worker_.joinable()) worker_ = std::thread([this] { work(); });
    cv_.notify_all();
  }

  bool idle_after_use() override {
    std::lock_guard<std::mutex> lock(mu_);
    return queue_.empty() && !running_;
  }

  void drain() override {
    if (idle()) return;
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [&] { return queue_.empty() && !running_; });
  }

  void shutdown() override {
    drain();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    if (worker_.joinable()) worker_.join();
  }

  void abort(const Status &why) override {
    std::deque<std::shared_ptr<CollTask>> victims;
    {
      std::lock_guard<std::mutex> lock(mu_);
      aborted_ = true;
      abort_why_ = why;
      victims.swap(queue_);
      if (!running_) idle_cv_.notify_all();
    }
    for (auto &task : victims) task->fail(comm_, why);
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      std::shared_ptr<CollTask> task = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      lock.unlock();
      task->run(comm_);
      task.reset();
      lock.lock();
      running_ = false;
      if (queue_.empty()) idle_cv_.notify_all();
    }
  }

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

}  // namespace

std::unique_ptr<Executor> make_worker_executor(xc_comm_s *comm) { return std::make_unique<WorkerExecutor>(comm); }

}  // namespace xc
