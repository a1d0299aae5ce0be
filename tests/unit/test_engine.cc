// The point-to-point engine over an in-process fake transport (fake_transport.h):
// matching (context, source, tag, arrival order), eager and rendezvous
// messages, back-pressure, truncation, cancel, timeouts, peer failure and
// departure, context abort, and the single-copy (read_remote + FIN) path.
// Every test builds fresh engines; most drive them from this one thread by
// pumping each engine in turn.
#include "unit_test.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "fake_transport.h"
#include "p2p/engine.h"

using xc::Deadline;
using xc::EngineOptions;
using xc::Request;
using xc::Status;
using xc_fake::FakeHubOptions;
using xc_fake::FakeWorld;

namespace {

constexpr size_t kEager = 1024;
constexpr size_t kMaxPayload = 4096;

EngineOptions engine_opts() {
  EngineOptions o;
  o.spin = 20;
  return o;
}

FakeHubOptions hub_opts(int ranks, size_t capacity = 64, bool read_remote = false, size_t eager = kEager) {
  FakeHubOptions h;
  h.ranks = ranks;
  h.capacity_frames = capacity;
  h.max_payload = kMaxPayload;
  h.eager_bytes = eager;
  h.read_remote = read_remote;
  return h;
}

std::vector<char> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>(g() & 0xff);
  return v;
}

void set_send(Request &r, uint64_t ctx, int peer, int tag, const void *buf, size_t bytes) {
  r.ctx = ctx;
  r.peer = peer;
  r.tag = tag;
  r.buf = const_cast<void *>(buf);
  r.bytes = bytes;
}

void set_recv(Request &r, uint64_t ctx, int peer, int tag, void *buf, size_t bytes) {
  r.ctx = ctx;
  r.peer = peer;
  r.tag = tag;
  r.buf = buf;
  r.bytes = bytes;
}

std::shared_ptr<const std::vector<int>> members_of(std::vector<int> m) {
  return std::make_shared<const std::vector<int>>(std::move(m));
}

// Status code check that prints the message when it does not match.
#define expect_code(req, want)                                                                          \
  do {                                                                                                  \
    if ((req).status.code() != (want))                                                                  \
      print_error("status %d (%s), expected %d\n", static_cast<int>((req).status.code()),              \
                  (req).status.message().c_str(), static_cast<int>(want));                             \
    assert_int_equal(static_cast<int>((req).status.code()), static_cast<int>(want));                    \
  } while (0)

#define expect_ok(req)          \
  do {                          \
    assert_true((req).done);    \
    expect_code(req, XC_SUCCESS); \
  } while (0)

void no_violations(FakeWorld &w) {
  if (w.hub().violations()) print_error("transport contract breach: %s\n", w.hub().first_violation().c_str());
  assert_int_equal(w.hub().violations(), 0);
}

// Every buffer a sender described for single copy was released again.
void all_released(FakeWorld &w) {
  if (w.hub().unreleased()) print_error("%zu single-copy descriptions never released\n", w.hub().unreleased());
  assert_int_equal(w.hub().unreleased(), 0);
}

// One message from rank 0 to rank 1, receive posted first or last.
void one_message(FakeWorld &w, size_t bytes, bool recv_first, uint64_t seed) {
  auto data = random_bytes(bytes, seed);
  std::vector<char> out(bytes + 16, 0x5a);
  Request s, r;
  set_send(s, 1, 1, 9, data.data(), bytes);
  set_recv(r, 1, 0, 9, out.data(), out.size());
  if (recv_first) {
    w.engine(1).post_recv(&r);
    w.pump();
    assert_false(r.done);
    w.engine(0).post_send(&s);
  } else {
    w.engine(0).post_send(&s);
    w.pump();
    w.pump();  // the message (or its RTS) now waits as unexpected
    w.engine(1).post_recv(&r);
  }
  assert_true(w.drive({&s, &r}));
  expect_ok(s);
  expect_ok(r);
  assert_int_equal(r.source, 0);
  assert_int_equal(r.source_tag, 9);
  assert_int_equal(r.message_bytes, bytes);
  assert_memory_equal(out.data(), data.data(), bytes);
  for (size_t i = bytes; i < out.size(); ++i) assert_int_equal(out[i], 0x5a);  // nothing beyond the message
  no_violations(w);
}

// ---- eager ------------------------------------------------------------------

void eager_matched_to_posted_recv(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  one_message(w, 777, true, 1);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameEager), 1);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameRts), 0);
}

void eager_unexpected_then_recv(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  one_message(w, kEager, false, 2);  // exactly eager_bytes is still eager
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameEager), 1);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameRts), 0);
}

void eager_zero_bytes(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  one_message(w, 0, true, 3);
  one_message(w, 0, false, 4);
}

// ---- rendezvous ---------------------------------------------------------------

void rendezvous_recv_posted_first(void **) {
  FakeWorld w(hub_opts(2, 4), engine_opts());
  const size_t bytes = 100000;
  one_message(w, bytes, true, 5);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameEager), 0);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameRts), 1);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameCts), 1);
  // Pieces no larger than the transport allows: ceil(100000 / 4096) of them.
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameData), (bytes + kMaxPayload - 1) / kMaxPayload);
  assert_int_equal(w.hub().read_remote_calls(), 0);
}

void rendezvous_recv_posted_later(void **) {
  FakeWorld w(hub_opts(2, 4), engine_opts());
  one_message(w, kEager + 1, false, 6);  // one byte over eager_bytes
  one_message(w, 300001, false, 7);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameRts), 2);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameEager), 0);
}

// Larger than max_payload but below eager_bytes: must still go as a rendezvous.
void eager_limit_capped_by_max_payload(void **) {
  FakeWorld w(hub_opts(2, 4, false, 1 << 20), engine_opts());
  one_message(w, kMaxPayload + 100, true, 8);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameRts), 1);
}

// ---- matching ---------------------------------------------------------------------

void tag_matching_out_of_send_order(void **) {
  FakeWorld w(hub_opts(2, 8), engine_opts());
  const size_t sizes[4] = {10, 50000, 0, 3000};  // eager, rendezvous, empty, rendezvous
  std::vector<std::vector<char>> data;
  for (int i = 0; i < 4; ++i) data.push_back(random_bytes(sizes[i], 100 + static_cast<uint64_t>(i)));
  Request s[4], r[4];
  std::vector<std::vector<char>> out(4, std::vector<char>(60000, 0));
  for (int i = 0; i < 4; ++i) {
    set_send(s[i], 3, 1, 10 + i, data[static_cast<size_t>(i)].data(), sizes[i]);
    w.engine(0).post_send(&s[i]);
  }
  // Post the receives in a different order: tag 13, 11, then (after the
  // others are unexpected) 10 and 12.
  const int order[4] = {3, 1, 0, 2};
  for (int k = 0; k < 4; ++k) {
    int i = order[k];
    set_recv(r[i], 3, 0, 10 + i, out[static_cast<size_t>(i)].data(), out[static_cast<size_t>(i)].size());
    w.engine(1).post_recv(&r[i]);
    if (k == 1) w.pump_for(20);
  }
  assert_true(w.drive({&s[0], &s[1], &s[2], &s[3], &r[0], &r[1], &r[2], &r[3]}));
  for (int i = 0; i < 4; ++i) {
    expect_ok(s[i]);
    expect_ok(r[i]);
    assert_int_equal(r[i].source_tag, 10 + i);
    assert_int_equal(r[i].message_bytes, sizes[i]);
    assert_memory_equal(out[static_cast<size_t>(i)].data(), data[static_cast<size_t>(i)].data(), sizes[i]);
  }
  no_violations(w);
}

void any_source_any_tag(void **) {
  FakeWorld w(hub_opts(3), engine_opts());
  // Rank 1 sends tag 11 (eager), rank 2 sends tag 22 (rendezvous); rank 0
  // receives both with wildcards and learns who sent what.
  auto d1 = random_bytes(500, 11);
  auto d2 = random_bytes(20000, 22);
  Request s1, s2, r[2];
  std::vector<char> out[2] = {std::vector<char>(30000), std::vector<char>(30000)};
  for (int i = 0; i < 2; ++i) {
    set_recv(r[i], 5, -1, -1, out[i].data(), out[i].size());
    r[i].members = members_of({0, 1, 2});
    w.engine(0).post_recv(&r[i]);
  }
  set_send(s1, 5, 0, 11, d1.data(), d1.size());
  set_send(s2, 5, 0, 22, d2.data(), d2.size());
  w.engine(1).post_send(&s1);
  w.engine(2).post_send(&s2);
  assert_true(w.drive({&s1, &s2, &r[0], &r[1]}));
  bool seen[3] = {false, false, false};
  for (int i = 0; i < 2; ++i) {
    expect_ok(r[i]);
    assert_true(r[i].source == 1 || r[i].source == 2);
    assert_false(seen[r[i].source]);
    seen[r[i].source] = true;
    const auto &want = r[i].source == 1 ? d1 : d2;
    assert_int_equal(r[i].source_tag, r[i].source == 1 ? 11 : 22);
    assert_int_equal(r[i].message_bytes, want.size());
    assert_memory_equal(out[i].data(), want.data(), want.size());
  }
  // A specific source with any tag; any source with a specific tag.
  Request s3, s4, r3, r4;
  char a = 'a', b = 'b', ga = 0, gb = 0;
  set_send(s3, 5, 0, 33, &a, 1);
  set_send(s4, 5, 0, 44, &b, 1);
  set_recv(r3, 5, -1, 44, &gb, 1);
  set_recv(r4, 5, 2, -1, &ga, 1);
  w.engine(0).post_recv(&r3);
  w.engine(0).post_recv(&r4);
  w.engine(2).post_send(&s3);
  w.engine(1).post_send(&s4);
  assert_true(w.drive({&s3, &s4, &r3, &r4}));
  expect_ok(r3);
  expect_ok(r4);
  assert_int_equal(r3.source, 1);
  assert_int_equal(r3.source_tag, 44);
  assert_int_equal(gb, 'b');
  assert_int_equal(r4.source, 2);
  assert_int_equal(r4.source_tag, 33);
  assert_int_equal(ga, 'a');
  no_violations(w);
}

// 100 messages of mixed sizes (empty, eager, rendezvous) through FIFOs of two
// frames: back-pressure everywhere, and still the receiver sees them in the
// order they were sent, per sender. Two senders, any-source receives.
void non_overtaking_with_backpressure(void **) {
  for (int rr = 0; rr < 2; ++rr) {
    FakeWorld w(hub_opts(3, 2, rr == 1), engine_opts());
    const int kMsgs = 100;
    std::mt19937_64 g(4242);
    const size_t choices[] = {0, 1, 100, kEager, kEager + 1, 4096, 4097, 9000, 30000};
    struct Msg {
      std::vector<char> data;
      Request s;
    };
    std::vector<std::unique_ptr<Msg>> msgs[3];
    for (int src = 1; src <= 2; ++src)
      for (int i = 0; i < kMsgs; ++i) {
        auto m = std::make_unique<Msg>();
        size_t n = choices[g() % (sizeof choices / sizeof choices[0])];
        m->data = random_bytes(n + 8, g());
        // The first 8 bytes carry the sequence number (all messages >= 8 bytes here).
        uint64_t seq = static_cast<uint64_t>(i);
        memcpy(m->data.data(), &seq, 8);
        set_send(m->s, 9, 0, 7, m->data.data(), m->data.size());
        msgs[src].push_back(std::move(m));
      }
    const size_t cap = 30000 + 8;
    std::vector<Request> r(2 * kMsgs);
    std::vector<std::vector<char>> out(2 * kMsgs, std::vector<char>(cap));
    std::vector<Request *> all;
    // Half the receives posted before any send, the rest once messages pile up.
    for (int i = 0; i < kMsgs; ++i) {
      set_recv(r[static_cast<size_t>(i)], 9, -1, 7, out[static_cast<size_t>(i)].data(), cap);
      w.engine(0).post_recv(&r[static_cast<size_t>(i)]);
    }
    // Between posts only the receiver runs now and then: it frees FIFO space
    // while the senders still hold frames in their outboxes, so a new send
    // finds room in the FIFO yet must queue behind the older frames.
    for (int i = 0; i < kMsgs; ++i) {
      for (int src = 1; src <= 2; ++src) {
        w.engine(src).post_send(&msgs[src][static_cast<size_t>(i)]->s);
        all.push_back(&msgs[src][static_cast<size_t>(i)]->s);
      }
      if (i % 3 == 0) w.pump_rank(0);
      if (i % 11 == 0) w.pump();
    }
    for (int k = 0; k < 50; ++k) w.pump();
    for (int i = kMsgs; i < 2 * kMsgs; ++i) {
      set_recv(r[static_cast<size_t>(i)], 9, -1, 7, out[static_cast<size_t>(i)].data(), cap);
      w.engine(0).post_recv(&r[static_cast<size_t>(i)]);
      if (i % 10 == 0) w.pump();
    }
    for (auto &x : r) all.push_back(&x);
    assert_true(w.drive(all, 20000));
    assert_true(w.hub().refused_full() > 0);
    uint64_t next[3] = {0, 0, 0};
    for (size_t i = 0; i < r.size(); ++i) {
      expect_ok(r[i]);
      int src = r[i].source;
      assert_true(src == 1 || src == 2);
      uint64_t seq;
      memcpy(&seq, out[i].data(), 8);
      if (seq != next[src]) print_error("receive %zu got message %llu of rank %d, expected %llu\n", i,
                                        static_cast<unsigned long long>(seq), src,
                                        static_cast<unsigned long long>(next[src]));
      assert_int_equal(seq, next[src]);
      const Msg &m = *msgs[src][static_cast<size_t>(seq)];
      assert_int_equal(r[i].message_bytes, m.data.size());
      assert_memory_equal(out[i].data(), m.data.data(), m.data.size());
      ++next[src];
    }
    for (int src = 1; src <= 2; ++src)
      for (auto &m : msgs[src]) expect_ok(m->s);
    no_violations(w);
    all_released(w);
  }
}

// ---- truncation ---------------------------------------------------------------------

void truncation(void **) {
  for (int rr = 0; rr < 2; ++rr) {
    const size_t sizes[2] = {600, 50000};  // eager, rendezvous
    for (size_t big : sizes) {
      FakeWorld w(hub_opts(2, 4, rr == 1), engine_opts());
      auto data = random_bytes(big, big);
      auto next = random_bytes(big / 2, big + 1);
      std::vector<char> out(big / 2, 0x33);
      Request s, r;
      set_send(s, 1, 1, 4, data.data(), big);
      set_recv(r, 1, 0, 4, out.data(), out.size());
      w.engine(1).post_recv(&r);
      w.engine(0).post_send(&s);
      assert_true(w.drive({&s, &r}));
      expect_ok(s);  // the send itself succeeded
      assert_true(r.done);
      expect_code(r, XC_ERR_TRUNCATED);
      assert_int_equal(r.message_bytes, big);
      assert_int_equal(r.source, 0);
      assert_int_equal(r.source_tag, 4);
      for (char c : out) assert_int_equal(c, 0x33);  // nothing written
      assert_int_equal(w.hub().frames_of_kind(xc::kFrameData), 0);
      assert_int_equal(w.hub().read_remote_calls(), 0);
      // The next message, of a size that fits, arrives intact.
      Request s2, r2;
      set_send(s2, 1, 1, 4, next.data(), next.size());
      set_recv(r2, 1, 0, 4, out.data(), out.size());
      w.engine(0).post_send(&s2);
      w.pump();
      w.engine(1).post_recv(&r2);
      assert_true(w.drive({&s2, &r2}));
      expect_ok(s2);
      expect_ok(r2);
      assert_memory_equal(out.data(), next.data(), next.size());
      // Truncation of an unexpected (already arrived) message too.
      Request s3, r3;
      std::fill(out.begin(), out.end(), 0x44);
      set_send(s3, 1, 1, 4, data.data(), big);
      set_recv(r3, 1, 0, 4, out.data(), out.size());
      w.engine(0).post_send(&s3);
      w.pump();
      w.pump();
      w.engine(1).post_recv(&r3);
      assert_true(w.drive({&s3, &r3}));
      expect_ok(s3);
      expect_code(r3, XC_ERR_TRUNCATED);
      for (char c : out) assert_int_equal(c, 0x44);
      no_violations(w);
      all_released(w);
    }
  }
}

// ---- contexts -------------------------------------------------------------------------

void different_contexts_never_match(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  auto d1 = random_bytes(100, 71);
  auto d2 = random_bytes(20000, 72);
  std::vector<char> o1(30000), o2(30000);
  Request s1, s2, r_other, r1;
  // A wildcard receive on ctx 2 must not take ctx 1's messages.
  set_recv(r_other, 2, -1, -1, o2.data(), o2.size());
  w.engine(1).post_recv(&r_other);
  set_send(s1, 1, 1, 0, d1.data(), d1.size());
  w.engine(0).post_send(&s1);
  w.pump_for(20);
  assert_false(r_other.done);
  set_recv(r1, 1, -1, -1, o1.data(), o1.size());
  w.engine(1).post_recv(&r1);
  assert_true(w.drive({&s1, &r1}));
  expect_ok(r1);
  assert_int_equal(r1.message_bytes, d1.size());
  assert_memory_equal(o1.data(), d1.data(), d1.size());
  assert_false(r_other.done);
  // A rendezvous on ctx 3 is not taken by ctx 2's receive either...
  Request s3, r3;
  std::vector<char> o3(30000);
  set_send(s3, 3, 1, 0, d2.data(), d2.size());
  w.engine(0).post_send(&s3);
  w.pump_for(20);
  assert_false(r_other.done);
  // ...while ctx 2's own message is.
  set_send(s2, 2, 1, 5, d2.data(), d2.size());
  w.engine(0).post_send(&s2);
  assert_true(w.drive({&s2, &r_other}));
  expect_ok(r_other);
  assert_int_equal(r_other.source_tag, 5);
  assert_memory_equal(o2.data(), d2.data(), d2.size());
  set_recv(r3, 3, 0, 0, o3.data(), o3.size());
  w.engine(1).post_recv(&r3);
  assert_true(w.drive({&s3, &r3}));
  expect_ok(r3);
  assert_memory_equal(o3.data(), d2.data(), d2.size());
  no_violations(w);
}

// ---- cancel and timeouts -----------------------------------------------------------------

void cancel_posted_recv(void **) {
  for (size_t bytes : {size_t(64), size_t(40000)}) {
    FakeWorld w(hub_opts(2), engine_opts());
    std::vector<char> dead(bytes, 0x11), live(bytes, 0);
    Request r1, r2, s;
    set_recv(r1, 1, 0, 3, dead.data(), bytes);
    w.engine(1).post_recv(&r1);
    w.pump();
    w.engine(1).cancel(&r1, xc::Error(XC_ERR_ABORTED, "cancelled by the test"));
    assert_true(r1.done);
    assert_true(r1.cancelled);
    expect_code(r1, XC_ERR_ABORTED);
    auto data = random_bytes(bytes, bytes);
    set_send(s, 1, 1, 3, data.data(), bytes);
    w.engine(0).post_send(&s);
    w.pump_for(10);
    set_recv(r2, 1, 0, 3, live.data(), bytes);
    w.engine(1).post_recv(&r2);
    assert_true(w.drive({&s, &r2}));
    expect_ok(s);
    expect_ok(r2);
    assert_memory_equal(live.data(), data.data(), bytes);
    for (char c : dead) assert_int_equal(c, 0x11);  // the cancelled receive got nothing
    expect_code(r1, XC_ERR_ABORTED);
    no_violations(w);
  }
}

// A receive cancelled after it was matched to an RTS (CTS sent): the pieces
// that follow are dropped, the sender finishes, the next message is fine.
void cancel_streaming_recv(void **) {
  FakeWorld w(hub_opts(2, 4), engine_opts());
  const size_t bytes = 60000;
  auto data = random_bytes(bytes, 5);
  auto data2 = random_bytes(bytes, 6);
  std::vector<char> o1(bytes, 0x22), o2(bytes, 0);
  Request s1, r1, s2, r2;
  set_send(s1, 1, 1, 1, data.data(), bytes);
  w.engine(0).post_send(&s1);
  set_recv(r1, 1, 0, 1, o1.data(), bytes);
  w.engine(1).post_recv(&r1);  // polls the RTS, answers CTS
  assert_false(r1.done);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameCts), 1);  // matched: the transfer has begun
  w.engine(1).cancel(&r1, xc::Error(XC_ERR_ABORTED, "cancelled by the test"));
  expect_code(r1, XC_ERR_ABORTED);
  assert_true(w.drive({&s1}));
  expect_ok(s1);
  set_send(s2, 1, 1, 1, data2.data(), bytes);
  set_recv(r2, 1, 0, 1, o2.data(), bytes);
  w.engine(0).post_send(&s2);
  w.engine(1).post_recv(&r2);
  assert_true(w.drive({&s2, &r2}));
  expect_ok(r2);
  assert_memory_equal(o2.data(), data2.data(), bytes);
  for (char c : o1) assert_int_equal(c, 0x22);
  no_violations(w);
}

void wait_expired_deadline_withdraws_recv(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  std::vector<char> o1(100, 0x7), o2(100, 0);
  Request r1, r2, s;
  set_recv(r1, 1, 0, 2, o1.data(), o1.size());
  w.engine(1).post_recv(&r1);
  Status st = w.engine(1).wait(&r1, Deadline::AfterMs(0));
  assert_int_equal(static_cast<int>(st.code()), XC_ERR_TIMEOUT);
  assert_true(r1.done);
  assert_true(r1.cancelled);
  expect_code(r1, XC_ERR_TIMEOUT);
  auto data = random_bytes(100, 8);
  set_send(s, 1, 1, 2, data.data(), data.size());
  w.engine(0).post_send(&s);
  w.pump();
  set_recv(r2, 1, 0, 2, o2.data(), o2.size());
  w.engine(1).post_recv(&r2);
  assert_true(w.drive({&s, &r2}));
  expect_ok(r2);
  assert_memory_equal(o2.data(), data.data(), data.size());
  for (char c : o1) assert_int_equal(c, 0x7);
  no_violations(w);
}

// A send stuck behind a full FIFO times out and is withdrawn: the receiver
// never sees it; the message after it arrives next.
void wait_expired_deadline_withdraws_send(void **) {
  FakeWorld w(hub_opts(2, 1), engine_opts());
  int v[3] = {100, 200, 300}, got[3] = {0, 0, 0};
  Request s[3], r[2];
  for (int i = 0; i < 2; ++i) {
    set_send(s[i], 1, 1, 6, &v[i], sizeof v[i]);
    w.engine(0).post_send(&s[i]);
  }
  expect_ok(s[0]);       // fit in the FIFO at once
  assert_false(s[1].done);  // FIFO full: waits in the outbox
  Status st = w.engine(0).wait(&s[1], Deadline::AfterMs(0));
  assert_int_equal(static_cast<int>(st.code()), XC_ERR_TIMEOUT);
  assert_true(s[1].cancelled);
  set_send(s[2], 1, 1, 6, &v[2], sizeof v[2]);
  w.engine(0).post_send(&s[2]);
  set_recv(r[0], 1, 0, 6, &got[0], sizeof got[0]);
  set_recv(r[1], 1, 0, 6, &got[1], sizeof got[1]);
  w.engine(1).post_recv(&r[0]);
  w.engine(1).post_recv(&r[1]);
  assert_true(w.drive({&s[2], &r[0], &r[1]}));
  expect_ok(r[0]);
  expect_ok(r[1]);
  assert_int_equal(got[0], 100);
  assert_int_equal(got[1], 300);
  // And nothing else is in flight.
  w.pump_for(10);
  assert_int_equal(w.hub().queued(0, 1), 0);
  no_violations(w);
}

// A large send that timed out (wait returned XC_ERR_TIMEOUT and marked it
// cancelled) must not be received afterwards: the sender may already reuse
// its buffer. A later matching receive should get the next message (or fail),
// not hang on the withdrawn message's data (copy path) nor complete with
// whatever the sender's buffer now holds (single-copy path).
void wait_expired_deadline_withdraws_rendezvous_send(void **) {
  int wrong = 0;
  for (int rr = 0; rr < 2; ++rr) {
    FakeWorld w(hub_opts(2, 8, rr == 1), engine_opts());
    const size_t bytes = 20000;
    auto withdrawn = random_bytes(bytes, 90);
    auto next = random_bytes(100, 91);
    std::vector<char> out(bytes, 0);
    Request s1, s2, r;
    set_send(s1, 1, 1, 1, withdrawn.data(), bytes);
    w.engine(0).post_send(&s1);  // the RTS is in the FIFO now
    Status st = w.engine(0).wait(&s1, Deadline::AfterMs(0));
    assert_int_equal(static_cast<int>(st.code()), XC_ERR_TIMEOUT);
    assert_true(s1.cancelled);
    memset(withdrawn.data(), 0x66, bytes);  // the sender reuses its buffer
    set_send(s2, 1, 1, 1, next.data(), next.size());
    w.engine(0).post_send(&s2);
    set_recv(r, 1, 0, 1, out.data(), out.size());
    w.engine(1).post_recv(&r);
    bool finished = w.drive({&s2, &r}, 1000);
    if (!finished) {
      print_error("%s path: the receive matched the withdrawn send and never completed\n",
                  rr ? "single-copy" : "copy");
      ++wrong;
      w.engine(1).cancel(&r, xc::Error(XC_ERR_ABORTED, "test cleanup"));
    } else if (r.status.ok() &&
               (r.message_bytes != next.size() || memcmp(out.data(), next.data(), next.size()) != 0)) {
      print_error("%s path: the receive completed OK with the withdrawn %zu-byte message, holding what the "
                  "sender's buffer holds now (0x%02x...)\n",
                  rr ? "single-copy" : "copy", r.message_bytes, static_cast<unsigned char>(out[0]));
      ++wrong;
    }
    no_violations(w);
    all_released(w);
  }
  assert_int_equal(wrong, 0);
}

// A large send cancelled while its pieces stream fails the receive (NACK)
// instead of leaving it waiting for pieces that never come.
void cancel_streaming_send_fails_receive(void **) {
  FakeWorld w(hub_opts(2, 2), engine_opts());
  const size_t bytes = 64 * kMaxPayload;
  auto d = random_bytes(bytes, 95);
  std::vector<char> o(bytes, 0);
  Request s, r;
  set_send(s, 1, 1, 1, d.data(), bytes);
  set_recv(r, 1, 0, 1, o.data(), bytes);
  w.engine(1).post_recv(&r);
  w.engine(0).post_send(&s);
  for (int i = 0; i < 200 && r.offset == 0; ++i) w.pump();
  assert_true(r.offset > 0 && r.offset < bytes);  // part of it arrived
  w.engine(0).cancel(&s, xc::Error(XC_ERR_ABORTED, "cancelled by the test"));
  expect_code(s, XC_ERR_ABORTED);
  assert_true(w.drive({&r}));
  expect_code(r, XC_ERR_ABORTED);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameNack), 1);
  one_message(w, 20000, true, 96);  // the pair still works
  no_violations(w);
}

// ---- peer failure ---------------------------------------------------------------------------

// What a rank sent before it died is still received; what it never sent fails.
void dead_peer_queued_frames_still_delivered(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  auto d1 = random_bytes(300, 1), d2 = random_bytes(200, 2);
  std::vector<char> o1(300), o2(300), o3(300);
  Request r1, r2, r3, s1, s2;
  set_recv(r1, 1, 1, 1, o1.data(), o1.size());
  set_recv(r3, 1, 1, 3, o3.data(), o3.size());
  w.engine(0).post_recv(&r1);
  w.engine(0).post_recv(&r3);
  set_send(s1, 1, 0, 1, d1.data(), d1.size());
  set_send(s2, 1, 0, 2, d2.data(), d2.size());
  w.engine(1).post_send(&s1);
  w.engine(1).post_send(&s2);
  expect_ok(s1);
  expect_ok(s2);
  w.hub().kill(1);  // before rank 0 polled anything
  assert_true(w.drive({&r1, &r3}));
  expect_ok(r1);
  assert_memory_equal(o1.data(), d1.data(), d1.size());
  expect_code(r3, XC_ERR_PEER_FAILED);
  assert_int_equal(w.engine(0).first_failed({1}), 1);
  // The unexpected tag-2 message was queued before the death: still receivable.
  set_recv(r2, 1, 1, 2, o2.data(), o2.size());
  w.engine(0).post_recv(&r2);
  expect_ok(r2);
  assert_memory_equal(o2.data(), d2.data(), d2.size());
  // Any later receive from it fails at once.
  Request r4;
  set_recv(r4, 1, 1, 2, o2.data(), o2.size());
  w.engine(0).post_recv(&r4);
  assert_true(r4.done);
  expect_code(r4, XC_ERR_PEER_FAILED);
  no_violations(w);
}

// The race the engine must close: the peer sends its last frames and dies
// after this rank's last poll but before its liveness check. Those frames
// must still be taken (eager: received; RTS: the receive fails, not hangs).
void dead_peer_frames_sent_just_before_death(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  auto d = random_bytes(300, 12);
  std::vector<char> o(300), o2(300);
  Request r, r_other, s;
  set_recv(r, 1, 1, 1, o.data(), o.size());
  set_recv(r_other, 1, 1, 2, o2.data(), o2.size());
  w.engine(0).post_recv(&r);
  w.engine(0).post_recv(&r_other);
  set_send(s, 1, 0, 1, d.data(), d.size());
  bool fired = false;
  w.hub().set_before_peer_alive([&](int asker, int peer) {
    if (fired || asker != 0 || peer != 1) return;
    fired = true;
    w.engine(1).post_send(&s);  // its last words...
    w.hub().kill(1);            // ...and it is gone
  });
  assert_true(w.drive({&r, &r_other}, 3000));
  assert_true(fired);
  expect_ok(s);
  expect_ok(r);
  assert_memory_equal(o.data(), d.data(), d.size());
  expect_code(r_other, XC_ERR_PEER_FAILED);
  w.hub().set_before_peer_alive(nullptr);
  no_violations(w);
}

// An RTS queued before the sender died cannot be completed without it
// (no single-copy): the receive fails instead of hanging.
void dead_peer_rendezvous_fails(void **) {
  for (int rr = 0; rr < 2; ++rr) {
    for (int posted_first = 0; posted_first < 2; ++posted_first) {
      FakeWorld w(hub_opts(2, 8, rr == 1), engine_opts());
      auto d = random_bytes(50000, 3);
      std::vector<char> o(50000);
      Request s, r;
      set_recv(r, 1, 1, 1, o.data(), o.size());
      if (posted_first) w.engine(0).post_recv(&r);
      set_send(s, 1, 0, 1, d.data(), d.size());
      w.engine(1).post_send(&s);
      w.hub().kill(1);
      if (!posted_first) {
        w.pump_for(120);  // notice the death (the RTS is then unexpected)
        w.engine(0).post_recv(&r);
      }
      assert_true(w.drive({&r}, 3000));
      expect_code(r, XC_ERR_PEER_FAILED);
      no_violations(w);
    }
  }
}

void send_to_dead_peer_fails(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  w.hub().kill(1);
  auto d = random_bytes(50000, 4);
  // A rendezvous send in flight when the death is noticed fails.
  Request s1;
  set_send(s1, 1, 1, 1, d.data(), d.size());
  w.engine(0).post_send(&s1);
  assert_true(w.drive({&s1}, 3000));
  expect_code(s1, XC_ERR_PEER_FAILED);
  assert_int_equal(w.engine(0).first_failed({1}), 1);
  // Once known dead, any send fails at post.
  for (size_t bytes : {size_t(0), size_t(10), size_t(50000)}) {
    Request s;
    set_send(s, 1, 1, 1, d.data(), bytes);
    w.engine(0).post_send(&s);
    assert_true(s.done);
    expect_code(s, XC_ERR_PEER_FAILED);
  }
  no_violations(w);
}

// A send stuck in the outbox (FIFO full) when the receiver dies fails.
void queued_send_to_dead_peer_fails(void **) {
  FakeWorld w(hub_opts(2, 1), engine_opts());
  int v[2] = {1, 2};
  Request s[2];
  for (int i = 0; i < 2; ++i) {
    set_send(s[i], 1, 1, 1, &v[i], sizeof v[i]);
    w.engine(0).post_send(&s[i]);
  }
  expect_ok(s[0]);
  assert_false(s[1].done);
  w.hub().kill(1);
  Status st = w.engine(0).wait(&s[1], Deadline::AfterMs(3000));
  assert_int_equal(static_cast<int>(st.code()), XC_ERR_PEER_FAILED);
  no_violations(w);
}

void any_source_recv_fails_when_member_crashes(void **) {
  FakeWorld w(hub_opts(3), engine_opts());
  char buf[8];
  Request r, r_nomembers, r_outside;
  set_recv(r, 1, -1, -1, buf, sizeof buf);
  r.members = members_of({0, 1, 2});
  set_recv(r_outside, 2, -1, -1, buf, sizeof buf);
  r_outside.members = members_of({0, 1});  // the crashed rank is not a member
  w.engine(0).post_recv(&r);
  w.engine(0).post_recv(&r_outside);
  w.hub().kill(2);
  assert_true(w.drive({&r}, 3000));
  expect_code(r, XC_ERR_PEER_FAILED);
  assert_int_equal(w.engine(0).first_failed({0, 1, 2}), 2);
  assert_false(r_outside.done);
  // Posted after the crash is known: fails at once.
  Request r2;
  set_recv(r2, 1, -1, 7, buf, sizeof buf);
  r2.members = members_of({2, 0, 1});
  w.engine(0).post_recv(&r2);
  assert_true(r2.done);
  expect_code(r2, XC_ERR_PEER_FAILED);
  // The receive outside the crashed rank's group still works.
  Request s;
  char c = 'z';
  set_send(s, 2, 0, 1, &c, 1);
  w.engine(1).post_send(&s);
  assert_true(w.drive({&s, &r_outside}));
  expect_ok(r_outside);
  assert_int_equal(r_outside.source, 1);
  assert_int_equal(buf[0], 'z');
  no_violations(w);
}

// A collective's receive from a live member fails when another member
// crashes (its partner may have given up); a plain receive does not.
void collective_request_fails_when_other_member_crashes(void **) {
  FakeWorld w(hub_opts(3), engine_opts());
  char buf[8], buf2[8];
  auto m = members_of({0, 1, 2});
  Request coll, plain;
  set_recv(coll, 4, 1, 1, buf, sizeof buf);
  coll.collective = true;
  coll.members = m;
  set_recv(plain, 4, 1, 2, buf2, sizeof buf2);
  plain.members = m;
  w.engine(0).post_recv(&coll);
  w.engine(0).post_recv(&plain);
  // And a collective rendezvous send to the live rank 1, awaiting its CTS.
  auto d = random_bytes(20000, 9);
  Request coll_send;
  set_send(coll_send, 4, 1, 1, d.data(), d.size());
  coll_send.collective = true;
  coll_send.members = m;
  w.engine(0).post_send(&coll_send);
  w.hub().kill(2);
  Status st = w.engine(0).wait(&coll, Deadline::AfterMs(3000));
  assert_int_equal(static_cast<int>(st.code()), XC_ERR_PEER_FAILED);
  st = w.engine(0).wait(&coll_send, Deadline::AfterMs(3000));
  assert_int_equal(static_cast<int>(st.code()), XC_ERR_PEER_FAILED);
  assert_false(plain.done);
  // A new collective request among these members is refused at once.
  Request late;
  set_send(late, 4, 1, 1, buf, 1);
  late.collective = true;
  late.members = m;
  w.engine(0).post_send(&late);
  assert_true(late.done);
  expect_code(late, XC_ERR_PEER_FAILED);
  // The plain receive still works.
  Request s;
  char c = 'q';
  set_send(s, 4, 0, 2, &c, 1);
  w.engine(1).post_send(&s);
  assert_true(w.drive({&s, &plain}));
  expect_ok(plain);
  assert_int_equal(buf2[0], 'q');
  no_violations(w);
}

// A collective send to a live member, stuck in a full FIFO, fails when
// another member crashes.
void collective_queued_send_fails_when_other_member_crashes(void **) {
  FakeWorld w(hub_opts(3, 1), engine_opts());
  auto m = members_of({0, 1, 2});
  int v[2] = {1, 2};
  Request s[2];
  for (int i = 0; i < 2; ++i) {
    set_send(s[i], 4, 1, 1, &v[i], sizeof v[i]);
    s[i].collective = true;
    s[i].members = m;
    w.engine(0).post_send(&s[i]);
  }
  expect_ok(s[0]);
  assert_false(s[1].done);
  w.hub().kill(2);
  Status st = w.engine(0).wait(&s[1], Deadline::AfterMs(3000));
  assert_int_equal(static_cast<int>(st.code()), XC_ERR_PEER_FAILED);
  no_violations(w);
}

// A rank that left on purpose (announced departure) is not a failure for
// any-source receives; a receive addressed to it still fails.
void departed_peer_does_not_fail_any_source(void **) {
  FakeWorld w(hub_opts(3), engine_opts());
  char buf[8], buf2[8];
  auto m = members_of({0, 1, 2});
  Request any, from2;
  set_recv(any, 1, -1, -1, buf, sizeof buf);
  any.members = m;
  set_recv(from2, 1, 2, -1, buf2, sizeof buf2);
  from2.members = m;
  w.engine(0).post_recv(&any);
  w.engine(0).post_recv(&from2);
  w.engine(2).announce_departure();  // through its transport
  w.hub().kill(2);
  assert_true(w.drive({&from2}, 3000));
  expect_code(from2, XC_ERR_PEER_FAILED);
  w.pump_for(150);
  assert_false(any.done);
  assert_int_equal(w.engine(0).first_failed({0, 1, 2}), 2);
  // A new any-source receive is accepted too.
  Request any2;
  char buf3[8];
  set_recv(any2, 1, -1, -1, buf3, sizeof buf3);
  any2.members = m;
  w.engine(0).post_recv(&any2);
  assert_false(any2.done);
  Request s1, s2;
  char a = 'A', b = 'B';
  set_send(s1, 1, 0, 5, &a, 1);
  set_send(s2, 1, 0, 6, &b, 1);
  w.engine(1).post_send(&s1);
  w.engine(1).post_send(&s2);
  assert_true(w.drive({&s1, &s2, &any, &any2}));
  expect_ok(any);
  expect_ok(any2);
  assert_int_equal(any.source, 1);
  assert_int_equal(buf[0], 'A');
  assert_int_equal(buf3[0], 'B');
  no_violations(w);
}

// ---- abort ------------------------------------------------------------------------------

void abort_context_fails_later_posts(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  char buf[64];
  Request pending, unexpected_send;
  // An unexpected message of ctx 7 and a pending receive of ctx 7.
  char x = 'x';
  set_send(unexpected_send, 7, 1, 3, &x, 1);
  w.engine(0).post_send(&unexpected_send);
  set_recv(pending, 7, 0, 1, buf, sizeof buf);
  w.engine(1).post_recv(&pending);
  w.pump();
  w.engine(1).abort_context(7, xc::Error(XC_ERR_ABORTED, "aborted by the test"));
  assert_true(pending.done);
  expect_code(pending, XC_ERR_ABORTED);
  // Later posts on ctx 7 fail at once, receives and sends alike, even one
  // that would have matched the message that already arrived.
  Request r, s;
  set_recv(r, 7, 0, 3, buf, sizeof buf);
  w.engine(1).post_recv(&r);
  assert_true(r.done);
  expect_code(r, XC_ERR_ABORTED);
  set_send(s, 7, 0, 3, buf, 8);
  w.engine(1).post_send(&s);
  assert_true(s.done);
  expect_code(s, XC_ERR_ABORTED);
  // Other contexts are unaffected.
  Request s8, r8;
  char y = 'y', got = 0;
  set_send(s8, 8, 1, 3, &y, 1);
  set_recv(r8, 8, 0, 3, &got, 1);
  w.engine(0).post_send(&s8);
  w.engine(1).post_recv(&r8);
  assert_true(w.drive({&s8, &r8}));
  expect_ok(r8);
  assert_int_equal(got, 'y');
  no_violations(w);
}

// abort_context from another thread wakes a rank asleep in wait().
void abort_wakes_sleeping_waiter(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  char buf[8];
  Request r;
  set_recv(r, 3, 1, 1, buf, sizeof buf);
  w.engine(0).post_recv(&r);
  Status st;
  std::atomic<bool> returned{false};
  std::thread t([&] {
    st = w.engine(0).wait(&r, Deadline::AfterMs(10000));
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  bool early = returned.load();
  auto t0 = std::chrono::steady_clock::now();
  w.engine(0).abort_context(3, xc::Error(XC_ERR_ABORTED, "aborted"));
  t.join();  // before any assert: a failing one would leave the thread running
  assert_false(early);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  assert_int_equal(static_cast<int>(st.code()), XC_ERR_ABORTED);
  assert_true(ms < 1000);
  no_violations(w);
}

// ---- single copy ------------------------------------------------------------------------

void single_copy_large_messages(void **) {
  for (int recv_first = 0; recv_first < 2; ++recv_first) {
    FakeWorld w(hub_opts(2, 4, true), engine_opts());
    const size_t bytes = 1 << 18;
    one_message(w, bytes, recv_first != 0, 50 + static_cast<uint64_t>(recv_first));
    assert_int_equal(w.hub().read_remote_calls(), 1);
    assert_int_equal(w.hub().read_remote_bytes(), bytes);
    // RTS → CTS (asking to read) → GO (the sender keeps its buffer) → read → FIN.
    assert_int_equal(w.hub().frames_of_kind(xc::kFrameRts), 1);
    assert_int_equal(w.hub().frames_of_kind(xc::kFrameCts), 1);
    assert_int_equal(w.hub().frames_of_kind(xc::kFrameGo), 1);
    assert_int_equal(w.hub().frames_of_kind(xc::kFrameFin), 1);
    assert_int_equal(w.hub().frames_of_kind(xc::kFrameData), 0);
    // The sender's transport described its buffer (40 bytes: the RTS carried
    // all of it, or the read would have been refused) and released it at FIN.
    assert_int_equal(w.hub().described(), 1);
    all_released(w);
    // Small messages still go eager.
    one_message(w, 100, recv_first != 0, 60);
    assert_int_equal(w.hub().read_remote_calls(), 1);
    assert_int_equal(w.hub().described(), 1);
  }
}

// The sender's request stays open until the FIN arrives.
void single_copy_sender_waits_for_fin(void **) {
  FakeWorld w(hub_opts(2, 4, true), engine_opts());
  auto d = random_bytes(20000, 77);
  std::vector<char> o(20000);
  Request s, r;
  set_send(s, 1, 1, 1, d.data(), d.size());
  w.engine(0).post_send(&s);
  Request idle;
  for (int i = 0; i < 5; ++i) (void)w.engine(0).test(&idle);
  assert_false(s.done);  // RTS out, nobody answered
  set_recv(r, 1, 0, 1, o.data(), o.size());
  w.engine(1).post_recv(&r);  // matches the RTS, asks to read (CTS)
  assert_false(r.done);
  (void)w.engine(0).test(&idle);  // the sender grants (GO) and keeps waiting
  assert_false(s.done);
  (void)w.engine(1).test(&idle);  // the receiver reads, then sends FIN
  expect_ok(r);
  assert_memory_equal(o.data(), d.data(), d.size());
  assert_false(s.done);
  assert_int_equal(w.hub().unreleased(), 1);  // still the receiver's to read
  assert_true(w.drive({&s}));
  expect_ok(s);
  all_released(w);
}

// A failed single-copy read fails the receive; the sender still gets its FIN.
void single_copy_read_failure(void **) {
  FakeWorld w(hub_opts(2, 4, true), engine_opts());
  w.hub().set_read_remote_result(xc::Error(XC_ERR_SYSTEM, "process_vm_readv: injected failure"));
  auto d = random_bytes(20000, 78);
  std::vector<char> o(20000);
  Request s, r;
  set_send(s, 1, 1, 1, d.data(), d.size());
  set_recv(r, 1, 0, 1, o.data(), o.size());
  w.engine(1).post_recv(&r);
  w.engine(0).post_send(&s);
  assert_true(w.drive({&s, &r}));
  expect_ok(s);
  expect_code(r, XC_ERR_SYSTEM);
  all_released(w);
  w.hub().set_read_remote_result(Status::Ok());
  one_message(w, 20000, true, 79);
  all_released(w);
}

// A sender whose transport cannot describe its buffer streams the message
// instead (its RTS carries nothing; the receiver answers a plain CTS).
void single_copy_description_failure_streams(void **) {
  FakeWorld w(hub_opts(2, 4, true), engine_opts());
  w.hub().set_describe_result(xc::Error(XC_ERR_SYSTEM, "registration: injected failure"));
  one_message(w, 20000, true, 80);
  one_message(w, 30000, false, 81);
  assert_int_equal(w.hub().read_remote_calls(), 0);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameGo), 0);
  assert_true(w.hub().frames_of_kind(xc::kFrameData) >= (20000 + 30000) / kMaxPayload);
  assert_int_equal(w.hub().described(), 0);
}

// Rank 0 sends d to rank 1 (receiving into o) and is asked to let rank 1
// read it: RTS → CTS asking to read → GO. Nobody has read it yet.
void grant_single_copy(FakeWorld &w, Request &s, const std::vector<char> &d, Request &r, std::vector<char> &o) {
  set_send(s, 1, 1, 1, d.data(), d.size());
  set_recv(r, 1, 0, 1, o.data(), o.size());
  w.engine(1).post_recv(&r);
  w.engine(0).post_send(&s);
  w.pump_rank(1);
  w.pump_rank(0);
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameGo), 1);
}

// The receiver dies after GO, while it may be reading: the send fails and
// its description is released, also when the send had been cancelled
// meanwhile (a cancelled granted send waits for FIN or the reader's death).
void single_copy_reader_dies_after_go(void **) {
  for (int cancelled = 0; cancelled < 2; ++cancelled) {
    FakeWorld w(hub_opts(2, 4, true), engine_opts());
    auto d = random_bytes(20000, 82);
    std::vector<char> o(20000);
    Request s, r;
    grant_single_copy(w, s, d, r, o);
    if (cancelled) {
      w.engine(0).cancel(&s, xc::Error(XC_ERR_ABORTED, "cancelled by the test"));
      assert_false(s.done);  // the receiver may be reading the buffer
    }
    w.hub().kill(1);
    Status st = w.engine(0).wait(&s, Deadline::AfterMs(3000));
    assert_int_equal(static_cast<int>(st.code()), XC_ERR_PEER_FAILED);
    assert_int_equal(w.hub().read_remote_calls(), 0);
    all_released(w);
    no_violations(w);
  }
}

// A receiver granted to read goes silent (no FIN, no death: a link down
// between hosts). A transport that can take the access back (UCX) lets the
// send end at its deadline; one that cannot (shm: the reader's death is
// visible) keeps it open.
void single_copy_silent_reader(void **) {
  for (int revocable = 0; revocable < 2; ++revocable) {
    FakeHubOptions o = hub_opts(2, 4, true);
    o.revocable = revocable;
    FakeWorld w(o, engine_opts());
    auto d = random_bytes(20000, 83);
    std::vector<char> out(20000);
    Request s, r;
    grant_single_copy(w, s, d, r, out);  // rank 1 never reads nor answers
    if (revocable) {
      Status st = w.engine(0).wait(&s, Deadline::AfterMs(100));  // cancels at the deadline
      assert_int_equal(w.hub().revoke_calls(), 1);
      assert_int_equal(static_cast<int>(st.code()), XC_ERR_TIMEOUT);
      assert_true(s.done);
      assert_int_equal(w.hub().unreleased(), 0);
    } else {
      // What wait does at its deadline; the send stays the reader's (FIN or
      // its death ends it), so wait itself would not return here.
      w.engine(0).cancel(&s, xc::Error(XC_ERR_TIMEOUT, "timed out"));
      assert_int_equal(w.hub().revoke_calls(), 1);
      assert_false(s.done);
      w.hub().kill(1);
      Status st = w.engine(0).wait(&s, Deadline::AfterMs(3000));
      assert_int_equal(static_cast<int>(st.code()), XC_ERR_PEER_FAILED);
    }
    w.engine(1).cancel(&r, xc::Error(XC_ERR_ABORTED, "test over"));
    no_violations(w);
  }
}

// ---- self and threads ----------------------------------------------------------------------

void self_messages_any_size(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  for (size_t bytes : {size_t(0), size_t(5), size_t(100000)}) {
    auto d = random_bytes(bytes, bytes);
    std::vector<char> o(bytes);
    Request s, r;
    set_send(s, 1, 0, 2, d.data(), bytes);
    w.engine(0).post_send(&s);
    expect_ok(s);
    set_recv(r, 1, -1, -1, o.data(), bytes);
    w.engine(0).post_recv(&r);
    expect_ok(r);
    assert_int_equal(r.source, 0);
    assert_memory_equal(o.data(), d.data(), bytes);
  }
  assert_int_equal(w.hub().frames_of_kind(xc::kFrameEager) + w.hub().frames_of_kind(xc::kFrameRts), 0);
  no_violations(w);
}

// Two threads exchange messages of every size class through blocking wait():
// exercises sleeping in prepare_wait/finish_wait and waking on frames.
void threaded_ping_pong(void **) {
  for (int rr = 0; rr < 2; ++rr) {
    FakeWorld w(hub_opts(2, 3, rr == 1), engine_opts());
    const size_t sizes[] = {0, 8, 1000, 5000, 70000, 200000};
    const int kRounds = 20;
    std::atomic<int> errors{0};
    auto body = [&](int me) {
      int other = 1 - me;
      for (int round = 0; round < kRounds; ++round)
        for (size_t bytes : sizes) {
          auto d = random_bytes(bytes, static_cast<uint64_t>(round) * 1000 + bytes);
          std::vector<char> o(bytes);
          Request s, r;
          set_send(s, 2, other, round, d.data(), bytes);
          set_recv(r, 2, other, round, o.data(), bytes);
          if (me == 0) {
            w.engine(me).post_send(&s);
            if (!w.engine(me).wait(&s, Deadline::AfterMs(10000)).ok()) ++errors;
            w.engine(me).post_recv(&r);
            if (!w.engine(me).wait(&r, Deadline::AfterMs(10000)).ok()) ++errors;
          } else {
            w.engine(me).post_recv(&r);
            if (!w.engine(me).wait(&r, Deadline::AfterMs(10000)).ok()) ++errors;
            w.engine(me).post_send(&s);
            if (!w.engine(me).wait(&s, Deadline::AfterMs(10000)).ok()) ++errors;
          }
          if (bytes && memcmp(o.data(), d.data(), bytes) != 0) ++errors;
        }
    };
    std::thread t0(body, 0), t1(body, 1);
    t0.join();
    t1.join();
    assert_int_equal(errors.load(), 0);
    no_violations(w);
    all_released(w);
  }
}


// ---- collective signatures -----------------------------------------------------

void set_coll(Request &r, const std::shared_ptr<const std::vector<int>> &m, uint32_t sig) {
  r.collective = true;
  r.members = m;
  r.sig = sig;
}

bool message_has(const Request &r, const char *what) { return r.status.message().find(what) != std::string::npos; }

// Rank 1 receives rank 0's message of the same op (ctx, tag) with another
// signature: the receive fails naming both, nothing is written, rank 2's
// receive of that op fails when the news arrives, and a late post of the op
// on rank 2 fails at once. Same signatures (and 0, "none") still match.
void signature_mismatch_fails_the_op_everywhere(void **) {
  FakeWorld w(hub_opts(3), engine_opts());
  auto m = members_of({0, 1, 2});
  const uint32_t a = 0x31000001, b = 0x32000001;
  char data[16] = "from rank zero", out[16] = {}, out2[16] = {};
  Request s, r, r2;
  set_send(s, 5, 1, 7, data, sizeof data);
  set_coll(s, m, a);
  set_recv(r, 5, 0, 7, out, sizeof out);
  set_coll(r, m, b);
  set_recv(r2, 5, 1, 7, out2, sizeof out2);
  set_coll(r2, m, b);
  w.engine(1).post_recv(&r);
  w.engine(2).post_recv(&r2);
  w.engine(0).post_send(&s);
  assert_true(w.drive({&s, &r, &r2}));
  expect_ok(s);  // eager: gone before anyone looked
  expect_code(r, XC_ERR_INVALID_USAGE);
  assert_true(message_has(r, "rank 0 is in op #7"));
  for (char c : out) assert_int_equal(c, 0);
  expect_code(r2, XC_ERR_INVALID_USAGE);
  assert_true(message_has(r2, "rank 1 found rank 0 in op #7"));
  Request late;
  set_send(late, 5, 0, 7, data, 1);
  set_coll(late, m, b);
  w.engine(2).post_send(&late);
  assert_true(late.done);
  expect_code(late, XC_ERR_INVALID_USAGE);
  // The next op (tag 8) is unaffected; signature 0 matches anything.
  Request s3, r3;
  set_send(s3, 5, 1, 8, data, sizeof data);
  set_coll(s3, m, 0);
  set_recv(r3, 5, 0, 8, out, sizeof out);
  set_coll(r3, m, a);
  w.engine(0).post_send(&s3);
  w.engine(1).post_recv(&r3);
  assert_true(w.drive({&s3, &r3}));
  expect_ok(r3);
  assert_memory_equal(out, data, sizeof data);
  no_violations(w);
}

// The message arrives first (unexpected), then the receive; and a message
// for another rank's receive of the same op proves the mismatch as well.
void signature_mismatch_unexpected_and_other_sender(void **) {
  FakeWorld w(hub_opts(3), engine_opts());
  auto m = members_of({0, 1, 2});
  const uint32_t a = 0x41000002, b = 0x42000002;
  char data[8] = "abcdefg", out[8] = {}, out2[8] = {};
  Request s, r;
  set_send(s, 5, 1, 3, data, sizeof data);
  set_coll(s, m, a);
  w.engine(0).post_send(&s);
  w.pump();
  w.pump();
  set_recv(r, 5, 0, 3, out, sizeof out);
  set_coll(r, m, b);
  w.engine(1).post_recv(&r);
  assert_true(r.done);
  expect_code(r, XC_ERR_INVALID_USAGE);
  // Rank 2 waits for rank 1 in op #4 but rank 0's message of op #4 disagrees.
  Request s2, r2;
  set_recv(r2, 5, 1, 4, out2, sizeof out2);
  set_coll(r2, m, b);
  w.engine(2).post_recv(&r2);
  set_send(s2, 5, 2, 4, data, sizeof data);
  set_coll(s2, m, a);
  w.engine(0).post_send(&s2);
  assert_true(w.drive({&r2}));
  expect_code(r2, XC_ERR_INVALID_USAGE);
  assert_true(message_has(r2, "rank 0 is in op #4"));
  no_violations(w);
}

// A rendezvous send whose receiver disagrees fails too (it would wait for a
// CTS that never comes).
void signature_mismatch_fails_rendezvous_sender(void **) {
  FakeWorld w(hub_opts(2), engine_opts());
  auto m = members_of({0, 1});
  auto data = random_bytes(20000, 3);
  std::vector<char> out(data.size(), 0);
  Request s, r;
  set_send(s, 5, 1, 2, data.data(), data.size());
  set_coll(s, m, 0x51000003);
  set_recv(r, 5, 0, 2, out.data(), out.size());
  set_coll(r, m, 0x52000003);
  w.engine(0).post_send(&s);
  w.engine(1).post_recv(&r);
  assert_true(w.drive({&s, &r}));
  expect_code(r, XC_ERR_INVALID_USAGE);
  expect_code(s, XC_ERR_INVALID_USAGE);
  assert_true(message_has(s, "rank 1 is in op #2") || message_has(s, "found rank 0 in op #2"));
  for (char c : out) assert_int_equal(c, 0);
  no_violations(w);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(eager_matched_to_posted_recv),
      cmocka_unit_test(eager_unexpected_then_recv),
      cmocka_unit_test(eager_zero_bytes),
      cmocka_unit_test(rendezvous_recv_posted_first),
      cmocka_unit_test(rendezvous_recv_posted_later),
      cmocka_unit_test(eager_limit_capped_by_max_payload),
      cmocka_unit_test(tag_matching_out_of_send_order),
      cmocka_unit_test(any_source_any_tag),
      cmocka_unit_test(non_overtaking_with_backpressure),
      cmocka_unit_test(truncation),
      cmocka_unit_test(different_contexts_never_match),
      cmocka_unit_test(cancel_posted_recv),
      cmocka_unit_test(cancel_streaming_recv),
      cmocka_unit_test(wait_expired_deadline_withdraws_recv),
      cmocka_unit_test(wait_expired_deadline_withdraws_send),
      cmocka_unit_test(wait_expired_deadline_withdraws_rendezvous_send),
      cmocka_unit_test(cancel_streaming_send_fails_receive),
      cmocka_unit_test(dead_peer_queued_frames_still_delivered),
      cmocka_unit_test(dead_peer_frames_sent_just_before_death),
      cmocka_unit_test(dead_peer_rendezvous_fails),
      cmocka_unit_test(send_to_dead_peer_fails),
      cmocka_unit_test(queued_send_to_dead_peer_fails),
      cmocka_unit_test(any_source_recv_fails_when_member_crashes),
      cmocka_unit_test(collective_request_fails_when_other_member_crashes),
      cmocka_unit_test(collective_queued_send_fails_when_other_member_crashes),
      cmocka_unit_test(departed_peer_does_not_fail_any_source),
      cmocka_unit_test(abort_context_fails_later_posts),
      cmocka_unit_test(abort_wakes_sleeping_waiter),
      cmocka_unit_test(single_copy_large_messages),
      cmocka_unit_test(single_copy_sender_waits_for_fin),
      cmocka_unit_test(single_copy_read_failure),
      cmocka_unit_test(single_copy_description_failure_streams),
      cmocka_unit_test(single_copy_reader_dies_after_go),
      cmocka_unit_test(single_copy_silent_reader),
      cmocka_unit_test(self_messages_any_size),
      cmocka_unit_test(threaded_ping_pong),
      cmocka_unit_test(signature_mismatch_fails_the_op_everywhere),
      cmocka_unit_test(signature_mismatch_unexpected_and_other_sender),
      cmocka_unit_test(signature_mismatch_fails_rendezvous_sender),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
