// Collective entry points: validate the arguments, describe the op
// (CollDesc) and hand it to coll_submit, which runs it now or starts it.
#include <cstdint>
#include <cstring>

#include "api/api_support.h"
#include "api/coll_submit.h"
#include "base/dtype.h"
#include "coll/desc.h"
#include "runtime/device_ops.h"

using xc::CollDesc;
using xc::CollKind;
using xc::Error;
using xc::Status;
using xc::api::finish;

namespace {

Status check_root(int root, xc_comm_t comm) {
  if (root < 0 || root >= comm->size) return Error(XC_ERR_INVALID_ARGUMENT, "root %d is out of range [0, %d)", root, comm->size);
  return Status::Ok();
}

Status check_buffer(const void *buf, size_t bytes, const char *what) {
  if (!buf && bytes > 0) return Error(XC_ERR_INVALID_ARGUMENT, "%s is NULL but holds %zu bytes", what, bytes);
  return Status::Ok();
}

// Distinct buffers must not overlap (MPI forbids it; the result would be garbage).
Status check_disjoint(const void *a, size_t abytes, const void *b, size_t bbytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  if (abytes == 0 || bbytes == 0) return Status::Ok();
  if (x < y + bbytes && y < x + abytes)
    return Error(XC_ERR_INVALID_ARGUMENT, "sendbuf and recvbuf overlap; use XC_IN_PLACE instead");
  return Status::Ok();
}

// n * count elements of dtype, in bytes, without overflow.
Status checked_total(size_t count, size_t n, xc_dtype_t dtype, size_t *bytes) {
  size_t one = 0, all = 0;
  XC_TRY(xc::checked_bytes(count, dtype, &one));
  if (__builtin_mul_overflow(one, n, &all))
    return Error(XC_ERR_INVALID_ARGUMENT, "count %zu times %zu ranks overflows", count, n);
  if (all > xc::kMaxBufferBytes)
    return Error(XC_ERR_INVALID_ARGUMENT, "count %zu times %zu ranks is %zu bytes, more than any buffer holds", count, n,
                 all);
  *bytes = all;
  return Status::Ok();
}

// A per-rank count array (and optional displacements): present, and every
// block inside a buffer whose extent (in elements) is returned.
Status read_counts(const size_t *counts, const size_t *displs, int n, const char *cname, const char *dname,
                   xc_dtype_t dtype, xc::CountArray *cout, xc::CountArray *dout, size_t *extent) {
  if (!counts) return Error(XC_ERR_INVALID_ARGUMENT, "%s is NULL", cname);
  cout->view(counts, static_cast<size_t>(n));
  size_t end = 0, running = 0;
  for (int i = 0; i < n; ++i) {
    size_t bytes = 0;
    Status st = xc::checked_bytes(counts[i], dtype, &bytes);
    if (!st.ok()) return std::move(st.with_context(std::string(cname) + "[" + std::to_string(i) + "]"));  // the name only on failure
    size_t start = running;
    if (dname) {
      if (!displs) return Error(XC_ERR_INVALID_ARGUMENT, "%s is NULL", dname);
      start = displs[i];
    }
    if (start > SIZE_MAX - counts[i]) return Error(XC_ERR_INVALID_ARGUMENT, "%s[%d] + %s[%d] overflows", dname ? dname : "offset", i, cname, i);
    if (start + counts[i] > end) end = start + counts[i];
    running = start + counts[i];
  }
  size_t bytes = 0;
  XC_TRY(xc::checked_bytes(end, dtype, &bytes));
  if (dname) dout->view(displs, static_cast<size_t>(n));
  *extent = end;
  return Status::Ok();
}

size_t esize(xc_dtype_t dtype) { return xc::dtype_size(dtype); }

// A v-op rank's own count, from the counts just read: in place it is taken
// from there, else it must equal what the rank passed as mine.
Status own_count(CollDesc &d, const xc::CountArray &counts, int rank, const char *mine, const char *array) {
  size_t own = counts[static_cast<size_t>(rank)];
  if (d.in_place) d.count = own;
  if (d.count != own)
    return Error(XC_ERR_INVALID_ARGUMENT, "%s %zu differs from %s[%d] = %zu", mine, d.count, array, rank, own);
  return Status::Ok();
}

// Start of every op: a usable comm and a known dtype (and op for
// reductions), read as the caller's bits (xc::enum_bits) into d.
Status check_common(xc_comm_t comm, const xc_dtype_t &dtype, const xc_op_t *op, CollDesc &d) {
  XC_TRY(xc::check_usable(comm));
  XC_TRY(xc::dtype_arg(xc::enum_bits(dtype), &d.dtype));
  return op ? xc::op_arg(xc::enum_bits(*op), d.dtype, &d.op) : Status::Ok();
}

// Input and output of count elements each: in place or disjoint.
Status check_in_out(const CollDesc &d, size_t in_bytes, size_t out_bytes, bool need_out) {
  if (need_out) XC_TRY(check_buffer(d.recvbuf, out_bytes, "recvbuf"));
  if (d.in_place) return check_buffer(d.recvbuf, in_bytes, "recvbuf");
  XC_TRY(check_buffer(d.sendbuf, in_bytes, "sendbuf"));
  return need_out ? check_disjoint(d.sendbuf, in_bytes, d.recvbuf, out_bytes) : Status::Ok();
}

// dtype and op are set by check_common.
CollDesc describe(CollKind kind, const void *sendbuf, void *recvbuf, size_t count) {
  CollDesc d;
  d.kind = kind;
  d.in_place = sendbuf == XC_IN_PLACE;
  d.sendbuf = d.in_place ? nullptr : sendbuf;
  d.recvbuf = recvbuf;
  d.count = count;
  return d;
}

// The buffers this rank's part of the op touches (root-only arguments
// elsewhere may be anything), for telling host from device memory.
size_t used_buffers(const CollDesc &d, int rank, const void **out) {
  bool root = rank == d.root;
  size_t n = 0;
  auto add = [&](const void *p) { out[n++] = p; };
  switch (d.kind) {
    case CollKind::kBarrier: break;
    case CollKind::kBroadcast: add(d.recvbuf); break;
    case CollKind::kReduce:
    case CollKind::kGather:
    case CollKind::kGatherv:
      add(d.sendbuf);
      if (root) add(d.recvbuf);
      break;
    case CollKind::kScatter:
    case CollKind::kScatterv:
      if (root) add(d.sendbuf);
      add(d.recvbuf);
      break;
    default:
      add(d.sendbuf);
      add(d.recvbuf);
  }
  return n;
}

// Validation result + description → run now (req NULL) or start; device
// memory is enqueued on its stream instead.
xc_result_t submit(const char *fn, Status st, xc_comm_t comm, CollDesc &&d, xc_request_t *req, bool nonblocking) {
  if (st.ok() && nonblocking && !req) st = Error(XC_ERR_INVALID_ARGUMENT, "req is NULL");
  if (!st.ok()) return finish(fn, st);
  const void *bufs[2];
  size_t n = used_buffers(d, comm->rank, bufs);
  if (xc::any_device(bufs, n, &st)) {
    if (!st.ok()) return finish(fn, st);
    d.memory = xc::MemKind::kDevice;
    std::shared_ptr<xc::device::OpOutcome> outcome;
    if (nonblocking) outcome = std::make_shared<xc::device::OpOutcome>();
    st = xc::device_collective(comm, std::move(d), outcome, fn);
    if (!st.ok()) return finish(fn, st);
    if (nonblocking) *req = xc::api::device_request(fn, comm, -1, std::move(outcome));
    return xc::api::ok();
  }
  if (!st.ok()) return finish(fn, st);
  return xc::api::coll_submit(fn, comm, std::move(d), nonblocking ? req : nullptr);
}

// ---- one validator per op, after check_common; each fills d and returns the verdict ----

Status v_barrier(xc_comm_t comm) { return xc::check_usable(comm); }

Status v_broadcast(xc_comm_t comm, CollDesc &d) {
  size_t bytes = 0;
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  XC_TRY(check_root(d.root, comm));
  return check_buffer(d.recvbuf, bytes, "buf");
}

// reduce, allreduce, scan, exscan: count in, count out.
Status v_reduction(xc_comm_t comm, CollDesc &d, bool out_everywhere) {
  size_t bytes = 0;
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  bool root_side = !out_everywhere && comm->rank == d.root;
  if (!out_everywhere) XC_TRY(check_root(d.root, comm));
  if (d.in_place && !out_everywhere && !root_side)
    return Error(XC_ERR_INVALID_ARGUMENT, "XC_IN_PLACE is for the root of a reduce only");
  return check_in_out(d, bytes, bytes, out_everywhere || root_side);
}

Status v_allgather(xc_comm_t comm, CollDesc &d) {
  size_t bytes = 0, total = 0;
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  XC_TRY(checked_total(d.count, static_cast<size_t>(comm->size), d.dtype, &total));
  XC_TRY(check_buffer(d.recvbuf, total, "recvbuf"));
  if (d.in_place) return Status::Ok();
  XC_TRY(check_buffer(d.sendbuf, bytes, "sendbuf"));
  return check_disjoint(d.sendbuf, bytes, d.recvbuf, total);
}

Status v_allgatherv(xc_comm_t comm, CollDesc &d, const size_t *recvcounts, const size_t *displs) {
  size_t extent = 0, bytes = 0;
  XC_TRY(read_counts(recvcounts, displs, comm->size, "recvcounts", "displs", d.dtype, &d.recvcounts, &d.rdispls, &extent));
  XC_TRY(own_count(d, d.recvcounts, comm->rank, "sendcount", "recvcounts"));
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  XC_TRY(check_buffer(d.recvbuf, extent * esize(d.dtype), "recvbuf"));
  if (d.in_place) return Status::Ok();
  XC_TRY(check_buffer(d.sendbuf, bytes, "sendbuf"));
  return check_disjoint(d.sendbuf, bytes, d.recvbuf, extent * esize(d.dtype));
}

Status v_gather(xc_comm_t comm, CollDesc &d) {
  size_t bytes = 0, total = 0;
  XC_TRY(check_root(d.root, comm));
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  XC_TRY(checked_total(d.count, static_cast<size_t>(comm->size), d.dtype, &total));
  bool root = comm->rank == d.root;
  if (d.in_place && !root) return Error(XC_ERR_INVALID_ARGUMENT, "XC_IN_PLACE is for the root of a gather only");
  if (root) XC_TRY(check_buffer(d.recvbuf, total, "recvbuf"));
  if (d.in_place) return Status::Ok();
  XC_TRY(check_buffer(d.sendbuf, bytes, "sendbuf"));
  return root ? check_disjoint(d.sendbuf, bytes, d.recvbuf, total) : Status::Ok();
}

Status v_gatherv(xc_comm_t comm, CollDesc &d, const size_t *recvcounts, const size_t *displs) {
  size_t bytes = 0, extent = 0;
  XC_TRY(check_root(d.root, comm));
  bool root = comm->rank == d.root;
  if (d.in_place && !root) return Error(XC_ERR_INVALID_ARGUMENT, "XC_IN_PLACE is for the root of a gatherv only");
  if (root) {
    XC_TRY(read_counts(recvcounts, displs, comm->size, "recvcounts", "displs", d.dtype, &d.recvcounts, &d.rdispls, &extent));
    XC_TRY(own_count(d, d.recvcounts, comm->rank, "sendcount", "recvcounts"));
    XC_TRY(check_buffer(d.recvbuf, extent * esize(d.dtype), "recvbuf"));
  }
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  if (d.in_place) return Status::Ok();
  XC_TRY(check_buffer(d.sendbuf, bytes, "sendbuf"));
  return root ? check_disjoint(d.sendbuf, bytes, d.recvbuf, extent * esize(d.dtype)) : Status::Ok();
}

// Scatter's in-place marker is recvbuf == XC_IN_PLACE at the root.
Status v_scatter(xc_comm_t comm, CollDesc &d) {
  size_t bytes = 0, total = 0;
  XC_TRY(check_root(d.root, comm));
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  XC_TRY(checked_total(d.count, static_cast<size_t>(comm->size), d.dtype, &total));
  bool root = comm->rank == d.root;
  if (d.in_place && !root) return Error(XC_ERR_INVALID_ARGUMENT, "XC_IN_PLACE is for the root of a scatter only");
  if (root) XC_TRY(check_buffer(d.sendbuf, total, "sendbuf"));
  if (d.in_place) return Status::Ok();
  XC_TRY(check_buffer(d.recvbuf, bytes, "recvbuf"));
  return root ? check_disjoint(d.sendbuf, total, d.recvbuf, bytes) : Status::Ok();
}

Status v_scatterv(xc_comm_t comm, CollDesc &d, const size_t *sendcounts, const size_t *displs) {
  size_t bytes = 0, extent = 0;
  XC_TRY(check_root(d.root, comm));
  bool root = comm->rank == d.root;
  if (d.in_place && !root) return Error(XC_ERR_INVALID_ARGUMENT, "XC_IN_PLACE is for the root of a scatterv only");
  if (root) {
    XC_TRY(read_counts(sendcounts, displs, comm->size, "sendcounts", "displs", d.dtype, &d.sendcounts, &d.sdispls, &extent));
    XC_TRY(own_count(d, d.sendcounts, comm->rank, "recvcount", "sendcounts"));
    XC_TRY(check_buffer(d.sendbuf, extent * esize(d.dtype), "sendbuf"));
  }
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  if (d.in_place) return Status::Ok();
  XC_TRY(check_buffer(d.recvbuf, bytes, "recvbuf"));
  return root ? check_disjoint(d.sendbuf, extent * esize(d.dtype), d.recvbuf, bytes) : Status::Ok();
}

Status v_reduce_scatter(xc_comm_t comm, CollDesc &d) {
  size_t bytes = 0, total = 0;
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  XC_TRY(checked_total(d.count, static_cast<size_t>(comm->size), d.dtype, &total));
  if (d.in_place) return check_buffer(d.recvbuf, total, "recvbuf");
  return check_in_out(d, total, bytes, true);
}

Status v_reduce_scatterv(xc_comm_t comm, CollDesc &d, const size_t *recvcounts) {
  size_t extent = 0, bytes = 0;
  XC_TRY(read_counts(recvcounts, nullptr, comm->size, "recvcounts", nullptr, d.dtype, &d.recvcounts, nullptr, &extent));
  d.count = d.recvcounts[static_cast<size_t>(comm->rank)];
  XC_TRY(xc::checked_bytes(d.count, d.dtype, &bytes));
  size_t total = extent * esize(d.dtype);
  if (d.in_place) return check_buffer(d.recvbuf, total, "recvbuf");
  return check_in_out(d, total, bytes, true);
}

Status v_alltoall(xc_comm_t comm, CollDesc &d) {
  size_t total = 0;
  XC_TRY(checked_total(d.count, static_cast<size_t>(comm->size), d.dtype, &total));
  return check_in_out(d, total, total, true);
}

Status v_alltoallv(xc_comm_t comm, CollDesc &d, const size_t *sendcounts, const size_t *sdispls,
                   const size_t *recvcounts, const size_t *rdispls) {
  size_t send_extent = 0, recv_extent = 0;
  XC_TRY(read_counts(recvcounts, rdispls, comm->size, "recvcounts", "rdispls", d.dtype, &d.recvcounts, &d.rdispls, &recv_extent));
  if (d.in_place) {
    d.sendcounts = d.recvcounts;
    d.sdispls = d.rdispls;
    return check_buffer(d.recvbuf, recv_extent * esize(d.dtype), "recvbuf");
  }
  XC_TRY(read_counts(sendcounts, sdispls, comm->size, "sendcounts", "sdispls", d.dtype, &d.sendcounts, &d.sdispls, &send_extent));
  XC_TRY(check_buffer(d.recvbuf, recv_extent * esize(d.dtype), "recvbuf"));
  XC_TRY(check_buffer(d.sendbuf, send_extent * esize(d.dtype), "sendbuf"));
  return check_disjoint(d.sendbuf, send_extent * esize(d.dtype), d.recvbuf, recv_extent * esize(d.dtype));
}

// ---- the entry points, blocking and non-blocking, from one body each --------------
// dtype and op come by reference: their bits are read before they are loaded
// as enums (xc::enum_bits).

xc_result_t do_barrier(const char *fn, xc_comm_t comm, xc_request_t *req, bool nb) {
  CollDesc d;
  return submit(fn, v_barrier(comm), comm, std::move(d), req, nb);
}

xc_result_t do_broadcast(const char *fn, void *buf, size_t count, const xc_dtype_t &dtype, int root, xc_comm_t comm,
                         xc_request_t *req, bool nb) {
  CollDesc d = describe(CollKind::kBroadcast, nullptr, buf, count);
  d.root = root;
  Status st = check_common(comm, dtype, nullptr, d);
  if (st.ok()) st = v_broadcast(comm, d);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_reduction(const char *fn, CollKind kind, const void *sendbuf, void *recvbuf, size_t count,
                         const xc_dtype_t &dtype, const xc_op_t &op, int root, xc_comm_t comm, xc_request_t *req,
                         bool nb) {
  CollDesc d = describe(kind, sendbuf, recvbuf, count);
  d.root = root;
  Status st = check_common(comm, dtype, &op, d);
  if (st.ok()) st = v_reduction(comm, d, kind != CollKind::kReduce);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_allgather(const char *fn, const void *sendbuf, void *recvbuf, size_t sendcount, const xc_dtype_t &dtype,
                         xc_comm_t comm, xc_request_t *req, bool nb) {
  CollDesc d = describe(CollKind::kAllgather, sendbuf, recvbuf, sendcount);
  Status st = check_common(comm, dtype, nullptr, d);
  if (st.ok()) st = v_allgather(comm, d);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_allgatherv(const char *fn, const void *sendbuf, size_t sendcount, void *recvbuf,
                          const size_t *recvcounts, const size_t *displs, const xc_dtype_t &dtype, xc_comm_t comm,
                          xc_request_t *req, bool nb) {
  CollDesc d = describe(CollKind::kAllgatherv, sendbuf, recvbuf, sendcount);
  Status st = check_common(comm, dtype, nullptr, d);
  if (st.ok()) st = v_allgatherv(comm, d, recvcounts, displs);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_gather(const char *fn, const void *sendbuf, void *recvbuf, size_t sendcount, const xc_dtype_t &dtype,
                      int root, xc_comm_t comm, xc_request_t *req, bool nb) {
  CollDesc d = describe(CollKind::kGather, sendbuf, recvbuf, sendcount);
  d.root = root;
  Status st = check_common(comm, dtype, nullptr, d);
  if (st.ok()) st = v_gather(comm, d);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_gatherv(const char *fn, const void *sendbuf, size_t sendcount, void *recvbuf,
                       const size_t *recvcounts, const size_t *displs, const xc_dtype_t &dtype, int root, xc_comm_t comm,
                       xc_request_t *req, bool nb) {
  CollDesc d = describe(CollKind::kGatherv, sendbuf, recvbuf, sendcount);
  d.root = root;
  Status st = check_common(comm, dtype, nullptr, d);
  if (st.ok()) st = v_gatherv(comm, d, recvcounts, displs);
  return submit(fn, st, comm, std::move(d), req, nb);
}

// Scatter: the in-place marker arrives as recvbuf; the input is sendbuf.
CollDesc describe_scatter(CollKind kind, const void *sendbuf, void *recvbuf, size_t recvcount, int root) {
  CollDesc d = describe(kind, sendbuf, recvbuf, recvcount);
  d.in_place = recvbuf == XC_IN_PLACE;
  d.sendbuf = sendbuf == XC_IN_PLACE ? nullptr : sendbuf;
  d.recvbuf = d.in_place ? nullptr : recvbuf;
  d.root = root;
  return d;
}

xc_result_t do_scatter(const char *fn, const void *sendbuf, void *recvbuf, size_t recvcount, const xc_dtype_t &dtype,
                       int root, xc_comm_t comm, xc_request_t *req, bool nb) {
  CollDesc d = describe_scatter(CollKind::kScatter, sendbuf, recvbuf, recvcount, root);
  Status st = sendbuf == XC_IN_PLACE ? Error(XC_ERR_INVALID_ARGUMENT, "scatter takes XC_IN_PLACE as recvbuf (at the root)")
                                     : check_common(comm, dtype, nullptr, d);
  if (st.ok()) st = v_scatter(comm, d);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_scatterv(const char *fn, const void *sendbuf, const size_t *sendcounts, const size_t *displs,
                        void *recvbuf, size_t recvcount, const xc_dtype_t &dtype, int root, xc_comm_t comm,
                        xc_request_t *req, bool nb) {
  CollDesc d = describe_scatter(CollKind::kScatterv, sendbuf, recvbuf, recvcount, root);
  Status st = sendbuf == XC_IN_PLACE ? Error(XC_ERR_INVALID_ARGUMENT, "scatterv takes XC_IN_PLACE as recvbuf (at the root)")
                                     : check_common(comm, dtype, nullptr, d);
  if (st.ok()) st = v_scatterv(comm, d, sendcounts, displs);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_reduce_scatter(const char *fn, const void *sendbuf, void *recvbuf, size_t recvcount,
                              const xc_dtype_t &dtype, const xc_op_t &op, xc_comm_t comm, xc_request_t *req, bool nb) {
  CollDesc d = describe(CollKind::kReduceScatter, sendbuf, recvbuf, recvcount);
  Status st = check_common(comm, dtype, &op, d);
  if (st.ok()) st = v_reduce_scatter(comm, d);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_reduce_scatterv(const char *fn, const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                               const xc_dtype_t &dtype, const xc_op_t &op, xc_comm_t comm, xc_request_t *req, bool nb) {
  CollDesc d = describe(CollKind::kReduceScatterv, sendbuf, recvbuf, 0);
  Status st = check_common(comm, dtype, &op, d);
  if (st.ok()) st = v_reduce_scatterv(comm, d, recvcounts);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_alltoall(const char *fn, const void *sendbuf, void *recvbuf, size_t count, const xc_dtype_t &dtype,
                        xc_comm_t comm, xc_request_t *req, bool nb) {
  CollDesc d = describe(CollKind::kAlltoall, sendbuf, recvbuf, count);
  Status st = check_common(comm, dtype, nullptr, d);
  if (st.ok()) st = v_alltoall(comm, d);
  return submit(fn, st, comm, std::move(d), req, nb);
}

xc_result_t do_alltoallv(const char *fn, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                         void *recvbuf, const size_t *recvcounts, const size_t *rdispls, const xc_dtype_t &dtype,
                         xc_comm_t comm, xc_request_t *req, bool nb) {
  CollDesc d = describe(CollKind::kAlltoallv, sendbuf, recvbuf, 0);
  Status st = check_common(comm, dtype, nullptr, d);
  if (st.ok()) st = v_alltoallv(comm, d, sendcounts, sdispls, recvcounts, rdispls);
  return submit(fn, st, comm, std::move(d), req, nb);
}

}  // namespace

#define XC_COLL_ENTRY(name, params, call)                 \
  XC_EXPORT xc_result_t xc_##name params {                \
    XC_API_GUARD("xc_" #name, { return call; })           \
  }

// clang-format off
XC_COLL_ENTRY(barrier, (xc_comm_t comm), do_barrier("xc_barrier", comm, nullptr, false))
XC_COLL_ENTRY(ibarrier, (xc_comm_t comm, xc_request_t *req), do_barrier("xc_ibarrier", comm, req, true))

XC_COLL_ENTRY(broadcast, (void *buf, size_t count, xc_dtype_t dtype, int root, xc_comm_t comm),
              do_broadcast("xc_broadcast", buf, count, dtype, root, comm, nullptr, false))
XC_COLL_ENTRY(ibroadcast, (void *buf, size_t count, xc_dtype_t dtype, int root, xc_comm_t comm, xc_request_t *req),
              do_broadcast("xc_ibroadcast", buf, count, dtype, root, comm, req, true))

XC_COLL_ENTRY(reduce, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, int root, xc_comm_t comm),
              do_reduction("xc_reduce", CollKind::kReduce, sendbuf, recvbuf, count, dtype, op, root, comm, nullptr, false))
XC_COLL_ENTRY(ireduce, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, int root, xc_comm_t comm, xc_request_t *req),
              do_reduction("xc_ireduce", CollKind::kReduce, sendbuf, recvbuf, count, dtype, op, root, comm, req, true))

XC_COLL_ENTRY(allreduce, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm),
              do_reduction("xc_allreduce", CollKind::kAllreduce, sendbuf, recvbuf, count, dtype, op, 0, comm, nullptr, false))
XC_COLL_ENTRY(iallreduce, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm, xc_request_t *req),
              do_reduction("xc_iallreduce", CollKind::kAllreduce, sendbuf, recvbuf, count, dtype, op, 0, comm, req, true))

XC_COLL_ENTRY(scan, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm),
              do_reduction("xc_scan", CollKind::kScan, sendbuf, recvbuf, count, dtype, op, 0, comm, nullptr, false))
XC_COLL_ENTRY(iscan, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm, xc_request_t *req),
              do_reduction("xc_iscan", CollKind::kScan, sendbuf, recvbuf, count, dtype, op, 0, comm, req, true))

XC_COLL_ENTRY(exscan, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm),
              do_reduction("xc_exscan", CollKind::kExscan, sendbuf, recvbuf, count, dtype, op, 0, comm, nullptr, false))
XC_COLL_ENTRY(iexscan, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm, xc_request_t *req),
              do_reduction("xc_iexscan", CollKind::kExscan, sendbuf, recvbuf, count, dtype, op, 0, comm, req, true))

XC_COLL_ENTRY(allgather, (const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype, xc_comm_t comm),
              do_allgather("xc_allgather", sendbuf, recvbuf, sendcount, dtype, comm, nullptr, false))
XC_COLL_ENTRY(iallgather, (const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype, xc_comm_t comm, xc_request_t *req),
              do_allgather("xc_iallgather", sendbuf, recvbuf, sendcount, dtype, comm, req, true))

XC_COLL_ENTRY(allgatherv, (const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts, const size_t *displs, xc_dtype_t dtype, xc_comm_t comm),
              do_allgatherv("xc_allgatherv", sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, comm, nullptr, false))
XC_COLL_ENTRY(iallgatherv, (const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts, const size_t *displs, xc_dtype_t dtype, xc_comm_t comm, xc_request_t *req),
              do_allgatherv("xc_iallgatherv", sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, comm, req, true))

XC_COLL_ENTRY(gather, (const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype, int root, xc_comm_t comm),
              do_gather("xc_gather", sendbuf, recvbuf, sendcount, dtype, root, comm, nullptr, false))
XC_COLL_ENTRY(igather, (const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype, int root, xc_comm_t comm, xc_request_t *req),
              do_gather("xc_igather", sendbuf, recvbuf, sendcount, dtype, root, comm, req, true))

XC_COLL_ENTRY(gatherv, (const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts, const size_t *displs, xc_dtype_t dtype, int root, xc_comm_t comm),
              do_gatherv("xc_gatherv", sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, root, comm, nullptr, false))
XC_COLL_ENTRY(igatherv, (const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts, const size_t *displs, xc_dtype_t dtype, int root, xc_comm_t comm, xc_request_t *req),
              do_gatherv("xc_igatherv", sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, root, comm, req, true))

XC_COLL_ENTRY(scatter, (const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, int root, xc_comm_t comm),
              do_scatter("xc_scatter", sendbuf, recvbuf, recvcount, dtype, root, comm, nullptr, false))
XC_COLL_ENTRY(iscatter, (const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, int root, xc_comm_t comm, xc_request_t *req),
              do_scatter("xc_iscatter", sendbuf, recvbuf, recvcount, dtype, root, comm, req, true))

XC_COLL_ENTRY(scatterv, (const void *sendbuf, const size_t *sendcounts, const size_t *displs, void *recvbuf, size_t recvcount, xc_dtype_t dtype, int root, xc_comm_t comm),
              do_scatterv("xc_scatterv", sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, comm, nullptr, false))
XC_COLL_ENTRY(iscatterv, (const void *sendbuf, const size_t *sendcounts, const size_t *displs, void *recvbuf, size_t recvcount, xc_dtype_t dtype, int root, xc_comm_t comm, xc_request_t *req),
              do_scatterv("xc_iscatterv", sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, comm, req, true))

XC_COLL_ENTRY(reduce_scatter, (const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm),
              do_reduce_scatter("xc_reduce_scatter", sendbuf, recvbuf, recvcount, dtype, op, comm, nullptr, false))
XC_COLL_ENTRY(ireduce_scatter, (const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm, xc_request_t *req),
              do_reduce_scatter("xc_ireduce_scatter", sendbuf, recvbuf, recvcount, dtype, op, comm, req, true))

XC_COLL_ENTRY(reduce_scatterv, (const void *sendbuf, void *recvbuf, const size_t *recvcounts, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm),
              do_reduce_scatterv("xc_reduce_scatterv", sendbuf, recvbuf, recvcounts, dtype, op, comm, nullptr, false))
XC_COLL_ENTRY(ireduce_scatterv, (const void *sendbuf, void *recvbuf, const size_t *recvcounts, xc_dtype_t dtype, xc_op_t op, xc_comm_t comm, xc_request_t *req),
              do_reduce_scatterv("xc_ireduce_scatterv", sendbuf, recvbuf, recvcounts, dtype, op, comm, req, true))

XC_COLL_ENTRY(alltoall, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_comm_t comm),
              do_alltoall("xc_alltoall", sendbuf, recvbuf, count, dtype, comm, nullptr, false))
XC_COLL_ENTRY(ialltoall, (const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_comm_t comm, xc_request_t *req),
              do_alltoall("xc_ialltoall", sendbuf, recvbuf, count, dtype, comm, req, true))

XC_COLL_ENTRY(alltoallv, (const void *sendbuf, const size_t *sendcounts, const size_t *sdispls, void *recvbuf, const size_t *recvcounts, const size_t *rdispls, xc_dtype_t dtype, xc_comm_t comm),
              do_alltoallv("xc_alltoallv", sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, comm, nullptr, false))
XC_COLL_ENTRY(ialltoallv, (const void *sendbuf, const size_t *sendcounts, const size_t *sdispls, void *recvbuf, const size_t *recvcounts, const size_t *rdispls, xc_dtype_t dtype, xc_comm_t comm, xc_request_t *req),
              do_alltoallv("xc_ialltoallv", sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, comm, req, true))
// clang-format on
