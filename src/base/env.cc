#include "base/env.h"

#include <cstdlib>
#include <cstring>

namespace xc {

const std::vector<EnvVar> &env_registry() {
  static const std::vector<EnvVar> vars = {
      {"XC_DEBUG", "", "Log level: NONE, WARN, INFO or TRACE (default: nothing is printed)."},
      {"XC_DEBUG_FILE", "", "Write the log here instead of stderr; %h becomes the host, %p the pid."},
      {"XC_TIMEOUT", "300000", "Deadline in milliseconds of every blocking wait when the config gives none."},
      {"XC_RANK", "", "Rank of this process (set by xcrun)."},
      {"XC_SIZE", "", "Number of ranks in the job (set by xcrun)."},
      {"XC_LOCAL_RANK", "", "Rank among the processes on this host (set by xcrun; a hint, the host id decides)."},
      {"XC_LOCAL_SIZE", "", "Number of ranks on this host (set by xcrun)."},
      {"XC_STORE_ADDR", "", "host:port of the bootstrap store, served by rank 0."},
      {"XC_STORE_TOKEN", "", "Secret every bootstrap connection must present (xcrun makes a random one)."},
      {"XC_STORE_FD", "", "Listening socket inherited from xcrun by rank 0 (internal)."},
      {"XC_JOB_ID", "", "Name of the job, used in shared-memory segment names (set by xcrun)."},
      {"XC_HOST_ID", "", "Overrides the host identity (boot id + hostname) that decides which ranks share memory."},
      {"XC_SHM_RING_BYTES", "262144", "Capacity of each shared-memory ring between two ranks (power of two, >= 64 KiB)."},
      {"XC_SHM_EAGER_BYTES", "8192", "Messages up to this size are sent eagerly; larger ones wait for the receiver."},
      {"XC_SHM_CHUNK_BYTES", "65536", "Size of the pieces a large message is pipelined in through the ring."},
      {"XC_SHM_LARGE", "copy", "Large-message path on one host: copy (pipelined through shared memory) or cma (process_vm_readv)."},
      {"XC_SPIN", "", "Polls a waiting rank spins before it sleeps (default: 2000, or 20 when ranks outnumber cores; then it polls with sched_yield)."},
      {"XC_SHM_COLL_SPIN", "", "Polls a rank spins in a shared-memory collective before it yields the core (default: 2000, or 0 when ranks outnumber cores, then up to 300 while only ranks last seen on other cores are missing)."},
      {"XC_SHM_COLL_CMA", "1", "0: never let shared-memory collectives read peers' memory with process_vm_readv (single copy)."},
      {"XC_SHM_COLL_TABLES", "1", "0: a rank reading a peer's block in place (scatterv, alltoallv; gatherv's senders writing into the root) fetches its displacement and count from the peer's arrays with process_vm_readv, as beyond 256 ranks, instead of from the table in shared memory."},
      {"XC_SHM_COLL_BALANCE", "1", "0: never move a rank to another cpu when ranks outnumber cores (by default the highest rank of a cpu with more than its share of a communicator's ranks moves itself to the allowed cpu with the fewest, unbound; a one-cpu mask is never changed)."},
      {"XC_SHM_COLL_ROOT_SPLIT", "", "1: the root of a gather(v)/scatter(v) copies part of every large block itself while its peer copies the rest (in place 1/n, out of place 1/(4n)), also when ranks outnumber cores; 0: never (default: where that spreads the copying evenly over the cores, design.md)."},
      {"XC_TOPO_FILE", "", "Read the host topology from this JSON description (as under tests/topo/) instead of probing the machine."},
      {"XC_LOCAL_GPU", "", "Index of the GPU nearest this rank (set by xcrun: local rank modulo the number of GPUs; unset without GPUs)."},
      {"XC_LOCAL_NIC", "", "Network interface nearest this rank (set by xcrun: one on the rank's NUMA node, else the first)."},
      {"XC_TOPO_PEER_TEST", "1", "1: try every GPU pair the driver allows with a real 1 MiB peer copy, once per process; 0: trust the driver."},
      {"XC_NVML_LIBRARY", "", "Path of libnvidia-ml.so.1 to load (default: the loader's search)."},
      {"XC_CUDART_LIBRARY", "", "Path of the CUDA runtime to load (default: libcudart.so, then .so.13, then .so.12, by the loader's search)."},
      {"XC_ALGO", "", "Force collective algorithms: a name for every op that has it (ring) and/or op=name items, comma-separated (allreduce=ring,alltoall=bruck). Names: those of the algorithm table, which xc-info prints with each op's choices (docs/collectives.md)."},
      {"XC_CPU_ISA", "", "Force the host reduction kernels' instruction set: scalar, avx2 or avx512 (default: the best this CPU has)."},
  };
  return vars;
}

namespace {
const EnvVar *find(const char *name) {
  for (const EnvVar &v : env_registry())
    if (strcmp(v.name, name) == 0) return &v;
  return nullptr;
}
}  // namespace

std::string env_get(const char *name) {
  const EnvVar *v = find(name);
  if (!v) abort();  // an undeclared variable is a bug in xcomm itself
  const char *value = getenv(name);
  return value ? value : v->default_value;
}

int64_t env_get_int(const char *name) {
  std::string text = env_get(name);
  const EnvVar *v = find(name);
  auto parse = [](const std::string &s, int64_t *out) {
    if (s.empty()) return false;
    char *end = nullptr;
    long long n = strtoll(s.c_str(), &end, 10);
    if (end == s.c_str()) return false;
    int64_t mult = 1;
    switch (*end) {
      case 'k': case 'K': mult = 1LL << 10; ++end; break;
      case 'm': case 'M': mult = 1LL << 20; ++end; break;
      case 'g': case 'G': mult = 1LL << 30; ++end; break;
      default: break;
    }
    if (*end != '\0') return false;
    *out = n * mult;
    return true;
  };
  int64_t out = 0;
  if (parse(text, &out)) return out;
  if (parse(v->default_value, &out)) return out;
  return 0;
}

bool env_is_set(const char *name) { return getenv(name) != nullptr; }

}  // namespace xc
