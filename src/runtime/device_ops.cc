#include "runtime/device_ops.h"

#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "algo/forced.h"
#include "base/log.h"
#include "device/coll.h"
#include "device/custom.h"
#include "gpu/device.h"
#include "runtime/nccl_ops.h"

namespace xc {
namespace {

// The stream target of an any-source receive: never bound, the default stream.
constexpr int kAnySource = -2;

// The GPU index XC_DEVICE_AUTO gives this process: its fabric rank's place
// among the ranks of its host, modulo the host's GPUs.
int auto_gpu_index(xc_comm_s *comm) {
  Fabric &f = *comm->fabric;
  int me = f.rank(), host = f.host_of(me), local = 0;
  for (int r = 0; r < me; ++r) local += f.host_of(r) == host ? 1 : 0;
  int gpus = f.host_gpus(host);
  return gpus > 0 ? local % gpus : 0;
}

device::CommView view_of(xc_comm_s *comm, gpu::Device *dev) {
  device::CommView v;
  v.engine = &comm->fabric->engine();
  v.keep_engine = comm->fabric;
  v.members = comm->members;
  v.rank = comm->rank;
  v.size = comm->size;
  v.ctx = comm->ctx;
  v.timeout_ms = comm->timeout_ms;
  v.name = comm->name;
  v.dev = dev;
  v.gpu_index = strcmp(dev->name(), "cuda") == 0 ? dev->ordinal() : auto_gpu_index(comm);
  return v;
}

// The stream for target (a peer rank or XC_BIND_COLLECTIVES): bound, else
// the default one, made now if needed. Under comm->device_mu.
Status stream_for_locked(xc_comm_s *comm, gpu::Device *dev, int target, std::shared_ptr<device::DeviceStream> *out) {
  if (comm->coll_stream && comm->coll_stream->retired()) comm->coll_stream.reset();
  auto bound = comm->peer_streams.find(target);
  if (bound != comm->peer_streams.end() && bound->second->retired()) comm->peer_streams.erase(bound);
  if (target == XC_BIND_COLLECTIVES && comm->coll_stream) {
    *out = comm->coll_stream;
    return Status::Ok();
  }
  auto it = comm->peer_streams.find(target);
  if (target >= 0 && it != comm->peer_streams.end()) {
    *out = it->second;
    return Status::Ok();
  }
  // The default: the device's default stream (CUDA's legacy stream 0), the
  // one xc_stream_wrap(comm, NULL) reaches too.
  if (!comm->default_stream || comm->default_stream->retired())
    XC_TRY(device::DeviceStream::make(dev, nullptr, true, &comm->default_stream));
  *out = comm->default_stream;
  return Status::Ok();
}

// Each op remembers the communicator's first device failure (xc_comm_get_async_error).
std::function<Status(device::JobEnv &)> recording(std::shared_ptr<std::atomic<int>> error,
                                                   std::function<Status(device::JobEnv &)> run) {
  return [error = std::move(error), run = std::move(run)](device::JobEnv &env) {
    Status st = run(env);
    int none = 0;
    if (!st.ok()) error->compare_exchange_strong(none, st.code());
    return st;
  };
}

}  // namespace

// Device memory between hosts without NCCL (XC_NCCL=0).
static Status refuse_across_hosts(const xc_comm_s *comm) {
  return Error(XC_ERR_UNSUPPORTED,
               "device memory between ranks on different hosts needs NCCL, and XC_NCCL=0 turns it off (communicator "
               "%s spans hosts)",
               comm->name.c_str());
}

gpu::Device *device_for(xc_comm_s *comm, Status *why) {
  std::lock_guard<std::mutex> g(comm->device_mu);
  if (!comm->device) {
    int ordinal = comm->device_ordinal == XC_DEVICE_AUTO ? -1 - comm->local_rank : comm->device_ordinal;
    if (comm->device_ordinal == XC_DEVICE_NONE) {
      *why = Error(XC_ERR_UNSUPPORTED, "the communicator was configured with XC_DEVICE_NONE (host memory only)");
      return nullptr;
    }
    comm->device = gpu::device_get(ordinal, why);
  }
  return comm->device;
}

bool any_device(const void *const *ptrs, size_t n, Status *why) {
  int device = 0, host = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!ptrs[i]) continue;
    if (gpu::pointer_is_device(ptrs[i]))
      ++device;
    else
      ++host;
  }
  if (device && host)
    *why = Error(XC_ERR_UNSUPPORTED, "the op mixes host and device buffers; give it buffers of one kind");
  return device > 0;
}

Status stream_make(xc_comm_s *comm, void *native, bool wrap, xc_stream_s **out) {
  Status why;
  gpu::Device *dev = device_for(comm, &why);
  if (!dev) return why;
  auto s = std::make_unique<xc_stream_s>();
  XC_TRY(device::DeviceStream::make(dev, native, wrap, &s->stream));
  s->stream->add_handle();
  s->timeout_ms = comm->timeout_ms;
  *out = s.release();
  return Status::Ok();
}

Status stream_bind(xc_comm_s *comm, xc_stream_s *stream, int target) {
  if (target != XC_BIND_COLLECTIVES && (target < 0 || target >= comm->size))
    return Error(XC_ERR_INVALID_ARGUMENT, "target %d is neither XC_BIND_COLLECTIVES nor a rank in [0, %d)", target,
                 comm->size);
  Status why;
  gpu::Device *dev = device_for(comm, &why);
  if (!dev) return why;
  if (stream && stream->stream->device() != dev)
    return Error(XC_ERR_INVALID_ARGUMENT, "the stream belongs to another device than the communicator's");
  std::lock_guard<std::mutex> g(comm->device_mu);
  std::shared_ptr<device::DeviceStream> s = stream ? stream->stream : nullptr;
  if (target == XC_BIND_COLLECTIVES)
    comm->coll_stream = std::move(s);
  else if (s)
    comm->peer_streams[target] = std::move(s);
  else
    comm->peer_streams.erase(target);
  return Status::Ok();
}

Status device_p2p(xc_comm_s *comm, std::vector<device::P2pOp> ops, const char *what) {
  Status why;
  gpu::Device *dev = device_for(comm, &why);
  if (!dev) return why;
  bool to_nccl = nccl_takes(comm, -1);
  if (!to_nccl && comm->local_size != comm->size) return refuse_across_hosts(comm);
  // One job per stream: ops to peers bound to different streams run concurrently.
  std::map<device::DeviceStream *, std::pair<std::shared_ptr<device::DeviceStream>, std::vector<device::P2pOp>>> jobs;
  std::shared_ptr<device::DeviceStream> coll_stream;
  std::set<device::DeviceStream *> own_stream;  // bound to a peer, not the collectives'
  {
    std::lock_guard<std::mutex> g(comm->device_mu);
    if (to_nccl) XC_TRY(stream_for_locked(comm, dev, XC_BIND_COLLECTIVES, &coll_stream));
    for (device::P2pOp &op : ops) {
      std::shared_ptr<device::DeviceStream> s;
      XC_TRY(stream_for_locked(comm, dev, op.peer < 0 ? kAnySource : op.peer, &s));
      // NCCL: a stream bound to this peer that is not the collectives' own
      // gets a child communicator; the default stream uses the parent's.
      auto b = comm->peer_streams.find(op.peer);
      if (b != comm->peer_streams.end() && b->second == s && s != coll_stream) own_stream.insert(s.get());
      auto &slot = jobs[s.get()];
      slot.first = s;
      slot.second.push_back(std::move(op));
    }
  }
  if (to_nccl) {
    for (auto &entry : jobs)
      XC_TRY(nccl_p2p(comm, dev, entry.second.first, own_stream.count(entry.first) == 0,
                      std::move(entry.second.second), what));
    return Status::Ok();
  }
  device::CommView view = view_of(comm, dev);
  for (auto &entry : jobs) {
    device::Job job;
    job.what = what;
    job.timeout_ms = comm->timeout_ms;
    job.run = recording(comm->device_error,
                        [view, batch = std::move(entry.second.second)](device::JobEnv &env) mutable {
                          return device::run_p2p(view, batch, env);
                        });
    XC_TRY(entry.second.first->enqueue(std::move(job)));
  }
  return Status::Ok();
}

namespace {

// XC_ALGO's word on a device collective: whether it forces one of the
// device algorithms, and which.
bool forced_device_algo(CollKind kind, device::CustomAlgo *wanted) {
  const algo::ForcedChoice &fc = algo::forced_choice(kind);
  if (!fc.status.ok() || !fc.forced) return false;
  switch (fc.algo) {
    case algo::Algo::kDevOneShot: *wanted = device::CustomAlgo::kOneShot; return true;
    case algo::Algo::kDevTwoShot: *wanted = device::CustomAlgo::kTwoShot; return true;
    case algo::Algo::kDevHcm: *wanted = device::CustomAlgo::kHcm; return true;
    case algo::Algo::kDevGeneric: *wanted = device::CustomAlgo::kGeneric; return true;
    default: return false;
  }
}

// comm's intra-node kernels, made by the first op that may take them
// (every rank reaches it at the same op, which every rank judges alike),
// their set-up enqueued on s. Never waits.
Status custom_of(xc_comm_s *comm, gpu::Device *dev, device::DeviceStream &s,
                 std::shared_ptr<device::CustomComm> *out) {
  std::lock_guard<std::mutex> g(comm->device_mu);
  if (!comm->custom) {
    std::shared_ptr<device::CustomComm> made = device::CustomComm::create(view_of(comm, dev));
    int tag = static_cast<int>(comm->device_coll_seq.fetch_add(1) & device::kTagMask);
    XC_TRY(s.enqueue(made->setup_job(tag)));
    comm->custom = std::move(made);
  }
  *out = comm->custom;
  return Status::Ok();
}

// The kernel for an op, or kGeneric, once the set-up is over; logged.
device::CustomAlgo custom_pick(const device::CustomComm &cc, const CollDesc &d, size_t bytes, int n, bool forced,
                               device::CustomAlgo wanted) {
  const char *reason = "the intra-node kernels cannot run on these ranks";
  device::CustomAlgo algo = device::CustomAlgo::kGeneric;
  if (cc.usable()) algo = device::custom_choose(d.kind, bytes, n, cc.routes(), forced, wanted, &reason);
  if (forced && algo != wanted)
    XC_INFO("%s: XC_ALGO asks for %s, which these ranks cannot use here; using %s", coll_kind_name(d.kind),
            device::custom_algo_name(wanted), device::custom_algo_name(algo));
  XC_INFO("%s %zu B of device memory on %d ranks: %s (%s)", coll_kind_name(d.kind), bytes, n,
          device::custom_algo_name(algo), reason);
  return algo;
}

}  // namespace

Status device_collective(xc_comm_s *comm, CollDesc &&desc, std::shared_ptr<device::OpOutcome> outcome,
                         const char *what) {
  Status why;
  gpu::Device *dev = device_for(comm, &why);
  if (!dev) return why;
  XC_TRY(algo::forced_choice(desc.kind).status);  // a bad XC_ALGO fails every call alike
  std::shared_ptr<device::DeviceStream> s;
  {
    std::lock_guard<std::mutex> g(comm->device_mu);
    XC_TRY(stream_for_locked(comm, dev, XC_BIND_COLLECTIVES, &s));
  }
  if (nccl_takes(comm, static_cast<int>(desc.kind)))
    return nccl_collective(comm, dev, std::move(s), std::move(desc), std::move(outcome), what);
  if (comm->local_size != comm->size) return refuse_across_hosts(comm);
  if (comm->size == 1 && device::custom_local_kind(desc.kind))
    return device::enqueue_local(*s, desc, comm->timeout_ms, std::move(outcome), what);
  size_t bytes = 0;
  device::CustomAlgo wanted = device::CustomAlgo::kGeneric;
  bool forced = forced_device_algo(desc.kind, &wanted);
  bool candidate = !(forced && wanted == device::CustomAlgo::kGeneric) &&
                   device::custom_candidate(desc, comm->size, &bytes);
  std::shared_ptr<device::CustomComm> custom;
  if (candidate) XC_TRY(custom_of(comm, dev, *s, &custom));
  if (custom && custom->ready()) {
    device::CustomAlgo algo = custom_pick(*custom, desc, bytes, comm->size, forced, wanted);
    if (algo != device::CustomAlgo::kGeneric) {
      comm->device_coll_seq.fetch_add(1);  // ops keep their numbers whichever path they take
      return custom->enqueue(*s, desc, algo, comm->timeout_ms, std::move(outcome), comm->device_error, what);
    }
    custom.reset();
  }
  desc.own_arrays();
  int tag = static_cast<int>(comm->device_coll_seq.fetch_add(1) & device::kTagMask);
  device::Job job;
  job.what = what;
  job.timeout_ms = comm->timeout_ms;
  job.outcome = std::move(outcome);
  // Enqueued before the kernels' set-up was over: the choice is made once it
  // is, on the stream's thread (the same on every rank either way).
  job.run = recording(comm->device_error, [view = view_of(comm, dev), d = std::move(desc), tag, custom, bytes,
                                           forced, wanted](device::JobEnv &env) {
    if (custom) {
      XC_TRY(custom->wait_ready(env.deadline()));
      device::CustomAlgo algo = custom_pick(*custom, d, bytes, view.size, forced, wanted);
      if (algo != device::CustomAlgo::kGeneric) return custom->run(env, d, algo, view.timeout_ms);
    }
    return device::run_collective(view, d, tag, env);
  });
  return s->enqueue(std::move(job));
}

Status device_host_job(xc_comm_s *comm, const char *what, std::function<Status(device::JobEnv &)> run,
                       std::shared_ptr<device::OpOutcome> outcome, std::function<void(const Status &)> failed) {
  Status why;
  gpu::Device *dev = device_for(comm, &why);
  if (!dev) return why;
  std::shared_ptr<device::DeviceStream> s;
  {
    std::lock_guard<std::mutex> g(comm->device_mu);
    XC_TRY(stream_for_locked(comm, dev, XC_BIND_COLLECTIVES, &s));
  }
  device::Job job;
  job.what = what;
  job.timeout_ms = comm->timeout_ms;
  job.outcome = std::move(outcome);
  job.failed = std::move(failed);
  job.run = recording(comm->device_error, std::move(run));
  return s->enqueue(std::move(job));
}

void device_ops_finish(xc_comm_s *comm) {
  std::vector<std::shared_ptr<device::DeviceStream>> streams;
  {
    std::lock_guard<std::mutex> g(comm->device_mu);
    if (comm->default_stream) streams.push_back(comm->default_stream);
    if (comm->coll_stream) streams.push_back(comm->coll_stream);
    for (auto &p : comm->peer_streams) streams.push_back(p.second);
  }
  for (auto &s : streams) (void)s->synchronize(Deadline::AfterMs(comm->timeout_ms));
  nccl_release(comm);
  std::lock_guard<std::mutex> g(comm->device_mu);
  comm->default_stream.reset();
  comm->coll_stream.reset();
  comm->peer_streams.clear();
  comm->custom.reset();  // its kernels are done: every stream that ran one is drained
}

}  // namespace xc
