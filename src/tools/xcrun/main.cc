// xcrun: starts N ranks of a program on this host and supervises them, like
// mpirun or torchrun. It needs none of the library: it hands every rank its
// place in the job through the environment and, to rank 0 only, a listening
// socket on which the library serves the bootstrap store. Binding the socket
// here and passing it down (rather than passing a port number for rank 0 to
// bind later) means no other process can take the port in between.
//
// One poll loop does all the supervision: a signalfd delivers SIGCHLD and the
// signals to forward, and with --tag-output the ranks' output pipes are read
// there too. Every wait in it has a deadline, so xcrun always ends.
//
// The parts: options.cc (command line), job.cc (job id, token, socket,
// placement of the ranks on cpus, GPUs and NICs, environment), spawn.cc
// (fork, binding and exec), supervise.cc (the loop); this file puts them in
// order.

#include <dirent.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "xcrun.h"

namespace xcrun {

void say(const std::string &text) {
  std::string line = "xcrun: " + text + "\n";
  fputs(line.c_str(), stderr);
}

std::string plural(int n, const char *word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

[[noreturn]] void die(const std::string &text) {
  say(text);
  exit(1);
}

namespace {

// The library names its shared-memory segments /dev/shm/xcomm-<job>-* and
// unlinks them itself; a crashed rank cannot, so xcrun sweeps after it.
// Nodes of one job (--nnodes) share the job id; where they also share
// /dev/shm (network namespaces on one machine, tests/multihost) a node that
// ends first could sweep another's files, but only those of a start-up
// still under way: the library unlinks each name once its peers attached.
void remove_shm_leftovers(const std::string &job_id) {
  DIR *dir = opendir("/dev/shm");
  if (!dir) return;
  std::string prefix = "xcomm-" + job_id + "-";
  int removed = 0;
  while (dirent *e = readdir(dir))
    if (strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0 && unlinkat(dirfd(dir), e->d_name, 0) == 0)
      ++removed;
  closedir(dir);
  if (removed > 0) say("removed " + plural(removed, "leftover shared-memory file") + " of job " + job_id);
}

// --report-bindings: one line per rank, "rank 0: cpus 0-3 (core on NUMA
// node 0); GPU 0; NIC mlx5_0".
void report_bindings(const std::vector<Placement> &places, int base) {
  for (size_t r = 0; r < places.size(); ++r) {
    const Placement &p = places[r];
    say("rank " + std::to_string(base + int(r)) + ": cpus " + cpu_list_text(p.cpus) + " (" + p.how + "); GPU " +
        (p.gpu >= 0 ? std::to_string(p.gpu) : "none") + "; NIC " + (p.nic.empty() ? "none" : p.nic));
  }
}

int run(int argc, char **argv) {
  Options opts = parse_options(argc, argv);

  // Block the signals before the first fork so that none is lost: they wait
  // in the signalfd until the loop reads them. SIGPIPE is ignored so that a
  // closed stdout shows up as EPIPE in write_all, not as xcrun's death.
  ParentState parent{};
  parent.pid = getpid();
  sigset_t handled = handled_signals();
  if (sigprocmask(SIG_BLOCK, &handled, &parent.old_mask) != 0) die(std::string("sigprocmask: ") + strerror(errno));
  int sigfd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) die(std::string("signalfd: ") + strerror(errno));
  signal(SIGPIPE, SIG_IGN);
  parent.old_nofile = raise_fd_limit(opts.np, opts.tag_output);

  std::vector<Placement> places = place_ranks(opts);
  if (opts.report_bindings) report_bindings(places, opts.rank_base());
  Job job = make_job(opts);
  std::vector<Rank> ranks(size_t(opts.np));
  int started = spawn_ranks(opts, job, parent, places, &ranks);
  if (job.store_fd >= 0) close(job.store_fd);  // rank 0 has its own copy; nobody else may hold it
  ranks.resize(size_t(started));

  int code = supervise(opts, std::move(ranks), sigfd, started < opts.np);
  remove_shm_leftovers(job.id);
  return code;
}

}  // namespace
}  // namespace xcrun

int main(int argc, char **argv) { return xcrun::run(argc, argv); }
