#include "api/coll_submit.h"

#include <string>

#include "algo/collective.h"
#include "api/api_support.h"

namespace xc::api {

namespace {

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

xc_result_t coll_submit(const char *fn, xc_comm_t comm, CollDesc &&desc, xc_request_t *req) {
  if (req) return finish(fn, Error(XC_ERR_UNSUPPORTED, "non-blocking collectives are not built yet"));
  algo::CollContext c = make_coll_context(comm);
  c.set_signature(coll_signature(desc));
  Status st = algo::run_collective(c, desc);
  return finish_op(fn, with_op(st, fn, comm, c.seq()));
}

}  // namespace xc::api
