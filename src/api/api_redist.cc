// Redistribution entry points: layouts (local), plans (collective: the
// ranks agree on the layouts and make the sub-communicators the plan's
// collectives run on), and running a plan over xcomm's own point-to-point
// and collectives (redist/execute.h's Transport). Device memory: the run
// is a job on the communicator's collectives stream that stages the local
// bytes through host memory the plan keeps (docs/redistribution.md).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "api/api_support.h"
#include "api/group.h"
#include "base/dtype.h"
#include "gpu/device.h"
#include "redist/execute.h"
#include "redist/planner.h"
#include "runtime/device_ops.h"

using xc::Error;
using xc::Status;
using xc::api::finish;
namespace rd = xc::redist;

namespace {
constexpr uint32_t kLayoutMagic = 0x4c41594f;  // "LAYO"
constexpr uint32_t kLayoutFreed = 0x4c415946;
constexpr uint32_t kPlanMagic = 0x504c414e;  // "PLAN"
constexpr uint32_t kPlanFreed = 0x504c4146;
}  // namespace

struct xc_layout_s {
  uint32_t magic = kLayoutMagic;
  xc_comm_t comm = nullptr;
  rd::Layout layout;
};

// What a run needs, shared with the thread of a non-blocking run so that
// it outlives nothing it uses.
struct PlanState {
  xc_comm_t comm = nullptr;
  rd::Plan plan;
  rd::Buffers bufs;
  std::vector<xc_comm_t> sub;  // per mesh dimension; NULL where unused
  // Host copies of the local src and dst bytes for runs on device memory,
  // sized by the first such run and kept for the next.
  rd::Staging host_src, host_dst;
  // A run in progress (one at a time): set by the call that starts it,
  // cleared when it ends (on the stream's thread for device memory).
  std::atomic<bool> busy{false};
};

struct xc_plan_s {
  uint32_t magic = kPlanMagic;
  std::shared_ptr<PlanState> state;
};

namespace {

// The detail of a failed call made from here, as a status.
Status from_c(xc_result_t rc, const char *what) {
  if (rc == XC_SUCCESS) return Status::Ok();
  return Error(rc, "%s: %s", what, xc_last_error());
}

class CommTransport : public rd::Transport {
 public:
  CommTransport(xc_comm_t comm, const std::vector<xc_comm_t> &sub, xc_dtype_t dtype)
      : comm_(comm), sub_(sub), dtype_(dtype) {}

  Status exchange(const std::vector<rd::Transfer> &sends, const std::vector<rd::Transfer> &recvs,
                  const std::function<void()> &meanwhile) override {
    XC_TRY(from_c(xc_group_start(), "xc_group_start"));
    Status st;
    for (const rd::Transfer &r : recvs) {
      if (!st.ok()) break;
      st = from_c(xc_recv(r.buf, r.count, dtype_, r.peer, XC_REDIST_TAG, comm_, nullptr), "receive");
    }
    for (const rd::Transfer &s : sends) {
      if (!st.ok()) break;
      st = from_c(xc_send(s.buf, s.count, dtype_, s.peer, XC_REDIST_TAG, comm_), "send");
    }
    if (st.ok()) meanwhile();
    Status end = from_c(xc_group_end(), "point-to-point step");
    return st.ok() ? end : st;
  }
  Status allreduce(int k, const void *in, void *out, size_t count, xc_op_t op) override {
    return from_c(xc_allreduce(in, out, count, dtype_, op, sub_[static_cast<size_t>(k)]), "allreduce");
  }
  Status reduce_scatterv(int k, const void *in, void *out, const size_t *counts, xc_op_t op) override {
    return from_c(xc_reduce_scatterv(in, out, counts, dtype_, op, sub_[static_cast<size_t>(k)]), "reduce_scatterv");
  }
  Status allgatherv(int k, const void *in, size_t count, void *out, const size_t *counts,
                    const size_t *displs) override {
    return from_c(xc_allgatherv(in, count, out, counts, displs, dtype_, sub_[static_cast<size_t>(k)]), "allgatherv");
  }
  Status alltoallv(int k, const void *in, const size_t *sc, const size_t *sd, void *out, const size_t *rc,
                   const size_t *rdi) override {
    return from_c(xc_alltoallv(in, sc, sd, out, rc, rdi, dtype_, sub_[static_cast<size_t>(k)]), "alltoallv");
  }

 private:
  xc_comm_t comm_;
  const std::vector<xc_comm_t> &sub_;
  xc_dtype_t dtype_;
};

Status check_layout(const xc_layout_s *l, const char *name) {
  if (!l) return Error(XC_ERR_INVALID_ARGUMENT, "%s is NULL", name);
  if (l->magic == kLayoutFreed) return Error(XC_ERR_INVALID_USAGE, "%s was already freed", name);
  if (l->magic != kLayoutMagic) return Error(XC_ERR_INVALID_ARGUMENT, "%s is not a layout handle", name);
  return Status::Ok();
}

Status check_plan(const xc_plan_s *p) {
  if (!p) return Error(XC_ERR_INVALID_ARGUMENT, "plan is NULL");
  if (p->magic == kPlanFreed) return Error(XC_ERR_INVALID_USAGE, "the plan was already freed");
  if (p->magic != kPlanMagic) return Error(XC_ERR_INVALID_ARGUMENT, "not a plan handle");
  return Status::Ok();
}

// A new layout handle from a builder, *out untouched on failure.
template <typename Build>
xc_result_t new_layout(const char *fn, xc_comm_t comm, xc_layout_t *out, Build build) {
  Status st = xc::check_usable(comm);
  if (st.ok() && !out) st = Error(XC_ERR_INVALID_ARGUMENT, "out is NULL");
  if (!st.ok()) return finish(fn, st);
  auto l = std::make_unique<xc_layout_s>();
  l->comm = comm;
  st = build(comm->size, &l->layout);
  if (!st.ok()) return finish(fn, st);
  *out = l.release();
  return xc::api::ok();
}

Status read_redist_config(const xc_redist_config_t *user, xc_redist_config_t *out) {
  xc_redist_config_t cfg = XC_REDIST_CONFIG_INIT;
  if (user) {
    if (user->size < offsetof(xc_redist_config_t, flags) + sizeof(uint32_t) || user->size > 4096)
      return Error(XC_ERR_INVALID_ARGUMENT, "config.size %zu is not valid: start from XC_REDIST_CONFIG_INIT",
                   user->size);
    if (user->version == 0 || user->version > XC_REDIST_CONFIG_VERSION)
      return Error(XC_ERR_INVALID_ARGUMENT, "config.version %u is not one this library knows (it knows up to %u)",
                   user->version, XC_REDIST_CONFIG_VERSION);
    size_t n = std::min(user->size, sizeof cfg);
    memcpy(&cfg, user, n);
    const unsigned char *tail = reinterpret_cast<const unsigned char *>(user) + n;
    for (size_t i = 0; n + i < user->size; ++i)
      if (tail[i]) return Error(XC_ERR_UNSUPPORTED, "config sets a field this library version does not know (byte %zu)", n + i);
    if (cfg.flags & ~XC_REDIST_P2P_ONLY)
      return Error(XC_ERR_INVALID_ARGUMENT, "config.flags 0x%x has bits this library does not know", cfg.flags);
  }
  *out = cfg;
  return Status::Ok();
}

// Every rank learns whether all planned, and whether they passed the same
// layouts and dtype: one allreduce (min) of the error and of each word
// and its negation, so a difference anywhere shows everywhere.
Status agree(xc_comm_t comm, const Status &mine, uint64_t src_hash, uint64_t dst_hash, int32_t dtype) {
  int64_t words[3] = {static_cast<int64_t>(src_hash >> 2), static_cast<int64_t>(dst_hash >> 2), dtype};
  int64_t v[8] = {mine.code(), words[0], -words[0], words[1], -words[1], words[2], -words[2], 0};
  int64_t r[8];
  XC_TRY(from_c(xc_allreduce(v, r, 8, XC_INT64, XC_MIN, comm), "agreeing on the plan"));
  if (!mine.ok()) return mine;
  if (r[0] != 0)
    return Error(static_cast<xc_result_t>(r[0]), "another rank could not plan (%s; its xc_last_error says why)",
                 xc_strerror(static_cast<xc_result_t>(r[0])));
  if (r[1] != -r[2] || r[3] != -r[4])
    return Error(XC_ERR_INVALID_USAGE, "the ranks passed different %s layouts", r[1] != -r[2] ? "src" : "dst");
  if (r[5] != -r[6]) return Error(XC_ERR_INVALID_USAGE, "the ranks passed different dtypes");
  return Status::Ok();
}

// The sub-communicator of mesh dimension k: ranks that differ only in
// their coordinate k, ordered by it.
Status split_mesh_dim(xc_comm_t comm, const rd::Mesh &mesh, int k, xc_comm_t *out) {
  int rank = comm->rank, color = 0;
  for (int j = 0; j < mesh.ndim(); ++j)
    if (j != k) color = color * mesh.shape[static_cast<size_t>(j)] + mesh.coord(rank, j);
  return from_c(xc_comm_split(comm, color, mesh.coord(rank, k), nullptr, out), "making a mesh dimension's communicator");
}

void free_subs(std::vector<xc_comm_t> &sub) {
  for (xc_comm_t &c : sub) {
    if (c) (void)xc_comm_free(c);
    c = nullptr;
  }
}

// *device: both buffers are device memory (a mix is refused).
Status check_run(const xc_plan_s *p, const void *sendbuf, void *recvbuf, bool *device) {
  XC_TRY(check_plan(p));
  const PlanState &s = *p->state;
  XC_TRY(xc::check_usable(s.comm));
  size_t in = s.plan.src_count * s.plan.esize, out = s.plan.dst_count * s.plan.esize;
  if (!sendbuf && in) return Error(XC_ERR_INVALID_ARGUMENT, "sendbuf is NULL but holds %zu bytes", in);
  if (!recvbuf && out) return Error(XC_ERR_INVALID_ARGUMENT, "recvbuf is NULL but holds %zu bytes", out);
  auto a = reinterpret_cast<uintptr_t>(sendbuf), b = reinterpret_cast<uintptr_t>(recvbuf);
  if (in && out && a < b + out && b < a + in) return Error(XC_ERR_INVALID_ARGUMENT, "sendbuf and recvbuf overlap");
  const void *bufs[2] = {sendbuf, recvbuf};
  Status why;
  *device = xc::any_device(bufs, 2, &why);
  if (!why.ok())
    return Error(XC_ERR_UNSUPPORTED,
                 "sendbuf is %s memory and recvbuf %s memory: a plan runs on two host buffers or two device buffers",
                 xc::gpu::pointer_is_device(sendbuf) ? "device" : "host",
                 xc::gpu::pointer_is_device(recvbuf) ? "device" : "host");
  if (xc::api::in_group())
    return Error(XC_ERR_INVALID_USAGE, "a plan cannot run inside xc_group_start/xc_group_end (it waits for its messages)");
  return Status::Ok();
}

Status run(PlanState &s, const void *sendbuf, void *recvbuf) {
  CommTransport t(s.comm, s.sub, s.plan.dtype);
  return rd::run_plan(s.plan, s.bufs, sendbuf, recvbuf, t);
}

// A run on device memory, on the stream's thread: the local bytes to host
// memory, the host run, the result back to the device.
Status run_staged(PlanState &s, const void *sendbuf, void *recvbuf, xc::device::JobEnv &env) {
  size_t in = s.plan.src_count * s.plan.esize, out = s.plan.dst_count * s.plan.esize;
  s.host_src.resize(in);
  s.host_dst.resize(out);
  if (in) {
    XC_TRY(env.dev()->copy_async(s.host_src.data(), sendbuf, in, env.work()));
    XC_TRY(env.finish_work());
  }
  XC_TRY(run(s, s.host_src.data(), s.host_dst.data()));
  if (out) {
    XC_TRY(env.dev()->copy_async(recvbuf, s.host_dst.data(), out, env.work()));
    XC_TRY(env.finish_work());
  }
  return Status::Ok();
}

// Enqueue a run on device memory (s->busy already set; cleared when the job
// ends, or now if it cannot be enqueued). outcome may be null.
Status enqueue_staged(const char *fn, const std::shared_ptr<PlanState> &s, const void *sendbuf, void *recvbuf,
                      std::shared_ptr<xc::device::OpOutcome> outcome) {
  auto started = std::make_shared<bool>(false);  // touched on the stream's thread only
  auto job = [s, sendbuf, recvbuf, started](xc::device::JobEnv &env) {
    *started = true;
    Status st = run_staged(*s, sendbuf, recvbuf, env);
    s->busy = false;
    return st;
  };
  // The job never ran (its inputs never became ready): the plan is free again.
  auto failed = [s, started](const Status &) {
    if (!*started) s->busy = false;
  };
  Status st = xc::device_host_job(s->comm, fn, job, std::move(outcome), failed);
  if (!st.ok()) s->busy = false;
  return st;
}

}  // namespace

XC_EXPORT xc_result_t xc_layout_boxes(xc_comm_t comm, int ndim, const size_t *global_shape, size_t nboxes,
                                      const size_t *offsets, const size_t *extents, const int *owners,
                                      xc_layout_t *out) {
  XC_API_GUARD("xc_layout_boxes", {
    return new_layout("xc_layout_boxes", comm, out, [&](int n, rd::Layout *l) {
      return rd::make_boxes_layout(n, ndim, global_shape, nboxes, offsets, extents, owners, l);
    });
  })
}

XC_EXPORT xc_result_t xc_layout_mesh(xc_comm_t comm, int ndim, const size_t *global_shape, int mesh_ndim,
                                     const int *mesh_shape, const xc_placement_t *placements, xc_layout_t *out) {
  XC_API_GUARD("xc_layout_mesh", {
    return new_layout("xc_layout_mesh", comm, out, [&](int n, rd::Layout *l) -> Status {
      if (mesh_ndim < 1 || mesh_ndim > rd::kMaxDims)
        return Error(XC_ERR_INVALID_ARGUMENT, "mesh_ndim %d is out of range [1, %d]", mesh_ndim, rd::kMaxDims);
      if (!mesh_shape || !placements)
        return Error(XC_ERR_INVALID_ARGUMENT, "%s is NULL", !mesh_shape ? "mesh_shape" : "placements");
      rd::Mesh mesh;
      for (int k = 0; k < mesh_ndim; ++k) {
        const xc_placement_t &p = placements[k];
        if (p.reserved != 0) return Error(XC_ERR_INVALID_ARGUMENT, "placements[%d].reserved must be 0", k);
        rd::Placement q;
        q.kind = p.kind;
        if (p.kind == XC_PLACEMENT_SHARD) q.dim = p.dim;
        if (p.kind == XC_PLACEMENT_PARTIAL) {
          if (p.op < XC_SUM || p.op > XC_BXOR)
            return Error(XC_ERR_INVALID_ARGUMENT, "placements[%d].op %d is not an xc_op_t", k, p.op);
          q.op = static_cast<xc_op_t>(p.op);
        }
        mesh.shape.push_back(mesh_shape[k]);
        mesh.placements.push_back(q);
      }
      return rd::make_mesh_layout(n, ndim, global_shape, mesh, l);
    });
  })
}

XC_EXPORT xc_result_t xc_layout_block_cyclic(xc_comm_t comm, size_t rows, size_t cols, size_t mb, size_t nb,
                                             int nprow, int npcol, int rsrc, int csrc, xc_order_t grid_order,
                                             xc_order_t storage, xc_layout_t *out) {
  XC_API_GUARD("xc_layout_block_cyclic", {
    return new_layout("xc_layout_block_cyclic", comm, out, [&](int n, rd::Layout *l) -> Status {
      int32_t g = xc::enum_bits(grid_order), s = xc::enum_bits(storage);
      if (g != XC_ORDER_ROW_MAJOR && g != XC_ORDER_COL_MAJOR)
        return Error(XC_ERR_INVALID_ARGUMENT, "grid_order %d is not an xc_order_t", g);
      if (s != XC_ORDER_ROW_MAJOR && s != XC_ORDER_COL_MAJOR)
        return Error(XC_ERR_INVALID_ARGUMENT, "storage %d is not an xc_order_t", s);
      rd::BlockCyclic bc;
      bc.rows = rows, bc.cols = cols, bc.mb = mb, bc.nb = nb;
      bc.nprow = nprow, bc.npcol = npcol, bc.rsrc = rsrc, bc.csrc = csrc;
      bc.grid_col_major = g == XC_ORDER_COL_MAJOR;
      bc.storage_col_major = s == XC_ORDER_COL_MAJOR;
      return rd::make_block_cyclic_layout(n, bc, l);
    });
  })
}

XC_EXPORT xc_result_t xc_layout_local_count(xc_layout_t layout, size_t *count) {
  XC_API_GUARD("xc_layout_local_count", {
    Status st = check_layout(layout, "layout");
    if (st.ok() && !count) st = Error(XC_ERR_INVALID_ARGUMENT, "count is NULL");
    if (st.ok()) st = xc::check_comm(layout->comm);
    if (!st.ok()) return finish("xc_layout_local_count", st);
    *count = layout->layout.local_count[static_cast<size_t>(layout->comm->rank)];
    return xc::api::ok();
  })
}

XC_EXPORT xc_result_t xc_layout_free(xc_layout_t layout) {
  XC_API_GUARD("xc_layout_free", {
    if (!layout) return xc::api::ok();
    Status st = check_layout(layout, "layout");
    if (!st.ok()) return finish("xc_layout_free", st);
    layout->magic = kLayoutFreed;
    // The header stays (a stale handle then reads "already freed"); the blocks go.
    layout->layout = rd::Layout();
    return xc::api::ok();
  })
}

XC_EXPORT xc_result_t xc_redist_config_init(xc_redist_config_t *cfg, size_t size) {
  XC_API_GUARD("xc_redist_config_init", {
    if (!cfg) return finish("xc_redist_config_init", Error(XC_ERR_INVALID_ARGUMENT, "cfg is NULL"));
    if (size < sizeof(xc_redist_config_t) || size > 4096)
      return finish("xc_redist_config_init",
                    Error(XC_ERR_INVALID_ARGUMENT, "size %zu is not in [%zu, 4096]", size, sizeof(xc_redist_config_t)));
    memset(cfg, 0, size);
    *cfg = xc_redist_config_t XC_REDIST_CONFIG_INIT;
    cfg->size = size;
    return xc::api::ok();
  })
}

XC_EXPORT xc_result_t xc_redistribute_plan(xc_layout_t src, xc_layout_t dst, xc_dtype_t dtype,
                                           const xc_redist_config_t *config, xc_plan_t *plan) {
  XC_API_GUARD("xc_redistribute_plan", {
    const char *fn = "xc_redistribute_plan";
    // Without a usable communicator this rank cannot take part at all.
    Status st = check_layout(src, "src");
    if (st.ok()) st = xc::check_usable(src->comm);
    if (!st.ok()) return finish(fn, st);
    xc_comm_t comm = src->comm;
    int32_t dbits = xc::enum_bits(dtype);
    xc_dtype_t type = XC_UINT8;
    xc_redist_config_t cfg = XC_REDIST_CONFIG_INIT;
    auto state = std::make_shared<PlanState>();
    st = check_layout(dst, "dst");
    if (st.ok() && dst->comm != comm)
      st = Error(XC_ERR_INVALID_ARGUMENT, "src and dst are layouts of different communicators");
    if (st.ok()) st = xc::dtype_arg(dbits, &type);
    if (st.ok()) st = read_redist_config(config, &cfg);
    if (st.ok() && !plan) st = Error(XC_ERR_INVALID_ARGUMENT, "plan is NULL");
    if (st.ok()) {
      rd::PlanOptions opt;
      opt.p2p_only = (cfg.flags & XC_REDIST_P2P_ONLY) != 0;
      st = rd::make_plan(src->layout, dst->layout, type, xc::dtype_size(type), comm->rank, opt, &state->plan);
    }
    uint64_t dst_hash = st.ok() ? dst->layout.hash : 0;
    st = agree(comm, st, src->layout.hash, dst_hash, dbits);
    if (!st.ok()) return finish(fn, st);
    // Every rank made the same decisions, so every rank splits the same dimensions.
    const rd::Plan &p = state->plan;
    state->comm = comm;
    state->sub.assign(p.mesh_dims_used.size(), nullptr);
    for (size_t k = 0; k < p.mesh_dims_used.size(); ++k) {
      if (!p.mesh_dims_used[k]) continue;
      st = split_mesh_dim(comm, src->layout.mesh, static_cast<int>(k), &state->sub[k]);
      if (!st.ok()) {
        free_subs(state->sub);
        return finish(fn, st);
      }
    }
    state->bufs.size_for(p);
    auto h = std::make_unique<xc_plan_s>();
    h->state = std::move(state);
    *plan = h.release();
    return xc::api::ok();
  })
}

XC_EXPORT xc_result_t xc_redistribute(xc_plan_t plan, const void *sendbuf, void *recvbuf) {
  XC_API_GUARD("xc_redistribute", {
    bool device = false;
    Status st = check_run(plan, sendbuf, recvbuf, &device);
    if (!st.ok()) return finish("xc_redistribute", st);
    PlanState &s = *plan->state;
    if (s.busy.exchange(true))
      return finish("xc_redistribute",
                    Error(XC_ERR_INVALID_USAGE,
                          "the plan is already running (xc_iredistribute, or a run on device memory not yet done)"));
    // Stream-ordered: returns once enqueued; its errors come from the stream.
    if (device)
      return finish("xc_redistribute", enqueue_staged("xc_redistribute", plan->state, sendbuf, recvbuf, nullptr));
    st = run(s, sendbuf, recvbuf);
    s.busy = false;
    return finish("xc_redistribute", st);
  })
}

XC_EXPORT xc_result_t xc_iredistribute(xc_plan_t plan, const void *sendbuf, void *recvbuf, xc_request_t *req) {
  XC_API_GUARD("xc_iredistribute", {
    bool device = false;
    Status st = check_run(plan, sendbuf, recvbuf, &device);
    if (st.ok() && !req) st = Error(XC_ERR_INVALID_ARGUMENT, "req is NULL");
    if (!st.ok()) return finish("xc_iredistribute", st);
    std::shared_ptr<PlanState> s = plan->state;
    if (s->busy.exchange(true))
      return finish("xc_iredistribute", Error(XC_ERR_INVALID_USAGE, "the plan is already running"));
    auto outcome = std::make_shared<xc::device::OpOutcome>();
    if (device) {
      st = enqueue_staged("xc_iredistribute", s, sendbuf, recvbuf, outcome);
      if (!st.ok()) return finish("xc_iredistribute", st);
      *req = xc::api::device_request("xc_iredistribute", s->comm, XC_ANY_SOURCE, outcome);
      return xc::api::ok();
    }
    *req = xc::api::device_request("xc_iredistribute", s->comm, XC_ANY_SOURCE, outcome);
    // A thread of its own: the steps block in xcomm's calls, which other
    // threads may make at the same time (XC_THREAD_MULTIPLE).
    std::thread([s, sendbuf, recvbuf, outcome] {
      Status result = run(*s, sendbuf, recvbuf);
      s->busy = false;
      outcome->finish(result);
    }).detach();
    return xc::api::ok();
  })
}

XC_EXPORT xc_result_t xc_plan_info(xc_plan_t plan, xc_plan_info_t *info) {
  XC_API_GUARD("xc_plan_info", {
    Status st = check_plan(plan);
    if (st.ok() && !info) st = Error(XC_ERR_INVALID_ARGUMENT, "info is NULL");
    if (st.ok() && (info->size < offsetof(xc_plan_info_t, step_kinds) || info->size > 4096))
      st = Error(XC_ERR_INVALID_ARGUMENT, "info->size %zu is not valid: set it to sizeof(xc_plan_info_t)", info->size);
    if (!st.ok()) return finish("xc_plan_info", st);
    const rd::PlanInfo &i = plan->state->plan.info;
    xc_plan_info_t out;
    memset(&out, 0, sizeof out);
    out.size = std::min(info->size, sizeof out);
    out.version = XC_PLAN_INFO_VERSION;
    out.step_kinds = i.step_kinds;
    out.bytes_sent = i.bytes_sent;
    out.bytes_received = i.bytes_received;
    out.bytes_copied = i.bytes_copied;
    out.lower_bound_bytes = i.lower_bound_bytes;
    out.messages_sent = i.messages_sent;
    out.messages_received = i.messages_received;
    out.collective_steps = i.collective_steps;
    out.p2p_steps = i.p2p_steps;
    memcpy(info, &out, out.size);
    return xc::api::ok();
  })
}

XC_EXPORT xc_result_t xc_plan_relabel(xc_plan_t plan, int *perm, uint64_t *bytes_saved) {
  XC_API_GUARD("xc_plan_relabel", {
    Status st = check_plan(plan);
    if (st.ok() && !perm) st = Error(XC_ERR_INVALID_ARGUMENT, "perm is NULL");
    if (st.ok() && plan->state->plan.relabel.empty())
      st = Error(XC_ERR_UNSUPPORTED, "no relabelling is computed for communicators over 4096 ranks");
    if (!st.ok()) return finish("xc_plan_relabel", st);
    const rd::Plan &p = plan->state->plan;
    std::copy(p.relabel.begin(), p.relabel.end(), perm);
    if (bytes_saved) *bytes_saved = p.relabel_saved;
    return xc::api::ok();
  })
}

XC_EXPORT xc_result_t xc_plan_free(xc_plan_t plan) {
  XC_API_GUARD("xc_plan_free", {
    if (!plan) return xc::api::ok();
    Status st = check_plan(plan);
    if (st.ok() && plan->state->busy.load())
      st = Error(XC_ERR_INVALID_USAGE,
                 "the plan is still running (wait for its xc_iredistribute request, or synchronize the stream of a "
                 "run on device memory, first)");
    if (!st.ok()) return finish("xc_plan_free", st);
    std::vector<xc_comm_t> sub;
    sub.swap(plan->state->sub);
    plan->magic = kPlanFreed;
    plan->state.reset();  // the header stays, so a stale handle reads "already freed"
    // Collective: the sub-communicators are freed on every rank.
    for (xc_comm_t c : sub) {
      if (!c) continue;
      xc_result_t rc = xc_comm_free(c);
      if (rc != XC_SUCCESS && st.ok()) st = from_c(rc, "freeing a mesh dimension's communicator");
    }
    return finish("xc_plan_free", st);
  })
}
