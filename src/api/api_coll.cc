// Collective entry points: validate, stage the user's buffers, run the algorithm.
#include <cstdint>
#include <cstring>

#include "algo/algorithms.h"
#include "api/api_support.h"
#include "core/dtype.h"

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
  if (a == b || abytes == 0 || bbytes == 0) return Status::Ok();
  if (x < y + bbytes && y < x + abytes)
    return Error(XC_ERR_INVALID_ARGUMENT, "sendbuf and recvbuf overlap; use XC_IN_PLACE instead");
  return Status::Ok();
}

// The op's sequence number for messages ("op #12 on comm 'world'"). A failed
// collective leaves ranks out of step, so the communicator is marked broken
// (xc_comm_free then skips its closing barrier).
Status with_op(Status st, const char *fn, xc_comm_t comm, uint64_t seq) {
  if (st.ok()) return st;
  comm->broken.store(true);
  return Status(st.code(), std::string(fn) + " (op #" + std::to_string(seq) + " on comm '" + comm->name +
                               "', rank " + std::to_string(comm->rank) + "): " + st.message());
}

}  // namespace

XC_EXPORT xc_result_t xc_barrier(xc_comm_t comm) {
  XC_API_GUARD("xc_barrier", {
    Status st = xc::check_usable(comm);
    if (!st.ok()) return finish("xc_barrier", st);
    xc::algo::CollContext c = xc::make_coll_context(comm);
    return xc::api::finish_op("xc_barrier", with_op(xc::algo::barrier_dissemination(c), "xc_barrier", comm, c.seq()));
  })
}

XC_EXPORT xc_result_t xc_broadcast(void *buf, size_t count, xc_dtype_t dtype, int root, xc_comm_t comm) {
  XC_API_GUARD("xc_broadcast", {
    size_t bytes = 0;
    Status st = xc::check_usable(comm);
    if (st.ok()) st = xc::checked_bytes(count, dtype, &bytes);
    if (st.ok()) st = check_root(root, comm);
    if (st.ok()) st = check_buffer(buf, bytes, "buf");
    if (!st.ok()) return finish("xc_broadcast", st);
    xc::algo::CollContext c = xc::make_coll_context(comm);
    st = comm->size == 1 ? Status::Ok() : xc::algo::broadcast_binomial(c, buf, bytes, root);
    return xc::api::finish_op("xc_broadcast", with_op(st, "xc_broadcast", comm, c.seq()));
  })
}

XC_EXPORT xc_result_t xc_allreduce(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                                   xc_comm_t comm) {
  XC_API_GUARD("xc_allreduce", {
    size_t bytes = 0;
    bool in_place = sendbuf == XC_IN_PLACE;
    Status st = xc::check_usable(comm);
    if (st.ok()) st = xc::check_op(op, dtype);
    if (st.ok()) st = xc::checked_bytes(count, dtype, &bytes);
    if (st.ok()) st = check_buffer(recvbuf, bytes, "recvbuf");
    if (st.ok() && !in_place) st = check_buffer(sendbuf, bytes, "sendbuf");
    if (st.ok() && !in_place) st = check_disjoint(sendbuf, bytes, recvbuf, bytes);
    if (!st.ok()) return finish("xc_allreduce", st);
    if (!in_place && sendbuf != recvbuf && bytes) memcpy(recvbuf, sendbuf, bytes);
    xc::algo::CollContext c = xc::make_coll_context(comm);
    st = xc::algo::allreduce(c, recvbuf, count, dtype, op);
    return xc::api::finish_op("xc_allreduce", with_op(st, "xc_allreduce", comm, c.seq()));
  })
}

XC_EXPORT xc_result_t xc_allgather(const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype,
                                   xc_comm_t comm) {
  XC_API_GUARD("xc_allgather", {
    size_t bytes = 0;
    bool in_place = sendbuf == XC_IN_PLACE;
    Status st = xc::check_usable(comm);
    if (st.ok()) st = xc::checked_bytes(sendcount, dtype, &bytes);
    if (st.ok() && bytes > SIZE_MAX / static_cast<size_t>(comm->size))
      st = Error(XC_ERR_INVALID_ARGUMENT, "sendcount %zu times %d ranks overflows", sendcount, comm->size);
    size_t total = bytes * static_cast<size_t>(comm->size);
    if (st.ok()) st = check_buffer(recvbuf, total, "recvbuf");
    if (st.ok() && !in_place) st = check_buffer(sendbuf, bytes, "sendbuf");
    if (st.ok() && !in_place) st = check_disjoint(sendbuf, bytes, recvbuf, total);
    if (!st.ok()) return finish("xc_allgather", st);
    char *mine = static_cast<char *>(recvbuf) + bytes * static_cast<size_t>(comm->rank);
    if (!in_place && bytes) memcpy(mine, sendbuf, bytes);
    xc::algo::CollContext c = xc::make_coll_context(comm);
    st = comm->size == 1 ? Status::Ok() : xc::algo::allgather_ring(c, recvbuf, bytes);
    return xc::api::finish_op("xc_allgather", with_op(st, "xc_allgather", comm, c.seq()));
  })
}
