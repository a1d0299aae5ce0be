// The agreement (runtime/agree.h) and revoke's flooding (p2p/revoke.cc)
// over the in-process fake transport: N ranks are N threads, and a rank is
// killed at a chosen point of the protocol (FakeHub::kill_after_send), such
// as the coordinator right after its first COMMIT. Every survivor must
// return the same decision.
#include "unit_test.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "fake_transport.h"
#include "p2p/frames.h"
#include "runtime/agree.h"

using xc::AgreeInput;
using xc::AgreeResult;
using xc::Deadline;
using xc::FrameHeader;
using xc::Status;
using xc_fake::FakeHub;
using xc_fake::FakeHubOptions;
using xc_fake::FakeWorld;

namespace {

constexpr uint64_t kAgreeCtx = 0x5000;
constexpr int kTagBase = 40;  // the 11th agreement
enum AgreeKind { kState = 0, kPropose = 1, kAck = 2, kCommit = 3 };  // agree.cc's tags
constexpr uint32_t kAll = 0x7fffffff;

struct Outcome {
  Status st;
  AgreeResult res;
};

// A frame of the agreement of this kind (to `to`, or anyone for -1).
std::function<bool(int, const FrameHeader &)> frame_of(AgreeKind kind, int to) {
  return [kind, to](int peer, const FrameHeader &h) {
    return h.kind == xc::kFrameEager && h.ctx == kAgreeCtx && h.tag == kTagBase + kind && (to < 0 || peer == to);
  };
}

// One agreement among n ranks, rank r with every bit but r set. `absent`
// ranks are dead before it starts; `setup` arranges deaths during it.
std::vector<Outcome> run(int n, const std::vector<int> &absent, const std::function<void(FakeHub &)> &setup) {
  FakeHubOptions h;
  h.ranks = n;
  xc::EngineOptions eo;
  eo.spin = 50;
  FakeWorld world(h, eo);
  for (int r : absent) world.hub().kill(r);
  setup(world.hub());
  std::vector<int> m(static_cast<size_t>(n));
  std::iota(m.begin(), m.end(), 0);
  auto members = std::make_shared<const std::vector<int>>(m);
  std::vector<Outcome> out(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    if (std::find(absent.begin(), absent.end(), r) != absent.end()) continue;
    threads.emplace_back([&, r] {
      AgreeInput in;
      in.engine = &world.engine(r);
      in.members = members;
      in.me = r;
      in.ctx = kAgreeCtx;
      in.tag_base = kTagBase;
      in.flag = kAll & ~(1u << r);
      in.deadline = Deadline::AfterMs(10000);
      out[static_cast<size_t>(r)].st = xc::agree(in, &out[static_cast<size_t>(r)].res);
    });
  }
  // A killed rank's thread runs on as a zombie whose frames go nowhere:
  // end it by aborting its agreement's context once the hub says it died.
  std::atomic<bool> done{false};
  std::thread reaper([&] {
    std::vector<char> ended(static_cast<size_t>(n), 0);
    while (!done) {
      for (int r = 0; r < n; ++r)
        if (!ended[static_cast<size_t>(r)] && world.hub().dead(r)) {
          ended[static_cast<size_t>(r)] = 1;
          world.engine(r).abort_context(kAgreeCtx, xc::Error(XC_ERR_ABORTED, "killed"));
        }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  for (auto &t : threads) t.join();
  done = true;
  reaper.join();
  for (int r = 0; r < n; ++r)
    if (world.hub().dead(r)) out[static_cast<size_t>(r)].st = xc::Error(XC_ERR_PEER_FAILED, "killed by the test");
  return out;
}

void assert_killed(const std::vector<Outcome> &out, int r) {
  if (out[static_cast<size_t>(r)].st.message() != "killed by the test") fail_msg("rank %d was not killed", r);
}

// Every survivor (not dead: st is the test's mark) decided alike, its own
// bit cleared and itself alive. Returns the decision.
AgreeResult check_uniform(const std::vector<Outcome> &out) {
  const AgreeResult *first = nullptr;
  for (size_t r = 0; r < out.size(); ++r) {
    if (out[r].st.code() == XC_ERR_PEER_FAILED && out[r].st.message() == "killed by the test") continue;
    if (!out[r].st.ok()) fail_msg("rank %zu: %s", r, out[r].st.message().c_str());
    const AgreeResult &res = out[r].res;
    if (res.flag & (1u << r)) fail_msg("rank %zu: flag 0x%x lacks its own cleared bit", r, res.flag);
    if (res.failed[r]) fail_msg("rank %zu: the decision counts it as failed", r);
    if (!first) {
      first = &res;
      continue;
    }
    if (res.flag != first->flag || res.failed != first->failed)
      fail_msg("rank %zu decided flag 0x%x, another survivor 0x%x (or the failed sets differ)", r, res.flag, first->flag);
  }
  if (!first) fail_msg("no survivor");
  return *first;
}

void no_failure(void **) {
  for (int n : {1, 2, 3, 5, 8}) {
    auto out = run(n, {}, [](FakeHub &) {});
    AgreeResult d = check_uniform(out);
    assert_int_equal(d.flag, kAll & ~((1u << n) - 1));
    for (int r = 0; r < n; ++r) assert_int_equal(d.failed[static_cast<size_t>(r)], 0);
  }
}

// Dead before it starts: left out of the flag, in the failed set.
void dead_before(void **) {
  for (int dead : {0, 2}) {
    auto out = run(5, {dead}, [](FakeHub &) {});
    AgreeResult d = check_uniform(out);
    assert_int_equal(d.flag, (kAll & ~0x1fu) | (1u << dead));
    assert_int_equal(d.failed[static_cast<size_t>(dead)], 1);
  }
}

// The coordinator proposes to rank 1 only, then dies: rank 1 coordinates
// and must propose the same (it may have been committed).
void coordinator_dies_after_first_propose(void **) {
  auto out = run(5, {}, [](FakeHub &h) { h.kill_after_send(0, frame_of(kPropose, 1)); });
  assert_killed(out, 0);
  AgreeResult d = check_uniform(out);
  assert_int_equal(d.flag, kAll & ~0x1fu);  // rank 0's proposal, its flag counted
}

// The coordinator commits to rank 1 only, then dies: rank 1 returned, so
// everyone must decide the same.
void coordinator_dies_after_first_commit(void **) {
  auto out = run(5, {}, [](FakeHub &h) { h.kill_after_send(0, frame_of(kCommit, 1)); });
  assert_killed(out, 0);
  AgreeResult d = check_uniform(out);
  assert_int_equal(d.flag, kAll & ~0x1fu);
}

// ... and rank 1, which got it, dies after passing it on to rank 2 only.
void coordinator_and_successor_die(void **) {
  auto out = run(6, {}, [](FakeHub &h) {
    h.kill_after_send(0, frame_of(kCommit, 1));
    h.kill_after_send(1, frame_of(kCommit, 2));
  });
  assert_killed(out, 0);
  assert_killed(out, 1);
  AgreeResult d = check_uniform(out);
  assert_int_equal(d.flag, kAll & ~0x3fu);
}

// A member dies after its state went out, or after its acknowledgement:
// the survivors still agree (with or without its flag).
void member_dies_during(void **) {
  for (AgreeKind k : {kState, kAck}) {
    auto out = run(5, {}, [k](FakeHub &h) { h.kill_after_send(3, frame_of(k, -1)); });
    assert_killed(out, 3);
    check_uniform(out);
  }
  // The coordinator dies as it starts proposing, and the next one too.
  auto out = run(5, {}, [](FakeHub &h) {
    h.kill_after_send(0, frame_of(kPropose, -1));
    h.kill_after_send(1, frame_of(kState, -1));
  });
  assert_killed(out, 0);
  assert_killed(out, 1);
  check_uniform(out);
}

// Revoke: rank 0 tells rank 1 and dies; rank 1 passes it on, so ranks 2
// and 3, blocked in receives nobody will match, fail with XC_ERR_REVOKED
// naming rank 0, and later requests on any of the four contexts too.
void revoke_floods(void **) {
  const int n = 4;
  const uint64_t ctx = 0x7700;
  FakeHubOptions h;
  h.ranks = n;
  xc::EngineOptions eo;
  eo.spin = 50;
  FakeWorld world(h, eo);
  auto members = std::make_shared<const std::vector<int>>(std::vector<int>{0, 1, 2, 3});
  world.hub().kill_after_send(0, [](int to, const FrameHeader &f) { return f.kind == xc::kFrameRevoke && to == 1; });
  std::vector<xc::Request> recvs(n);
  std::vector<char> bufs(n);
  for (int r = 1; r < n; ++r) {
    xc::Request &q = recvs[static_cast<size_t>(r)];
    q.ctx = ctx + 1;  // the collectives' context: a revoke covers all four
    q.peer = -1;
    q.tag = 9;
    q.members = members;
    q.buf = &bufs[static_cast<size_t>(r)];
    q.bytes = 1;
    world.engine(r).post_recv(&q);
  }
  world.engine(0).revoke(ctx, *members, 0);
  std::vector<xc::Request *> waiting{&recvs[1], &recvs[2], &recvs[3]};
  assert_true(world.drive(waiting));
  for (int r = 1; r < n; ++r) {
    expect_error(recvs[static_cast<size_t>(r)].status, XC_ERR_REVOKED, "rank 0");
    assert_true(world.engine(r).revoked(ctx));
    xc::Request later;
    later.ctx = ctx + 3;
    later.peer = (r + 1) % n;
    later.tag = 1;
    later.buf = &bufs[static_cast<size_t>(r)];
    later.bytes = 1;
    world.engine(r).post_send(&later);
    assert_true(later.done);
    assert_int_equal(later.status.code(), XC_ERR_REVOKED);
  }
  // Again, from another rank: nothing more goes out.
  uint64_t frames = world.hub().frames_of_kind(xc::kFrameRevoke);
  world.engine(2).revoke(ctx, *members, 2);
  world.pump();
  assert_int_equal(world.hub().frames_of_kind(xc::kFrameRevoke), frames);
  assert_true(frames <= static_cast<uint64_t>(n * (n - 1)));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(no_failure),
      cmocka_unit_test(dead_before),
      cmocka_unit_test(coordinator_dies_after_first_propose),
      cmocka_unit_test(coordinator_dies_after_first_commit),
      cmocka_unit_test(coordinator_and_successor_die),
      cmocka_unit_test(member_dies_during),
      cmocka_unit_test(revoke_floods),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
