// A device stream as xcomm drives it: device-memory ops are stream-ordered
// (as in NCCL) but their control — finding peers' buffers, waiting for
// them — runs on the host. Each stream has one host thread that runs its
// ops in order; an op enqueued on the stream records "inputs ready" there and
// puts a gate behind itself (kernels/gate.cuh) that the thread opens when the
// op is done, so work the application queues after the op waits for it,
// while the call returned at once. The op's copies and kernels run on a
// second, internal stream, so the gate never blocks them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "gpu/device.h"

namespace xc::device {

// What a finished op reports: its status and, for a receive, what matched.
// Shared by the job and the request (xc_wait) that may outlive either.
class OpOutcome {
 public:
  void finish(const Status &st, int source = -1, int tag = -1, size_t bytes = 0);
  // Wait until finished or the deadline passes (XC_ERR_TIMEOUT then).
  Status wait(Deadline deadline);
  bool done();
  int source() const { return source_; }
  int tag() const { return tag_; }
  size_t bytes() const { return bytes_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Status st_;
  int source_ = -1, tag_ = -1;
  size_t bytes_ = 0;
};

// What a job may use while it runs on the stream's thread.
class JobEnv {
 public:
  JobEnv(gpu::Device *dev, gpu::Stream *work, uint64_t timeout_ms)
      : dev_(dev), work_(work), timeout_ms_(timeout_ms), deadline_(Deadline::AfterMs(timeout_ms)) {}
  gpu::Device *dev() const { return dev_; }
  gpu::Stream *work() const { return work_; }
  Deadline deadline() const { return deadline_; }
  // Wait for the copies and kernels queued on work() so far. Its own
  // deadline (one timeout from now), also when the op's has passed: the
  // work must be over before the buffers it touches are let go.
  Status finish_work();
  // Device memory of at least bytes, the stream's to reuse for every job.
  // Grown in powers of two; an outgrown one is kept until the stream goes
  // (freeing device memory waits for the whole device, this stream's gate
  // included, which only this thread opens).
  Status scratch(size_t bytes, void **out);

 private:
  friend class DeviceStream;
  gpu::Device *dev_;
  gpu::Stream *work_;
  uint64_t timeout_ms_;
  Deadline deadline_;
  void **scratch_ = nullptr;
  size_t *scratch_bytes_ = nullptr;
  std::vector<void *> *outgrown_ = nullptr;
};

struct Job {
  std::string what;  // "xc_allreduce", for messages
  uint64_t timeout_ms = 0;
  std::function<Status(JobEnv &)> run;
  std::shared_ptr<OpOutcome> outcome;  // may be null
  // Called on the stream's thread when the op failed or timed out (an
  // NCCL op aborts its communicator); may be null.
  std::function<void(const Status &)> failed;
  // Looked at while the stream's thread waits for the op's inputs (an
  // NCCL op: its communicator's asynchronous error); may be null.
  std::function<Status()> watch;
};

class DeviceStream {
 public:
  // native: the application's stream to wrap, when wrap is true.
  static Status make(gpu::Device *dev, void *native, bool wrap, std::shared_ptr<DeviceStream> *out);
  ~DeviceStream();
  DeviceStream(const DeviceStream &) = delete;
  DeviceStream &operator=(const DeviceStream &) = delete;

  // Queue job behind everything enqueued on the stream so far; returns once
  // queued. Not while the application's stream is being captured into a
  // graph (XC_ERR_UNSUPPORTED): a job's host side would not replay.
  Status enqueue(Job job);
  // An op that needs no host step, enqueued on the application's stream
  // itself (NCCL's calls, the intra-node kernels): issue(the application's
  // stream; NCCL takes device()->stream_native of it) runs now, on the
  // calling thread, in order with the jobs enqueued before it (their gates
  // sit on that stream ahead of it); no gate is needed, the work itself
  // orders the stream. Then the stream's thread waits for it (an event
  // recorded after it, under job.timeout_ms, job.watch looked at meanwhile)
  // and runs job.run, which reads the op's asynchronous errors. An error
  // from issue is returned and nothing is queued. While the application's
  // stream is being captured into a graph nothing is queued after issue
  // (the check would not replay): job's outcome is finished at once.
  Status enqueue_direct(Job job, const std::function<Status(gpu::Stream *user)> &issue);
  // Wait until every job enqueued so far has finished; their first error
  // (cleared), or XC_ERR_TIMEOUT.
  Status synchronize(Deadline deadline);
  gpu::Device *device() const { return dev_; }
  // Handles (xc_stream_t) naming this stream: when the last one is
  // destroyed the stream retires, and communicators that still have it
  // bound drop it at their next op (and use their default stream).
  void add_handle() { handles_.fetch_add(1); }
  void drop_handle() {
    if (handles_.fetch_sub(1) == 1) retired_.store(true);
  }
  bool retired() const { return retired_.load(); }

 private:
  struct Pending {
    Job job;
    uint64_t seq;
    gpu::Event *ready;
  };
  DeviceStream(gpu::Device *dev) : dev_(dev) {}
  void run_thread();
  void run_one(Pending &p);
  uint64_t *released() { return static_cast<uint64_t *>(flags_.host); }

  gpu::Device *dev_;
  gpu::Stream *user_ = nullptr;  // where the application's work and the gates go
  gpu::Stream *work_ = nullptr;  // the ops' copies and kernels
  gpu::SharedFlags flags_;       // [0] released seq, then the abort and expired words
  void *scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
  std::vector<void *> outgrown_;  // earlier scratch, freed with the stream
  uint64_t longest_timeout_ms_ = 0;

  std::mutex enqueue_mu_;  // one enqueue at a time: seq, gate and queue in one order
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  uint64_t enqueued_ = 0;
  uint64_t finished_ = 0;
  Status first_error_;
  bool stop_ = false;
  std::atomic<bool> retired_{false};
  std::atomic<int> handles_{0};
  std::thread thread_;
};

}  // namespace xc::device
