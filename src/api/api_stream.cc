// Streams for device-memory ops: made, wrapped, bound per target,
// synchronised and destroyed (runtime/device_ops.h does the work).
#include "api/api_support.h"
#include "runtime/device_ops.h"

using xc::Error;
using xc::Status;
using xc::api::finish;

namespace {

Status check_stream(const xc_stream_s *s) {
  if (!s) return Error(XC_ERR_INVALID_ARGUMENT, "stream is NULL");
  if (s->magic == kStreamFreed) return Error(XC_ERR_INVALID_USAGE, "the stream was destroyed");
  if (s->magic != kStreamMagic) return Error(XC_ERR_INVALID_ARGUMENT, "not a stream handle");
  return Status::Ok();
}

xc_result_t make(const char *fn, xc_comm_t comm, void *native, bool wrap, xc_stream_t *out) {
  Status st = xc::check_usable(comm);
  if (st.ok() && !out) st = Error(XC_ERR_INVALID_ARGUMENT, "out is NULL");
  xc_stream_s *s = nullptr;
  if (st.ok()) st = xc::stream_make(comm, native, wrap, &s);
  if (st.ok()) *out = s;
  return finish(fn, st);
}

}  // namespace

XC_EXPORT xc_result_t xc_stream_create(xc_comm_t comm, xc_stream_t *out) {
  XC_API_GUARD("xc_stream_create", { return make("xc_stream_create", comm, nullptr, false, out); })
}

XC_EXPORT xc_result_t xc_stream_wrap(xc_comm_t comm, void *cuda_stream, xc_stream_t *out) {
  XC_API_GUARD("xc_stream_wrap", { return make("xc_stream_wrap", comm, cuda_stream, true, out); })
}

XC_EXPORT xc_result_t xc_stream_synchronize(xc_stream_t stream) {
  XC_API_GUARD("xc_stream_synchronize", {
    Status st = check_stream(stream);
    if (st.ok()) st = stream->stream->synchronize(xc::Deadline::AfterMs(xc::sat_ms(stream->timeout_ms, 4, 1000)));
    return finish("xc_stream_synchronize", st);
  })
}

XC_EXPORT xc_result_t xc_stream_destroy(xc_stream_t stream) {
  XC_API_GUARD("xc_stream_destroy", {
    if (!stream) return xc::api::ok();
    Status st = check_stream(stream);
    if (!st.ok()) return finish("xc_stream_destroy", st);
    st = stream->stream->synchronize(xc::Deadline::AfterMs(xc::sat_ms(stream->timeout_ms, 4, 1000)));
    stream->stream->drop_handle();
    stream->stream.reset();  // the last communicator that had it bound lets it go
    stream->magic = kStreamFreed;  // the shell stays, so a stale handle is reported, not followed
    return finish("xc_stream_destroy", st);
  })
}

XC_EXPORT xc_result_t xc_stream_bind(xc_comm_t comm, xc_stream_t stream, int target) {
  XC_API_GUARD("xc_stream_bind", {
    Status st = xc::check_usable(comm);
    if (st.ok() && stream) st = check_stream(stream);
    if (st.ok()) st = xc::stream_bind(comm, stream, target);
    return finish("xc_stream_bind", st);
  })
}
