#include "device/custom.h"

#include <cstring>
#include <thread>
#include <utility>

#include "base/dtype.h"
#include "base/log.h"
#include "device/control.h"
#include "device/ipc.h"

namespace xc::device {

namespace {

// A workspace: the pad, then the staged input (two-shot's largest), then
// one relay slot per source for HCM (one-shot's largest each).
constexpr size_t kPadBytes = 4096;
static_assert(sizeof(kernels::CustomPad) <= kPadBytes, "the pad fits its page");
constexpr size_t kDataBytes = kCustomTwoShotMaxBytes;
constexpr size_t kRelayBytes = kernels::kCustomMaxRanks * kCustomOneShotMaxBytes;
constexpr size_t kWorkspaceBytes = kPadBytes + kDataBytes + kRelayBytes;

constexpr size_t kStopWord = 0;  // byte offsets in flags_ (kernels/args.cuh CustomArgs)
constexpr size_t kWhoWord = 4;
constexpr size_t kFlagBytes = 64;

// What each rank tells the others at set-up.
struct Hello {
  BufDesc workspace;
  int32_t gpu;   // the topology's index of the GPU this rank drives
  int32_t code;  // xc_result_t of its own set-up
};

// The host's topology, probed once per process (NVML only, as at start-up;
// XC_TOPO_FILE when set). A failed probe knows no GPU: every pair counts as
// linked, as the generic path assumes too.
const topo::Topology &host_topology() {
  static const topo::Topology t = [] {
    topo::Topology probed;
    Status st = topo::probe(&probed, topo::GpuProbe::kNvmlOnly);
    if (!st.ok()) {
      XC_INFO("intra-node kernels: no topology (%s); taking every GPU pair as linked", st.message().c_str());
      return topo::Topology();
    }
    return probed;
  }();
  return t;
}

// Blocks of a launch, the same on every rank: one per 4096 elements a phase
// handles, at most kCustomMaxBlocks.
uint32_t blocks_for(uint64_t elements) {
  uint64_t b = (elements + 4095) / 4096;
  if (b < 1) b = 1;
  if (b > static_cast<uint64_t>(kernels::kCustomMaxBlocks)) b = kernels::kCustomMaxBlocks;
  return static_cast<uint32_t>(b);
}

}  // namespace

char *CustomComm::data(int r) const { return base_[static_cast<size_t>(r)] + kPadBytes; }
char *CustomComm::relay(int r) const { return base_[static_cast<size_t>(r)] + kPadBytes + kDataBytes; }

bool custom_local_kind(CollKind kind) {
  return kind == CollKind::kAllreduce || kind == CollKind::kReduceScatter || kind == CollKind::kAllgather;
}

Status enqueue_local(DeviceStream &stream, const CollDesc &d, uint64_t timeout_ms, std::shared_ptr<OpOutcome> outcome,
                     const std::string &what) {
  size_t bytes = d.count * dtype_size(d.dtype);
  gpu::Device *dev = stream.device();
  Job done;
  done.what = what;
  done.timeout_ms = timeout_ms;
  done.outcome = std::move(outcome);
  done.run = [](JobEnv &) { return Status::Ok(); };
  return stream.enqueue_direct(std::move(done), [&](gpu::Stream *s) {
    return d.in_place ? Status::Ok() : dev->copy_async(d.recvbuf, d.sendbuf, bytes, s);
  });
}

std::shared_ptr<CustomComm> CustomComm::create(const CommView &c) {
  return std::shared_ptr<CustomComm>(new CustomComm(c));
}

Job CustomComm::setup_job(int tag) {
  Job job;
  job.what = "setting up the intra-node kernels";
  job.timeout_ms = view_.timeout_ms;
  job.run = [self = shared_from_this(), tag](JobEnv &env) {
    Status st = self->set_up(tag, env);
    {
      std::lock_guard<std::mutex> g(self->mu_);
      if (!st.ok()) self->usable_ = false;
      self->setup_error_ = st;
      self->ready_.store(true, std::memory_order_release);
    }
    self->cv_.notify_all();
    return st;
  };
  return job;
}

Status CustomComm::wait_ready(Deadline deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  if (!cv_.wait_until(lk, deadline.at(), [this] { return ready(); }))
    return Error(XC_ERR_TIMEOUT, "the intra-node kernels' set-up did not end before the deadline");
  return setup_error_;
}

Status CustomComm::set_up(int tag, JobEnv &env) {
  const CommView &c = view_;
  // This rank's part: a cleared workspace, described for the peers.
  Hello mine{};
  mine.gpu = c.gpu_index;
  Status own = dev_->flags_alloc(kFlagBytes, &flags_);
  if (own.ok()) own = dev_->alloc(kWorkspaceBytes, &mine_);
  if (own.ok()) {
    static const char zeros[kPadBytes] = {};
    own = dev_->copy_async(mine_, zeros, kPadBytes, env.work());
    if (own.ok()) own = env.finish_work();
  }
  if (own.ok()) own = describe(dev_, mine_, &mine.workspace);
  if (!own.ok()) XC_WARN("intra-node kernels: cannot set up the workspace: %s", own.message().c_str());
  mine.code = own.code();

  std::vector<Hello> theirs(static_cast<size_t>(n_));
  theirs[static_cast<size_t>(me_)] = mine;
  Messages hello(c);
  for (int j = 0; j < n_; ++j) {
    if (j == me_) continue;
    hello.recv(kControlCtxOffset, j, tag, &theirs[static_cast<size_t>(j)], sizeof(Hello), true);
    hello.send(kControlCtxOffset, j, tag, &mine, sizeof(Hello), true);
  }
  XC_TRY(hello.wait_all(env.deadline(), "intra-node kernels: trading workspaces"));
  bool all = true;
  for (const Hello &h : theirs) all = all && h.code == XC_SUCCESS;

  // Map the peers' workspaces; then every rank says whether it could, so
  // all agree on usable().
  int32_t mapped = all ? XC_SUCCESS : XC_ERR_UNSUPPORTED;
  base_.assign(static_cast<size_t>(n_), nullptr);
  for (int j = 0; j < n_ && mapped == XC_SUCCESS; ++j) {
    const Hello &h = theirs[static_cast<size_t>(j)];
    if (j == me_) {
      base_[static_cast<size_t>(j)] = static_cast<char *>(mine_);
      continue;
    }
    void *base = nullptr;
    Status st = dev_->ipc_open(h.workspace.handle, h.workspace.pid, &base);
    if (!st.ok()) {
      XC_WARN("intra-node kernels: cannot map rank %d's workspace: %s", j, st.message().c_str());
      mapped = st.code();
      break;
    }
    mapped_.push_back(base);
    base_[static_cast<size_t>(j)] = static_cast<char *>(base) + h.workspace.offset;
  }
  std::vector<int32_t> codes(static_cast<size_t>(n_), XC_SUCCESS);
  Messages agree(c);
  for (int j = 0; j < n_; ++j) {
    if (j == me_) continue;
    agree.recv(kControlCtxOffset, j, tag, &codes[static_cast<size_t>(j)], sizeof(int32_t), true);
    agree.send(kControlCtxOffset, j, tag, &mapped, sizeof(int32_t), true);
  }
  XC_TRY(agree.wait_all(env.deadline(), "intra-node kernels: agreeing on the workspaces"));
  usable_ = mapped == XC_SUCCESS;
  for (int32_t code : codes) usable_ = usable_ && code == XC_SUCCESS;

  std::vector<int> gpus(static_cast<size_t>(n_));
  for (int j = 0; j < n_; ++j) gpus[static_cast<size_t>(j)] = theirs[static_cast<size_t>(j)].gpu;
  routes_ = custom_routes(host_topology(), gpus);
  if (usable_) {
    auto registry = std::make_unique<CustomRegistry>(c);
    Status st = registry->init();
    if (st.ok())
      registry_ = std::move(registry);
    else
      XC_WARN("intra-node kernels: no registry, registered buffers are staged: %s", st.message().c_str());
  }
  XC_INFO("intra-node kernels on %s: %s; GPU pairs %s; HCM routes %s", c.name.c_str(),
          usable_ ? "workspaces mapped" : "not usable here (generic path)",
          routes_.reach_all ? "all reachable" : "not all reachable", routes_.hcm ? "yes" : "no");
  return Status::Ok();
}

CustomComm::~CustomComm() {
  std::thread([dev = dev_, registry = std::move(registry_), mapped = std::move(mapped_), mine = mine_,
               flags = flags_]() mutable {
    registry.reset();  // its table is pinned memory: freeing it may wait for the device too
    for (void *p : mapped) (void)dev->ipc_close(p);
    if (mine) (void)dev->free(mine);
    if (flags.host) dev->flags_free(&flags);
  }).detach();
}

void CustomComm::stop(uint32_t why, int rank) {
  if (!flags_.host) return;
  char *f = static_cast<char *>(flags_.host);
  auto *stop = reinterpret_cast<std::atomic<uint32_t> *>(f + kStopWord);
  uint32_t running = kernels::kCustomRunning;
  if (stop->load() != running) return;  // the first reason stays
  if (rank >= 0) reinterpret_cast<std::atomic<uint32_t> *>(f + kWhoWord)->store(static_cast<uint32_t>(rank + 1));
  stop->compare_exchange_strong(running, why);
}

void CustomComm::serve() {
  watch_members();
  if (registry_) registry_->serve();
}

void CustomComm::watch_members() {
  int failed = view_.engine->first_failed(*view_.members);
  if (failed < 0) return;
  for (int r = 0; r < n_; ++r)
    if (view_.fabric_rank(r) == failed) return stop(kernels::kCustomPeerFailed, r);
}

Status CustomComm::outcome(CustomAlgo which, uint64_t timeout_ms) const {
  const char *algo = custom_algo_name(which);
  const char *f = static_cast<const char *>(flags_.host);
  uint32_t stop = reinterpret_cast<const std::atomic<uint32_t> *>(f + kStopWord)->load();
  int who = static_cast<int>(reinterpret_cast<const std::atomic<uint32_t> *>(f + kWhoWord)->load()) - 1;
  switch (stop) {
    case kernels::kCustomRunning: return Status::Ok();
    case kernels::kCustomAborted:
      return Error(XC_ERR_ABORTED, "%s: the communicator was aborted while its kernels waited", algo);
    case kernels::kCustomPeerFailed:
      return Error(XC_ERR_PEER_FAILED, "%s: rank %d failed while the kernels waited at their flag barrier", algo, who);
    default:
      return Error(XC_ERR_TIMEOUT,
                   "%s: rank %d never reached the flag barrier within %llu ms (the communicator's kernels stop "
                   "waiting from now on: its ranks are out of step)",
                   algo, who, static_cast<unsigned long long>(timeout_ms));
  }
}

Status CustomComm::launch(const CollDesc &d, CustomAlgo algo, uint64_t timeout_ms, gpu::Stream *s) {
  size_t es = dtype_size(d.dtype);
  kernels::CustomArgs a{};
  a.algo = algo == CustomAlgo::kTwoShot ? kernels::kCustomTwoShot
           : algo == CustomAlgo::kHcm   ? kernels::kCustomHcm
                                        : kernels::kCustomOneShot;
  a.n = n_;
  a.rank = me_;
  a.dtype = d.dtype;
  a.op = d.op == XC_AVG ? XC_SUM : d.op;
  a.avg_divisor = d.op == XC_AVG ? n_ : 0;
  a.count = d.count;
  const char *out = static_cast<const char *>(d.recvbuf);
  const void *input = d.in_place ? d.recvbuf : d.sendbuf;
  size_t staged = d.count * es;
  uint64_t work = d.count;
  switch (d.kind) {
    case CollKind::kAllreduce:
      a.mode = kernels::kCustomAllreduce;
      if (algo == CustomAlgo::kTwoShot) work = (d.count + static_cast<uint64_t>(n_) - 1) / static_cast<uint64_t>(n_);
      break;
    case CollKind::kReduceScatter:
      a.mode = kernels::kCustomReduceScatter;
      staged *= static_cast<size_t>(n_);
      break;
    case CollKind::kAllgather:
      a.mode = kernels::kCustomAllgather;
      a.count = staged;  // bytes: the gather copies bytewise
      work = staged;
      if (d.in_place) input = out + static_cast<size_t>(me_) * staged;
      break;
    default: return Error(XC_ERR_INTERNAL, "%s has no intra-node kernel", coll_kind_name(d.kind));
  }
  a.blocks = blocks_for(work);
  for (int j = 0; j < n_; ++j) {
    a.pads[j] = reinterpret_cast<kernels::CustomPad *>(pad(j));
    a.data[j] = data(j);
    a.relay[j] = relay(j);
    a.via[j] = algo == CustomAlgo::kHcm ? routes_.via[me_][j] : -1;
    a.forward[j] = 0;
    if (algo == CustomAlgo::kHcm)
      for (int r = 0; r < n_; ++r) a.forward[j] |= routes_.via[r][j] == me_ ? 1 : 0;
  }
  a.out = d.recvbuf;
  char *flags = static_cast<char *>(flags_.dev);
  a.stop = reinterpret_cast<volatile uint32_t *>(flags + kStopWord);
  a.who = reinterpret_cast<volatile uint32_t *>(flags + kWhoWord);
  a.timeout_ns = sat_ms(timeout_ms, 1000000, 0);

  // A registered input every peer maps is read in place; an in-place op's is
  // not (peers would read what the kernel overwrites).
  a.my_slot = -1;
  if (registry_) {
    a.registry = registry_->table();
    if (!d.in_place) a.my_slot = registry_->in_place(input, staged, &a.my_offset);
  }
  a.my_input = static_cast<const char *>(input);
  if (a.my_slot < 0) XC_TRY(dev_->copy_async(data(me_), input, staged, s));
  return dev_->launch_custom(a, s);
}

Status CustomComm::enqueue(DeviceStream &stream, const CollDesc &d, CustomAlgo algo, uint64_t timeout_ms,
                           std::shared_ptr<OpOutcome> outcome, std::shared_ptr<std::atomic<int>> first_error,
                           const std::string &what) {
  Job check;
  check.what = what;
  // The kernel gives up at the deadline and says why; the check waits longer.
  check.timeout_ms = sat_ms(timeout_ms, 2, 1000);
  check.outcome = std::move(outcome);
  std::shared_ptr<CustomComm> self = shared_from_this();
  check.watch = [self] {
    self->serve();
    return Status::Ok();  // the kernel stops itself, and the check says why
  };
  check.run = [self, algo, timeout_ms, first_error = std::move(first_error)](JobEnv &) {
    Status st = self->outcome(algo, timeout_ms);
    int none = 0;
    if (!st.ok()) first_error->compare_exchange_strong(none, st.code());
    return st;
  };
  return stream.enqueue_direct(std::move(check), [&](gpu::Stream *s) { return launch(d, algo, timeout_ms, s); });
}

Status CustomComm::run(JobEnv &env, const CollDesc &d, CustomAlgo algo, uint64_t timeout_ms) {
  XC_TRY(launch(d, algo, timeout_ms, env.work()));
  gpu::Event *done = nullptr;
  XC_TRY(dev_->event_record(env.work(), &done));
  XC_TRY(gpu::event_wait(dev_, done, Deadline::AfterMs(sat_ms(timeout_ms, 2, 1000)), [this] {
    serve();
    return Status::Ok();
  }));
  return outcome(algo, timeout_ms);
}

}  // namespace xc::device
