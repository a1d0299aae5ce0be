// The flight recorder: a communicator's last N collectives (XC_TRACE_DEPTH,
// default 64), so that after a timeout or a peer failure the dumps of every
// rank say who is behind and at which op (runtime/trace_dump.h writes them,
// xc-trace reads them). Recording is on the hot path of every collective
// (a 2-rank 8 B allreduce is ~0.12 us here), so a ring of fixed slots is made
// once and an op writes its slot in place: no allocation, no lock, and the
// slot comes from the op's sequence number, which the op already has.
//
// Several threads may record at once (XC_THREAD_MULTIPLE: user threads and
// the executor's worker), and a dump reads while they do, yet a writer
// takes no lock and makes no atomic read-modify-write (a locked
// instruction also waits for the op's stores to shared lines to drain;
// two of them cost ~7 ns an op here). Instead every word of a slot carries
// a tag, the 16 low bits of the op's lap around the ring (seq / slots), in
// its top 16 bits, and holds 48 bits of value: a reader keeps an entry only
// when every word it read has the same tag, so a slot that two ops wrote
// at once (a late update of an op the ring has passed, as when more than N
// ops are queued) or that was being written is left out, never shown torn.
// The number of slots is N rounded up to a power of two (a mask, not a
// division, finds the slot); a dump shows the N most recent.
#pragma once

#include <time.h>

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
  int32_t dtype = 0;         // xc_dtype_t (the dump gives bytes = count x its size)
  int32_t redop = 0;         // xc_op_t
  int32_t root = 0;
};

// One entry as read back. Counts and times are kept in 48 bits (a larger
// count saturates), roots in 32, dtypes and reduction ops in 8.
struct TraceEntry {
  TraceOp op;
  TraceState state = TraceState::kEnqueued;
  int64_t start_ns = 0;  // steady clock, at trace_now's resolution; 0: not started
  int64_t end_ns = 0;    // 0: not ended
  int32_t status = 0;    // xc_result_t when failed
  char message[121] = {};  // the failure's first 120 characters
};

// The recorder's clock: the steady clock (CLOCK_MONOTONIC) in ns, at the
// kernel tick's resolution (CLOCK_MONOTONIC_COARSE: 4 ms at HZ=250). An op
// reads it twice, and here that costs ~2.5 ns a read, against ~7 ns for
// rdtsc and ~25 ns for a precise clock_gettime: a recorder that answers "who
// is behind, since when" needs milliseconds, not nanoseconds. A failure,
// whose end orders "who failed first" across ranks, reads the precise one.
inline int64_t trace_now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
int64_t trace_now_precise();

class FlightRecorder {
 public:
  // The last depth ops (0: nothing is recorded).
  explicit FlightRecorder(size_t depth);
  FlightRecorder(const FlightRecorder &) = delete;
  FlightRecorder &operator=(const FlightRecorder &) = delete;
  ~FlightRecorder();

  size_t depth() const { return depth_; }
  size_t slots() const { return depth_ ? mask_ + 1 : 0; }

  // An op enters the ring (state kEnqueued or kRunning; now: trace_now(),
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
  static constexpr uint64_t kValue = (uint64_t{1} << 48) - 1;
  static constexpr int kTimeShift = 10;  // times in 1.024 us units: 48 bits last 9 years of uptime
  static constexpr size_t kMessageChars = 6;   // a word's 48 bits
  static constexpr size_t kMessageWords = 20;  // 120 characters

  // Every word but seq: the op's tag in the top 16 bits, 48 bits of value.
  // Written and read relaxed (plain moves), except the state: written last
  // with release, read first with acquire, so a reader that sees an op done
  // also sees its end. end and status count only once the state says the
  // op ended, the message only once status says it failed.
  struct alignas(64) Slot {
    std::atomic<uint64_t> seq{0};  // seq + 1, untagged; 0: never used
    std::atomic<uint64_t> state{0};
    std::atomic<uint64_t> op{0};  // const char *
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> kinds{0};  // dtype | redop << 8 | root << 16
    std::atomic<uint64_t> start{0};
    std::atomic<uint64_t> end{0};
    std::atomic<uint64_t> status{0};
    std::atomic<uint64_t> message[kMessageWords] = {};
  };

  Slot *slot(uint64_t seq) const { return &slots_[seq & mask_]; }
  // The tag of seq's words: 16 bits of its lap around the ring.
  uint64_t tag(uint64_t seq) const { return ((seq >> shift_) & 0xffff) << 48; }
  static uint64_t time48(int64_t ns) { return (static_cast<uint64_t>(ns) >> kTimeShift) & kValue; }
  void end_failed(Slot *s, uint64_t t, int32_t status, const char *message, int64_t now);

  size_t depth_;
  uint64_t mask_ = 0;  // slots - 1
  int shift_ = 0;      // log2(slots)
  std::unique_ptr<Slot[]> slots_;
};

// The hot path, inline: an op's begin and end are a few plain stores.
inline void FlightRecorder::begin(const TraceOp &op, TraceState state, int64_t now) {
  if (!depth_) return;
  Slot *s = slot(op.seq);
  constexpr auto r = std::memory_order_relaxed;
  if (s->seq.load(r) > op.seq + 1) return;  // a newer op has it (this one came late)
  const uint64_t t = tag(op.seq);
  s->seq.store(op.seq + 1, r);
  s->op.store(t | (reinterpret_cast<uintptr_t>(op.op) & kValue), r);
  s->count.store(t | (op.count > kValue ? kValue : op.count), r);
  s->kinds.store(t | static_cast<uint8_t>(op.dtype) | static_cast<uint64_t>(static_cast<uint8_t>(op.redop)) << 8 |
                     static_cast<uint64_t>(static_cast<uint32_t>(op.root)) << 16,
                 r);
  s->start.store(t | (state == TraceState::kRunning ? time48(now) : 0), r);
  s->state.store(t | static_cast<uint64_t>(state), std::memory_order_release);
}

inline void FlightRecorder::running(uint64_t seq, int64_t now) {
  if (!depth_) return;
  Slot *s = slot(seq);
  if (s->seq.load(std::memory_order_relaxed) != seq + 1) return;  // the ring has passed it
  const uint64_t t = tag(seq);
  s->start.store(t | time48(now), std::memory_order_relaxed);
  s->state.store(t | static_cast<uint64_t>(TraceState::kRunning), std::memory_order_release);
}

inline void FlightRecorder::end(uint64_t seq, int32_t status, const char *message, int64_t now) {
  if (!depth_) return;
  Slot *s = slot(seq);
  if (s->seq.load(std::memory_order_relaxed) != seq + 1) return;  // the ring has passed it
  const uint64_t t = tag(seq);
  if (status != 0) return end_failed(s, t, status, message, now);
  s->end.store(t | time48(now), std::memory_order_relaxed);
  s->status.store(t, std::memory_order_relaxed);
  s->state.store(t | static_cast<uint64_t>(TraceState::kDone), std::memory_order_release);
}

}  // namespace xc
