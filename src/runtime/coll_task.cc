#include "runtime/coll_task.h"

#include <chrono>
#include <utility>

#include "algo/collective.h"
#include "runtime/comm.h"
#include "runtime/trace_dump.h"

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

CollTask::CollTask(const char *fn, xc_comm_s *comm, CollDesc desc)
    : fn_(fn), desc_(std::move(desc)), ctx_(make_coll_context(comm)), timeout_ms_(comm->timeout_ms) {
  ctx_.set_signature(coll_signature(desc_), &desc_);
  where_ = "op #" + std::to_string(ctx_.seq()) + " on comm '" + comm->name + "', rank " + std::to_string(comm->rank);
  trace_begin(comm, ctx_.seq(), desc_, TraceState::kEnqueued);
}

void CollTask::run(xc_comm_s *comm) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_ = true;
    started_at_ = Deadline::Clock::now();
  }
  ctx_.set_deadline(Deadline::AfterMs(timeout_ms_));
  trace_running(comm, ctx_.seq());
  Status st = algo::run_collective(ctx_, desc_);
  if (st.ok())
    trace_done(comm, ctx_.seq());
  else
    trace_failed(comm, ctx_.seq(), st);
  complete(coll_op_error(std::move(st), fn_, comm, ctx_.seq()));
}

void CollTask::fail(xc_comm_s *comm, const Status &why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_ = true;
    started_at_ = Deadline::Clock::now();
  }
  trace_failed(comm, ctx_.seq(), why);
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
    auto until = Deadline::AfterMs(sat_ms(timeout_ms_, 1, kWaitGraceMs), started_at_).at();
    if (Deadline::Clock::now() >= until)
      return Error(XC_ERR_TIMEOUT, "%s (%s): still running %llu ms after it started", fn_, where_.c_str(),
                   static_cast<unsigned long long>(sat_ms(timeout_ms_, 1, kWaitGraceMs)));
    cv_.wait_until(lock, until);
  }
}

}  // namespace xc
