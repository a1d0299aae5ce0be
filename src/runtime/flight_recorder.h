// The flight recorder: a communicator's last N collectives (XC_TRACE_DEPTH,
// default 64), so that after a timeout or a peer failure the dumps of every
// rank say who is behind and at which op (runtime/trace_dump.h writes them,
// xc-trace reads them). Recording is on the hot path of every collective
// (a 2-rank 8 B allreduce is ~0.2 us), so a ring of fixed slots is made
// once and an op writes its slot in place: no allocation, no lock, and the
// slot comes from the op's sequence number, which the op already has.
//
// Several threads may record at once (XC_THREAD_MULTIPLE: user threads and
// the executor's worker), and a dump reads while they do. Each slot is a
// seqlock: a writer marks it busy, writes, and publishes the op's sequence
// number; a reader copies the slot and keeps the copy only when the mark it
// read before and after is the same published one. With concurrent writers
// the mark is taken with a compare-and-swap; a serialized communicator has
// one writer at a time and takes it with a plain store.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace xc {

enum class TraceState : uint8_t { kEnqueued = 0, kRunning = 1, kDone = 2, kFailed = 3 };
const char *trace_state_name(TraceState state);  // "enqueued", "running", "done", "failed"

// What an op is, as recorded when it starts.
struct TraceOp {
  uint64_t seq = 0;          // CollContext::seq(): the "op #N" of messages
  const char *op = "";       // "allreduce": a string that lives as long as the process
  uint64_t count = 0;
  int32_t dtype = 0;         // xc_dtype_t
  int32_t redop = 0;         // xc_op_t
  int32_t root = 0;
  uint64_t bytes = 0;
};

// One entry as read back.
struct TraceEntry {
  TraceOp op;
  TraceState state = TraceState::kEnqueued;
  int64_t start_ns = 0;  // steady clock; 0: not started
  int64_t end_ns = 0;    // 0: not ended
  int32_t status = 0;    // xc_result_t when failed
  char message[121] = {};  // the failure's first 120 characters
};

// The recorder's clock: cheap ticks (the TSC where there is one: ~7 ns
// against ~20 ns for clock_gettime, and an op reads it twice), converted to
// steady-clock nanoseconds when read back.
int64_t trace_ticks();
// ticks (of trace_ticks) in steady-clock ns (CLOCK_MONOTONIC).
int64_t trace_ticks_to_steady_ns(int64_t ticks);

class FlightRecorder {
 public:
  // depth slots (0: nothing is recorded); concurrent: writers may race.
  FlightRecorder(size_t depth, bool concurrent);
  FlightRecorder(const FlightRecorder &) = delete;
  FlightRecorder &operator=(const FlightRecorder &) = delete;
  ~FlightRecorder();

  size_t depth() const { return depth_; }

  // An op enters the ring (state kEnqueued or kRunning; now: trace_ticks(),
  // taken as its start when running).
  void begin(const TraceOp &op, TraceState state, int64_t now);
  // The op started to run (it was enqueued).
  void running(uint64_t seq, int64_t now);
  // The op ended: status 0 is done, anything else failed with message
  // (NULL or the first 120 characters kept). An op the ring has dropped
  // since (depth newer ones began) is not recorded.
  void end(uint64_t seq, int32_t status, const char *message, int64_t now);

  // The entries, oldest first: at most depth, those of the depth most
  // recent sequence numbers, times in steady-clock ns. A slot being
  // written during the whole read is left out.
  std::vector<TraceEntry> snapshot() const;

 private:
  struct Slot;
  Slot *slot(uint64_t seq) const;
  // Take the slot for a write: for begin (seq newer than what it holds) or
  // for an update (it holds seq). The mark it held, or 0 when it may not.
  uint64_t claim(Slot *s, uint64_t seq, bool update);

  size_t depth_;
  bool concurrent_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace xc
