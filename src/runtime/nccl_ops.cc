#include "runtime/nccl_ops.h"

#include <chrono>
#include <cstdio>
#include <cstring>

#include "algo/forced.h"
#include "base/dtype.h"
#include "base/env.h"
#include "base/log.h"
#include "bootstrap/store.h"
#include "runtime/device_ops.h"

namespace xc {

using nccl::NcclApi;
using nccl::NcclComm;
using nccl::ncclComm_t;
using nccl::ncclDataType_t;
using nccl::ncclRedOp_t;
using nccl::ncclResult_t;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// XC_NCCL as read once: 'a'uto, '1', '0'.
char nccl_mode() {
  static const char mode = [] {
    std::string v;
    if (!env_choice("XC_NCCL", &v).ok()) return 'a';
    return v == "1" ? '1' : v == "0" ? '0' : 'a';
  }();
  return mode;
}

bool forced_for(int kind) {
  if (kind < 0) return false;
  return algo::forced_choice(static_cast<CollKind>(kind)).nccl;
}

bool any_forced() {
  for (int k = 0; k < kCollKindCount; ++k)
    if (forced_for(k)) return true;
  return false;
}

bool to_nccl_type(xc_dtype_t t, ncclDataType_t *out) {
  switch (t) {
    case XC_INT8:
      *out = nccl::ncclInt8;
      return true;
    case XC_UINT8:
      *out = nccl::ncclUint8;
      return true;
    case XC_INT32:
      *out = nccl::ncclInt32;
      return true;
    case XC_UINT32:
      *out = nccl::ncclUint32;
      return true;
    case XC_INT64:
      *out = nccl::ncclInt64;
      return true;
    case XC_UINT64:
      *out = nccl::ncclUint64;
      return true;
    case XC_FLOAT16:
      *out = nccl::ncclFloat16;
      return true;
    case XC_BFLOAT16:
      *out = nccl::ncclBfloat16;
      return true;
    case XC_FLOAT32:
      *out = nccl::ncclFloat32;
      return true;
    case XC_FLOAT64:
      *out = nccl::ncclFloat64;
      return true;
    default:
      return false;
  }
}

bool to_nccl_op(xc_op_t op, ncclRedOp_t *out) {
  switch (op) {
    case XC_SUM:
      *out = nccl::ncclSum;
      return true;
    case XC_PROD:
      *out = nccl::ncclProd;
      return true;
    case XC_MIN:
      *out = nccl::ncclMin;
      return true;
    case XC_MAX:
      *out = nccl::ncclMax;
      return true;
    case XC_AVG:
      *out = nccl::ncclAvg;
      return true;
    default:
      return false;  // bitwise: NCCL has none
  }
}

// An NCCL failure on comm as the caller sees it: a peer this process knows
// is dead makes it XC_ERR_PEER_FAILED.
Status blame(xc_comm_s *comm, Status st) {
  if (st.ok() || st.code() != XC_ERR_NCCL) return st;
  int failed = comm->fabric ? comm->fabric->engine().first_failed(*comm->members) : -1;
  if (failed < 0) return st;
  int rank = (*comm->rank_of_fabric)[static_cast<size_t>(failed)];
  return Error(XC_ERR_PEER_FAILED, "rank %d of communicator %s failed (%s)", rank, comm->name.c_str(),
               st.message().c_str());
}

// While an NCCL call is polled on the caller's thread: the host engine's
// progress (a message this rank queued before, e.g. a host barrier's last
// send between hosts, must still leave), and every 50 ms whether a member
// died: NCCL itself would wait for a dead peer until the deadline, xcomm's
// engine knows within its detection time (XC_ERR_PEER_FAILED, and the
// NCCL communicator is aborted).
std::function<Status()> engine_progress(xc_comm_s *comm) {
  std::shared_ptr<Fabric> fabric = comm->fabric;
  std::shared_ptr<const std::vector<int>> members = comm->members;
  std::shared_ptr<const std::vector<int>> rank_of = comm->rank_of_fabric;
  std::string name = comm->name;
  auto next = std::make_shared<std::chrono::steady_clock::time_point>();
  return [fabric, members, rank_of, name, next]() -> Status {
    fabric->engine().progress();
    auto now = std::chrono::steady_clock::now();
    if (now < *next) return Status::Ok();
    *next = now + std::chrono::milliseconds(50);
    int failed = fabric->engine().first_failed(*members);
    if (failed < 0) return Status::Ok();
    return Error(XC_ERR_PEER_FAILED, "rank %d of communicator %s failed while NCCL waited for it",
                 (*rank_of)[static_cast<size_t>(failed)], name.c_str());
  };
}

// This rank's readiness for NCCL: the library and a device.
// The device first: a host-only process (no device) never loads NCCL.
Status local_ready(xc_comm_s *comm, const NcclApi **api, gpu::Device **dev) {
  if (comm->device_ordinal == XC_DEVICE_NONE)
    return Error(XC_ERR_UNSUPPORTED, "the communicator was configured with XC_DEVICE_NONE (host memory only)");
  Status why;
  *dev = device_for(comm, &why);
  if (!*dev) return why;
  return nccl::nccl_api(api);
}

// The NCCL communicator of comm's members from a unique id that rank 0
// makes and the bootstrap store carries (with every rank's readiness, so
// a rank that cannot use NCCL fails the creation everywhere, not by a hang).
// Collective over comm. Under comm->nccl_mu.
Status make_by_id(xc_comm_s *comm) {
  auto t0 = std::chrono::steady_clock::now();
  const NcclApi *api = nullptr;
  gpu::Device *dev = nullptr;
  Status local = local_ready(comm, &api, &dev);
  nccl::ncclUniqueId id{};
  if (local.ok() && comm->rank == 0) {
    ncclResult_t r = api->ncclGetUniqueId(&id);
    if (r != nccl::ncclSuccess) local = nccl::nccl_error(api, nullptr, r, "ncclGetUniqueId");
  }
  std::string mine(1 + sizeof id, '\0');
  mine[0] = local.ok() ? 1 : 0;
  memcpy(&mine[1], &id, sizeof id);
  char key[96];
  snprintf(key, sizeof key, "nccl/%016llx.%u/%u", static_cast<unsigned long long>(comm->ctx), comm->ctx_generation,
           comm->nccl_inits++);
  std::vector<std::string> all;
  if (comm->size == 1) {
    all.push_back(mine);  // a world of one has no store, and needs none
  } else {
    bootstrap::StoreClient *store = comm->fabric->store();
    if (!store)
      return Error(XC_ERR_INTERNAL, "communicator %s has no bootstrap store to send NCCL's id through",
                   comm->name.c_str());
    XC_TRY(bootstrap::store_allgather(*store, key, comm->rank, comm->size, mine, op_deadline(comm), &all));
  }
  if (!local.ok()) return local;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].size() != mine.size()) return Error(XC_ERR_INTERNAL, "rank %zu sent a malformed NCCL record", r);
    if (!all[r][0])
      return Error(XC_ERR_UNSUPPORTED, "rank %zu of communicator %s cannot use NCCL (its own error says why)", r,
                   comm->name.c_str());
  }
  memcpy(&id, &all[0][1], sizeof id);
  Deadline deadline = op_deadline(comm);
  std::shared_ptr<NcclComm> made;
  XC_TRY(dev->in_context([&] {
    return NcclComm::init(api, comm->size, id, comm->rank, comm->name, deadline, &made, engine_progress(comm));
  }));
  made->set_finalize_ms(comm->timeout_ms);
  comm->nccl = std::move(made);
  XC_INFO("NCCL communicator of %s (%d ranks) made from a unique id in %.3f ms", comm->name.c_str(), comm->size,
          ms_since(t0));
  return Status::Ok();
}

// comm's NCCL communicator, made now when lazy; the reason when there is none.
Status nccl_of(xc_comm_s *comm, std::shared_ptr<NcclComm> *out) {
  std::lock_guard<std::mutex> g(comm->nccl_mu);
  if (!comm->nccl && !comm->nccl_tried) {
    comm->nccl_tried = true;
    comm->nccl_why = make_by_id(comm);
  }
  if (comm->nccl) {
    *out = comm->nccl;
    return Status::Ok();
  }
  Status why = comm->nccl_why.ok() ? Error(XC_ERR_UNSUPPORTED, "no NCCL communicator") : comm->nccl_why;
  return Error(why.code(), "device memory on communicator %s needs NCCL (%s): %s", comm->name.c_str(),
               comm->local_size != comm->size ? "its ranks span hosts" : "XC_NCCL or XC_ALGO asks for it",
               why.message().c_str());
}

// Device scratch of at least bytes for ops on stream s (kept per stream,
// grown in powers of two; freed with the communicator).
Status scratch_for(xc_comm_s *comm, gpu::Device *dev, const void *s, size_t bytes, void **out) {
  std::lock_guard<std::mutex> g(comm->nccl_mu);
  auto &slot = comm->nccl_scratch[s];
  if (slot.second < bytes) {
    size_t grown = 256;
    while (grown < bytes) grown *= 2;
    void *p = nullptr;
    XC_TRY(dev->alloc(grown, &p));
    if (slot.first) comm->nccl_outgrown.push_back(slot.first);
    slot = {p, grown};
  }
  *out = slot.first;
  return Status::Ok();
}

char *at(const void *base, size_t elems, size_t es) {
  return const_cast<char *>(static_cast<const char *>(base)) + elems * es;
}

// The fake NCCL of the tests runs on the emulated device, where no CUDA
// stream exists for it to queue behind: it moves data when called. So on
// that device the work xcomm queued on the stream before an NCCL call (an
// in-place op's copy into scratch) is waited for first. On CUDA, NCCL's
// kernels are stream-ordered and nothing waits.
Status before_nccl(gpu::Device *dev, gpu::Stream *s, Deadline deadline) {
  if (strcmp(dev->name(), "emulated") != 0) return Status::Ok();
  gpu::Event *e = nullptr;
  XC_TRY(dev->event_record(s, &e));
  return gpu::event_wait(dev, e, deadline);
}

// One grouped send or receive.
struct Xfer {
  bool send;
  void *buf;
  size_t count;
  int peer;
};

ncclResult_t grouped(const NcclApi *api, ncclComm_t c, void *native, ncclDataType_t t, const std::vector<Xfer> &xs) {
  ncclResult_t r = api->ncclGroupStart();
  if (r != nccl::ncclSuccess) return r;
  for (const Xfer &x : xs) {
    if (!x.count) continue;
    r = x.send ? api->ncclSend(x.buf, x.count, t, x.peer, c, native)
               : api->ncclRecv(x.buf, x.count, t, x.peer, c, native);
    if (r != nccl::ncclSuccess && r != nccl::ncclInProgress) {
      (void)api->ncclGroupEnd();
      return r;
    }
  }
  return api->ncclGroupEnd();
}

// A local reduction over n blocks of count (in rank order) into dst.
Status reduce_blocks(gpu::Device *dev, gpu::Stream *s, void *dst, const void *blocks, int n, size_t count,
                     const CollDesc &d, int avg_divisor) {
  if (n > kernels::kMaxSources)
    return Error(XC_ERR_UNSUPPORTED, "a reduction over %d ranks on NCCL is more than %d", n, kernels::kMaxSources);
  size_t es = dtype_size(d.dtype);
  kernels::ReduceArgs a{};
  a.dst = dst;
  for (int i = 0; i < n; ++i) a.src[i] = at(blocks, static_cast<size_t>(i) * count, es);
  a.nsrc = n;
  a.dtype = d.dtype;
  a.op = d.op == XC_AVG ? XC_SUM : d.op;
  a.avg_divisor = d.op == XC_AVG ? avg_divisor : 0;
  a.count = count;
  return dev->launch_reduce(a, s);
}

}  // namespace

bool nccl_wanted(const xc_comm_s *comm) {
  if (comm->device_ordinal == XC_DEVICE_NONE) return false;
  switch (nccl_mode()) {
    case '0':
      return false;
    case '1':
      return true;
    default:
      return comm->local_size != comm->size || any_forced();
  }
}

bool nccl_takes(const xc_comm_s *comm, int kind) {
  if (nccl_mode() == '0') return false;
  return comm->local_size != comm->size || nccl_mode() == '1' || forced_for(kind);
}

void nccl_setup_root(xc_comm_s *comm, bool lazy) {
  comm->nccl_lazy = lazy;
  if (!nccl_wanted(comm) || lazy) return;
  std::lock_guard<std::mutex> g(comm->nccl_mu);
  comm->nccl_tried = true;
  comm->nccl_why = make_by_id(comm);
  if (!comm->nccl_why.ok())
    XC_WARN("communicator %s has no NCCL communicator (its device ops will fail): %s", comm->name.c_str(),
            comm->nccl_why.message().c_str());
}

void nccl_setup_split(xc_comm_s *parent, xc_comm_s *child, int color, int key, bool lazy) {
  if (child) child->nccl_lazy = lazy;
  if (!nccl_wanted(parent) || lazy) return;
  // The parent's own first (lazy parent): every parent rank is in this call.
  std::shared_ptr<NcclComm> pc;
  Status st = nccl_of(parent, &pc);
  if (!st.ok()) {
    if (child) {
      std::lock_guard<std::mutex> g(child->nccl_mu);
      child->nccl_tried = true;
      child->nccl_why = st;
    }
    return;
  }
  bool mine = child && nccl_wanted(child);
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<NcclComm> made;
  Deadline deadline = op_deadline(parent);
  gpu::Device *dev = parent->device;
  auto split = [&] {
    return pc->split(mine ? color : nccl::kSplitNoColor, key, child ? child->name : parent->name, deadline, &made,
                     engine_progress(parent));
  };
  st = dev ? dev->in_context(split) : split();
  XC_INFO("ncclCommSplit of %s (color %d, key %d) took %.3f ms", parent->name.c_str(),
          mine ? color : nccl::kSplitNoColor, key, ms_since(t0));
  if (!child) return;
  std::lock_guard<std::mutex> g(child->nccl_mu);
  child->nccl_tried = true;
  if (!st.ok()) {
    child->nccl_why = blame(parent, st);
    XC_WARN("communicator %s has no NCCL communicator (its device ops will fail): %s", child->name.c_str(),
            st.message().c_str());
    return;
  }
  if (made) made->set_finalize_ms(child->timeout_ms);
  child->nccl = std::move(made);
}

namespace {

// The job the stream's thread runs after the op: its asynchronous errors.
device::Job nccl_job(xc_comm_s *comm, std::shared_ptr<NcclComm> nc, const char *what,
                     std::shared_ptr<device::OpOutcome> outcome) {
  device::Job job;
  job.what = what;
  job.timeout_ms = comm->timeout_ms;
  job.outcome = std::move(outcome);
  std::shared_ptr<std::atomic<int>> error = comm->device_error;
  job.run = [nc, error, what](device::JobEnv &) {
    // The op completed on the stream: a last look for an asynchronous
    // error (a peer's failure NCCL saw meanwhile). Never waits.
    Status st = nc->peek(what);
    int none = 0;
    if (!st.ok()) error->compare_exchange_strong(none, st.code());
    return st;
  };
  // While the stream's thread waits for the op on the stream: NCCL's
  // asynchronous error (a peer's failure) ends the wait before the deadline.
  std::function<Status()> peers = engine_progress(comm);
  job.watch = [nc, what, peers] {
    XC_TRY(nc->peek(what));
    return peers();
  };
  job.failed = [nc, error](const Status &st) {
    int none = 0;
    error->compare_exchange_strong(none, st.code());
    nc->abort(st.message().c_str());
  };
  return job;
}

}  // namespace

Status nccl_collective(xc_comm_s *comm, gpu::Device *dev, std::shared_ptr<device::DeviceStream> stream, CollDesc &&d,
                       std::shared_ptr<device::OpOutcome> outcome, const char *what) {
  std::shared_ptr<NcclComm> nc;
  XC_TRY(blame(comm, nccl_of(comm, &nc)));
  const NcclApi *api = nc->api();
  ncclDataType_t t = nccl::ncclUint8;
  ncclRedOp_t rop = nccl::ncclSum;
  if (!to_nccl_type(d.dtype, &t)) return Error(XC_ERR_INVALID_ARGUMENT, "dtype %d has no NCCL type", d.dtype);
  if (coll_kind_reduces(d.kind) && !to_nccl_op(d.op, &rop))
    return Error(XC_ERR_UNSUPPORTED,
                 "NCCL has no bitwise reductions (op %d): device memory across hosts takes sum, "
                 "prod, min, max and avg",
                 d.op);
  const int n = comm->size, me = comm->rank;
  const size_t es = dtype_size(d.dtype);
  const void *key = stream.get();
  Deadline deadline = op_deadline(comm);
  device::Job job = nccl_job(comm, nc, what, std::move(outcome));
  std::function<Status()> idle = engine_progress(comm);

  auto issue = [&](gpu::Stream *user) -> Status {
    void *s = dev->stream_native(user);
    void *rb = d.recvbuf;
    const void *sb = d.in_place ? d.recvbuf : d.sendbuf;
    auto call = [&](const std::function<ncclResult_t(ncclComm_t)> &f) {
      XC_TRY(before_nccl(dev, user, deadline));
      return nc->run(what, f, deadline, idle);
    };
    switch (d.kind) {
      case CollKind::kBarrier: {
        void *scratch = nullptr;
        XC_TRY(scratch_for(comm, dev, key, sizeof(float), &scratch));
        return call([&](ncclComm_t c) {
          return api->ncclAllReduce(scratch, scratch, 1, nccl::ncclFloat32, nccl::ncclSum, c, s);
        });
      }
      case CollKind::kBroadcast:
        return call([&](ncclComm_t c) { return api->ncclBroadcast(rb, rb, d.count, t, d.root, c, s); });
      case CollKind::kReduce:
        return call([&](ncclComm_t c) { return api->ncclReduce(sb, rb, d.count, t, rop, d.root, c, s); });
      case CollKind::kAllreduce:
        return call([&](ncclComm_t c) { return api->ncclAllReduce(sb, rb, d.count, t, rop, c, s); });
      case CollKind::kAllgather: {
        const void *in = d.in_place ? at(rb, static_cast<size_t>(me) * d.count, es) : d.sendbuf;
        return call([&](ncclComm_t c) { return api->ncclAllGather(in, rb, d.count, t, c, s); });
      }
      case CollKind::kReduceScatter: {
        if (!d.in_place)
          return call([&](ncclComm_t c) { return api->ncclReduceScatter(sb, rb, d.count, t, rop, c, s); });
        // xcomm's in place writes the result at the input's start, NCCL's at block rank.
        void *tmp = nullptr;
        XC_TRY(scratch_for(comm, dev, key, d.count * es, &tmp));
        XC_TRY(call([&](ncclComm_t c) { return api->ncclReduceScatter(rb, tmp, d.count, t, rop, c, s); }));
        return dev->copy_async(rb, tmp, d.count * es, user);
      }
      case CollKind::kGather:
      case CollKind::kGatherv: {
        std::vector<Xfer> xs;
        if (me != d.root) {
          xs.push_back({true, const_cast<void *>(d.sendbuf), d.count, d.root});
        } else {
          for (int j = 0; j < n; ++j) {
            size_t cnt = recv_block_count(d, j), off = recv_block_displ(d, j);
            if (j == me) {
              if (!d.in_place && cnt) XC_TRY(dev->copy_async(at(rb, off, es), d.sendbuf, d.count * es, user));
              continue;
            }
            xs.push_back({false, at(rb, off, es), cnt, j});
          }
        }
        return call([&](ncclComm_t c) { return grouped(api, c, s, t, xs); });
      }
      case CollKind::kScatter:
      case CollKind::kScatterv: {
        std::vector<Xfer> xs;
        bool v = d.kind == CollKind::kScatterv;
        if (me != d.root) {
          xs.push_back({false, rb, d.count, d.root});
        } else {
          for (int j = 0; j < n; ++j) {
            size_t cnt = v ? d.sendcounts[static_cast<size_t>(j)] : d.count;
            size_t off = v ? d.sdispls[static_cast<size_t>(j)] : static_cast<size_t>(j) * d.count;
            if (j == me) {
              if (!d.in_place && cnt) XC_TRY(dev->copy_async(rb, at(d.sendbuf, off, es), cnt * es, user));
              continue;
            }
            xs.push_back({true, at(d.sendbuf, off, es), cnt, j});
          }
        }
        return call([&](ncclComm_t c) { return grouped(api, c, s, t, xs); });
      }
      case CollKind::kAllgatherv: {
        std::vector<Xfer> xs;
        const void *in = d.in_place ? at(rb, d.rdispls[static_cast<size_t>(me)], es) : d.sendbuf;
        for (int j = 0; j < n; ++j) {
          if (j == me) {
            if (!d.in_place && d.count)
              XC_TRY(dev->copy_async(at(rb, d.rdispls[static_cast<size_t>(me)], es), d.sendbuf, d.count * es, user));
            continue;
          }
          xs.push_back({true, const_cast<void *>(in), d.count, j});
          xs.push_back({false, at(rb, d.rdispls[static_cast<size_t>(j)], es), d.recvcounts[static_cast<size_t>(j)], j});
        }
        return call([&](ncclComm_t c) { return grouped(api, c, s, t, xs); });
      }
      case CollKind::kAlltoall:
      case CollKind::kAlltoallv: {
        bool v = d.kind == CollKind::kAlltoallv;
        auto scount = [&](int j) {
          return v ? (d.in_place ? d.recvcounts : d.sendcounts)[static_cast<size_t>(j)] : d.count;
        };
        auto sdispl = [&](int j) {
          return v ? (d.in_place ? d.rdispls : d.sdispls)[static_cast<size_t>(j)] : static_cast<size_t>(j) * d.count;
        };
        auto rcount = [&](int j) { return v ? d.recvcounts[static_cast<size_t>(j)] : d.count; };
        auto rdispl = [&](int j) { return v ? d.rdispls[static_cast<size_t>(j)] : static_cast<size_t>(j) * d.count; };
        const void *in = d.sendbuf;
        if (d.in_place) {  // the input is the output: send from a copy
          size_t extent = 0;
          for (int j = 0; j < n; ++j) extent = std::max(extent, sdispl(j) + scount(j));
          void *tmp = nullptr;
          XC_TRY(scratch_for(comm, dev, key, extent * es, &tmp));
          if (extent) XC_TRY(dev->copy_async(tmp, rb, extent * es, user));
          in = tmp;
        }
        std::vector<Xfer> xs;
        for (int j = 0; j < n; ++j) {
          if (j == me) {
            if (rcount(j)) XC_TRY(dev->copy_async(at(rb, rdispl(j), es), at(in, sdispl(j), es), rcount(j) * es, user));
            continue;
          }
          xs.push_back({true, at(in, sdispl(j), es), scount(j), j});
          xs.push_back({false, at(rb, rdispl(j), es), rcount(j), j});
        }
        return call([&](ncclComm_t c) { return grouped(api, c, s, t, xs); });
      }
      case CollKind::kReduceScatterv: {
        // Block me of every rank, received into scratch slots, then reduced here in rank order.
        std::vector<size_t> off(static_cast<size_t>(n) + 1, 0);
        for (int j = 0; j < n; ++j)
          off[static_cast<size_t>(j) + 1] = off[static_cast<size_t>(j)] + d.recvcounts[static_cast<size_t>(j)];
        size_t mine = d.recvcounts[static_cast<size_t>(me)];
        void *slots = nullptr;
        XC_TRY(scratch_for(comm, dev, key, static_cast<size_t>(n) * mine * es + es, &slots));
        if (mine)
          XC_TRY(dev->copy_async(at(slots, static_cast<size_t>(me) * mine, es),
                                 at(sb, off[static_cast<size_t>(me)], es), mine * es, user));
        std::vector<Xfer> xs;
        for (int j = 0; j < n; ++j) {
          if (j == me) continue;
          xs.push_back({true, at(sb, off[static_cast<size_t>(j)], es), d.recvcounts[static_cast<size_t>(j)], j});
          xs.push_back({false, at(slots, static_cast<size_t>(j) * mine, es), mine, j});
        }
        XC_TRY(call([&](ncclComm_t c) { return grouped(api, c, s, t, xs); }));
        if (!mine) return Status::Ok();
        return reduce_blocks(dev, user, rb, slots, n, mine, d, n);
      }
      case CollKind::kScan:
      case CollKind::kExscan: {
        // Everyone's input (allgather into scratch), then the first me + 1
        // (scan) or me (exscan) blocks reduced here in rank order.
        void *all = nullptr;
        XC_TRY(scratch_for(comm, dev, key, static_cast<size_t>(n) * d.count * es + es, &all));
        XC_TRY(call([&](ncclComm_t c) { return api->ncclAllGather(sb, all, d.count, t, c, s); }));
        int blocks = d.kind == CollKind::kScan ? me + 1 : me;
        if (!blocks || !d.count) return Status::Ok();  // exscan leaves rank 0's output untouched
        return reduce_blocks(dev, user, rb, all, blocks, d.count, d, blocks);
      }
    }
    return Error(XC_ERR_INTERNAL, "unknown collective kind %d", static_cast<int>(d.kind));
  };
  Status st = dev->in_context([&] { return stream->enqueue_direct(std::move(job), issue); });
  if (!st.ok()) {
    int none = 0;
    comm->device_error->compare_exchange_strong(none, st.code());
  }
  return blame(comm, std::move(st));
}

Status nccl_p2p(xc_comm_s *comm, gpu::Device *dev, std::shared_ptr<device::DeviceStream> stream,
                bool collectives_stream, std::vector<device::P2pOp> ops, const char *what) {
  for (const device::P2pOp &op : ops)
    if (!op.send && op.peer < 0)
      return Error(XC_ERR_UNSUPPORTED,
                   "%s: a receive from XC_ANY_SOURCE on device memory through NCCL (communicator %s: %s) is not "
                   "supported: NCCL receives from a named peer; name the source",
                   what, comm->name.c_str(), comm->local_size != comm->size ? "ranks on several hosts" : "XC_NCCL=1");
  std::shared_ptr<NcclComm> nc;
  XC_TRY(blame(comm, nccl_of(comm, &nc)));
  if (!collectives_stream) {
    // Point-to-point on a stream of its own: a child of the same members
    // (ncclCommSplit, color 0, key = rank: no bootstrap, resources shared),
    // made once per (communicator, stream) so it overlaps the collectives.
    std::lock_guard<std::mutex> g(comm->nccl_mu);
    auto it = comm->nccl_p2p.find(stream.get());
    if (it != comm->nccl_p2p.end()) {
      nc = it->second;
    } else {
      auto t0 = std::chrono::steady_clock::now();
      std::shared_ptr<NcclComm> child;
      Status st = dev->in_context([&] {
        return nc->split(0, comm->rank, comm->name + "/p2p", op_deadline(comm), &child, engine_progress(comm));
      });
      if (!st.ok()) return blame(comm, st);
      XC_INFO("NCCL point-to-point child of %s for a new stream made by ncclCommSplit in %.3f ms", comm->name.c_str(),
              ms_since(t0));
      child->set_finalize_ms(comm->timeout_ms);
      comm->nccl_p2p[stream.get()] = child;
      nc = child;
    }
  }
  const NcclApi *api = nc->api();
  Deadline deadline = op_deadline(comm);
  // Outcomes are the job's to finish (receives: what matched = what was
  // asked: the named peer, the tag given, the capacity).
  std::vector<Xfer> xs;
  std::vector<device::P2pOp> recorded = ops;
  for (const device::P2pOp &op : ops) xs.push_back({op.send, op.buf, op.bytes, op.peer});
  device::Job job = nccl_job(comm, nc, what, nullptr);
  auto check = job.run;
  job.run = [check, recorded](device::JobEnv &env) {
    Status st = check(env);
    for (const device::P2pOp &op : recorded)
      if (op.outcome) op.outcome->finish(st, op.peer, op.tag, op.bytes);
    return st;
  };
  auto failed = job.failed;
  job.failed = [failed, recorded](const Status &st) {
    failed(st);
    for (const device::P2pOp &op : recorded)
      if (op.outcome && !op.outcome->done()) op.outcome->finish(st);
  };
  auto issue = [&](gpu::Stream *user) -> Status {
    void *s = dev->stream_native(user);
    XC_TRY(before_nccl(dev, user, deadline));
    return nc->run(
        what, [&](ncclComm_t c) { return grouped(api, c, s, nccl::ncclUint8, xs); }, deadline, engine_progress(comm));
  };
  Status st = dev->in_context([&] { return stream->enqueue_direct(std::move(job), issue); });
  if (!st.ok()) {
    for (const device::P2pOp &op : ops)
      if (op.outcome && !op.outcome->done()) op.outcome->finish(st);
    int none = 0;
    comm->device_error->compare_exchange_strong(none, st.code());
  }
  return blame(comm, std::move(st));
}

xc_result_t nccl_async_error(xc_comm_s *comm) {
  std::unique_lock<std::mutex> g(comm->nccl_mu, std::try_to_lock);
  if (!g.owns_lock() || !comm->nccl) return XC_SUCCESS;
  Status st = comm->nccl->peek("ncclCommGetAsyncError");
  return st.ok() ? XC_SUCCESS : blame(comm, st).code();
}

void nccl_abort(xc_comm_s *comm) {
  std::unique_lock<std::mutex> g(comm->nccl_mu, std::try_to_lock);
  // A creation in progress holds the lock: it polls under the deadline and
  // the communicator is marked aborted, so its ops fail anyway.
  if (!g.owns_lock()) return;
  if (comm->nccl) comm->nccl->abort("xc_comm_abort");
  for (auto &p : comm->nccl_p2p) p.second->abort("xc_comm_abort");
}

void nccl_release(xc_comm_s *comm) {
  std::lock_guard<std::mutex> g(comm->nccl_mu);
  comm->nccl_p2p.clear();
  comm->nccl.reset();
  if (comm->device) {
    for (auto &p : comm->nccl_scratch)
      if (p.second.first) (void)comm->device->free(p.second.first);
    for (void *p : comm->nccl_outgrown) (void)comm->device->free(p);
  }
  comm->nccl_scratch.clear();
  comm->nccl_outgrown.clear();
}

}  // namespace xc
