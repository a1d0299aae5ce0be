// Starting the ranks: fork, and in the child everything that must differ
// from xcrun before exec.

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "xcrun.h"

extern char **environ;

namespace xcrun {
namespace {

struct Pipe {
  int read_end = -1, write_end = -1;
};

bool make_pipe(Pipe *p) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  *p = {fds[0], fds[1]};
  return true;
}

void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Stdio of one rank: -1 means "inherit xcrun's".
struct Stdio {
  int in = -1, out = -1, err = -1;
};

// A message of a child on stderr in one write, so that the messages of
// ranks failing together do not mix. Async-signal-safe.
void write_message(const char *const *parts, size_t count) {
  char msg[1024];
  size_t len = 0;
  for (size_t i = 0; i < count; ++i)
    for (const char *c = parts[i]; *c && len < sizeof msg - 2; ++c) msg[len++] = *c;
  if (len == 0 || msg[len - 1] != '\n') msg[len++] = '\n';  // cut short: still one line
  ssize_t ignored = write(2, msg, len);
  (void)ignored;
}

// Runs in the child between fork and exec: async-signal-safe calls only
// (strerror too is safe here, as xcrun has a single thread).
[[noreturn]] void exec_rank(const Options &o, const Job &job, int rank, char **envp, const Stdio &stdio,
                            const ParentState &parent, const Placement &place) {
  setpgid(0, 0);  // a terminal's ^C reaches xcrun alone, which passes it on once
  // If xcrun dies without cleaning up (SIGKILL), take the rank with it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent.pid) _exit(kExecFailedExit);
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &parent.old_mask, nullptr);
  setrlimit(RLIMIT_NOFILE, &parent.old_nofile);
  if (stdio.in >= 0) dup2(stdio.in, 0);  // dup2 leaves the copy without close-on-exec
  if (stdio.out >= 0) dup2(stdio.out, 1);
  if (stdio.err >= 0) dup2(stdio.err, 2);
  if (rank == 0 && job.store_fd >= 0) fcntl(job.store_fd, F_SETFD, 0);  // node 0 only
  // Binding is a matter of speed: a rank that cannot be bound still runs.
  if (!place.mask.empty() &&
      sched_setaffinity(0, place.mask.size() * sizeof(unsigned long),
                        reinterpret_cast<const cpu_set_t *>(place.mask.data())) != 0) {
    const char *parts[] = {"xcrun: cannot bind a rank to its cpus: ", strerror(errno)};
    write_message(parts, 2);
  }
  environ = envp;  // execvp searches the PATH the rank will see
  execvp(o.argv[0], o.argv.data());
  int err = errno;
  const char *parts[] = {"xcrun: cannot run '", o.argv[0], "': ", strerror(err), "\n"};
  write_message(parts, sizeof parts / sizeof parts[0]);
  _exit(kExecFailedExit);
}

// Forks one rank. Returns false, with errno set, if it could not be started.
bool start_rank(const Options &o, const Job &job, const ParentState &parent, const std::vector<std::string> &common,
                const Placement &place, int rank, int stdin_fd, Rank *r) {
  std::vector<std::string> env = rank_env(common, o, job, rank, place);
  std::vector<char *> envp;
  for (std::string &kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  Stdio stdio;
  stdio.in = stdin_fd;
  Pipe out, err;
  if (o.tag_output) {
    if (!make_pipe(&out) || !make_pipe(&err)) {
      int e = errno;
      for (int *fd : {&out.read_end, &out.write_end, &err.read_end, &err.write_end}) close_fd(fd);
      errno = e;
      return false;
    }
    stdio.out = out.write_end;
    stdio.err = err.write_end;
  }
  fflush(nullptr);  // nothing buffered may be written twice
  pid_t pid = fork();
  if (pid == 0) exec_rank(o, job, rank, envp.data(), stdio, parent, place);
  int e = errno;
  close_fd(&out.write_end);  // the rank's ends; EOF comes when it is gone
  close_fd(&err.write_end);
  if (pid < 0) {
    close_fd(&out.read_end);
    close_fd(&err.read_end);
    errno = e;
    return false;
  }
  setpgid(pid, pid);  // also here, so the group exists before any kill(-pid)
  r->pid = pid;
  r->running = true;
  r->out = {out.read_end, 1, o.rank_base() + rank, {}, false};
  r->err = {err.read_end, 2, o.rank_base() + rank, {}, false};
  return true;
}

}  // namespace

// SIGUSR1/2 are only passed on (a program may use them to dump state); the
// others stop the job.
bool is_stop_signal(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT; }

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&set, sig);
  return set;
}

rlimit raise_fd_limit(int np, bool tag_output) {
  rlimit old{};
  getrlimit(RLIMIT_NOFILE, &old);
  rlim_t need = rlim_t(tag_output ? 2 * np : 0) + 64;
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < need) {
    rlimit raised = old;
    raised.rlim_cur = std::min(old.rlim_max, need);
    setrlimit(RLIMIT_NOFILE, &raised);
  }
  return old;
}

// Starts every rank. Returns how many started; after a failure the caller
// stops the ones already running.
int spawn_ranks(const Options &o, const Job &job, const ParentState &parent, const std::vector<Placement> &places,
                std::vector<Rank> *ranks) {
  std::vector<std::string> common = common_env(o);
  // Standard input is rank 0's only; with a terminal nobody gets it (see usage).
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) die(std::string("/dev/null: ") + strerror(errno));
  bool stdin_to_rank0 = !isatty(0);
  int rank = 0;
  for (; rank < o.np; ++rank) {
    int stdin_fd = (rank == 0 && stdin_to_rank0) ? -1 : devnull;
    if (!start_rank(o, job, parent, common, places[size_t(rank)], rank, stdin_fd, &(*ranks)[size_t(rank)])) {
      std::string why = strerror(errno);
      say("cannot start rank " + std::to_string(rank) + ": " + why +
          (rank > 0 ? "; stopping the " + plural(rank, "rank") + " already running" : ""));
      break;
    }
  }
  close(devnull);
  return rank;
}

}  // namespace xcrun
