#include "device/stream.h"

#include <atomic>
#include <map>
#include <utility>

#include "base/log.h"

namespace xc::device {

namespace {
constexpr size_t kAbortWord = 8;     // byte offsets in the shared flags
constexpr size_t kExpiredWord = 12;
constexpr size_t kFlagBytes = 64;
}  // namespace

void OpOutcome::finish(const Status &st, int source, int tag, size_t bytes) {
  {
    std::lock_guard<std::mutex> g(mu_);
    st_ = st;
    source_ = source;
    tag_ = tag;
    bytes_ = bytes;
    done_ = true;
  }
  cv_.notify_all();
}

Status OpOutcome::wait(Deadline deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  if (!cv_.wait_until(lk, deadline.at(), [this] { return done_; }))
    return Error(XC_ERR_TIMEOUT, "the device op did not complete before the deadline");
  return st_;
}

bool OpOutcome::done() {
  std::lock_guard<std::mutex> g(mu_);
  return done_;
}

Status JobEnv::finish_work() {
  gpu::Event *e = nullptr;
  XC_TRY(dev_->event_record(work_, &e));
  return gpu::event_wait(dev_, e, Deadline::AfterMs(timeout_ms_));
}

Status JobEnv::scratch(size_t bytes, void **out) {
  if (*scratch_bytes_ < bytes) {
    size_t grown = 1;
    while (grown < bytes) grown *= 2;
    void *p = nullptr;
    XC_TRY(dev_->alloc(grown, &p));
    if (*scratch_) outgrown_->push_back(*scratch_);  // queued work may still use it
    *scratch_ = p;
    *scratch_bytes_ = grown;
  }
  *out = *scratch_;
  return Status::Ok();
}

Status DeviceStream::make(gpu::Device *dev, void *native, bool wrap, std::shared_ptr<DeviceStream> *out) {
  // One DeviceStream per application stream, so ops that reach it through
  // several wrappers (and communicators' defaults) keep one order.
  static std::mutex registry_mu;
  static std::map<std::pair<gpu::Device *, void *>, std::weak_ptr<DeviceStream>> registry;
  std::unique_lock<std::mutex> g(registry_mu, std::defer_lock);
  if (wrap) {
    g.lock();
    auto it = registry.find({dev, native});
    if (it != registry.end()) {
      std::shared_ptr<DeviceStream> live = it->second.lock();
      if (live && !live->retired()) {
        *out = std::move(live);
        return Status::Ok();
      }
    }
  }
  std::shared_ptr<DeviceStream> s(new DeviceStream(dev));
  XC_TRY(wrap ? dev->stream_wrap(native, &s->user_) : dev->stream_create(&s->user_));
  XC_TRY(dev->stream_create(&s->work_));
  XC_TRY(dev->flags_alloc(kFlagBytes, &s->flags_));
  s->thread_ = std::thread([p = s.get()] { p->run_thread(); });
  if (wrap) registry[{dev, native}] = s;
  *out = std::move(s);
  return Status::Ok();
}

DeviceStream::~DeviceStream() {
  if (thread_.joinable()) {
    // Ops still queued fail fast: their peers are gone or will time out; the
    // wait is bounded by the longest deadline any of them had.
    Status st = synchronize(Deadline::AfterMs(sat_ms(longest_timeout_ms_, 1, 1000)));
    if (!st.ok()) XC_WARN("destroying a device stream: %s", st.message().c_str());
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  if (flags_.host) {
    // Open every gate still waiting, so the application's stream goes on:
    // a gate kernel also looks at the abort word, a stream wait only at the flag.
    reinterpret_cast<std::atomic<uint32_t> *>(static_cast<char *>(flags_.host) + kAbortWord)->store(1);
    reinterpret_cast<std::atomic<uint64_t> *>(released())->store(UINT64_MAX, std::memory_order_release);
  }
  if (work_) {
    gpu::Event *e = nullptr;
    if (dev_->event_record(work_, &e).ok())
      (void)gpu::event_wait(dev_, e, Deadline::AfterMs(sat_ms(longest_timeout_ms_, 1, 1000)));
    dev_->stream_release(work_);
  }
  if (user_) {
    bool idle = false;
    Deadline d = Deadline::AfterMs(sat_ms(longest_timeout_ms_, 1, 1000));
    while (dev_->stream_query(user_, &idle).ok() && !idle && !d.expired()) std::this_thread::yield();
    dev_->stream_release(user_);
  }
  if (scratch_) (void)dev_->free(scratch_);
  for (void *p : outgrown_) (void)dev_->free(p);
  // Pinned flags are freed last: a gate on the user's stream may read them until it opens.
  if (flags_.host) dev_->flags_free(&flags_);
}

Status DeviceStream::enqueue(Job job) {
  std::lock_guard<std::mutex> order(enqueue_mu_);
  bool capturing = false;
  XC_TRY(dev_->stream_capturing(user_, &capturing));
  if (capturing)
    return Error(XC_ERR_UNSUPPORTED,
                 "%s on a stream being captured into a graph: only allreduce, reduce_scatter and allgather "
                 "through the intra-node kernels capture (no host step), and a communicator's first such op "
                 "sets them up on the host: run one before capturing",
                 job.what.c_str());
  uint64_t seq;
  {
    std::lock_guard<std::mutex> g(mu_);
    seq = enqueued_ + 1;
  }
  gpu::Event *ready = nullptr;
  XC_TRY(dev_->event_record(user_, &ready));
  kernels::GateArgs gate;
  char *f = static_cast<char *>(flags_.dev);
  gate.flag = reinterpret_cast<const volatile uint64_t *>(f);
  gate.value = seq;
  gate.abort = reinterpret_cast<const volatile uint32_t *>(f + kAbortWord);
  gate.expired = reinterpret_cast<volatile uint32_t *>(f + kExpiredWord);
  // The host side gives up at the op's deadline and opens the gate then;
  // the gate's own limit is only a backstop for a host side that is gone.
  gate.timeout_ns = sat_ms(sat_ms(job.timeout_ms, 2, 1000), 1000000, 0);  // ns, saturated like the ms
  Status st = dev_->launch_gate(gate, user_);
  if (!st.ok()) {
    dev_->event_destroy(ready);
    return st;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    if (job.timeout_ms > longest_timeout_ms_) longest_timeout_ms_ = job.timeout_ms;
    enqueued_ = seq;
    queue_.push_back(Pending{std::move(job), seq, ready});
  }
  cv_.notify_all();
  return Status::Ok();
}

Status DeviceStream::enqueue_direct(Job job, const std::function<Status(gpu::Stream *user)> &issue) {
  std::lock_guard<std::mutex> order(enqueue_mu_);
  bool capturing = false;
  XC_TRY(dev_->stream_capturing(user_, &capturing));
  uint64_t seq;
  {
    std::lock_guard<std::mutex> g(mu_);
    seq = enqueued_ + 1;
  }
  XC_TRY(issue(user_));
  if (capturing) {
    if (job.outcome) job.outcome->finish(Status::Ok());
    return Status::Ok();
  }
  gpu::Event *done = nullptr;
  XC_TRY(dev_->event_record(user_, &done));
  {
    std::lock_guard<std::mutex> g(mu_);
    if (job.timeout_ms > longest_timeout_ms_) longest_timeout_ms_ = job.timeout_ms;
    enqueued_ = seq;
    queue_.push_back(Pending{std::move(job), seq, done});
  }
  cv_.notify_all();
  return Status::Ok();
}

Status DeviceStream::synchronize(Deadline deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  uint64_t target = enqueued_;
  if (!cv_.wait_until(lk, deadline.at(), [&] { return finished_ >= target; }))
    return Error(XC_ERR_TIMEOUT, "device ops on the stream did not complete before the deadline (%llu of %llu done)",
                 static_cast<unsigned long long>(finished_), static_cast<unsigned long long>(target));
  Status st = std::move(first_error_);
  first_error_ = Status::Ok();
  return st;
}

void DeviceStream::run_thread() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    run_one(p);
    lk.lock();
    finished_ = p.seq;
    cv_.notify_all();
  }
}

void DeviceStream::run_one(Pending &p) {
  JobEnv env(dev_, work_, p.job.timeout_ms);
  env.scratch_ = &scratch_;
  env.scratch_bytes_ = &scratch_bytes_;
  env.outgrown_ = &outgrown_;
  Status st = gpu::event_wait(dev_, p.ready, env.deadline(), p.job.watch);  // the op's inputs are ready
  if (st.ok()) st = p.job.run(env);
  Status drained = env.finish_work();  // also after a failure: nothing of ours writes on after the gate opens
  if (st.ok()) st = std::move(drained);
  reinterpret_cast<std::atomic<uint64_t> *>(released())->store(p.seq, std::memory_order_release);
  if (!st.ok() && p.job.failed) p.job.failed(st);
  if (!st.ok()) {
    st = std::move(st.with_context(p.job.what));
    std::lock_guard<std::mutex> g(mu_);
    if (first_error_.ok()) first_error_ = st;
  }
  if (p.job.outcome && !p.job.outcome->done()) p.job.outcome->finish(st);
}

}  // namespace xc::device
