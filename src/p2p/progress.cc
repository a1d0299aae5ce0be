// Driving the transports (one progress pass) and waiting for a request:
// spin, yield, then sleep until a transport has news.
#include <chrono>
#include <thread>

#include "base/backoff.h"
#include "p2p/engine.h"

namespace xc {

namespace {

constexpr int kYieldPolls = 2000;

}  // namespace

bool P2pEngine::progress_locked() {
  if (in_poll_) return false;
  in_poll_ = true;
  size_t events = 0;
  for (Transport *t : transports_) events += t->poll(*this);
  for (size_t i = 0; i < busy_peers_.size();) {
    int peer = busy_peers_[i];
    PeerState &ps = peers_[static_cast<size_t>(peer)];
    if (flush_peer(peer, ps)) ++events;
    if (ps.outbox.empty() && ps.streaming.empty()) {
      busy_flag_[static_cast<size_t>(peer)] = 0;
      busy_peers_[i] = busy_peers_.back();
      busy_peers_.pop_back();
    } else {
      ++i;
    }
  }
  in_poll_ = false;
  return events > 0;
}

bool P2pEngine::anything_pending_locked() const {
  return !posted_.empty() || !sends_waiting_.empty() || !recvs_streaming_.empty() || !busy_peers_.empty();
}

void P2pEngine::wake_waiters_locked() {
  if (sleeper_) sleeper_->wake();
}

void P2pEngine::progress() {
  auto guard = lock();
  progress_locked();
}

bool P2pEngine::test(Request *req) {
  auto guard = lock();
  if (!req->done) {
    progress_locked();
    check_peers_locked();
  }
  return req->done;
}

Status P2pEngine::wait(Request *req, Deadline deadline) {
  // Spin, then poll with sched_yield, then sleep until a transport has news.
  // Yielding costs little when the core is ours alone, and when ranks
  // outnumber cores (spin is short then) it hands the core to the peer we
  // wait for instead of sleeping through its reply and paying for a wake.
  Backoff backoff(opts_.spin, kYieldPolls);
  for (;;) {
    auto guard = lock();
    if (req->done) return req->status;
    bool moved = progress_locked();
    if (req->done) return req->status;
    check_peers_locked();
    if (req->done) return req->status;
    if (deadline.expired() && !req->cancelled) {
      cancel_locked(req, Error(XC_ERR_TIMEOUT, "timed out"));
      if (req->done) return req->status;  // else a reader holds the buffer until FIN
    }
    if (moved) backoff.reset();
    Backoff::Step step = backoff.next();
    if (step != Backoff::Step::kSleep) {
      guard = std::unique_lock<std::mutex>();
      if (step == Backoff::Step::kSpin)
        cpu_relax();
      else
        cpu_yield();
      continue;
    }
    int sleep_ms = deadline.remaining_ms(opts_.max_sleep_ms);
    if (!sleeper_) {
      // Only self-messages exist: another thread's send completes us.
      if (opts_.thread_safe)
        done_cv_.wait_for(guard, std::chrono::milliseconds(sleep_ms));
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      continue;
    }
    Sleeper::Ticket ticket = sleeper_->prepare();
    moved = progress_locked();  // news that came before the announcement
    if (req->done || moved) sleep_ms = 0;
    guard = std::unique_lock<std::mutex>();
    sleeper_->sleep(ticket, sleep_ms);
    backoff.slept();  // after a sleep, spin and yield a little before sleeping again
  }
}

Status P2pEngine::wait_all(Request *const *reqs, size_t n, Deadline deadline) {
  Status first;
  for (size_t i = 0; i < n; ++i) {
    if (!reqs[i]) continue;
    Status st = wait(reqs[i], deadline);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace xc
