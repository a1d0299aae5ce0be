// A communicator's side of the intra-node kernels (kernels/custom.cuh): the
// workspace every rank keeps in IPC memory (signal pad, staged input, relay
// slots), mapped by every peer once, and the launch of an op through it.
//
// An op is one copy (the input into this rank's workspace) and one kernel,
// both put on the application's stream by the calling thread: no host step
// between the ranks, so the pair can be captured into a CUDA graph and
// replayed (the barrier epochs live in the workspace, on the device). A
// check on the stream's thread, after the kernel, turns a kernel that gave
// up (a peer never came before the deadline, or the communicator was
// aborted) into the op's error.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "coll/desc.h"
#include "device/comm_view.h"
#include "device/custom_choice.h"
#include "device/custom_registry.h"
#include "device/stream.h"

namespace xc::device {

// allreduce, reduce_scatter or allgather on a communicator of one rank: a
// copy of the input to the output on the application's stream (none in
// place), no host step, so it captures like the kernels.
bool custom_local_kind(CollKind kind);
Status enqueue_local(DeviceStream &stream, const CollDesc &d, uint64_t timeout_ms, std::shared_ptr<OpOutcome> outcome,
                     const std::string &what);

class CustomComm : public std::enable_shared_from_this<CustomComm> {
 public:
  // Made by the first op on a communicator that may take the kernels
  // (every rank at the same op). Its set-up — allocate and clear this
  // rank's workspace, trade descriptions, map the peers' — is collective
  // and sends host messages, so it runs as the job setup_job() gives, on a
  // device stream, never on the caller's thread: a device op returns at
  // once. A rank that cannot take part makes every rank's usable() false:
  // then all of them take the generic path, alike.
  static std::shared_ptr<CustomComm> create(const CommView &c);
  Job setup_job(int tag);
  // Lets go of the workspaces on a thread of its own: the last holder may be
  // a stream's thread, and freeing device memory waits for the device,
  // gates that thread opens included.
  ~CustomComm();
  CustomComm(const CustomComm &) = delete;
  CustomComm &operator=(const CustomComm &) = delete;

  // The set-up is over (well or not); what follows holds only then.
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  // Until ready, or the deadline; the set-up's error if it failed.
  Status wait_ready(Deadline deadline);
  bool usable() const { return usable_; }
  const CustomRoutes &routes() const { return routes_; }

  // Put d (a custom_candidate) through algo on stream: the copy and the
  // kernel now, from this thread; the check later. Ready and usable only.
  Status enqueue(DeviceStream &stream, const CollDesc &d, CustomAlgo algo, uint64_t timeout_ms,
                 std::shared_ptr<OpOutcome> outcome, std::shared_ptr<std::atomic<int>> first_error,
                 const std::string &what);
  // The same from a job (an op enqueued before the set-up was over): the
  // copy and the kernel on the job's work stream, waited for and checked.
  Status run(JobEnv &env, const CollDesc &d, CustomAlgo algo, uint64_t timeout_ms);

  // xc_comm_abort: kernels waiting on a flag stop (never blocks).
  void abort() { stop(kernels::kCustomAborted, -1); }

 private:
  explicit CustomComm(const CommView &c) : view_(c), dev_(c.dev), n_(c.size), me_(c.rank) {}
  Status set_up(int tag, JobEnv &env);
  // The copy of d's input into this rank's workspace and the kernel, on s.
  Status launch(const CollDesc &d, CustomAlgo algo, uint64_t timeout_ms, gpu::Stream *s);
  // Every kernel of the communicator stops waiting, now and later (sticky:
  // its ranks are out of step); rank: the one to blame, -1 none.
  void stop(uint32_t why, int rank);
  // The first failed member, if any: then the kernels stop (a check's watch).
  void watch_members();
  // What a check does while its kernel runs: watch_members, and the
  // registry's announcements and acknowledgements.
  void serve();
  // What the kernels' words say, as the op's status.
  Status outcome(CustomAlgo algo, uint64_t timeout_ms) const;
  char *pad(int r) const { return base_[static_cast<size_t>(r)]; }
  char *data(int r) const;
  char *relay(int r) const;

  CommView view_;  // the members, and the engine that knows which failed
  gpu::Device *dev_;
  int n_, me_;
  void *mine_ = nullptr;         // this rank's workspace
  std::vector<char *> base_;     // every rank's, reached here
  std::vector<void *> mapped_;   // peers' allocations mapped here, to close
  gpu::SharedFlags flags_;       // the stop and who words the kernels read and set
  CustomRoutes routes_{};
  bool usable_ = false;
  std::unique_ptr<CustomRegistry> registry_;  // registered inputs read in place (null: all staged)
  // The set-up's end: ready_ set last, under mu_, with its error.
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> ready_{false};
  Status setup_error_;
};

}  // namespace xc::device
