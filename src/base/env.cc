#include "base/env.h"

#include <strings.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/log.h"

namespace xc {

const std::vector<EnvVar> &env_registry() {
  static const std::vector<EnvVar> vars = {
      {"XC_DEBUG", "", EnvType::kChoice,
       "Log level: NONE, WARN, INFO or TRACE (default: nothing is printed).", 0, 0, "NONE|WARN|INFO|TRACE"},
      {"XC_DEBUG_FILE", "", EnvType::kText,
       "Write the log here instead of stderr; %h becomes the host, %p the pid."},
      {"XC_TIMEOUT", "300000", EnvType::kInt,
       "Deadline in milliseconds of every blocking wait when the config gives none.", 1, INT64_MAX},
      {"XC_RANK", "", EnvType::kText,
       "Rank of this process (set by xcrun)."},
      {"XC_SIZE", "", EnvType::kText,
       "Number of ranks in the job (set by xcrun)."},
      {"XC_LOCAL_RANK", "", EnvType::kText,
       "Rank among the processes on this host (set by xcrun; a hint, the host id decides)."},
      {"XC_LOCAL_SIZE", "", EnvType::kText,
       "Number of ranks on this host (set by xcrun)."},
      {"XC_LOCAL_CORES", "", EnvType::kInt,
       "Cores this host gives the job (set by xcrun: the cpus it may use itself). Unset: every online core. Ranks that outnumber them spin less and yield to each other.", 1, 1 << 20},
      {"XC_NNODES", "", EnvType::kText,
       "Number of nodes of a job over several hosts, each with XC_LOCAL_SIZE ranks (set by xcrun --nnodes)."},
      {"XC_NODE_RANK", "", EnvType::kText,
       "This host's place among the XC_NNODES nodes (set by xcrun --node-rank)."},
      {"XC_STORE_ADDR", "", EnvType::kText,
       "host:port of the bootstrap store, served by rank 0."},
      {"XC_STORE_TOKEN", "", EnvType::kText,
       "Secret every bootstrap connection must present (xcrun makes a random one)."},
      {"XC_STORE_FD", "", EnvType::kText,
       "Listening socket inherited from xcrun by rank 0 (internal)."},
      {"XC_STORE_HANDSHAKE_MS", "5000", EnvType::kInt,
       "Milliseconds a connection to the bootstrap store may take, once accepted, to present the job's token before it is dropped (a rank sends it as soon as it is connected).", 1, 3600000},
      {"XC_STORE_MAX_PENDING", "64", EnvType::kInt,
       "Connections to the bootstrap store that have not presented the token yet, at most; one more and the oldest is dropped, so strangers cannot use up rank 0's file descriptors and ranks still get in.", 1, 65536},
      {"XC_STORE_MAX_VALUE", "64M", EnvType::kBytes,
       "Largest value the bootstrap store takes in one SET (a larger one is refused with an error). xcomm's largest is an allgather packing about 60 to 140 bytes per rank (host id and pid): 64 MiB holds over 400000 ranks, and beyond this limit the allgather reads the ranks' keys one by one.", 1 << 10, 64 << 20},
      {"XC_STORE_MAX_INFLIGHT", "128M", EnvType::kBytes,
       "Bytes the bootstrap store holds for partly received requests over all connections: a request over 64 KiB that would pass it is refused with an error (smaller ones never are), so a value larger than this can never be set. The default holds two of the largest values at once.", 1 << 20, 1LL << 40},
      {"XC_JOB_ID", "", EnvType::kText,
       "Name of the job, used in shared-memory segment names (set by xcrun)."},
      {"XC_HOST_ID", "", EnvType::kText,
       "Overrides the host identity (boot id + hostname) that decides which ranks share memory."},
      {"XC_SHM_RING_BYTES", "262144", EnvType::kBytes,
       "Capacity of each shared-memory ring between two ranks (power of two, >= 64 KiB).", 64 << 10, 1LL << 40},
      {"XC_SHM_EAGER_BYTES", "8192", EnvType::kBytes,
       "Messages up to this size are sent eagerly; larger ones wait for the receiver.", 0, 1LL << 40},
      {"XC_SHM_CHUNK_BYTES", "65536", EnvType::kBytes,
       "Size of the pieces a large message is pipelined in through the ring.", 64, 1LL << 40},
      {"XC_SHM_LARGE", "copy", EnvType::kChoice,
       "Large-message path on one host: copy (pipelined through shared memory) or cma (process_vm_readv).", 0, 0, "copy|cma"},
      {"XC_UCX_EAGER_BYTES", "262144", EnvType::kBytes,
       "Between hosts (UCX): messages up to this size are sent eagerly; larger ones wait for the receiver.", 0, 1LL << 30},
      {"XC_UCX_CHUNK_BYTES", "1048576", EnvType::kBytes,
       "Between hosts (UCX): the pieces a large message streams in when it is not read in place.", 4096, 1LL << 30},
      {"XC_UCX_LARGE", "get", EnvType::kChoice,
       "Large-message path between hosts: get (the receiver reads the sender's buffer, ucp_get_nbx) or stream (pieces through active messages).", 0, 0, "get|stream"},
      {"XC_UCX_LIBRARY", "", EnvType::kText,
       "Path of the UCX library to load when a job has ranks on several hosts (default: libucp.so.0 by the loader's search)."},
      {"XC_SPIN", "", EnvType::kInt,
       "Polls a waiting rank spins before it sleeps (default: 2000, or 20 when ranks outnumber cores; then it polls with sched_yield).", 1, 1 << 30},
      {"XC_SHM_COLL_SPIN", "", EnvType::kInt,
       "Polls a rank spins in a shared-memory collective before it yields the core (default: 2000, or 0 when ranks outnumber cores, then up to 300 while only ranks last seen on other cores are missing).", 0, 1 << 30},
      {"XC_SHM_COLL_CMA", "1", EnvType::kFlag,
       "0: never let shared-memory collectives read peers' memory with process_vm_readv (single copy)."},
      {"XC_SHM_COLL_TABLES", "1", EnvType::kFlag,
       "0: a rank reading a peer's block in place (scatterv, alltoallv; gatherv's senders writing into the root) fetches its displacement and count from the peer's arrays with process_vm_readv, as beyond 256 ranks, instead of from the table in shared memory."},
      {"XC_SHM_COLL_BALANCE", "1", EnvType::kFlag,
       "0: never move a rank to another cpu when ranks outnumber cores (by default the highest rank of a cpu with more than its share of a communicator's ranks moves itself to the allowed cpu with the fewest, unbound; a one-cpu mask is never changed)."},
      {"XC_SHM_COLL_ROOT_SPLIT", "", EnvType::kFlag,
       "1: the root of a gather(v)/scatter(v) copies part of every large block itself while its peer copies the rest (in place 1/n, out of place 1/(4n)), also when ranks outnumber cores; 0: never (default: where that spreads the copying evenly over the cores, design.md)."},
      {"XC_TOPO_FILE", "", EnvType::kText,
       "Read the host topology from this JSON description (as under tests/topo/) instead of probing the machine."},
      {"XC_LOCAL_GPU", "", EnvType::kText,
       "Index of the GPU nearest this rank (set by xcrun: local rank modulo the number of GPUs; unset without GPUs)."},
      {"XC_LOCAL_NIC", "", EnvType::kText,
       "Network interface nearest this rank (set by xcrun: one on the rank's NUMA node, else the first)."},
      {"XC_TOPO_PEER_TEST", "1", EnvType::kFlag,
       "1: try every GPU pair the driver allows with a real 1 MiB peer copy, once per process; 0: trust the driver."},
      {"XC_NVML_LIBRARY", "", EnvType::kText,
       "Path of libnvidia-ml.so.1 to load (default: the loader's search)."},
      {"XC_CUDART_LIBRARY", "", EnvType::kText,
       "Path of the CUDA runtime to load (default: libcudart.so, then .so.13, then .so.12, by the loader's search)."},
      {"XC_DEVICE", "auto", EnvType::kChoice,
       "Device behind device-memory ops: auto (CUDA when a driver and a GPU are there, else none), cuda, emulated (a test facility: device memory is host memory tagged as device, docs/device.md) or none.", 0, 0, "auto|cuda|emulated|none"},
      {"XC_CUDA_LIBRARY", "", EnvType::kText,
       "Path of the CUDA driver library to load (default: libcuda.so.1 by the loader's search)."},
      {"XC_NCCL_LIBRARY", "", EnvType::kText,
       "Path of the NCCL library to load (default: libnccl.so.2 by the loader's search). NCCL 2.18 or later; it carries device memory between hosts (docs/nccl.md)."},
      {"XC_NCCL", "auto", EnvType::kChoice,
       "When communicators with a device use NCCL for device memory: auto (when their ranks span hosts, or for the ops XC_ALGO sends to nccl), 1 (always, also on one host: every device op goes to NCCL) or 0 (never: device memory between hosts is then XC_ERR_UNSUPPORTED).", 0, 0, "auto|1|0"},
      {"XC_ALGO", "", EnvType::kText,
       "Force collective algorithms: a name for every op that has it (ring) and/or op=name items, comma-separated (allreduce=ring,alltoall=bruck). Names: those of the algorithm table, which xc-info prints with each op's choices (docs/collectives.md), and nccl: that op's device memory through NCCL, also on one host (docs/nccl.md)."},
      {"XC_TRACE_DEPTH", "64", EnvType::kInt,
       "Collectives each communicator's flight recorder keeps (the last N, for dumps and xc-trace); 0 records nothing.", 0, 1 << 20},
      {"XC_TRACE_DIR", "", EnvType::kText,
       "Directory for flight recorder dumps: written when a collective times out or a peer fails, on SIGUSR2, and by xc_comm_trace_dump with no path."},
      {"XC_CPU_ISA", "", EnvType::kChoice,
       "Force the host reduction kernels' instruction set: scalar, avx2 or avx512 (default: the best this CPU has).", 0, 0, "scalar|avx2|avx512"},
  };
  return vars;
}

namespace {

const EnvVar *find(const char *name) {
  for (const EnvVar &v : env_registry())
    if (strcmp(v.name, name) == 0) return &v;
  return nullptr;
}

const EnvVar &declared(const char *name) {
  const EnvVar *v = find(name);
  if (!v) abort();  // an undeclared variable is a bug in xcomm itself
  return *v;
}

// text as v's type reads it; false when the type does not accept it.
bool parse_number(const EnvVar &v, const std::string &text, int64_t *out) {
  if (text.empty() || !(isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-')) return false;
  errno = 0;
  char *end = nullptr;
  long long n = strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || errno == ERANGE) return false;
  int shift = 0;
  if (v.type == EnvType::kBytes) {
    switch (*end) {
      case 'k': case 'K': shift = 10; ++end; break;
      case 'm': case 'M': shift = 20; ++end; break;
      case 'g': case 'G': shift = 30; ++end; break;
      default: break;
    }
  }
  if (*end != '\0') return false;
  if (shift && (n > (INT64_MAX >> shift) || n < (INT64_MIN >> shift))) return false;
  int64_t value = static_cast<int64_t>(n) * (int64_t{1} << shift);
  int64_t lo = v.type == EnvType::kFlag ? 0 : v.min, hi = v.type == EnvType::kFlag ? 1 : v.max;
  if (value < lo || value > hi) return false;
  *out = value;
  return true;
}

// The choice text names (any case), as the registry spells it; false when none.
bool parse_choice(const EnvVar &v, const std::string &text, std::string *out) {
  const char *p = v.choices;
  while (*p) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? static_cast<size_t>(bar - p) : strlen(p);
    if (len == text.size() && strncasecmp(p, text.c_str(), len) == 0) {
      out->assign(p, len);
      return true;
    }
    p += len + (bar ? 1 : 0);
  }
  return false;
}

bool accepted(const EnvVar &v, const std::string &text) {
  int64_t n;
  std::string s;
  switch (v.type) {
    case EnvType::kText: return true;
    case EnvType::kInt:
    case EnvType::kBytes:
    case EnvType::kFlag: return parse_number(v, text, &n);
    case EnvType::kChoice: return parse_choice(v, text, &s);
  }
  return false;
}

Status bad_value(const EnvVar &v, const std::string &text) {
  return Error(XC_ERR_INVALID_ARGUMENT, "%s='%s' is not valid: it takes %s", v.name, text.c_str(),
               env_accepts(v).c_str());
}

std::string range(const EnvVar &v) {
  std::string hi = v.max == INT64_MAX ? "up" : "to " + std::to_string(v.max);
  return "from " + std::to_string(v.min) + " " + hi;
}

}  // namespace

std::string env_accepts(const EnvVar &v) {
  switch (v.type) {
    case EnvType::kText: return "any text";
    case EnvType::kInt: return "a whole number " + range(v);
    case EnvType::kBytes: return "a byte count " + range(v) + " (a k, M or G suffix multiplies by 1024, 1024^2, 1024^3)";
    case EnvType::kFlag: return "0 or 1";
    case EnvType::kChoice: {
      std::string list = v.choices;
      for (char &c : list)
        if (c == '|') c = '/';
      return "one of " + list;
    }
  }
  return "?";
}

std::string env_get(const char *name) {
  const EnvVar &v = declared(name);
  const char *value = getenv(name);
  return value ? value : v.default_value;
}

bool env_is_set(const char *name) { return getenv(name) != nullptr; }

Status env_int(const char *name, int64_t *out) {
  const EnvVar &v = declared(name);
  if (v.type != EnvType::kInt && v.type != EnvType::kBytes && v.type != EnvType::kFlag) abort();  // a bug in xcomm
  std::string text = env_get(name);
  return parse_number(v, text, out) ? Status::Ok() : bad_value(v, text);
}

Status env_flag(const char *name, bool *out) {
  if (declared(name).type != EnvType::kFlag) abort();  // a bug in xcomm
  int64_t n = 0;
  XC_TRY(env_int(name, &n));
  *out = n != 0;
  return Status::Ok();
}

Status env_choice(const char *name, std::string *out) {
  const EnvVar &v = declared(name);
  if (v.type != EnvType::kChoice) abort();  // a bug in xcomm
  std::string text = env_get(name);
  return parse_choice(v, text, out) ? Status::Ok() : bad_value(v, text);
}

Status env_check_all() {
  for (const EnvVar &v : env_registry()) {
    const char *value = getenv(v.name);
    if (value && !accepted(v, value)) return bad_value(v, value);
  }
  for (char **e = environ; *e; ++e) {
    if (strncmp(*e, "XC_", 3) != 0) continue;
    std::string name(*e, strcspn(*e, "="));
    if (!find(name.c_str())) XC_WARN("%s is set but is no variable of xcomm's (misspelt?); ignored", name.c_str());
  }
  return Status::Ok();
}

}  // namespace xc
