#include "runtime/flight_recorder.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define XC_TRACE_TSC 1
#endif

namespace xc {

namespace {

constexpr size_t kMessageWords = 16;  // 128 bytes: 120 characters and the NUL
// A writer that finds its slot busy (another writer, or a dump reading it)
// spins this many times, then yields; it gives up after kMaxClaimTries,
// leaving that one record out rather than stall an op.
constexpr int kSpinsBeforeYield = 64;
constexpr int kMaxClaimTries = 4096;
// The tick rate is measured between the first recorder and a dump, at least
// this long (a dump right after start waits for it).
constexpr int64_t kMinCalibrationNs = 10 * 1000 * 1000;

int64_t steady_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Calibration {
  int64_t ticks0, ns0;
};
const Calibration &calibration() {
  static const Calibration c{trace_ticks(), steady_ns()};
  return c;
}

// A (ticks, ns) pair now and the ns per tick since the first one.
struct Scale {
  int64_t ticks, ns;
  double ns_per_tick;
};
Scale scale_now() {
#ifdef XC_TRACE_TSC
  const Calibration &c = calibration();
  Scale s{trace_ticks(), steady_ns(), 1.0};
  while (s.ns - c.ns0 < kMinCalibrationNs) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    s.ticks = trace_ticks();
    s.ns = steady_ns();
  }
  if (s.ticks > c.ticks0) s.ns_per_tick = static_cast<double>(s.ns - c.ns0) / static_cast<double>(s.ticks - c.ticks0);
  return s;
#else
  int64_t now = steady_ns();
  return Scale{now, now, 1.0};
#endif
}

int64_t to_ns(const Scale &s, int64_t ticks) {
  if (ticks == 0) return 0;
  return s.ns - static_cast<int64_t>(static_cast<double>(s.ticks - ticks) * s.ns_per_tick);
}

inline void cpu_relax() {
#ifdef XC_TRACE_TSC
  _mm_pause();
#endif
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

int64_t trace_ticks() {
#ifdef XC_TRACE_TSC
  return static_cast<int64_t>(__rdtsc());
#else
  return steady_ns();
#endif
}

int64_t trace_ticks_to_steady_ns(int64_t ticks) { return to_ns(scale_now(), ticks); }

// Every field an atomic word written and read relaxed (plain moves on x86),
// ordered by the mark: (seq + 1) << 1 once published, | 1 while written.
struct alignas(64) FlightRecorder::Slot {
  std::atomic<uint64_t> mark{0};
  std::atomic<uint64_t> op{0};  // const char *
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> dtype_redop{0};  // dtype | redop << 32
  std::atomic<uint64_t> root_state{0};   // root | state << 32
  std::atomic<int64_t> start{0};         // ticks
  std::atomic<int64_t> end{0};
  std::atomic<int64_t> status{0};
  std::atomic<uint64_t> message[kMessageWords] = {};
};

FlightRecorder::FlightRecorder(size_t depth, bool concurrent)
    : depth_(depth), concurrent_(concurrent), slots_(depth ? new Slot[depth] : nullptr) {
  (void)calibration();  // the tick rate is measured from here on
}

FlightRecorder::~FlightRecorder() = default;

FlightRecorder::Slot *FlightRecorder::slot(uint64_t seq) const { return &slots_[seq % depth_]; }

uint64_t FlightRecorder::claim(Slot *s, uint64_t seq, bool update) {
  const uint64_t mine = (seq + 1) << 1;
  for (int tries = 0; tries < kMaxClaimTries; ++tries) {
    uint64_t cur = s->mark.load(std::memory_order_relaxed);
    if (!(cur & 1)) {
      if (update ? cur != mine : cur >= mine) return 0;  // dropped already, or a newer op holds it
      if (!concurrent_) {
        s->mark.store(cur | 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);  // the mark before the fields
        return mine;
      }
      if (s->mark.compare_exchange_weak(cur, cur | 1, std::memory_order_acquire, std::memory_order_relaxed))
        return mine;
      continue;
    }
    if (tries % kSpinsBeforeYield == kSpinsBeforeYield - 1)
      sched_yield();
    else
      cpu_relax();
  }
  return 0;
}

void FlightRecorder::begin(const TraceOp &op, TraceState state, int64_t now) {
  if (!depth_) return;
  Slot *s = slot(op.seq);
  uint64_t mine = claim(s, op.seq, false);
  if (!mine) return;
  constexpr auto r = std::memory_order_relaxed;
  s->op.store(reinterpret_cast<uintptr_t>(op.op), r);
  s->count.store(op.count, r);
  s->bytes.store(op.bytes, r);
  s->dtype_redop.store(static_cast<uint32_t>(op.dtype) | static_cast<uint64_t>(static_cast<uint32_t>(op.redop)) << 32, r);
  s->root_state.store(static_cast<uint32_t>(op.root) | static_cast<uint64_t>(state) << 32, r);
  s->start.store(state == TraceState::kRunning ? now : 0, r);
  s->end.store(0, r);
  s->status.store(0, r);
  s->mark.store(mine, std::memory_order_release);
}

void FlightRecorder::running(uint64_t seq, int64_t now) {
  if (!depth_) return;
  Slot *s = slot(seq);
  uint64_t mine = claim(s, seq, true);
  if (!mine) return;
  constexpr auto r = std::memory_order_relaxed;
  uint64_t rs = s->root_state.load(r);
  s->root_state.store((rs & 0xffffffffu) | static_cast<uint64_t>(TraceState::kRunning) << 32, r);
  s->start.store(now, r);
  s->mark.store(mine, std::memory_order_release);
}

void FlightRecorder::end(uint64_t seq, int32_t status, const char *message, int64_t now) {
  if (!depth_) return;
  Slot *s = slot(seq);
  uint64_t mine = claim(s, seq, true);
  if (!mine) return;
  constexpr auto r = std::memory_order_relaxed;
  TraceState state = status == 0 ? TraceState::kDone : TraceState::kFailed;
  uint64_t rs = s->root_state.load(r);
  s->root_state.store((rs & 0xffffffffu) | static_cast<uint64_t>(state) << 32, r);
  if (!s->start.load(r)) s->start.store(now, r);  // failed before it ran (abort, shutdown)
  s->end.store(now, r);
  s->status.store(status, r);
  if (status != 0) {
    char text[kMessageWords * 8] = {};
    if (message) strncpy(text, message, 120);
    for (size_t i = 0; i < kMessageWords; ++i) {
      uint64_t w;
      memcpy(&w, text + i * 8, 8);
      s->message[i].store(w, r);
    }
  }
  s->mark.store(mine, std::memory_order_release);
}

std::vector<TraceEntry> FlightRecorder::snapshot() const {
  std::vector<TraceEntry> out;
  if (!depth_) return out;
  Scale sc = scale_now();
  constexpr auto r = std::memory_order_relaxed;
  for (size_t i = 0; i < depth_; ++i) {
    const Slot &s = slots_[i];
    for (int tries = 0; tries < 1000; ++tries) {
      uint64_t m1 = s.mark.load(std::memory_order_acquire);
      if (m1 == 0) break;  // never used
      if (m1 & 1) {
        sched_yield();
        continue;
      }
      TraceEntry e;
      e.op.seq = (m1 >> 1) - 1;
      e.op.op = reinterpret_cast<const char *>(static_cast<uintptr_t>(s.op.load(r)));
      e.op.count = s.count.load(r);
      e.op.bytes = s.bytes.load(r);
      uint64_t dr = s.dtype_redop.load(r), rs = s.root_state.load(r);
      e.op.dtype = static_cast<int32_t>(static_cast<uint32_t>(dr));
      e.op.redop = static_cast<int32_t>(static_cast<uint32_t>(dr >> 32));
      e.op.root = static_cast<int32_t>(static_cast<uint32_t>(rs));
      e.state = static_cast<TraceState>(static_cast<uint8_t>(rs >> 32) & 3);
      int64_t start = s.start.load(r), end = s.end.load(r);
      e.status = static_cast<int32_t>(s.status.load(r));
      char text[kMessageWords * 8];
      for (size_t w = 0; w < kMessageWords; ++w) {
        uint64_t v = s.message[w].load(r);
        memcpy(text + w * 8, &v, 8);
      }
      std::atomic_thread_fence(std::memory_order_acquire);  // the fields before the second look at the mark
      if (s.mark.load(r) != m1) continue;
      e.start_ns = to_ns(sc, start);
      e.end_ns = to_ns(sc, end);
      if (e.status != 0) {
        text[120] = '\0';
        memcpy(e.message, text, sizeof e.message);
      }
      out.push_back(e);
      break;
    }
  }
  std::sort(out.begin(), out.end(), [](const TraceEntry &a, const TraceEntry &b) { return a.op.seq < b.op.seq; });
  // Only the depth most recent numbers: a slot whose later ops went
  // unrecorded (internal ops take numbers too) keeps an older entry.
  if (!out.empty()) {
    uint64_t newest = out.back().op.seq;
    auto first = std::find_if(out.begin(), out.end(),
                              [&](const TraceEntry &e) { return e.op.seq + depth_ > newest; });
    out.erase(out.begin(), first);
  }
  return out;
}

}  // namespace xc
