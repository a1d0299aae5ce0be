// Supervision: one poll loop over a signalfd (SIGCHLD and the signals to
// pass on) and, with --tag-output, the ranks' output pipes. Every wait in it
// has a deadline, so xcrun always ends.

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "xcrun.h"

namespace xcrun {
namespace {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

constexpr size_t kMaxPendingLine = 64 * 1024;  // longer lines are passed on in pieces
constexpr auto kDrainAfterExit = std::chrono::seconds(1);
constexpr auto kReapAfterKill = std::chrono::seconds(10);
// A rank that exits with an error is held this long before it is called the
// job's failure: a survivor that saw a peer die may exit, and be reaped,
// before the peer that was SIGKILLed (2 of 58 chaos runs blamed such a
// survivor and never mentioned the SIGKILL). A rank killed by a signal is
// the verdict at once.
constexpr auto kVerdictWindow = std::chrono::milliseconds(250);
// After a rank fails, the others usually fail too a moment later (xcomm
// notices the dead peer) and print why: a Python traceback, a last message.
// SIGTERM ends most programs at once (Python has no handler for it), cutting
// that off, so the others get this long, or the grace period if shorter, to
// end on their own before it is sent.
constexpr auto kSettleAfterFailure = std::chrono::milliseconds(1000);
// What is read from a stream after xcrun stops waiting on it, at most.
constexpr size_t kFinalDrainBytes = 4 * 1024 * 1024;

// Writes all of data; a slow reader of xcrun's output holds up the loop, as
// it would hold up the ranks themselves without --tag-output.
void write_all(int fd, const std::string &data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = write(fd, data.data() + done, data.size() - done);
    if (w > 0) {
      done += size_t(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else if (w < 0 && errno == EAGAIN) {
      pollfd p = {fd, POLLOUT, 0};
      poll(&p, 1, 1000);
    } else {
      return;  // EPIPE and the like: nobody reads our output any more
    }
  }
}

// A rank's failure not yet given as the job's (see kVerdictWindow).
struct Failure {
  int rank;
  int status;  // as waitpid gave it
};

class Supervisor {
 public:
  Supervisor(const Options &o, std::vector<Rank> ranks, int sigfd)
      : opts_(o), ranks_(std::move(ranks)), sigfd_(sigfd) {
    for (const Rank &r : ranks_) {
      if (r.running) {
        ++running_;
        by_pid_[r.pid] = int(&r - ranks_.data());
      }
    }
    if (opts_.timeout_s) job_deadline_ = Clock::now() + to_duration(*opts_.timeout_s);
  }

  // Some rank could not be started: the job fails as if that rank had.
  void launch_failed() { stop(SIGTERM, 1); }

  int run() {
    while (running_ > 0 || open_streams() > 0) {
      Clock::time_point now = Clock::now();
      if (!check_deadlines(now)) break;
      poll_once(now);
    }
    for (Rank &r : ranks_) {
      finish_stream(r.out);
      finish_stream(r.err);
    }
    if (!kept_failures_.empty()) summarize_kept_failures();
    return exit_code_;
  }

 private:
  static Clock::duration to_duration(double s) {
    return std::chrono::duration_cast<Clock::duration>(Seconds(s));
  }

  int rank_of(const Rank &r) const { return int(&r - ranks_.data()); }
  // The rank as the job knows it, for messages (rank_of is this node's index).
  int global_rank(int local) const { return opts_.rank_base() + local; }

  int open_streams() const {
    int n = 0;
    for (const Rank &r : ranks_) n += (r.out.fd >= 0) + (r.err.fd >= 0);
    return n;
  }

  static bool passed(std::optional<Clock::time_point> *deadline, Clock::time_point now) {
    if (!*deadline || now < **deadline) return false;
    deadline->reset();  // each deadline acts once, and must not keep waking poll
    return true;
  }

  // Acts on every deadline that has passed. Returns false when xcrun must
  // stop waiting altogether.
  bool check_deadlines(Clock::time_point now) {
    if (passed(&verdict_deadline_, now) && !stopping_ && !failures_.empty()) give_verdict();
    if (passed(&job_deadline_, now) && !stopping_ && running_ > 0) {
      say("job timed out after " + format_seconds(*opts_.timeout_s) + " s; stopping the " +
          plural(running_, "rank"));
      stop(SIGTERM, kTimeoutExit);
    }
    if (passed(&term_deadline_, now) && running_ > 0) stop(SIGTERM, exit_code_);
    if (passed(&kill_deadline_, now) && running_ > 0) {
      signal_running(SIGKILL);
      give_up_deadline_ = now + kReapAfterKill;
    }
    if (passed(&give_up_deadline_, now) && running_ > 0) {
      for (const Rank &r : ranks_)
        if (r.running)
          say("rank " + std::to_string(global_rank(rank_of(r))) + " (pid " + std::to_string(r.pid) +
              ") did not exit after SIGKILL; giving up on it");
      return false;
    }
    // Once every rank is gone, its output is drained for a bounded time: a
    // grandchild it left behind may hold the pipe open indefinitely.
    if (running_ == 0 && !drain_deadline_) drain_deadline_ = now + kDrainAfterExit;
    return !passed(&drain_deadline_, now);
  }

  int poll_timeout_ms(Clock::time_point now) const {
    std::optional<Clock::time_point> next;
    for (const auto &d : {job_deadline_, term_deadline_, kill_deadline_, give_up_deadline_, drain_deadline_,
                          verdict_deadline_})
      if (d && (!next || *d < *next)) next = d;
    if (!next) return -1;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
    return int(std::clamp<decltype(ms)>(ms, 0, 60 * 60 * 1000));
  }

  void poll_once(Clock::time_point now) {
    std::vector<pollfd> fds;
    std::vector<TaggedStream *> streams;
    fds.push_back({sigfd_, POLLIN, 0});
    for (Rank &r : ranks_) {
      for (TaggedStream *s : {&r.out, &r.err}) {
        if (s->fd < 0) continue;
        fds.push_back({s->fd, POLLIN, 0});
        streams.push_back(s);
      }
    }
    int n = poll(fds.data(), fds.size(), poll_timeout_ms(now));
    if (n < 0) {
      if (errno == EINTR) return;
      die(std::string("poll: ") + strerror(errno));
    }
    if (fds[0].revents) read_signals();
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents) pump(*streams[i - 1]);
  }

  void read_signals() {
    signalfd_siginfo info;
    while (read(sigfd_, &info, sizeof info) == ssize_t(sizeof info)) {
      int sig = int(info.ssi_signo);
      if (sig == SIGCHLD) {
        reap();
      } else if (is_stop_signal(sig)) {
        on_stop_signal(sig);
      } else {
        signal_running(sig);
      }
    }
  }

  void on_stop_signal(int sig) {
    if (term_deadline_) {
      // A rank failed and the others were left to end on their own: the
      // user wants them stopped now (the failed rank's status stays).
      say(std::string("got ") + sigabbrev(sig) + "; passing it on to the " + plural(running_, "rank"));
      term_deadline_.reset();
      stop(sig, exit_code_);
      return;
    }
    if (stopping_) {
      // A second ^C: the user does not want to wait for the grace period.
      say(std::string("got ") + sigabbrev(sig) + " again; killing the " + plural(running_, "rank"));
      kill_deadline_ = Clock::now();
      return;
    }
    say(std::string("got ") + sigabbrev(sig) + "; passing it on to the " + plural(running_, "rank"));
    stop(sig, 128 + sig);
  }

  static std::string sigabbrev(int sig) {
    switch (sig) {
      case SIGINT: return "SIGINT";
      case SIGTERM: return "SIGTERM";
      case SIGHUP: return "SIGHUP";
      case SIGQUIT: return "SIGQUIT";
      default: return "signal " + std::to_string(sig);
    }
  }

  static std::string format_seconds(double s) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", s);
    return buf;
  }

  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      auto it = by_pid_.find(pid);
      if (it == by_pid_.end()) continue;
      Rank &r = ranks_[size_t(it->second)];
      r.running = false;
      --running_;
      bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && !stopping_ && opts_.keep_going)
        on_rank_failed_keep_going(r, status);
      else if (!ok && !stopping_)
        on_rank_failed(r, status);
    }
  }

  // --keep-going: the failure is said now, and the others run on.
  void on_rank_failed_keep_going(const Rank &r, int status) {
    kept_failures_.push_back({rank_of(r), status});
    std::string what = "rank " + std::to_string(global_rank(rank_of(r))) + " (pid " + std::to_string(r.pid) + ") " +
                       how_it_ended(status);
    if (running_ > 0) what += "; the other " + plural(running_, "rank") + " keep going (--keep-going)";
    say(what);
  }

  // At the end of a --keep-going job: every rank that failed, and the exit
  // status of the first killed by a signal, else of the first that failed
  // (unless xcrun already had a reason of its own: a timeout, a signal).
  void summarize_kept_failures() {
    std::string list;
    for (const Failure &f : kept_failures_)
      list += (list.empty() ? "" : ", ") + std::string("rank ") + std::to_string(global_rank(f.rank)) + " (" +
              (WIFSIGNALED(f.status) ? "signal " + std::to_string(WTERMSIG(f.status))
                                     : "exit status " + std::to_string(WEXITSTATUS(f.status))) + ")";
    say(plural(int(kept_failures_.size()), "rank") + " failed: " + list);
    if (exit_code_ != 0) return;
    auto first = std::find_if(kept_failures_.begin(), kept_failures_.end(),
                              [](const Failure &f) { return WIFSIGNALED(f.status); });
    if (first == kept_failures_.end()) first = kept_failures_.begin();
    exit_code_ = WIFSIGNALED(first->status) ? 128 + WTERMSIG(first->status) : WEXITSTATUS(first->status);
  }

  static std::string how_it_ended(int status) {
    if (!WIFSIGNALED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    int sig = WTERMSIG(status);
    std::string what = "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    if (WCOREDUMP(status)) what += ", core dumped";
    return what;
  }

  void on_rank_failed(const Rank &r, int status) {
    failures_.push_back({rank_of(r), status});
    if (WIFSIGNALED(status) || running_ == 0)
      give_verdict();
    else if (!verdict_deadline_)
      verdict_deadline_ = Clock::now() + kVerdictWindow;
  }

  // Names the job's failure: the first rank killed by a signal, else the
  // first that exited with an error; the others are mentioned after it.
  void give_verdict() {
    verdict_deadline_.reset();
    auto first = std::find_if(failures_.begin(), failures_.end(), [](const Failure &f) { return WIFSIGNALED(f.status); });
    if (first == failures_.end()) first = failures_.begin();
    int code = describe_failure(*first);
    for (const Failure &f : failures_)
      if (&f != &*first)
        say("rank " + std::to_string(global_rank(f.rank)) + " (pid " + std::to_string(ranks_[size_t(f.rank)].pid) +
            ") also ended, " + (WIFSIGNALED(f.status) ? "by signal " + std::to_string(WTERMSIG(f.status))
                                                       : "with exit status " + std::to_string(WEXITSTATUS(f.status))));
    failures_.clear();
    // SIGTERM after the settling time: nothing is sent before it, so a rank
    // that is printing why it failed too ends its output itself.
    stopping_ = true;
    exit_code_ = code;
    auto settle = std::min<Clock::duration>(kSettleAfterFailure, to_duration(opts_.grace_s));
    term_deadline_ = Clock::now() + settle;
  }

  int describe_failure(const Failure &f) {
    const Rank &r = ranks_[size_t(f.rank)];
    int status = f.status;
    std::string what = "rank " + std::to_string(global_rank(f.rank)) + " (pid " + std::to_string(r.pid) + ") ";
    int code;
    if (WIFSIGNALED(status)) {
      int sig = WTERMSIG(status);
      what += "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
      if (WCOREDUMP(status)) what += ", core dumped";
      code = 128 + sig;
    } else {
      code = WEXITSTATUS(status);
      what += "exited with status " + std::to_string(code);
    }
    if (running_ > 0) what += "; stopping the other " + plural(running_, "rank");
    say(what);
    return code;
  }

  // Sends sig to every running rank's process group and arms the SIGKILL
  // that follows after the grace period. The first cause sets the exit code.
  void stop(int sig, int code) {
    term_deadline_.reset();
    stopping_ = true;
    exit_code_ = code;
    signal_running(sig);
    kill_deadline_ = Clock::now() + to_duration(opts_.grace_s);
  }

  void signal_running(int sig) {
    for (const Rank &r : ranks_) {
      if (!r.running) continue;
      // The whole group, so helpers the rank started go too; the pid alone
      // if the group is already gone.
      if (kill(-r.pid, sig) != 0) kill(r.pid, sig);
    }
  }

  // Appends data, which holds whole lines (or a piece of an overlong one), to
  // out with the rank's prefix at the start of each line.
  static void tag(TaggedStream &s, const char *data, size_t n, std::string *out) {
    std::string prefix = "[" + std::to_string(s.rank) + "] ";
    size_t i = 0;
    while (i < n) {
      if (!s.mid_line) *out += prefix;
      const char *nl = static_cast<const char *>(memchr(data + i, '\n', n - i));
      size_t end = nl ? size_t(nl - data) + 1 : n;
      out->append(data + i, end - i);
      s.mid_line = !nl;
      i = end;
    }
  }

  // Reads what is there and writes out every completed line in one write, so
  // lines of different ranks do not interleave mid-line.
  void pump(TaggedStream &s) {
    char buf[65536];
    ssize_t n = read(s.fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      finish_stream(s);
      return;
    }
    s.pending.append(buf, size_t(n));
    size_t last_nl = s.pending.rfind('\n');
    size_t take = last_nl == std::string::npos ? 0 : last_nl + 1;
    if (take == 0 && s.pending.size() >= kMaxPendingLine) take = s.pending.size();
    if (take == 0) return;
    std::string out;
    tag(s, s.pending.data(), take, &out);
    s.pending.erase(0, take);
    write_all(s.dest, out);
  }

  // EOF (or giving up): the unfinished last line goes out with a newline, so
  // the next line of another rank starts on its own line.
  static void finish_stream(TaggedStream &s) {
    if (s.fd < 0) return;
    // What is still in the pipe (xcrun stopped waiting, or a grandchild keeps
    // it open): read it without blocking, up to a bound, so the last lines
    // a rank wrote are not dropped.
    int flags = fcntl(s.fd, F_GETFL);
    if (flags >= 0 && fcntl(s.fd, F_SETFL, flags | O_NONBLOCK) == 0) {
      char buf[65536];
      size_t total = 0;
      while (total < kFinalDrainBytes) {
        ssize_t n = read(s.fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        s.pending.append(buf, size_t(n));
        total += size_t(n);
      }
    }
    close(s.fd);
    s.fd = -1;
    std::string out;
    tag(s, s.pending.data(), s.pending.size(), &out);
    s.pending.clear();
    if (s.mid_line) out += '\n';
    s.mid_line = false;
    write_all(s.dest, out);
  }

  const Options &opts_;
  std::vector<Rank> ranks_;
  int sigfd_;
  std::unordered_map<pid_t, int> by_pid_;
  int running_ = 0;
  bool stopping_ = false;
  std::vector<Failure> failures_;  // not yet the verdict (within kVerdictWindow)
  std::vector<Failure> kept_failures_;  // --keep-going: every rank that failed, in order
  int exit_code_ = 0;
  std::optional<Clock::time_point> job_deadline_, term_deadline_, kill_deadline_, give_up_deadline_,
      drain_deadline_, verdict_deadline_;
};

}  // namespace

int supervise(const Options &o, std::vector<Rank> ranks, int sigfd, bool launch_failed) {
  Supervisor supervisor(o, std::move(ranks), sigfd);
  if (launch_failed) supervisor.launch_failed();
  return supervisor.run();
}

}  // namespace xcrun
