// The flight recorder's ring (runtime/flight_recorder.h): it keeps the last
// N ops in order, wraps at N, records nothing at depth 0, keeps an op's
// updates with its entry, and two threads recording at once (the worker
// and a user thread of XC_THREAD_MULTIPLE) never leave a torn entry.
#include "unit_test.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "runtime/flight_recorder.h"

namespace {

using xc::FlightRecorder;
using xc::TraceEntry;
using xc::TraceOp;
using xc::TraceState;

// An op whose fields all follow from seq, so an entry can be checked alone.
TraceOp op_for(uint64_t seq) {
  TraceOp op;
  op.seq = seq;
  op.op = (seq % 2) ? "allreduce" : "bcast";
  op.count = seq * 3 + 1;
  op.dtype = static_cast<int32_t>(seq % 7);
  op.redop = static_cast<int32_t>(seq % 4);
  op.root = static_cast<int32_t>(seq % 5);
  return op;
}

bool entry_whole(const TraceEntry &e) {
  TraceOp want = op_for(e.op.seq);
  return strcmp(e.op.op, want.op) == 0 && e.op.count == want.count && e.op.dtype == want.dtype &&
         e.op.redop == want.redop && e.op.root == want.root;
}

void check_entry(const TraceEntry &e) {
  TraceOp want = op_for(e.op.seq);
  assert_string_equal(e.op.op, want.op);
  assert_int_equal(e.op.count, want.count);
  assert_int_equal(e.op.dtype, want.dtype);
  assert_int_equal(e.op.redop, want.redop);
  assert_int_equal(e.op.root, want.root);
}

// Counts beyond the ring's 48 bits saturate; roots keep 32 bits.
void large_values(void **) {
  FlightRecorder r(2);
  TraceOp op = op_for(1);
  op.count = ~uint64_t{0};
  op.root = 2000000000;
  r.begin(op, TraceState::kRunning, xc::trace_now());
  std::vector<TraceEntry> e = r.snapshot();
  assert_int_equal(e.size(), 1);
  assert_int_equal(e[0].op.count, (uint64_t{1} << 48) - 1);
  assert_int_equal(e[0].op.root, 2000000000);
}

// One op through its life: begin (running), then done or failed.
void record(FlightRecorder &r, uint64_t seq, bool fail) {
  r.begin(op_for(seq), TraceState::kRunning, xc::trace_now());
  if (fail)
    r.end(seq, -5, ("failed op " + std::to_string(seq)).c_str(), xc::trace_now());
  else
    r.end(seq, 0, nullptr, xc::trace_now());
}

void keeps_the_last_n_in_order(void **) {
  FlightRecorder r(8);
  for (uint64_t s = 0; s < 5; ++s) record(r, s, false);
  std::vector<TraceEntry> e = r.snapshot();
  assert_int_equal(e.size(), 5);
  for (size_t i = 0; i < e.size(); ++i) {
    assert_int_equal(e[i].op.seq, i);
    check_entry(e[i]);
    assert_int_equal(static_cast<int>(e[i].state), static_cast<int>(TraceState::kDone));
    assert_true(e[i].start_ns > 0 && e[i].start_ns <= e[i].end_ns);
    if (i) assert_true(e[i - 1].end_ns <= e[i].start_ns);
  }
}

void wraps_at_n(void **) {
  FlightRecorder r(8);
  for (uint64_t s = 0; s < 21; ++s) record(r, s, s == 19);
  std::vector<TraceEntry> e = r.snapshot();
  assert_int_equal(e.size(), 8);
  for (size_t i = 0; i < e.size(); ++i) {
    assert_int_equal(e[i].op.seq, 13 + i);  // 13 .. 20
    check_entry(e[i]);
  }
  const TraceEntry &failed = e[19 - 13];
  assert_int_equal(static_cast<int>(failed.state), static_cast<int>(TraceState::kFailed));
  assert_int_equal(failed.status, -5);
  assert_string_equal(failed.message, "failed op 19");
  assert_int_equal(e[20 - 13].status, 0);
  assert_string_equal(e[20 - 13].message, "");  // the slot's earlier failure is not carried over

  // A depth that is not a power of two: the ring has 8 slots, a dump shows 5.
  FlightRecorder r5(5);
  assert_int_equal(r5.slots(), 8);
  for (uint64_t s = 0; s < 12; ++s) record(r5, s, false);
  e = r5.snapshot();
  assert_int_equal(e.size(), 5);
  for (size_t i = 0; i < e.size(); ++i) {
    assert_int_equal(e[i].op.seq, 7 + i);
    check_entry(e[i]);
  }
}

void states_and_late_updates(void **) {
  FlightRecorder r(4);
  r.begin(op_for(0), TraceState::kEnqueued, xc::trace_now());
  std::vector<TraceEntry> e = r.snapshot();
  assert_int_equal(e.size(), 1);
  assert_int_equal(static_cast<int>(e[0].state), static_cast<int>(TraceState::kEnqueued));
  assert_int_equal(e[0].start_ns, 0);
  r.running(0, xc::trace_now());
  e = r.snapshot();
  assert_int_equal(static_cast<int>(e[0].state), static_cast<int>(TraceState::kRunning));
  assert_true(e[0].start_ns > 0);
  assert_int_equal(e[0].end_ns, 0);
  // A message longer than 120 characters keeps its first 120.
  std::string longmsg(300, 'x');
  r.end(0, -9, longmsg.c_str(), xc::trace_now());
  e = r.snapshot();
  assert_int_equal(static_cast<int>(e[0].state), static_cast<int>(TraceState::kFailed));
  assert_int_equal(strlen(e[0].message), 120);
  // Ops 1..4 push op 0 out; a late end of op 0 must not touch op 4's entry.
  for (uint64_t s = 1; s <= 4; ++s) r.begin(op_for(s), TraceState::kRunning, xc::trace_now());
  r.end(0, 0, nullptr, xc::trace_now());
  e = r.snapshot();
  assert_int_equal(e.size(), 4);
  assert_int_equal(e[3].op.seq, 4);
  check_entry(e[3]);
  assert_int_equal(static_cast<int>(e[3].state), static_cast<int>(TraceState::kRunning));
  // An older op than the slot holds does not replace it.
  r.begin(op_for(0), TraceState::kRunning, xc::trace_now());
  e = r.snapshot();
  assert_int_equal(e[3].op.seq, 4);
}

void depth_zero_records_nothing(void **) {
  FlightRecorder r(0);
  assert_int_equal(r.depth(), 0);
  for (uint64_t s = 0; s < 10; ++s) record(r, s, s == 3);
  r.running(5, xc::trace_now());
  assert_int_equal(r.snapshot().size(), 0);
}

// Two threads record interleaved numbers (as two threads of one
// communicator would) into a small ring that wraps all the time, while a
// third reads: every entry read must be whole, and at the end the ring
// holds the last 16 numbers in order, but for at most one slot: a writer
// preempted between taking its number and writing it may come back a lap
// late and write into a slot the other one wrote meanwhile, and such a slot
// is left out of a dump, never shown torn (flight_recorder.h).
void concurrent_records_stay_whole(void **) {
  constexpr uint64_t kOps = 200000;
  FlightRecorder r(16);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<long> read_entries{0}, torn{0};  // cmocka's asserts belong to the main thread
  auto writer = [&] {
    for (;;) {
      uint64_t s = next.fetch_add(1);
      if (s >= kOps) return;
      record(r, s, s % 3 == 0);
    }
  };
  std::thread reader([&] {
    while (!stop.load()) {
      for (const TraceEntry &e : r.snapshot()) {
        if (!entry_whole(e)) torn.fetch_add(1);
        read_entries.fetch_add(1);
      }
    }
  });
  std::thread a(writer), b(writer);
  a.join();
  b.join();
  stop.store(true);
  reader.join();
  std::vector<TraceEntry> e = r.snapshot();
  assert_true(e.size() == 16 || e.size() == 15);
  for (size_t i = 0; i < e.size(); ++i) {
    assert_true(e[i].op.seq >= kOps - 16 && e[i].op.seq < kOps);
    if (i > 0) assert_true(e[i].op.seq > e[i - 1].op.seq);
    check_entry(e[i]);
    bool failed = e[i].op.seq % 3 == 0;
    assert_int_equal(static_cast<int>(e[i].state), static_cast<int>(failed ? TraceState::kFailed : TraceState::kDone));
    if (failed) assert_string_equal(e[i].message, ("failed op " + std::to_string(e[i].op.seq)).c_str());
  }
  assert_int_equal(torn.load(), 0);
  assert_true(read_entries.load() > 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(keeps_the_last_n_in_order),
      cmocka_unit_test(wraps_at_n),
      cmocka_unit_test(states_and_late_updates),
      cmocka_unit_test(depth_zero_records_nothing),
      cmocka_unit_test(large_values),
      cmocka_unit_test(concurrent_records_stay_whole),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
