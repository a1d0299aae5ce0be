// Waiting over several transports (p2p/sleeper.h). Rank 0's engine reaches
// rank 1 through one fake transport and rank 2 through another, each on its
// own hub; each transport sleeps by itself (like shm's futex) or offers an
// eventfd (like UCX). A frame through either must wake rank 0 asleep in
// wait() by the wake-up path (its sleep ends "woken", not by running out
// of time), also with two threads of rank 0 waiting at once, and an idle
// wait must cost almost no CPU. One test drives the Sleeper alone through
// the order of calls that would lose a wake-up.
#include "unit_test.h"

#include <sys/resource.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "base/backoff.h"
#include "fake_transport.h"
#include "p2p/engine.h"

using xc::Deadline;
using xc::P2pEngine;
using xc::Request;
using xc::SleepCounts;
using xc::Status;
using xc_fake::FakeHub;
using xc_fake::FakeHubOptions;
using xc_fake::FakeTransport;
using xc_fake::Wakeup;

namespace {

constexpr uint64_t kCtx = 1;
// Sleeps long enough that a lost wake-up cannot hide behind the end of a
// sleep: the waits below would time out first.
constexpr int kLongSleepMs = 10000;
constexpr uint64_t kWaitMs = 5000;

// Ranks 0..2. Rank 0 reaches 1 through `a` and 2 through `b`; ranks 1 and 2
// reach only rank 0, each through its own end of that hub.
class TwoNetworks {
 public:
  TwoNetworks(Wakeup a, Wakeup b, int max_sleep_ms) : hub_a_(hub_opts()), hub_b_(hub_opts()) {
    t0a_ = std::make_unique<FakeTransport>(hub_a_, 0, a);
    t0b_ = std::make_unique<FakeTransport>(hub_b_, 0, b);
    t1_ = std::make_unique<FakeTransport>(hub_a_, 1);
    t2_ = std::make_unique<FakeTransport>(hub_b_, 2);
    for (int r = 0; r < 3; ++r) {
      xc::EngineOptions eo;
      eo.my_rank = r;
      eo.fabric_size = 3;
      eo.spin = 20;
      eo.max_sleep_ms = max_sleep_ms;
      engines_.push_back(std::make_unique<P2pEngine>(eo));
    }
    ASSERT_OK(engine(0).set_routes({nullptr, t0a_.get(), t0b_.get()}));
    ASSERT_OK(engine(1).set_routes({t1_.get(), nullptr, nullptr}));
    ASSERT_OK(engine(2).set_routes({t2_.get(), nullptr, nullptr}));
  }

  P2pEngine &engine(int r) { return *engines_[static_cast<size_t>(r)]; }

 private:
  static FakeHubOptions hub_opts() {
    FakeHubOptions h;
    h.ranks = 3;
    return h;
  }

  FakeHub hub_a_, hub_b_;
  std::unique_ptr<FakeTransport> t0a_, t0b_, t1_, t2_;
  std::vector<std::unique_ptr<P2pEngine>> engines_;  // after the transports: destroyed before them
};

const char *wakeup_name(Wakeup w) { return w == Wakeup::kSelf ? "self" : "eventfd"; }

// Waits (yielding, with a deadline) until rank 0 sleeps in wait().
bool rank0_asleep(TwoNetworks &net) {
  Deadline dl = Deadline::AfterMs(kWaitMs);
  while (net.engine(0).sleep_counts().asleep == 0) {
    if (dl.expired()) return false;
    xc::cpu_yield();
  }
  return true;
}

double thread_cpu_ms() {
  rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

double process_cpu_ms() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

// ---- wake-ups ------------------------------------------------------------------------

// One transport sleeps by itself and the other offers an fd (the relay
// carries the fd's news to the first), or both offer fds (poll on both).
const Wakeup kMixes[][2] = {
    {Wakeup::kSelf, Wakeup::kEventFd},
    {Wakeup::kEventFd, Wakeup::kSelf},
    {Wakeup::kEventFd, Wakeup::kEventFd},
};

void frame_through_either_transport_wakes_the_sleeper(void **) {
  for (const auto &mix : kMixes) {
    TwoNetworks net(mix[0], mix[1], kLongSleepMs);
    for (int round = 0; round < 6; ++round) {
      int sender = 1 + round % 2;
      uint64_t got = 0, sent = 0x1234500 + static_cast<uint64_t>(round);
      Request r, s;
      r.ctx = s.ctx = kCtx;
      r.peer = sender;
      r.tag = s.tag = round;
      r.buf = &got;
      r.bytes = sizeof got;
      s.peer = 0;
      s.buf = &sent;
      s.bytes = sizeof sent;
      net.engine(0).post_recv(&r);
      Status st;
      std::thread waiter([&] { st = net.engine(0).wait(&r, Deadline::AfterMs(kWaitMs)); });
      bool asleep = rank0_asleep(net);
      SleepCounts before = net.engine(0).sleep_counts();
      net.engine(sender).post_send(&s);
      waiter.join();  // before any assert: a failing one would leave the thread running
      SleepCounts after = net.engine(0).sleep_counts();
      if (!st.ok() || after.timed_out != before.timed_out)
        print_error("%s + %s, frame from rank %d: %s; sleeps woken %llu -> %llu, timed out %llu -> %llu\n",
                    wakeup_name(mix[0]), wakeup_name(mix[1]), sender, st.message().c_str(),
                    static_cast<unsigned long long>(before.woken), static_cast<unsigned long long>(after.woken),
                    static_cast<unsigned long long>(before.timed_out), static_cast<unsigned long long>(after.timed_out));
      assert_true(asleep);
      ASSERT_OK(st);
      assert_true(s.done);
      assert_int_equal(got, sent);
      assert_true(after.woken > before.woken);  // the sleep it was in ended by the wake-up...
      assert_int_equal(after.timed_out, before.timed_out);  // ...not by its time running out
    }
  }
}

// abort_context from another thread wakes rank 0 asleep over both kinds.
void abort_wakes_the_sleeper(void **) {
  for (const auto &mix : kMixes) {
    TwoNetworks net(mix[0], mix[1], kLongSleepMs);
    uint64_t got = 0;
    Request r;
    r.ctx = kCtx;
    r.peer = 2;
    r.tag = 1;
    r.buf = &got;
    r.bytes = sizeof got;
    net.engine(0).post_recv(&r);
    Status st;
    std::thread waiter([&] { st = net.engine(0).wait(&r, Deadline::AfterMs(kWaitMs)); });
    bool asleep = rank0_asleep(net);
    SleepCounts before = net.engine(0).sleep_counts();
    net.engine(0).abort_context(kCtx, xc::Error(XC_ERR_ABORTED, "aborted by the test"));
    waiter.join();
    SleepCounts after = net.engine(0).sleep_counts();
    assert_true(asleep);
    assert_int_equal(static_cast<int>(st.code()), XC_ERR_ABORTED);
    assert_true(after.woken > before.woken);
    assert_int_equal(after.timed_out, before.timed_out);
  }
}

// Two threads of rank 0 wait at once, one for rank 1 and one for rank 2,
// whose messages come only while some thread of rank 0 sleeps: one
// thread's arm or progress must never swallow the other's wake-up (each
// sleep could last 10 s, and every wait gives up after 5).
void two_waiting_threads_lose_no_wakeup(void **) {
  constexpr int kRounds = 40;
  for (const auto &mix : kMixes) {
    TwoNetworks net(mix[0], mix[1], kLongSleepMs);
    std::atomic<int> failures{0};
    auto receive = [&](int from) {
      for (int k = 0; k < kRounds; ++k) {
        uint64_t got = 0;
        Request r;
        r.ctx = kCtx;
        r.peer = from;
        r.tag = k;
        r.buf = &got;
        r.bytes = sizeof got;
        net.engine(0).post_recv(&r);
        Status st = net.engine(0).wait(&r, Deadline::AfterMs(kWaitMs));
        if (!st.ok() || got != static_cast<uint64_t>(from * 1000 + k)) ++failures;
      }
    };
    auto send = [&](int me) {
      for (int k = 0; k < kRounds; ++k) {
        uint64_t v = static_cast<uint64_t>(me * 1000 + k);
        Request s;
        s.ctx = kCtx;
        s.peer = 0;
        s.tag = k;
        s.buf = &v;
        s.bytes = sizeof v;
        if (!rank0_asleep(net)) ++failures;
        net.engine(me).post_send(&s);  // eager: written at once, v may go
        if (!s.done) ++failures;
      }
    };
    std::thread w1(receive, 1), w2(receive, 2), s1(send, 1), s2(send, 2);
    w1.join();
    w2.join();
    s1.join();
    s2.join();
    SleepCounts c = net.engine(0).sleep_counts();
    if (failures.load() || c.timed_out)
      print_error("%s + %s: %d failures, sleeps woken %llu, timed out %llu\n", wakeup_name(mix[0]),
                  wakeup_name(mix[1]), failures.load(), static_cast<unsigned long long>(c.woken),
                  static_cast<unsigned long long>(c.timed_out));
    assert_int_equal(failures.load(), 0);
    assert_int_equal(c.timed_out, 0);
    assert_true(c.woken > 0);
  }
}

// The Sleeper alone, two sleeps of one engine driven from this thread in
// the order that once lost a wake-up: sleep A is announced; a frame
// arrives on an fd transport; sleep B's arm finds it (and empties the fd
// A is to sleep on) so B does not sleep; then A sleeps. A must return at
// once, woken, not after its 3 s.
void arm_that_finds_news_wakes_the_other_sleepers(void **) {
  for (const auto &mix : kMixes) {
    FakeHub hub_a(FakeHubOptions{}), hub_b(FakeHubOptions{});
    FakeTransport a0(hub_a, 0, mix[0]), a1(hub_a, 1), b0(hub_b, 0, mix[1]), b1(hub_b, 1);
    std::unique_ptr<xc::Sleeper> sleeper;
    ASSERT_OK(xc::Sleeper::create({&a0, &b0}, &sleeper));
    FakeTransport &news_from = mix[0] == Wakeup::kEventFd ? a1 : b1;
    xc::Sleeper::Ticket a = sleeper->prepare();
    xc::FrameHeader h{};
    h.kind = xc::kFrameEager;
    h.src = 1;
    assert_true(news_from.try_send(0, h, nullptr, 0));
    xc::Sleeper::Ticket b = sleeper->prepare();
    assert_true(b.busy);
    sleeper->sleep(b, 3000);
    sleeper->sleep(a, 3000);
    SleepCounts c = sleeper->counts();
    assert_int_equal(c.timed_out, 0);
    assert_int_equal(c.woken, 1);
  }
}

// Two transports that can only sleep by themselves: the engine cannot sleep
// on both, so it polls (transport.h allows one), and messages through either
// still arrive.
void two_self_sleepers_poll_and_deliver(void **) {
  TwoNetworks net(Wakeup::kSelf, Wakeup::kSelf, kLongSleepMs);
  for (int sender = 1; sender <= 2; ++sender) {
    uint64_t got = 0, sent = 77 + static_cast<uint64_t>(sender);
    Request r, s;
    r.ctx = s.ctx = kCtx;
    r.peer = sender;
    r.tag = s.tag = 5;
    r.buf = &got;
    r.bytes = sizeof got;
    s.peer = 0;
    s.buf = &sent;
    s.bytes = sizeof sent;
    net.engine(sender).post_send(&s);
    net.engine(0).post_recv(&r);
    ASSERT_OK(net.engine(0).wait(&r, Deadline::AfterMs(kWaitMs)));
    assert_int_equal(got, sent);
  }
  SleepCounts c = net.engine(0).sleep_counts();
  assert_int_equal(c.woken + c.timed_out, 0);
}

// ---- idle cost -------------------------------------------------------------------------

// A receive nobody answers, waited for 300 ms at the real sleep cap (50 ms):
// the waiting thread, and the process with its relay thread, use a few
// milliseconds of CPU where a busy loop uses the whole time. (How many
// sleeps ran out is shown, not checked: on a loaded machine the yielding
// before the first sleep can take most of the 300 ms, at little CPU.)
void idle_wait_over_two_transports_costs_no_cpu(void **) {
  constexpr int kIdleMs = 300;
  constexpr double kMaxIdleCpuMs = 30;
  double busy_ms = 0;
  std::thread busy([&] {
    double t0 = thread_cpu_ms();
    Deadline dl = Deadline::AfterMs(kIdleMs);
    while (!dl.expired()) xc::cpu_relax();
    busy_ms = thread_cpu_ms() - t0;
  });
  busy.join();
  for (const auto &mix : kMixes) {
    TwoNetworks net(mix[0], mix[1], xc::EngineOptions().max_sleep_ms);
    uint64_t got = 0;
    Request r;
    r.ctx = kCtx;
    r.peer = -1;
    r.tag = -1;
    r.buf = &got;
    r.bytes = sizeof got;
    net.engine(0).post_recv(&r);
    Status st;
    double waiter_ms = 0;
    double p0 = process_cpu_ms();
    std::thread waiter([&] {
      double t0 = thread_cpu_ms();
      st = net.engine(0).wait(&r, Deadline::AfterMs(kIdleMs));
      waiter_ms = thread_cpu_ms() - t0;
    });
    waiter.join();
    double process_ms = process_cpu_ms() - p0;
    SleepCounts c = net.engine(0).sleep_counts();
    print_message("%s + %s: idle %d ms wait used %.1f ms of CPU (process %.1f ms; a busy loop: %.1f ms), "
                  "%llu sleeps ran out\n",
                  wakeup_name(mix[0]), wakeup_name(mix[1]), kIdleMs, waiter_ms, process_ms, busy_ms,
                  static_cast<unsigned long long>(c.timed_out));
    assert_int_equal(static_cast<int>(st.code()), XC_ERR_TIMEOUT);
    assert_true(waiter_ms < kMaxIdleCpuMs);
    assert_true(process_ms < kMaxIdleCpuMs + 10);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(frame_through_either_transport_wakes_the_sleeper),
      cmocka_unit_test(abort_wakes_the_sleeper),
      cmocka_unit_test(two_waiting_threads_lose_no_wakeup),
      cmocka_unit_test(arm_that_finds_news_wakes_the_other_sleepers),
      cmocka_unit_test(two_self_sleepers_poll_and_deliver),
      cmocka_unit_test(idle_wait_over_two_transports_costs_no_cpu),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
