// Launcher detection: which program started this process, and so which rank
// it is, how many there are and where rank 0 serves the bootstrap store.
//
// Precedence: xcrun > torchrun > Open MPI > Slurm > MPICH/Hydra > none. xcrun
// comes first because it is ours and says everything explicitly; torchrun
// before the MPI launchers because people run torchrun inside Slurm
// allocations (SLURM_* is then inherited but describes the allocation, not
// the ranks); Open MPI before Slurm because mpirun inside an allocation also
// leaves SLURM_PROCID of the batch step in the environment.
//
// Only xcrun and torchrun say where to meet; under the others a multi-rank
// job needs XC_STORE_ADDR. The token that guards the store is XC_STORE_TOKEN
// when given, else derived from the launcher's job identity so that every rank
// computes the same one without talking: it keeps stray jobs apart, but it is
// not a secret, and a warning says so.
#include "bootstrap/launcher.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "base/env.h"
#include "base/log.h"
#include "bootstrap/store.h"

namespace xc::bootstrap {

namespace {

// A launcher's variable; set means present and non-empty. XC_* variables go
// through the registry (env_get), the launchers' own through getenv.
struct Var {
  const char *name = nullptr;
  bool set = false;
  std::string value;
};

Var var(const char *name) {
  Var v;
  v.name = name;
  if (strncmp(name, "XC_", 3) == 0) {
    v.value = env_is_set(name) ? env_get(name) : std::string();
  } else {
    const char *s = getenv(name);
    v.value = s ? s : "";
  }
  v.set = !v.value.empty();
  return v;
}

// The first of the names that is set (or the first name, unset).
Var first_of(std::initializer_list<const char *> names) {
  for (const char *n : names) {
    Var v = var(n);
    if (v.set) return v;
  }
  return var(*names.begin());
}

// Strict decimal int: digits with an optional sign, nothing else.
Status parse_int(const Var &v, int *out) {
  const std::string &s = v.value;
  bool ok = !s.empty();
  size_t i = (ok && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size()) ok = false;
  for (size_t j = i; ok && j < s.size(); ++j) ok = s[j] >= '0' && s[j] <= '9';
  long long n = 0;
  if (ok) {
    errno = 0;
    n = strtoll(s.c_str(), nullptr, 10);
    ok = errno == 0 && n >= INT_MIN && n <= INT_MAX;
  }
  if (!ok) return Error(XC_ERR_INVALID_ARGUMENT, "%s='%s' is not an integer", v.name, s.c_str());
  *out = static_cast<int>(n);
  return Status::Ok();
}

Status parse_port(const std::string &text, const char *what, uint16_t *port) {
  bool ok = !text.empty() && text.size() <= 5;
  unsigned long n = 0;
  for (size_t i = 0; ok && i < text.size(); ++i) {
    ok = text[i] >= '0' && text[i] <= '9';
    n = n * 10 + static_cast<unsigned long>(text[i] - '0');
  }
  if (!ok || n < 1 || n > 65535)
    return Error(XC_ERR_INVALID_ARGUMENT, "%s: port '%s' is not a number from 1 to 65535", what, text.c_str());
  *port = static_cast<uint16_t>(n);
  return Status::Ok();
}

struct Source {
  const char *launcher;
  Var rank, size, local;
};

// Which launcher; false when none.
bool find_source(Source *src) {
  Var xr = var("XC_RANK"), xs = var("XC_SIZE");
  if (xr.set || xs.set) {
    *src = {"xcrun", xr, xs, var("XC_LOCAL_RANK")};
    return true;
  }
  Var tr = var("RANK"), ts = var("WORLD_SIZE");
  if (tr.set && ts.set) {  // both: RANK alone is too common a name to trust
    *src = {"torchrun", tr, ts, var("LOCAL_RANK")};
    return true;
  }
  Var orr = var("OMPI_COMM_WORLD_RANK"), os = var("OMPI_COMM_WORLD_SIZE");
  if (orr.set || os.set) {
    *src = {"openmpi", orr, os, var("OMPI_COMM_WORLD_LOCAL_RANK")};
    return true;
  }
  Var sr = var("SLURM_PROCID");
  if (sr.set) {
    *src = {"slurm", sr, first_of({"SLURM_NTASKS", "SLURM_NPROCS"}), var("SLURM_LOCALID")};
    return true;
  }
  Var pr = var("PMI_RANK"), ps = var("PMI_SIZE");
  if (pr.set || ps.set) {
    *src = {"mpich", pr, ps, var("MPI_LOCALRANKID")};
    return true;
  }
  return false;
}

// What every rank of one job sees alike, and no other job does.
std::string job_identity(const std::string &launcher) {
  std::string id;
  auto add = [&id](const Var &v) {
    if (v.set) id += std::string(v.name) + "=" + v.value + ";";
  };
  if (launcher == "xcrun") {
    add(var("XC_JOB_ID"));
  } else if (launcher == "torchrun") {
    add(var("TORCHELASTIC_RUN_ID"));
    add(var("TORCHELASTIC_RESTART_COUNT"));  // a restarted group is a new job
    add(var("MASTER_ADDR"));
    add(var("MASTER_PORT"));
  } else if (launcher == "slurm") {
    add(first_of({"SLURM_JOB_ID", "SLURM_JOBID"}));
    add(first_of({"SLURM_STEP_ID", "SLURM_STEPID"}));
  } else if (launcher == "openmpi") {
    add(first_of({"OMPI_MCA_orte_hnp_uri", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"}));
  } else if (launcher == "mpich") {
    add(first_of({"PMI_KVSNAME", "PMIX_NAMESPACE", "PMI_JOBID"}));
  }
  return id;
}

uint64_t fnv1a(const std::string &s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t mix64(uint64_t z) {  // SplitMix64's finaliser
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// 32 hex characters (128 bits) from text; deterministic, not cryptographic.
std::string hash_hex(const std::string &text) {
  uint64_t a = mix64(fnv1a(text, 0xcbf29ce484222325ULL));
  uint64_t b = mix64(fnv1a(text, a ^ 0x6a09e667f3bcc909ULL));
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint64_t w : {a, b})
    for (int i = 60; i >= 0; i -= 4) out.push_back(kHex[(w >> i) & 15]);
  return out;
}

bool valid_job_id(const std::string &s) {
  if (s.empty() || s.size() > 24) return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  return true;
}

bool valid_token(const std::string &s) {
  if (s.empty() || s.size() > 256) return false;
  for (char c : s)
    if (c <= ' ' || c > '~') return false;
  return true;
}

// Ranks per node where the launcher says the nodes hold equal blocks: xcrun
// with XC_NNODES (and XC_LOCAL_SIZE), torchrun with GROUP_WORLD_SIZE and
// LOCAL_WORLD_SIZE (its nodes all run --nproc-per-node ranks). 0 otherwise.
Status detect_node_layout(const LaunchInfo &info, int *per_node) {
  *per_node = 0;
  Var nodes = info.launcher == "xcrun" ? var("XC_NNODES") : var("GROUP_WORLD_SIZE");
  Var local = info.launcher == "xcrun" ? var("XC_LOCAL_SIZE") : var("LOCAL_WORLD_SIZE");
  if ((info.launcher != "xcrun" && info.launcher != "torchrun") || !nodes.set || !local.set) return Status::Ok();
  int n = 0, per = 0;
  XC_TRY(parse_int(nodes, &n));
  XC_TRY(parse_int(local, &per));
  if (n < 1 || per < 1 || static_cast<long long>(n) * per != info.size) {
    if (info.launcher == "xcrun")
      return Error(XC_ERR_INVALID_ARGUMENT, "%s=%s nodes of %s=%s ranks do not make %d ranks", nodes.name,
                   nodes.value.c_str(), local.name, local.value.c_str(), info.size);
    return Status::Ok();  // torchrun's elastic sizes may differ per node: no layout to tell
  }
  *per_node = per;
  return Status::Ok();
}

}  // namespace

Status parse_host_port(const std::string &text, std::string *host, uint16_t *port) {
  if (!host || !port) return Error(XC_ERR_INVALID_ARGUMENT, "parse_host_port: NULL output");
  std::string h, p;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return Error(XC_ERR_INVALID_ARGUMENT, "'%s' is not [ipv6-address]:port", text.c_str());
    h = text.substr(1, close - 1);
    p = text.substr(close + 2);
    if (h.find(':') == std::string::npos)
      return Error(XC_ERR_INVALID_ARGUMENT, "'%s': brackets are for IPv6 addresses", text.c_str());
  } else {
    size_t colon = text.find(':');
    if (colon == std::string::npos)
      return Error(XC_ERR_INVALID_ARGUMENT, "'%s' is not host:port (the port is missing)", text.c_str());
    if (text.find(':', colon + 1) != std::string::npos)
      return Error(XC_ERR_INVALID_ARGUMENT, "'%s' is not host:port (write an IPv6 address in brackets: [addr]:port)",
                   text.c_str());
    h = text.substr(0, colon);
    p = text.substr(colon + 1);
  }
  if (h.empty()) return Error(XC_ERR_INVALID_ARGUMENT, "'%s' is not host:port (the host is empty)", text.c_str());
  for (char c : h)
    if (c <= ' ' || c > '~')
      return Error(XC_ERR_INVALID_ARGUMENT, "'%s': the host has spaces or unprintable characters", text.c_str());
  uint16_t n = 0;
  XC_TRY(parse_port(p, ("'" + text + "'").c_str(), &n));
  *host = h;
  *port = n;
  return Status::Ok();
}

Status detect_launch(LaunchInfo *out) {
  if (!out) return Error(XC_ERR_INVALID_ARGUMENT, "detect_launch: out is NULL");
  LaunchInfo info;
  Source src;
  if (find_source(&src)) {
    info.launcher = src.launcher;
    const char *who = src.launcher;
    if (!src.rank.set)
      return Error(XC_ERR_INVALID_ARGUMENT, "%s sets %s=%s but not %s", who, src.size.name, src.size.value.c_str(),
                   src.rank.name);
    if (!src.size.set)
      return Error(XC_ERR_INVALID_ARGUMENT, "%s sets %s=%s but not %s", who, src.rank.name, src.rank.value.c_str(),
                   src.size.name);
    XC_TRY(parse_int(src.rank, &info.rank));
    XC_TRY(parse_int(src.size, &info.size));
    if (info.size < 1)
      return Error(XC_ERR_INVALID_ARGUMENT, "%s=%s: the number of ranks must be at least 1", src.size.name,
                   src.size.value.c_str());
    if (info.rank < 0 || info.rank >= info.size)
      return Error(XC_ERR_INVALID_ARGUMENT, "%s=%s is not a rank from 0 to %d (%s=%s)", src.rank.name,
                   src.rank.value.c_str(), info.size - 1, src.size.name, src.size.value.c_str());
    if (src.local.set) {
      XC_TRY(parse_int(src.local, &info.local_rank_hint));
      if (info.local_rank_hint < 0 || info.local_rank_hint >= info.size)
        return Error(XC_ERR_INVALID_ARGUMENT, "%s=%s is not a local rank from 0 to %d", src.local.name,
                     src.local.value.c_str(), info.size - 1);
    }
  } else {
    info.launcher = "none";
  }

  // Where to meet.
  Var addr = var("XC_STORE_ADDR");
  if (addr.set) {
    XC_TRY_CTX(parse_host_port(addr.value, &info.store_host, &info.store_port), "XC_STORE_ADDR");
  } else if (info.launcher == "torchrun" && var("MASTER_ADDR").set && var("MASTER_PORT").set) {
    Var ma = var("MASTER_ADDR"), mp = var("MASTER_PORT");
    std::string host = ma.value;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    for (char c : host)
      if (c <= ' ' || c > '~')
        return Error(XC_ERR_INVALID_ARGUMENT, "MASTER_ADDR='%s' has spaces or unprintable characters",
                     ma.value.c_str());
    XC_TRY(parse_port(mp.value, "MASTER_PORT", &info.store_port));
    // torchrun's agent serves its own TCPStore on MASTER_PORT (it says so
    // with TORCHELASTIC_USE_AGENT_STORE), so rank 0 could not bind there:
    // the store then goes on the next port.
    Var agent = var("TORCHELASTIC_USE_AGENT_STORE");
    if (agent.set && (agent.value == "True" || agent.value == "true" || agent.value == "1")) {
      if (info.store_port == 65535)
        return Error(XC_ERR_INVALID_USAGE,
                     "MASTER_PORT=65535 is torchrun's own store and there is no next port for xcomm's; set "
                     "XC_STORE_ADDR=host:port");
      ++info.store_port;
    }
    info.store_host = host;
  } else if (info.size > 1) {
    if (info.launcher == "torchrun")
      return Error(XC_ERR_INVALID_USAGE,
                   "torchrun gives no rendezvous address (MASTER_ADDR or MASTER_PORT is unset): set "
                   "XC_STORE_ADDR=host:port (served by rank 0)");
    return Error(XC_ERR_INVALID_USAGE,
                 "%s gives no rendezvous address for its %d ranks: set XC_STORE_ADDR=host:port (served by rank 0) "
                 "in every rank's environment",
                 info.launcher.c_str(), info.size);
  }
  std::string where = info.store_host.empty() ? std::string() : info.store_host + ":" + std::to_string(info.store_port);
  std::string identity = info.launcher + ";" + std::to_string(info.size) + ";" + job_identity(info.launcher) + where;

  // The token.
  Var tok = var("XC_STORE_TOKEN");
  if (tok.set) {
    if (!valid_token(tok.value))
      return Error(XC_ERR_INVALID_ARGUMENT,
                   "XC_STORE_TOKEN must be 1 to 256 printable characters without spaces (it has %zu)",
                   tok.value.size());
    info.token = tok.value;
  } else {
    info.token = hash_hex("token;" + identity);
    if (info.size > 1)
      XC_WARN("XC_STORE_TOKEN is not set: the bootstrap token is derived from the %s job identity, so it keeps "
              "jobs apart but is not secret; set XC_STORE_TOKEN to a random value on shared machines",
              info.launcher.c_str());
  }

  // The listening socket xcrun may hand to rank 0.
  Var fd = var("XC_STORE_FD");
  if (fd.set) {
    int n = -1;
    XC_TRY(parse_int(fd, &n));
    if (n < 0) return Error(XC_ERR_INVALID_ARGUMENT, "XC_STORE_FD=%s is not a file descriptor", fd.value.c_str());
    if (info.rank == 0) info.store_fd = n;
  }

  // The job's name in shared-memory segment names.
  Var job = var("XC_JOB_ID");
  if (job.set) {
    if (!valid_job_id(job.value))
      return Error(XC_ERR_INVALID_ARGUMENT, "XC_JOB_ID='%s' must be 1 to 24 characters of A-Z a-z 0-9 _ -",
                   job.value.c_str());
    info.job_id = job.value;
  } else if (info.launcher == "none") {
    info.job_id = "solo-" + make_token().substr(0, 12);  // one process: unique is all it needs
  } else {
    static const char *const kShort[][2] = {
        {"xcrun", "xcrun"}, {"torchrun", "torch"}, {"openmpi", "ompi"}, {"slurm", "slurm"}, {"mpich", "mpich"}};
    std::string prefix = "job";
    for (const auto &p : kShort)
      if (info.launcher == p[0]) prefix = p[1];
    info.job_id = prefix + "-" + hash_hex("job;" + identity).substr(0, 12);
  }

  XC_TRY(detect_node_layout(info, &info.ranks_per_node));

  XC_INFO("launch: %s, rank %d of %d, local rank hint %d, store %s, job %s", info.launcher.c_str(), info.rank,
          info.size, info.local_rank_hint, where.empty() ? "(none)" : where.c_str(), info.job_id.c_str());
  *out = std::move(info);
  return Status::Ok();
}

}  // namespace xc::bootstrap
