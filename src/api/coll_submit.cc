#include "api/coll_submit.h"

#include <memory>
#include <string>
#include <utility>

#include "algo/collective.h"
#include "api/api_support.h"
#include "api/group.h"
#include "runtime/coll_task.h"
#include "runtime/trace_dump.h"

namespace xc::api {

namespace {

// Blocking, nothing started before it still pending: run on this thread.
xc_result_t run_inline(const char *fn, xc_comm_t comm, const CollDesc &desc) {
  coll::CollContext c = make_coll_context(comm);
  c.set_signature(coll_signature(desc), &desc);
  trace_begin(comm, c.seq(), desc, TraceState::kRunning);
  Status st = algo::run_collective(c, desc);
  if (st.ok()) {
    trace_done(comm, c.seq());
    return ok();  // no Status copy on the success path
  }
  trace_failed(comm, c.seq(), st);
  return finish_op(fn, coll_op_error(std::move(st), fn, comm, c.seq()));
}

}  // namespace

xc_result_t coll_submit(const char *fn, xc_comm_t comm, CollDesc &&desc, xc_request_t *req) {
  bool grouped = in_group();
  if (!req && !grouped && comm->executor->idle()) return run_inline(fn, comm, desc);
  // The caller may reuse its count arrays once a non-blocking or grouped call returns.
  if (req || grouped) desc.own_arrays();
  // Context and signature now, on this thread: ops match in the order this rank started them.
  auto task = std::make_shared<CollTask>(fn, comm, std::move(desc));
  comm->executor->submit(task);
  if (grouped) group_add_coll(task);
  if (req) {
    xc_request_s *r = request_alloc();
    r->kind = xc_request_s::Kind::kCollective;
    r->coll = std::move(task);
    r->op = fn;
    r->comm_name = comm->name;
    r->timeout_ms = comm->timeout_ms;
    *req = r;
    return ok();
  }
  if (grouped) return ok();
  return finish_op(fn, task->wait());  // blocking, queued behind earlier ones
}

}  // namespace xc::api
