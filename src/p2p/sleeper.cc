#include "p2p/sleeper.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

#include "base/log.h"

namespace xc {

namespace {

Status open_eventfd(int *out) {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return SystemError(errno, "eventfd for waking sleepers");
  *out = fd;
  return Status::Ok();
}

void signal_eventfd(int fd) {
  uint64_t one = 1;
  while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {
  }  // EAGAIN: the counter is full, and the fd readable anyway
}

void drain_eventfd(int fd) {
  uint64_t count;
  while (read(fd, &count, sizeof count) < 0 && errno == EINTR) {
  }  // EAGAIN: it was empty
}

}  // namespace

// Rings the self-sleeper's bell when an fd transport has news while the
// engine sleeps on that bell.
class Sleeper::Relay {
 public:
  static Status start(Transport *self, std::vector<int> fds, std::unique_ptr<Relay> *out) {
    std::unique_ptr<Relay> r(new Relay(self, std::move(fds)));
    XC_TRY(open_eventfd(&r->control_fd_));
    try {
      r->thread_ = std::thread(&Relay::run, r.get());
    } catch (const std::system_error &e) {
      return Error(XC_ERR_SYSTEM, "cannot start the wake-up relay thread: %s", e.what());
    }
    *out = std::move(r);
    return Status::Ok();
  }

  ~Relay() {
    if (thread_.joinable()) {
      stop_.store(true);
      signal_eventfd(control_fd_);
      thread_.join();
    }
    if (control_fd_ >= 0) close(control_fd_);
  }

  // The engine is about to sleep (it has announced it): watch the fds until
  // one turns readable. Costs a write only when the relay fired since.
  void arm() {
    if (!armed_.exchange(true)) signal_eventfd(control_fd_);
  }

 private:
  Relay(Transport *self, std::vector<int> fds) : self_(self), fds_(std::move(fds)) {}

  void run() {
    std::vector<pollfd> watch;
    for (;;) {
      bool armed = armed_.load();
      watch.assign(1, pollfd{control_fd_, POLLIN, 0});
      if (armed)
        for (int fd : fds_) watch.push_back(pollfd{fd, POLLIN, 0});
      // No time limit: arm() and the destructor reach it through control_fd_.
      int n = ::poll(watch.data(), watch.size(), -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        XC_WARN("the wake-up relay stops (poll: %s): news on fd transports now wakes a sleeping rank only "
                "when its sleep ends", strerror(errno));
        return;
      }
      if (watch[0].revents) {
        drain_eventfd(control_fd_);
        if (stop_.load()) return;
      }
      for (size_t i = 1; i < watch.size(); ++i) {
        if (!watch[i].revents) continue;
        // Disarm before ringing: an engine that arms after this finds the
        // relay disarmed and signals it; one that armed before announced its
        // sleep before, so this ring reaches it. No wake-up is lost, and the
        // relay does not spin on an fd the engine has not drained yet.
        armed_.store(false);
        self_->wake_self();
        break;
      }
    }
  }

  Transport *self_;
  std::vector<int> fds_;
  int control_fd_ = -1;
  std::atomic<bool> armed_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

Status Sleeper::create(const std::vector<Transport *> &transports, std::unique_ptr<Sleeper> *out) {
  std::unique_ptr<Sleeper> s(new Sleeper());
  int self_sleepers = 0;
  std::vector<int> fds;
  for (Transport *t : transports) {
    int fd = t->event_fd();
    if (fd >= 0) {
      s->fd_transports_.push_back(t);
      fds.push_back(fd);
    } else {
      ++self_sleepers;
      s->self_ = t;
    }
  }
  if (self_sleepers > 1) {
    XC_WARN("%d transports can only sleep by themselves: this rank polls instead of sleeping", self_sleepers);
    s->mode_ = Mode::kPollOnly;
  } else if (self_sleepers == 1 && fds.empty()) {
    s->mode_ = Mode::kSelf;
  } else if (self_sleepers == 0) {
    s->mode_ = Mode::kFds;
    XC_TRY(open_eventfd(&s->wake_fd_));
  } else {
    s->mode_ = Mode::kSelfAndRelay;
    XC_TRY(Relay::start(s->self_, std::move(fds), &s->relay_));
  }
  *out = std::move(s);
  return Status::Ok();
}

Sleeper::~Sleeper() {
  relay_.reset();
  if (wake_fd_ >= 0) close(wake_fd_);
}

Sleeper::Ticket Sleeper::prepare() {
  Ticket t;
  for (Transport *f : fd_transports_)
    if (!f->arm()) t.busy = true;
  switch (mode_) {
    case Mode::kSelf:
      t.token = self_->prepare_wait();
      break;
    case Mode::kSelfAndRelay:
      t.token = self_->prepare_wait();
      relay_->arm();  // after the announcement, so the relay's ring reaches this sleep
      break;
    case Mode::kFds: {
      std::lock_guard<std::mutex> g(fd_sleepers_mu_);
      if (fd_sleepers_++ == 0) drain_eventfd(wake_fd_);  // wake-ups of earlier sleeps, all delivered
      break;
    }
    case Mode::kPollOnly:
      break;
  }
  // The arm that found news may have emptied an fd another thread of this
  // engine is about to sleep on: let every sleeper look again.
  if (t.busy) wake();
  return t;
}

bool Sleeper::poll_fds(int max_ms) {
  std::vector<pollfd> watch;
  for (Transport *f : fd_transports_) watch.push_back(pollfd{f->event_fd(), POLLIN, 0});
  watch.push_back(pollfd{wake_fd_, POLLIN, 0});
  return ::poll(watch.data(), watch.size(), max_ms) != 0;  // -1 (EINTR): ended early too
}

void Sleeper::sleep(const Ticket &ticket, int max_ms) {
  int ms = ticket.busy || mode_ == Mode::kPollOnly ? 0 : max_ms;
  if (ms > 0) asleep_.fetch_add(1);
  bool woken = true;
  switch (mode_) {
    case Mode::kSelf:
    case Mode::kSelfAndRelay:
      woken = self_->finish_wait(ticket.token, ms);  // also ends what prepare_wait began when ms is 0
      break;
    case Mode::kFds: {
      if (ms > 0) woken = poll_fds(ms);
      std::lock_guard<std::mutex> g(fd_sleepers_mu_);
      --fd_sleepers_;
      break;
    }
    case Mode::kPollOnly:
      break;
  }
  if (ms <= 0) return;
  asleep_.fetch_sub(1);
  (woken ? woken_ : timed_out_).fetch_add(1);
}

void Sleeper::wake() {
  switch (mode_) {
    case Mode::kSelf:
    case Mode::kSelfAndRelay:
      self_->wake_self();
      break;
    case Mode::kFds:
      signal_eventfd(wake_fd_);
      break;
    case Mode::kPollOnly:
      break;
  }
}

SleepCounts Sleeper::counts() const {
  SleepCounts c;
  c.asleep = asleep_.load();
  c.woken = woken_.load();
  c.timed_out = timed_out_.load();
  return c;
}

}  // namespace xc
