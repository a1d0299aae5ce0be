#include "runtime/coll_queue.h"

#include <atomic>
#include <chrono>
#include <utility>

#include "algo/collective.h"
#include "runtime/comm.h"

namespace xc {

namespace {

// xc_wait's backstop comes this long after the op's own deadline, so the op's
// own timeout (which names the peer it waited for) is what the user sees.
constexpr uint64_t kWaitGraceMs = 1000;

}  // namespace

Status coll_op_error(Status st, const char *fn, xc_comm_s *comm, int seq) {
  if (st.ok()) return st;
  comm->broken.store(true);
  return Status(st.code(), std::string(fn) + " (op #" + std::to_string(seq) + " on comm '" + comm->name +
                               "', rank " + std::to_string(comm->rank) + "): " + st.message());
}

// ---- one task ------------------------------------------------------------------

CollTask::CollTask(const char *fn, xc_comm_s *comm, CollDesc desc)
    : fn_(fn), desc_(std::move(desc)), ctx_(make_coll_context(comm)), timeout_ms_(comm->timeout_ms) {
  ctx_.set_signature(coll_signature(desc_));
  where_ = "op #" + std::to_string(ctx_.seq()) + " on comm '" + comm->name + "', rank " + std::to_string(comm->rank);
}

void CollTask::run(xc_comm_s *comm) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_ = true;
    started_at_ = Deadline::Clock::now();
  }
  ctx_.set_deadline(Deadline::AfterMs(timeout_ms_));
  Status st = algo::run_collective(ctx_, desc_);
  complete(coll_op_error(std::move(st), fn_, comm, ctx_.seq()));
}

void CollTask::fail(xc_comm_s *comm, const Status &why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_ = true;
    started_at_ = Deadline::Clock::now();
  }
  complete(coll_op_error(why, fn_, comm, ctx_.seq()));
}

void CollTask::complete(Status st) {
  std::lock_guard<std::mutex> lock(mu_);
  status_ = std::move(st);
  done_ = true;
  cv_.notify_all();
}

bool CollTask::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

Status CollTask::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (done_) return status_;
    if (!started_) {  // queued behind other ops, each bounded by its own deadline
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      continue;
    }
    auto until = started_at_ + std::chrono::milliseconds(timeout_ms_ + kWaitGraceMs);
    if (Deadline::Clock::now() >= until)
      return Error(XC_ERR_TIMEOUT, "%s (%s): still running %llu ms after it started", fn_, where_.c_str(),
                   static_cast<unsigned long long>(timeout_ms_ + kWaitGraceMs));
    cv_.wait_until(lock, until);
  }
}

// ---- the queue -----------------------------------------------------------------

CollQueue::~CollQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

void CollQueue::submit(std::shared_ptr<CollTask> task) {
  std::unique_lock<std::mutex> lock(mu_);
  if (aborted_ || stop_) {
    Status why = aborted_ ? abort_why_ : Error(XC_ERR_ABORTED, "the communicator is being freed");
    lock.unlock();
    task->fail(comm_, why);
    return;
  }
  queue_.push_back(std::move(task));
  if (!worker_.joinable()) worker_ = std::thread([this] { work(); });
  cv_.notify_all();
}

bool CollQueue::idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.empty() && !running_;
}

void CollQueue::work() {
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

void CollQueue::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && !running_; });
}

void CollQueue::shutdown() {
  drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

void CollQueue::abort(const Status &why) {
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

// ---- per communicator ----------------------------------------------------------

namespace {
// Queues ever made in this process. While none exists, every blocking
// collective may run inline without taking any lock (the hot path).
std::atomic<bool> g_any_queue{false};
}  // namespace

CollQueue &coll_queue_of(xc_comm_s *comm) {
  std::lock_guard<std::mutex> lock(comm->coll_queue_mu);
  if (!comm->coll_queue) {
    comm->coll_queue = std::make_shared<CollQueue>(comm);
    g_any_queue.store(true, std::memory_order_release);
  }
  return *comm->coll_queue;
}

namespace {
std::shared_ptr<CollQueue> existing_queue(xc_comm_s *comm) {
  std::lock_guard<std::mutex> lock(comm->coll_queue_mu);
  return comm->coll_queue;
}
}  // namespace

bool coll_queue_idle(xc_comm_s *comm) {
  if (!g_any_queue.load(std::memory_order_acquire)) return true;
  std::shared_ptr<CollQueue> q = existing_queue(comm);
  return !q || q->idle();
}

void coll_queue_drain(xc_comm_s *comm) {
  if (std::shared_ptr<CollQueue> q = existing_queue(comm)) q->drain();
}

void coll_queue_shutdown(xc_comm_s *comm) {
  std::shared_ptr<CollQueue> q;
  {
    std::lock_guard<std::mutex> lock(comm->coll_queue_mu);
    q = std::move(comm->coll_queue);
  }
  if (q) q->shutdown();
}

void coll_queue_abort(xc_comm_s *comm, const Status &why) {
  if (std::shared_ptr<CollQueue> q = existing_queue(comm)) q->abort(why);
}

}  // namespace xc
