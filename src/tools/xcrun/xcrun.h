// xcrun, the launcher: what its parts share. xcrun needs none of the
// library and includes nothing from it; see main.cc for the design.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xcrun {

constexpr int kMaxRanks = 4096;      // on one node
constexpr int kMaxWorld = 1 << 20;   // over all nodes
constexpr int kUsageExit = 2;
constexpr int kTimeoutExit = 124;
constexpr int kExecFailedExit = 127;

// Messages on stderr, each line starting with "xcrun: ".
void say(const std::string &text);
[[noreturn]] void die(const std::string &text);  // say, then exit 1
std::string plural(int n, const char *word);     // "1 rank", "3 ranks"

// options.cc

// --bind-to: which cpus each rank may run on (see place_ranks).
enum class BindTo { kDefault, kCore, kNuma, kNone };

struct Options {
  int np = 0;
  bool tag_output = false;
  BindTo bind_to = BindTo::kDefault;
  bool report_bindings = false;
  std::optional<double> timeout_s;
  double grace_s = 5.0;
  bool keep_going = false;  // a failed rank does not stop the others (fault-tolerant programs)
  std::vector<std::string> extra_env;  // VAR=VALUE
  std::vector<char *> argv;            // program and its arguments, null-terminated

  // One node of a job over several (--nnodes): 0 means this host's job alone.
  int nnodes = 0;
  int node_rank = 0;
  std::string rdzv;       // --rdzv as given, HOST:PORT ([v6]:PORT)
  std::string rdzv_host;  // without brackets
  uint16_t rdzv_port = 0;
  std::string job_id;     // --job-id; "" when not given
  // Global rank of this node's local rank 0 (every node runs np ranks).
  int rank_base() const { return nnodes > 0 ? node_rank * np : 0; }
  int world_size() const { return nnodes > 0 ? nnodes * np : np; }
};

// Parses the command line; exits 2 with the usage on a mistake, 0 after
// --help or --version.
Options parse_options(int argc, char **argv);

// Whether xcrun sets this variable itself (so -x may not, and the ranks do
// not inherit xcrun's own value).
bool is_managed_var(const std::string &name);

// job.cc

struct Job {
  std::string id;     // [A-Za-z0-9_-] only: it becomes part of /dev/shm names
  std::string token;  // shared secret of the bootstrap store
  int store_fd = -1;  // listening; close-on-exec everywhere but in rank 0; -1 on nodes other than 0
  std::string store_addr;  // XC_STORE_ADDR
  std::string master_addr;
  uint16_t port = 0;
  // MASTER_PORT: free when xcrun started and not bound by it, for the
  // TCPStore that torch.distributed's rank 0 serves (init_process_group
  // with env://); it cannot be `port`, which rank 0 already listens on.
  uint16_t master_port = 0;
};

// One node: a fresh job id and token, and the rendezvous socket bound and
// listening on 127.0.0.1. Several (o.nnodes): id and token derived from
// --rdzv and --job-id, so every node computes the same ones; node 0 binds
// the rendezvous port (nodes.cc).
Job make_job(const Options &o);
Job make_multinode_job(const Options &o);
// fd itself when above 2, else a close-on-exec copy above 2 (fd is closed):
// a socket handed to a rank must not collide with its stdio.
int above_stdio(int fd);

// The environment of every rank: xcrun's own minus the managed variables,
// then the -x assignments; rank_env adds the rank's own variables.
std::vector<std::string> common_env(const Options &o);

// Where one rank runs: its cpus, and the GPU and NIC nearest them.
struct Placement {
  std::vector<int> cpus;            // the rank's cpus (when unbound: all xcrun may use)
  std::vector<unsigned long> mask;  // cpus as a sched_setaffinity mask; empty: not bound
  std::string how;                  // "core", "NUMA node 1", "not bound" (for --report-bindings)
  int numa_node = -1;               // OS index of the rank's NUMA node, -1 unknown
  int gpu = -1;                     // XC_LOCAL_GPU; -1: no GPU, variable unset
  std::string nic;                  // XC_LOCAL_NIC; "": none, variable unset
  int host_cpus = 0;                // XC_LOCAL_CORES: the cpus xcrun may use; 0: unknown, unset
};

// Places every rank by o.bind_to on the cpus xcrun itself may use (its
// affinity), reading the machine from /sys and /proc.
std::vector<Placement> place_ranks(const Options &o);
// "0-3,8" for {0, 1, 2, 3, 8}.
std::string cpu_list_text(const std::vector<int> &cpus);

// local: the rank's index on this node; its global rank is o.rank_base() + local.
std::vector<std::string> rank_env(const std::vector<std::string> &common, const Options &o, const Job &job, int local,
                                  const Placement &place);

// spawn.cc

// Signals xcrun collects through its signalfd.
sigset_t handled_signals();
// Those that stop the job; the others are only passed on.
bool is_stop_signal(int sig);

// State a rank must not inherit from xcrun; it is restored in the child
// between fork and exec.
struct ParentState {
  sigset_t old_mask;
  rlimit old_nofile;
  pid_t pid;
};

// Output of one rank on one stream, re-emitted line by line with a prefix.
struct TaggedStream {
  int fd = -1;            // read end of the pipe; -1 once at EOF
  int dest = 1;           // xcrun's stdout or stderr
  int rank = 0;
  std::string pending;    // bytes of an unfinished line
  bool mid_line = false;  // a piece of a long line went out without its end
};

struct Rank {
  pid_t pid = -1;
  bool running = false;
  TaggedStream out, err;
};

// Raises the soft limit on open files so --tag-output can hold two pipes per
// rank at -n 4096; returns the old limit, which the ranks get back.
rlimit raise_fd_limit(int np, bool tag_output);

// Starts every rank into ranks (sized np). Returns how many started; after a
// failure, the ones already running must be stopped.
int spawn_ranks(const Options &o, const Job &job, const ParentState &parent, const std::vector<Placement> &places,
                std::vector<Rank> *ranks);

// supervise.cc

// Runs the poll loop until every rank has ended (or was given up on) and
// returns xcrun's exit status. launch_failed: not every rank could be
// started, so the job is stopped at once.
int supervise(const Options &o, std::vector<Rank> ranks, int sigfd, bool launch_failed);

}  // namespace xcrun
