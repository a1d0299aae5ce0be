#include "runtime/flight_recorder.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstring>

namespace xc {

namespace {

int64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

const char *trace_state_name(TraceState state) {
  switch (state) {
    case TraceState::kEnqueued: return "enqueued";
    case TraceState::kRunning: return "running";
    case TraceState::kDone: return "done";
    case TraceState::kFailed: return "failed";
  }
  return "?";
}

int64_t trace_now_precise() { return clock_ns(CLOCK_MONOTONIC); }

FlightRecorder::FlightRecorder(size_t depth) : depth_(depth) {
  if (!depth_) return;
  size_t n = 1;
  while (n < depth_) n <<= 1, ++shift_;
  mask_ = n - 1;
  slots_.reset(new Slot[n]);
}

FlightRecorder::~FlightRecorder() = default;

void FlightRecorder::end_failed(Slot *s, uint64_t t, int32_t status, const char *message, int64_t now) {
  constexpr auto r = std::memory_order_relaxed;
  if ((s->start.load(r) & kValue) == 0) s->start.store(t | time48(now), r);  // failed before it ran
  s->end.store(t | time48(now), r);
  char text[kMessageWords * kMessageChars] = {};
  if (message) memcpy(text, message, strnlen(message, sizeof text));  // the first 120, no NUL needed
  for (size_t i = 0; i < kMessageWords; ++i) {
    uint64_t w = 0;
    for (size_t k = 0; k < kMessageChars; ++k)
      w |= static_cast<uint64_t>(static_cast<unsigned char>(text[i * kMessageChars + k])) << (8 * k);
    s->message[i].store(t | w, r);
  }
  s->status.store(t | static_cast<uint32_t>(status), r);
  s->state.store(t | static_cast<uint64_t>(TraceState::kFailed), std::memory_order_release);
}

std::vector<TraceEntry> FlightRecorder::snapshot() const {
  std::vector<TraceEntry> out;
  if (!depth_) return out;
  constexpr auto r = std::memory_order_relaxed;
  constexpr uint64_t kTagMask = ~kValue;
  for (size_t i = 0; i <= mask_; ++i) {
    const Slot &s = slots_[i];
    for (int tries = 0; tries < 100; ++tries) {  // a slot being written: look again
      uint64_t st = s.state.load(std::memory_order_acquire);
      uint64_t seq1 = s.seq.load(r);
      if (seq1 == 0) break;  // never used
      TraceEntry e;
      e.op.seq = seq1 - 1;
      const uint64_t t = tag(e.op.seq);
      uint64_t op = s.op.load(r), count = s.count.load(r), kinds = s.kinds.load(r), start = s.start.load(r);
      e.state = static_cast<TraceState>(st & 3);
      bool ended = e.state == TraceState::kDone || e.state == TraceState::kFailed;
      uint64_t end = ended ? s.end.load(r) : t, status = ended ? s.status.load(r) : t;
      // Every word of this op's lap: OR and AND of the tags both equal t.
      bool whole = ((st | op | count | kinds | start | end | status) & kTagMask) == t &&
                   ((st & op & count & kinds & start & end & status) & kTagMask) == t;
      int32_t code = static_cast<int32_t>(static_cast<uint32_t>(status & kValue));
      char text[kMessageWords * kMessageChars + 1] = {};
      if (whole && code != 0) {
        for (size_t w = 0; w < kMessageWords && whole; ++w) {
          uint64_t v = s.message[w].load(r);
          whole = (v & kTagMask) == t;
          for (size_t k = 0; k < kMessageChars; ++k) text[w * kMessageChars + k] = static_cast<char>(v >> (8 * k));
        }
      }
      if (!whole || s.seq.load(r) != seq1) {
        sched_yield();
        continue;
      }
      e.op.op = reinterpret_cast<const char *>(static_cast<uintptr_t>(op & kValue));
      e.op.count = count & kValue;
      e.op.dtype = static_cast<int32_t>(kinds & 0xff);
      e.op.redop = static_cast<int32_t>((kinds >> 8) & 0xff);
      e.op.root = static_cast<int32_t>(static_cast<uint32_t>((kinds >> 16) & 0xffffffffu));
      e.start_ns = static_cast<int64_t>((start & kValue) << kTimeShift);
      e.end_ns = ended ? static_cast<int64_t>((end & kValue) << kTimeShift) : 0;
      e.status = ended ? code : 0;
      if (e.status != 0) memcpy(e.message, text, sizeof e.message);  // text[120] is the NUL
      out.push_back(e);
      break;
    }
  }
  std::sort(out.begin(), out.end(), [](const TraceEntry &a, const TraceEntry &b) { return a.op.seq < b.op.seq; });
  // Only the depth most recent numbers: the ring has more slots (a power
  // of two), and a slot whose later ops went unrecorded (internal ops take
  // numbers too) keeps an older entry.
  if (!out.empty()) {
    uint64_t newest = out.back().op.seq;
    auto first = std::find_if(out.begin(), out.end(),
                              [&](const TraceEntry &e) { return e.op.seq + depth_ > newest; });
    out.erase(out.begin(), first);
  }
  return out;
}

}  // namespace xc
