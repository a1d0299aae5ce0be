#include "coll/context.h"

namespace xc::coll {

void CollContext::prepare(Request &req, int peer, const void *buf, size_t bytes) {
  req.ctx = ctx_;
  req.peer = (*members())[static_cast<size_t>(peer)];
  req.tag = tag_;
  req.members = *op_members();
  req.collective = true;
  req.sig = sig_;
  req.buf = const_cast<void *>(buf);
  req.bytes = bytes;
}

Status CollContext::finish(Request &req, const char *what, int peer) {
  Status st = engine_.wait(&req, deadline());
  if (!st.ok() && st.code() == XC_ERR_TIMEOUT)
    return Error(XC_ERR_TIMEOUT, "timed out waiting to %s rank %d (it never entered this op?)", what, peer);
  if (st.ok() && req.kind == RequestKind::kRecv && req.message_bytes != req.bytes)
    return Error(XC_ERR_INVALID_USAGE,
                 "rank %d sent %zu bytes in op #%d where %zu were expected: ranks passed different counts or dtypes",
                 peer, req.message_bytes, tag_, req.bytes);
  return st;
}

Status CollContext::send(int peer, const void *buf, size_t bytes) {
  Request req;
  prepare(req, peer, buf, bytes);
  engine_.post_send(&req);
  return finish(req, "send to", peer);
}

Status CollContext::recv(int peer, void *buf, size_t bytes) {
  Request req;
  prepare(req, peer, buf, bytes);
  engine_.post_recv(&req);
  return finish(req, "receive from", peer);
}

Status CollContext::interrupted() {
  Request op;
  prepare(op, rank_, nullptr, 0);
  return engine_.op_interrupted(op);
}

Status CollContext::sendrecv(int dest, const void *sendbuf, size_t sendbytes, int source, void *recvbuf,
                             size_t recvbytes) {
  Request rreq, sreq;
  prepare(rreq, source, recvbuf, recvbytes);
  prepare(sreq, dest, sendbuf, sendbytes);
  engine_.post_recv(&rreq);
  engine_.post_send(&sreq);
  Status rs = finish(rreq, "receive from", source);
  Status ss = finish(sreq, "send to", dest);
  return rs.ok() ? ss : rs;
}

Status CollContext::exchange(const Xfer *sends, size_t nsends, const Xfer *recvs, size_t nrecvs) {
  std::vector<Request> reqs(nsends + nrecvs);  // never resized: the engine holds pointers
  for (size_t i = 0; i < nrecvs; ++i) {
    prepare(reqs[i], recvs[i].peer, recvs[i].buf, recvs[i].bytes);
    engine_.post_recv(&reqs[i]);
  }
  for (size_t i = 0; i < nsends; ++i) {
    Request &req = reqs[nrecvs + i];
    prepare(req, sends[i].peer, sends[i].buf, sends[i].bytes);
    engine_.post_send(&req);
  }
  Status first;
  for (size_t i = 0; i < reqs.size(); ++i) {
    bool recv = i < nrecvs;
    Status st = finish(reqs[i], recv ? "receive from" : "send to", recv ? recvs[i].peer : sends[i - nrecvs].peer);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace xc::coll
