// Point-to-point entry points: validate, build a request, hand it to the engine.
#include <cstdint>

#include "api/api_support.h"
#include "api/group.h"
#include "base/dtype.h"
#include "runtime/device_ops.h"

using xc::Error;
using xc::Status;
using xc::api::finish;

namespace {

enum class Dir { kSend, kRecv };

// Everything a send or receive must get right before it touches the engine.
// dtype comes by reference: its bits are checked before it is loaded as an
// enum (xc::enum_bits).
Status check_p2p(const void *buf, size_t count, const xc_dtype_t &dtype, int peer, int tag, xc_comm_t comm, Dir dir,
                 size_t *bytes) {
  XC_TRY(xc::check_usable(comm));
  xc_dtype_t type = XC_UINT8;
  XC_TRY(xc::dtype_arg(xc::enum_bits(dtype), &type));
  XC_TRY(xc::checked_bytes(count, type, bytes));
  if (!buf && *bytes > 0) return Error(XC_ERR_INVALID_ARGUMENT, "buffer is NULL but count is %zu", count);
  bool any_ok = dir == Dir::kRecv;
  if (!(any_ok && peer == XC_ANY_SOURCE) && (peer < 0 || peer >= comm->size))
    return Error(XC_ERR_INVALID_ARGUMENT, "peer rank %d is out of range [0, %d)%s", peer, comm->size,
                 any_ok ? " (or XC_ANY_SOURCE)" : "");
  if (!(any_ok && tag == XC_ANY_TAG) && tag < 0)
    return Error(XC_ERR_INVALID_ARGUMENT, "tag %d must be in [0, XC_TAG_MAX]%s", tag, any_ok ? " or XC_ANY_TAG" : "");
  return Status::Ok();
}

void fill_request(xc::Request &req, const void *buf, size_t bytes, int peer, int tag, xc_comm_t comm) {
  req.ctx = comm->ctx;
  req.peer = peer == XC_ANY_SOURCE ? -1 : (*comm->members)[static_cast<size_t>(peer)];
  req.tag = tag;
  req.members = comm->members;
  req.buf = const_cast<void *>(buf);
  req.bytes = bytes;
}

// Device memory goes the stream-ordered way (runtime/device_ops.h), also
// with a count of 0 (a device message pairs only with a device message).
bool on_device(const void *buf, Status *why) { return xc::any_device(&buf, 1, why); }

xc::device::P2pOp device_op(Dir dir, const void *buf, size_t bytes, int peer, int tag,
                            std::shared_ptr<xc::device::OpOutcome> outcome) {
  xc::device::P2pOp op;
  op.send = dir == Dir::kSend;
  op.buf = const_cast<void *>(buf);
  op.bytes = bytes;
  op.peer = peer == XC_ANY_SOURCE ? -1 : peer;
  op.tag = tag == XC_ANY_TAG ? -1 : tag;
  op.outcome = std::move(outcome);
  return op;
}

// Enqueue device ops now, or at xc_group_end inside a group.
Status device_enqueue(xc_comm_t comm, std::vector<xc::device::P2pOp> ops, const char *fn) {
  if (!xc::api::in_group()) return xc::device_p2p(comm, std::move(ops), fn);
  for (auto &op : ops) xc::api::group_add_device_p2p(comm, std::move(op));
  return Status::Ok();
}

// What a stream-ordered receive's status can say at enqueue.
void enqueued_status(int peer, int tag, size_t bytes, xc_status_t *status) {
  if (status) *status = xc_status_t{peer, tag, XC_SUCCESS, 0, bytes};
}

// A heap request, posted. Validated by the caller.
xc_request_s *post(const char *fn, Dir dir, const void *buf, size_t bytes, int peer, int tag, xc_comm_t comm) {
  xc_request_s *r = xc::api::request_alloc();
  fill_request(r->req, buf, bytes, peer, tag, comm);
  r->fabric = comm->fabric;
  r->rank_of_fabric = comm->rank_of_fabric;
  r->timeout_ms = comm->timeout_ms;
  r->op = fn;
  r->comm_name = comm->name;
  r->peer = peer;
  if (dir == Dir::kSend)
    comm->fabric->engine().post_send(&r->req);
  else
    comm->fabric->engine().post_recv(&r->req);
  return r;
}

xc_result_t start(const char *fn, Dir dir, const void *buf, size_t count, const xc_dtype_t &dtype, int peer, int tag,
                  xc_comm_t comm, xc_request_t *out) {
  if (!out) return finish(fn, Error(XC_ERR_INVALID_ARGUMENT, "req is NULL"));
  size_t bytes = 0;
  Status st = check_p2p(buf, count, dtype, peer, tag, comm, dir, &bytes);
  if (!st.ok()) return finish(fn, st);
  if (on_device(buf, &st)) {
    auto outcome = std::make_shared<xc::device::OpOutcome>();
    st = device_enqueue(comm, {device_op(dir, buf, bytes, peer, tag, outcome)}, fn);
    if (!st.ok()) return finish(fn, st);
    *out = xc::api::device_request(fn, comm, peer, std::move(outcome));
    return xc::api::ok();
  }
  xc_request_s *r = post(fn, dir, buf, bytes, peer, tag, comm);
  if (xc::api::in_group()) xc::api::group_add_p2p(r, nullptr, false);
  *out = r;
  return xc::api::ok();
}

// Finish a request handle (waiting if it is not done): status out, handle freed.
xc_result_t retire(const char *fn, xc_request_t *req, xc_status_t *status) {
  Status st = xc::api::request_wait(*req, status);
  *req = nullptr;
  return finish(fn, st);
}

Status no_wait_in_group() {
  if (!xc::api::in_group()) return Status::Ok();
  return Error(XC_ERR_INVALID_USAGE,
               "waiting on a request inside xc_group_start/xc_group_end: requests of a group complete at xc_group_end");
}

// A blocking send or receive: the request lives on the stack.
xc_result_t blocking(const char *fn, Dir dir, const void *buf, size_t count, const xc_dtype_t &dtype, int peer, int tag,
                     xc_comm_t comm, xc_status_t *status) {
  size_t bytes = 0;
  Status st = check_p2p(buf, count, dtype, peer, tag, comm, dir, &bytes);
  if (!st.ok()) return finish(fn, st);
  if (on_device(buf, &st)) {
    st = device_enqueue(comm, {device_op(dir, buf, bytes, peer, tag, nullptr)}, fn);
    if (st.ok()) enqueued_status(peer, tag, bytes, status);
    return finish(fn, st);
  }
  if (xc::api::in_group()) {  // post only; the status is filled at xc_group_end
    xc::api::group_add_p2p(post(fn, dir, buf, bytes, peer, tag, comm), status, true);
    return xc::api::ok();
  }
  xc::Request req;
  fill_request(req, buf, bytes, peer, tag, comm);
  xc::P2pEngine &engine = comm->fabric->engine();
  if (dir == Dir::kSend)
    engine.post_send(&req);
  else
    engine.post_recv(&req);
  if (!req.done) (void)engine.wait(&req, xc::op_deadline(comm));
  xc::api::fill_status(req, comm->rank_of_fabric.get(), status);
  return finish(fn, xc::api::explain_p2p(req, fn, peer, tag, comm->timeout_ms, comm->name));
}

void empty_status(xc_status_t *status) {
  if (status) *status = xc_status_t{XC_ANY_SOURCE, XC_ANY_TAG, XC_SUCCESS, 0, 0};
}

}  // namespace

XC_EXPORT xc_result_t xc_send(const void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm) {
  XC_API_GUARD("xc_send", { return blocking("xc_send", Dir::kSend, buf, count, dtype, peer, tag, comm, nullptr); })
}

XC_EXPORT xc_result_t xc_recv(void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm,
                              xc_status_t *status) {
  XC_API_GUARD("xc_recv", { return blocking("xc_recv", Dir::kRecv, buf, count, dtype, peer, tag, comm, status); })
}

XC_EXPORT xc_result_t xc_sendrecv(const void *sendbuf, size_t sendcount, int dest, int sendtag, void *recvbuf,
                                  size_t recvcount, int source, int recvtag, xc_dtype_t dtype, xc_comm_t comm,
                                  xc_status_t *status) {
  XC_API_GUARD("xc_sendrecv", {
    size_t sbytes = 0, rbytes = 0;
    Status st = check_p2p(sendbuf, sendcount, dtype, dest, sendtag, comm, Dir::kSend, &sbytes);
    if (st.ok()) st = check_p2p(recvbuf, recvcount, dtype, source, recvtag, comm, Dir::kRecv, &rbytes);
    if (!st.ok()) return finish("xc_sendrecv", st);
    const void *bufs[2] = {sendbuf, recvbuf};
    bool device = xc::any_device(bufs, 2, &st);
    if (!st.ok()) return finish("xc_sendrecv", st);
    if (device) {  // one batch: the two progress together
      st = device_enqueue(comm,
                          {device_op(Dir::kRecv, recvbuf, rbytes, source, recvtag, nullptr),
                           device_op(Dir::kSend, sendbuf, sbytes, dest, sendtag, nullptr)},
                          "xc_sendrecv");
      if (st.ok()) enqueued_status(source, recvtag, rbytes, status);
      return finish("xc_sendrecv", st);
    }
    if (xc::api::in_group()) {
      xc::api::group_add_p2p(post("xc_sendrecv: receive", Dir::kRecv, recvbuf, rbytes, source, recvtag, comm), status, true);
      xc::api::group_add_p2p(post("xc_sendrecv: send", Dir::kSend, sendbuf, sbytes, dest, sendtag, comm), nullptr, true);
      return xc::api::ok();
    }
    xc::Request rreq, sreq;
    fill_request(rreq, recvbuf, rbytes, source, recvtag, comm);
    fill_request(sreq, sendbuf, sbytes, dest, sendtag, comm);
    xc::P2pEngine &engine = comm->fabric->engine();
    engine.post_recv(&rreq);
    engine.post_send(&sreq);
    xc::Deadline deadline = xc::op_deadline(comm);
    (void)engine.wait(&rreq, deadline);
    (void)engine.wait(&sreq, deadline);
    xc::api::fill_status(rreq, comm->rank_of_fabric.get(), status);
    st = xc::api::explain_p2p(rreq, "xc_sendrecv: receive", source, recvtag, comm->timeout_ms, comm->name);
    if (st.ok()) st = xc::api::explain_p2p(sreq, "xc_sendrecv: send", dest, sendtag, comm->timeout_ms, comm->name);
    return finish("xc_sendrecv", st);
  })
}

XC_EXPORT xc_result_t xc_isend(const void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm,
                               xc_request_t *req) {
  XC_API_GUARD("xc_isend", { return start("xc_isend", Dir::kSend, buf, count, dtype, peer, tag, comm, req); })
}

XC_EXPORT xc_result_t xc_irecv(void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm,
                               xc_request_t *req) {
  XC_API_GUARD("xc_irecv", { return start("xc_irecv", Dir::kRecv, buf, count, dtype, peer, tag, comm, req); })
}

XC_EXPORT xc_result_t xc_wait(xc_request_t *req, xc_status_t *status) {
  XC_API_GUARD("xc_wait", {
    if (!req) return finish("xc_wait", Error(XC_ERR_INVALID_ARGUMENT, "req is NULL"));
    if (!*req) {
      empty_status(status);
      return xc::api::ok();
    }
    Status st = xc::api::check_request(*req);
    if (st.ok()) st = no_wait_in_group();
    if (!st.ok()) return finish("xc_wait", st);
    return retire("xc_wait", req, status);
  })
}

XC_EXPORT xc_result_t xc_test(xc_request_t *req, int *done, xc_status_t *status) {
  XC_API_GUARD("xc_test", {
    if (!req || !done) return finish("xc_test", Error(XC_ERR_INVALID_ARGUMENT, "%s is NULL", req ? "done" : "req"));
    if (!*req) {
      *done = 1;
      empty_status(status);
      return xc::api::ok();
    }
    Status st = xc::api::check_request(*req);
    if (st.ok()) st = no_wait_in_group();
    if (!st.ok()) return finish("xc_test", st);
    xc_request_s *r = *req;
    bool complete = xc::api::request_done(r);
    if (!complete) {
      *done = 0;
      return xc::api::ok();
    }
    *done = 1;
    return retire("xc_test", req, status);
  })
}

XC_EXPORT xc_result_t xc_waitall(size_t n, xc_request_t *reqs, xc_status_t *statuses) {
  XC_API_GUARD("xc_waitall", {
    if (n > 0 && !reqs) return finish("xc_waitall", Error(XC_ERR_INVALID_ARGUMENT, "reqs is NULL but n is %zu", n));
    // Only n is checkable: no array holds more than PTRDIFF_MAX bytes (a
    // wrong n below that reads past the caller's array, as in C).
    size_t most = PTRDIFF_MAX / (statuses ? sizeof(xc_status_t) : sizeof(xc_request_t));
    if (n > most)
      return finish("xc_waitall", Error(XC_ERR_INVALID_ARGUMENT, "n %zu is more than any %s array can hold (%zu)", n,
                                        statuses ? "status" : "request", most));
    Status in_group = no_wait_in_group();
    if (!in_group.ok()) return finish("xc_waitall", in_group);
    for (size_t i = 0; i < n; ++i) {
      if (!reqs[i]) continue;
      Status st = xc::api::check_request(reqs[i]);
      if (!st.ok()) return finish("xc_waitall", st.with_context("request " + std::to_string(i)));
    }
    xc_result_t first = XC_SUCCESS;
    std::string first_message;
    for (size_t i = 0; i < n; ++i) {
      xc_status_t *s = statuses ? &statuses[i] : nullptr;
      xc_result_t rc = xc_wait(&reqs[i], s);
      if (rc != XC_SUCCESS && first == XC_SUCCESS) {
        first = rc;
        first_message = "request " + std::to_string(i) + ": " + xc_last_error();
      }
    }
    if (first == XC_SUCCESS) return xc::api::ok();
    return finish("xc_waitall", Status(first, first_message));
  })
}
