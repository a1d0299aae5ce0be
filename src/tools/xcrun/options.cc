// Command line of xcrun: parsing and the usage text.

#include <getopt.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "xcomm_build_config.h"  // XC_VERSION_STRING only
#include "xcrun.h"

namespace xcrun {
namespace {

// Variables xcrun sets itself: stripped from what the ranks inherit (a nested
// xcrun must not leak its own job into the inner one) and refused with -x.
const char *const kManagedVars[] = {
    "XC_RANK",       "XC_SIZE",    "XC_LOCAL_RANK", "XC_LOCAL_SIZE",    "XC_STORE_ADDR",
    "XC_STORE_TOKEN", "XC_STORE_FD", "XC_JOB_ID",   "RANK",             "WORLD_SIZE",
    "LOCAL_RANK",    "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "XC_LOCAL_GPU", "XC_LOCAL_NIC",
    "XC_NNODES",     "XC_NODE_RANK", "XC_LOCAL_CORES",
};

const char kUsage[] =
    "usage: xcrun -n N [options] [--] program [args...]\n"
    "       xcrun --nnodes M --node-rank K --rdzv HOST:PORT -n N [options] [--] program [args...]\n"
    "Starts N ranks of program on this host and stops them all when one fails.\n"
    "\n"
    "  -n, --np N             number of ranks on this host, 1..4096 (required)\n"
    "  -x, --env VAR=VALUE    set VAR in the environment of every rank (repeatable)\n"
    "      --tag-output       prefix every line the ranks print with \"[rank] \"\n"
    "      --timeout SECONDS  stop the job after this wall time and exit 124\n"
    "      --grace SECONDS    time the ranks get after SIGTERM before SIGKILL (default 5)\n"
    "      --keep-going       when a rank fails, let the others run on (programs that\n"
    "                         survive a failure: xc_comm_shrink); each failure is\n"
    "                         reported when it happens and again at the end\n"
    "      --bind-to WHAT     core, numa or none: the cpus each rank may run on (default:\n"
    "                         core when every NUMA node has a core for each of its ranks,\n"
    "                         else none)\n"
    "      --report-bindings  print each rank's cpus, GPU and NIC on stderr\n"
    "      --nnodes M         the job spans M hosts: run xcrun on each with the same\n"
    "                         --nnodes, --rdzv, --job-id and -n (every node runs N ranks)\n"
    "      --node-rank K      this host's place, 0..M-1: its ranks are K*N .. K*N+N-1\n"
    "      --rdzv HOST:PORT   where rank 0 (on node 0, which must be HOST) serves the\n"
    "                         bootstrap store; [IPv6]:PORT; PORT+1 is MASTER_PORT\n"
    "      --job-id ID        tells apart jobs that reuse one --rdzv (default: none)\n"
    "  -h, --help             print this help\n"
    "      --version          print the version\n"
    "\n"
    "Each rank gets XC_RANK, XC_SIZE, XC_LOCAL_RANK, XC_LOCAL_SIZE, XC_STORE_ADDR,\n"
    "XC_STORE_TOKEN and XC_JOB_ID, and RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
    "MASTER_ADDR and MASTER_PORT as torchrun sets them (MASTER_PORT: a free port, not\n"
    "xcrun's store, for the program's own server such as torch's TCPStore). XC_LOCAL_GPU\n"
    "is the local rank modulo the number of GPUs (unset without GPUs), XC_LOCAL_NIC a\n"
    "network device on the rank's NUMA node, XC_LOCAL_CORES the number of cpus xcrun may\n"
    "use (the ranks' share of this host). SIGINT and SIGTERM are passed on to the\n"
    "ranks; a second one kills them at once. Standard input goes to rank 0 unless it is a\n"
    "terminal (the ranks run in their own process groups, where reading the terminal\n"
    "would stop them). When a rank fails, the others get 1 s (at most the grace period)\n"
    "to end on their own and finish their output, then SIGTERM, then SIGKILL after the\n"
    "grace period.\n"
    "\n"
    "Placement: a rank's NUMA node is its GPU's; without GPUs the ranks fill the nodes\n"
    "in contiguous blocks (neighbouring ranks share a node). --bind-to core gives each\n"
    "rank one core of its node, spread evenly over the node; numa, all of the node;\n"
    "none leaves the ranks where xcrun is. Only cpus xcrun may itself use are given.\n"
    "\n"
    "Across hosts (--nnodes): XC_SIZE and WORLD_SIZE are M*N, XC_LOCAL_RANK and\n"
    "XC_LOCAL_SIZE count this host's ranks, XC_NNODES and XC_NODE_RANK say the layout,\n"
    "XC_STORE_ADDR is HOST:PORT, MASTER_ADDR is HOST and MASTER_PORT is PORT+1 (torch's\n"
    "own store needs a port of its own). Node 0 listens on PORT on all its addresses\n"
    "before its ranks start. The job id and the store token are derived from --rdzv and\n"
    "--job-id, so every node computes the same; the token is then not secret: export the\n"
    "same random XC_STORE_TOKEN to xcrun on every node for one that is. A node that\n"
    "never arrives fails the job after XC_TIMEOUT, naming its node rank.\n"
    "\n"
    "Exit status: 0 when every rank exits 0; else the status of the first rank that\n"
    "failed (128+N when signal N killed it; with --keep-going the first killed by a\n"
    "signal, else the first that failed), 128+N when xcrun got signal N, 124 on\n"
    "timeout, 2 on bad usage.\n";

[[noreturn]] void usage_error(const std::string &text) {
  say(text);
  fputs(kUsage, stderr);
  exit(kUsageExit);
}

bool parse_int(const char *text, long *out) {
  char *end = nullptr;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  *out = v;
  return true;
}

// Seconds may be fractional ("0.5"); a year is more than any job needs and
// keeps the arithmetic on time points far from overflow.
bool parse_seconds(const char *text, double *out) {
  char *end = nullptr;
  errno = 0;
  double v = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(v) || v < 0 || v > 3.2e7)
    return false;
  *out = v;
  return true;
}

void check_env_assignment(const char *text) {
  const char *eq = strchr(text, '=');
  std::string name(text, eq ? size_t(eq - text) : strlen(text));
  bool valid = eq && !name.empty() && !isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) valid = valid && (isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!valid) usage_error(std::string("-x wants VAR=VALUE, not '") + text + "'");
  if (is_managed_var(name)) usage_error("-x " + name + ": xcrun sets this variable itself");
}

// HOST:PORT or [IPv6]:PORT. PORT stops at 65534: PORT+1 is MASTER_PORT.
void parse_rdzv(const char *text, Options *o) {
  std::string t = text, host, port;
  auto bad = [&](const std::string &why) { usage_error("--rdzv wants HOST:PORT, not '" + t + "': " + why); };
  if (!t.empty() && t[0] == '[') {
    size_t close = t.find(']');
    if (close == std::string::npos || close + 1 >= t.size() || t[close + 1] != ':') bad("write [IPv6]:PORT");
    host = t.substr(1, close - 1);
    port = t.substr(close + 2);
  } else {
    size_t colon = t.rfind(':');
    if (colon == std::string::npos) bad("the port is missing");
    host = t.substr(0, colon);
    port = t.substr(colon + 1);
    if (host.find(':') != std::string::npos) bad("write an IPv6 address in brackets");
  }
  if (host.empty()) bad("the host is empty");
  for (char c : host)
    if (c <= ' ' || c > '~') bad("the host has spaces or unprintable characters");
  long n = 0;
  if (!parse_int(port.c_str(), &n) || n < 1 || n > 65534) bad("the port must be a number from 1 to 65534");
  o->rdzv = t;
  o->rdzv_host = host;
  o->rdzv_port = static_cast<uint16_t>(n);
}

// The options of a job over several nodes go together.
void check_nodes(const Options &o, bool node_rank_given) {
  if (o.nnodes == 0) {
    if (node_rank_given || !o.rdzv.empty() || !o.job_id.empty())
      usage_error("--node-rank, --rdzv and --job-id belong to a job over several nodes: add --nnodes M");
    return;
  }
  if (!node_rank_given) usage_error("--nnodes wants --node-rank K: this host's place in the job");
  if (o.rdzv.empty()) usage_error("--nnodes wants --rdzv HOST:PORT: where node 0 serves the bootstrap store");
  if (o.node_rank >= o.nnodes)
    usage_error("--node-rank " + std::to_string(o.node_rank) + " is out of range: the " + std::to_string(o.nnodes) +
                " nodes are 0.." + std::to_string(o.nnodes - 1));
  if (long(o.nnodes) * o.np > kMaxWorld)
    usage_error("--nnodes " + std::to_string(o.nnodes) + " x -n " + std::to_string(o.np) + " is more than " +
                std::to_string(kMaxWorld) + " ranks");
}

}  // namespace

bool is_managed_var(const std::string &name) {
  for (const char *m : kManagedVars)
    if (name == m) return true;
  return false;
}

Options parse_options(int argc, char **argv) {
  enum {
    kTagOutput = 1000, kTimeout, kGrace, kVersion, kBindTo, kReportBindings, kNnodes, kNodeRank, kRdzv, kJobId,
    kKeepGoing
  };
  static const option longs[] = {
      {"np", required_argument, nullptr, 'n'},
      {"env", required_argument, nullptr, 'x'},
      {"tag-output", no_argument, nullptr, kTagOutput},
      {"timeout", required_argument, nullptr, kTimeout},
      {"grace", required_argument, nullptr, kGrace},
      {"keep-going", no_argument, nullptr, kKeepGoing},
      {"bind-to", required_argument, nullptr, kBindTo},
      {"report-bindings", no_argument, nullptr, kReportBindings},
      {"nnodes", required_argument, nullptr, kNnodes},
      {"node-rank", required_argument, nullptr, kNodeRank},
      {"rdzv", required_argument, nullptr, kRdzv},
      {"job-id", required_argument, nullptr, kJobId},
      {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, kVersion},
      {nullptr, 0, nullptr, 0},
  };
  Options o;
  bool node_rank_given = false;
  opterr = 0;  // the messages below say more than getopt's
  // '+': options end at the first non-option, which is the program; ':':
  // report a missing argument as ':' rather than '?'.
  for (;;) {
    int c = getopt_long(argc, argv, "+:n:x:h", longs, nullptr);
    if (c == -1) break;
    long n = 0;
    double s = 0;
    switch (c) {
      case 'n':
        if (!parse_int(optarg, &n) || n < 1 || n > kMaxRanks)
          usage_error(std::string("-n wants a number of ranks from 1 to 4096, not '") + optarg + "'");
        o.np = static_cast<int>(n);
        break;
      case 'x':
        check_env_assignment(optarg);
        o.extra_env.emplace_back(optarg);
        break;
      case kTagOutput: o.tag_output = true; break;
      case kTimeout:
        if (!parse_seconds(optarg, &s) || s <= 0)
          usage_error(std::string("--timeout wants a positive number of seconds, not '") + optarg + "'");
        o.timeout_s = s;
        break;
      case kGrace:
        if (!parse_seconds(optarg, &s))
          usage_error(std::string("--grace wants a number of seconds, not '") + optarg + "'");
        o.grace_s = s;
        break;
      case kBindTo:
        if (strcmp(optarg, "core") == 0) {
          o.bind_to = BindTo::kCore;
        } else if (strcmp(optarg, "numa") == 0) {
          o.bind_to = BindTo::kNuma;
        } else if (strcmp(optarg, "none") == 0) {
          o.bind_to = BindTo::kNone;
        } else {
          usage_error(std::string("--bind-to wants core, numa or none, not '") + optarg + "'");
        }
        break;
      case kReportBindings: o.report_bindings = true; break;
      case kKeepGoing: o.keep_going = true; break;
      case kNnodes:
        if (!parse_int(optarg, &n) || n < 1 || n > kMaxWorld)
          usage_error(std::string("--nnodes wants a number of nodes from 1 to ") + std::to_string(kMaxWorld) +
                      ", not '" + optarg + "'");
        o.nnodes = static_cast<int>(n);
        break;
      case kNodeRank:
        if (!parse_int(optarg, &n) || n < 0 || n >= kMaxWorld)
          usage_error(std::string("--node-rank wants a node number from 0, not '") + optarg + "'");
        o.node_rank = static_cast<int>(n);
        node_rank_given = true;
        break;
      case kRdzv: parse_rdzv(optarg, &o); break;
      case kJobId:
        o.job_id = optarg;
        for (char ch : o.job_id)
          if (ch <= ' ' || ch > '~') usage_error("--job-id wants printable characters without spaces");
        if (o.job_id.empty() || o.job_id.size() > 256) usage_error("--job-id wants 1 to 256 characters");
        break;
      case 'h': fputs(kUsage, stdout); exit(0);
      case kVersion: printf("xcrun (xcomm) %s\n", XC_VERSION_STRING); exit(0);
      case ':': usage_error(std::string("option '") + argv[optind - 1] + "' needs a value");
      default:  // optopt names an unknown short option, even inside "-qn2"
        if (optopt > 0 && optopt < 128 && isgraph(optopt))
          usage_error(std::string("unknown option '-") + char(optopt) + "'");
        usage_error(std::string("unknown option '") + argv[optind - 1] + "'");
    }
  }
  if (o.np == 0) usage_error("the number of ranks (-n N) is required");
  check_nodes(o, node_rank_given);
  if (optind >= argc) usage_error("no program to run");
  o.argv.assign(argv + optind, argv + argc);
  o.argv.push_back(nullptr);
  return o;
}

}  // namespace xcrun
