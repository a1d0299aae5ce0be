// Writing a communicator's flight recorder (runtime/flight_recorder.h) to a
// file, and when: on request (xc_comm_trace_dump), when one of its
// collectives fails with XC_ERR_TIMEOUT or XC_ERR_PEER_FAILED, and on
// SIGUSR2 (every live communicator of the process). The file holds one JSON
// object per line: a header (job, rank, communicator, host, pid, clocks),
// then the entries oldest first; xc-trace (src/tools/xc_trace.cc) reads it.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "coll/desc.h"
#include "runtime/comm.h"
#include "runtime/flight_recorder.h"

namespace xc {

// A recorder for a new communicator: XC_TRACE_DEPTH slots, nullptr when 0.
Status trace_make_recorder(std::unique_ptr<FlightRecorder> *out);

// XC_TRACE_DIR/xcomm-trace.<job or pid>.<comm name>.r<rank>.jsonl, or ""
// when XC_TRACE_DIR is not set.
std::string trace_default_path(const xc_comm_s *comm);

// Write comm's recorder to path (a temporary name, then renamed, so a
// reader never sees half a file). reason goes into the header
// ("request", "signal", "timeout", "peer_failed").
Status trace_dump(const xc_comm_s *comm, const std::string &path, const char *reason);

// Live communicators, for SIGUSR2 (comm.cc calls these from make_comm and
// comm_free).
void trace_register(xc_comm_s *comm);
void trace_unregister(xc_comm_s *comm);

// At xc_init and xc_comm_init_rank: when XC_TRACE_DIR is set and SIGUSR2
// has no handler of the application's, install one that makes every live
// communicator dump (the handler writes a byte to a pipe; a thread of ours
// writes the files). Once per process.
void trace_install_signal();

// The hooks of a collective (coll_task.cc, api/coll_submit.cc): inline, so
// a communicator without a recorder pays one predictable branch.
inline void trace_begin(xc_comm_s *comm, int seq, const CollDesc &d, TraceState state) {
  FlightRecorder *r = comm->recorder.get();
  if (!r) return;
  TraceOp op;
  op.seq = static_cast<uint64_t>(seq);
  op.op = coll_kind_name(d.kind);
  op.count = d.count;
  op.dtype = static_cast<int32_t>(d.dtype);
  op.redop = static_cast<int32_t>(d.op);
  op.root = d.root;
  r->begin(op, state, trace_now());
}
inline void trace_running(xc_comm_s *comm, int seq) {
  if (FlightRecorder *r = comm->recorder.get()) r->running(static_cast<uint64_t>(seq), trace_now());
}
inline void trace_done(xc_comm_s *comm, int seq) {
  if (FlightRecorder *r = comm->recorder.get()) r->end(static_cast<uint64_t>(seq), 0, nullptr, trace_now());
}
// The op failed with st (its own message, before the op's name is put in
// front): recorded, and on XC_ERR_TIMEOUT or XC_ERR_PEER_FAILED the
// communicator's first such failure is dumped to XC_TRACE_DIR when set.
void trace_failed(xc_comm_s *comm, int seq, const Status &st);

}  // namespace xc
