// xc-info: what this build of xcomm is and what it sees of the machine:
// build features and versions, the host and its topology (CPUs, NUMA, GPUs,
// the NVLink matrix, NICs, the classification), which algorithm each
// collective would use at each size, the algorithms and backends of the
// library's tables, and every XC_* variable with its value, default and doc
// line. Works with no GPU and no driver (and says so).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "algo/backends.h"
#include "algo/selector.h"
#include "algo/table.h"
#include "base/env.h"
#include "base/host_id.h"
#include "gpu/device.h"
#include "tools/xc_info_peers.h"
#include "topo/cores.h"
#include "topo/topology.h"
#include "xcomm.h"
#include "xcomm_build_config.h"

namespace {

using xc::topo::Topology;

const size_t kSizes[] = {8, 1 << 10, 64 << 10, 1 << 20, 64 << 20};

std::string size_name(size_t bytes);

// Where the ranks of a table are: all on this host, one per host, or two per
// host (the hierarchical algorithms; at least 4 ranks, so 2 hosts).
enum class Spread { kOneHost, kOnePerHost, kTwoPerHost };
const char *spread_name(Spread s) {
  return s == Spread::kOneHost ? "one host" : s == Spread::kOnePerHost ? "one per host" : "two per host";
}

int two_per_host_ranks(int ranks) { return ranks < 4 ? 4 : ranks; }

// The selector's pick for kind at bytes (as selection_bytes counts them).
const char *pick(xc::CollKind kind, size_t bytes, int ranks, Spread spread) {
  xc::algo::Locality loc;
  bool one_host = spread == Spread::kOneHost;
  loc.all_local = one_host;
  // Ranks agree at run time whether single copy works; assume it does unless
  // it is switched off (the kernel forbidding it is the rare case).
  loc.single_copy = one_host && xc::env_get("XC_SHM_COLL_CMA") != "0";
  if (spread == Spread::kTwoPerHost) {
    ranks = two_per_host_ranks(ranks);
    loc.hosts = (ranks + 1) / 2;
    loc.hierarchical = true;
    loc.equal_hosts = ranks % 2 == 0;
  }
  return xc::algo::algo_name(xc::algo::choose(kind, bytes, ranks, loc, false));
}

xc::CollKind kind_at(int k) { return static_cast<xc::CollKind>(k); }

// "allreduce, reduce, ..." for an entry's op bits.
std::string op_list(uint32_t ops) {
  if (ops == xc::algo::kAllOps) return "every op";
  std::string out;
  for (int k = 0; k < xc::kCollKindCount; ++k)
    if (ops & xc::algo::op_bit(kind_at(k))) out += (out.empty() ? "" : ", ") + std::string(xc::coll_kind_name(kind_at(k)));
  return out;
}

std::string memory_list(uint32_t memory) {
  std::string out;
  for (int m = 0; m < xc::kMemKindCount; ++m)
    if (memory & (1u << m)) out += (out.empty() ? "" : ", ") + std::string(xc::mem_kind_name(static_cast<xc::MemKind>(m)));
  return out;
}

const char *backend_name(xc::coll::BackendId id) {
  size_t n = 0;
  const xc::algo::BackendEntry *table = xc::algo::backend_table(&n);
  for (size_t i = 0; i < n; ++i)
    if (table[i].id == id) return table[i].name;
  return "point-to-point engine";
}

void print_algorithms() {
  printf("  table (name: what it does; ops; memory; what it runs over):\n");
  for (int a = 0; a < xc::algo::kAlgoCount; ++a) {
    const xc::algo::AlgoEntry &e = xc::algo::algo_table()[a];
    if (e.id == xc::algo::Algo::kLocal) continue;
    std::string over = backend_name(e.backend);
    if (e.single_copy_ops == xc::algo::kAllOps)
      over += " with single copy";
    else if (e.single_copy_ops)
      over += " (single copy for " + op_list(e.single_copy_ops) + ")";
    printf("    %-22s %s\n      %s; %s memory; %s\n", e.name, e.summary, op_list(e.ops).c_str(),
           memory_list(e.memory).c_str(), over.c_str());
  }
  size_t n = 0;
  const xc::algo::BackendEntry *backends = xc::algo::backend_table(&n);
  printf("  backends (what a communicator's members share):\n");
  for (size_t i = 0; i < n; ++i) printf("    %-22s %s\n", backends[i].name, backends[i].serves);
}

void print_algo_table(int ranks, Spread spread) {
  char label[64];
  snprintf(label, sizeof label, "%s%s", spread_name(spread),
           spread == Spread::kTwoPerHost && ranks < 4 ? " (4)" : "");
  printf("  %-16s", label);
  for (size_t s : kSizes) printf(" %-22s", size_name(s).c_str());
  printf("\n");
  for (int k = 0; k < xc::kCollKindCount; ++k) {
    printf("  %-16s", xc::coll_kind_name(kind_at(k)));
    for (size_t s : kSizes) printf(" %-22s", pick(kind_at(k), s, ranks, spread));
    printf("\n");
  }
}

void print_algo_json(int ranks, Spread spread) {
  for (int k = 0; k < xc::kCollKindCount; ++k) {
    printf("%s\"%s\": [", k ? ", " : "", xc::coll_kind_name(kind_at(k)));
    for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; ++i)
      printf("%s\"%s\"", i ? ", " : "", pick(kind_at(k), kSizes[i], ranks, spread));
    printf("]");
  }
}

std::string json_escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string size_name(size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + "M";
  if (bytes >= (1u << 10)) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

std::string cpu_list(const std::vector<int> &cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

const char *version_or(const char *v, const char *absent) { return v[0] ? v : absent; }

// One cell of the GPU matrix, nvidia-smi style.
std::string link_cell(const xc::topo::GpuLink &l) {
  switch (l.type) {
    case xc::topo::LinkType::kSelf: return "X";
    case xc::topo::LinkType::kNvswitch: return "NVS" + std::to_string(l.nvlinks);
    case xc::topo::LinkType::kNvlink: return "NV" + std::to_string(l.nvlinks);
    case xc::topo::LinkType::kPcie: return "PCI";
    case xc::topo::LinkType::kNone: return "-";
  }
  return "?";
}

// The device device-memory ops would use here (XC_DEVICE), or why none.
std::string device_line() {
  xc::Status why;
  xc::gpu::Device *dev = xc::gpu::device_get(-1, &why);
  std::string choice = "XC_DEVICE=" + xc::env_get("XC_DEVICE");
  if (!dev) return "none (" + choice + "): " + why.message();
  return std::string(dev->name()) + " " + std::to_string(dev->ordinal()) + " (" + choice + ")";
}

void print_text(const Topology &t, const std::string &topo_error, int ranks) {
  int major, minor, patch;
  xc_get_version(&major, &minor, &patch);
  printf("xcomm %d.%d.%d (ABI %d)\n\n", major, minor, patch, XC_ABI_VERSION);
  printf("Build\n");
  printf("  hwloc        %s\n", version_or(XC_HWLOC_VERSION, "not found (topology from /sys only)"));
  printf("  UCX          %s\n", XC_HAVE_UCX ? (std::string(XC_UCX_VERSION) + " headers; libucp loaded when a job spans hosts").c_str()
                                         : "not found (no transport between hosts)");
  printf("  CUDA         %s\n", XC_HAVE_CUDA ? "kernels built in (sm_80, sm_90, compute_90 PTX); driver loaded at run time"
                                          : "not built (-Dcuda=disabled or no nvcc): device memory only on XC_DEVICE=emulated");
  printf("  NCCL         not used yet (device memory between hosts is not supported)\n");
  printf("  transports   shared memory (same host, host memory); CUDA IPC (same host, device memory)%s\n",
         XC_HAVE_UCX ? "; UCX (other hosts, host memory; xc-info --peers in a job shows UCX's choice)" : "");
  printf("  device       %s\n\n", device_line().c_str());

  printf("Host\n  name         %s\n  host id      %s\n", xc::host_name().c_str(), xc::host_id().c_str());
  printf("  job cores    %ld (%s; more ranks than these spin less and yield to each other)\n", xc::topo::host_cores(),
         xc::env_is_set("XC_LOCAL_CORES") ? "XC_LOCAL_CORES, from the launcher" : "every online cpu");
  if (!topo_error.empty()) {
    printf("  topology     unavailable: %s\n\n", topo_error.c_str());
  } else {
    printf("  topology     %s\n", t.source.c_str());
    printf("  CPUs         %d package(s), %d cores, %d PUs; L2 %llu KiB, L3 %llu KiB\n", t.packages, t.cores, t.pus,
           static_cast<unsigned long long>(t.l2_bytes >> 10), static_cast<unsigned long long>(t.l3_bytes >> 10));
    for (const auto &n : t.numa)
      printf("  NUMA %-2d      cpus %s, %llu MiB\n", n.os_index, cpu_list(n.cpus).c_str(),
             static_cast<unsigned long long>(n.memory_bytes >> 20));
    printf("  NVML         %s\n  CUDA         %s\n", t.nvml.c_str(), t.cuda.c_str());
    if (t.gpus.empty()) printf("  GPUs         none\n");
    for (const auto &g : t.gpus)
      printf("  GPU %-2d       %s  %s  NUMA %d  %s\n", g.index, g.name.c_str(), g.bus_id.c_str(), g.numa_node,
             g.uuid.c_str());
    if (!t.gpus.empty()) {
      printf("\n  GPU links  ");
      for (size_t j = 0; j < t.gpus.size(); ++j) printf(" %6s", ("GPU" + std::to_string(j)).c_str());
      printf("\n");
      for (size_t i = 0; i < t.gpus.size(); ++i) {
        printf("  GPU%-7zu", i);
        for (size_t j = 0; j < t.gpus.size(); ++j) printf(" %6s", link_cell(t.links[i][j]).c_str());
        printf("\n");
      }
      printf("  (X self, NVS# NVSwitch with # links, NV# direct NVLinks, PCI over PCIe)\n");
    }
    for (const auto &n : t.nics) printf("  NIC          %s  %s  NUMA %d\n", n.name.c_str(), n.bus_id.c_str(), n.numa_node);
    printf("  class        %s%s\n\n", xc::topo::host_class_name(t.classify()),
           t.nvswitch ? " (NVSwitch)" : "");
  }

  printf("Algorithms on %d ranks (by the bytes the selector weighs: per rank, or all blocks for\n"
         "scatter, reduce_scatter and alltoall; out of place: in place, large allreduce and allgather(v)\n"
         "may differ, and so may they where every rank's buffers come from xc_mem_alloc: a pipeline\n"
         "then gives way to single copy; XC_ALGO overrides; single copy assumed to work unless\n"
         "XC_SHM_COLL_CMA=0)\n",
         ranks);
  print_algo_table(ranks, Spread::kOneHost);
  print_algo_table(ranks, Spread::kOnePerHost);
  print_algo_table(ranks, Spread::kTwoPerHost);
  print_algorithms();
  printf("  choices (XC_ALGO=op=name):\n");
  for (int k = 0; k < xc::kCollKindCount; ++k)
    printf("    %-16s %s\n", xc::coll_kind_name(kind_at(k)), xc::algo::algo_choices(kind_at(k)).c_str());
  printf("\nEnvironment variables (value, default, meaning)\n");
  for (const xc::EnvVar &v : xc::env_registry()) {
    const char *value = getenv(v.name);
    printf("  %-20s = %-12s (default %s)\n      %s\n", v.name, value ? value : "<unset>",
           v.default_value[0] ? v.default_value : "none", v.doc);
  }
}

void print_json(const Topology &t, const std::string &topo_error, int ranks) {
  int major, minor, patch;
  xc_get_version(&major, &minor, &patch);
  printf("{\n  \"version\": \"%d.%d.%d\",\n  \"abi\": %d,\n", major, minor, patch, XC_ABI_VERSION);
  printf("  \"build\": {\"hwloc\": \"%s\", \"ucx\": \"%s\", \"cuda\": \"\", \"nccl\": \"\", \"transports\": [%s]},\n",
         XC_HWLOC_VERSION, XC_UCX_VERSION, XC_HAVE_UCX ? "\"shm\", \"ucx\"" : "\"shm\"");
  printf("  \"host\": \"%s\",\n  \"host_id\": \"%s\",\n", json_escape(xc::host_name()).c_str(),
         json_escape(xc::host_id()).c_str());
  if (topo_error.empty())
    printf("  \"topology\": %s,\n  \"class\": \"%s\",\n", t.to_json().c_str(), xc::topo::host_class_name(t.classify()));
  else
    printf("  \"topology\": null,\n  \"topology_error\": \"%s\",\n", json_escape(topo_error).c_str());
  printf("  \"algorithms\": {\"ranks\": %d, \"sizes\": [", ranks);
  for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; ++i) printf("%s%zu", i ? ", " : "", kSizes[i]);
  printf("], ");
  print_algo_json(ranks, Spread::kOneHost);
  printf(", \"several_hosts\": {");
  print_algo_json(ranks, Spread::kOnePerHost);
  printf("}, \"two_per_host\": {");
  print_algo_json(ranks, Spread::kTwoPerHost);
  printf("}, \"choices\": {");
  for (int k = 0; k < xc::kCollKindCount; ++k)
    printf("%s\"%s\": \"%s\"", k ? ", " : "", xc::coll_kind_name(kind_at(k)),
           xc::algo::algo_choices(kind_at(k)).c_str());
  printf("}, \"table\": [");
  for (int a = 0, first = 1; a < xc::algo::kAlgoCount; ++a) {
    const xc::algo::AlgoEntry &e = xc::algo::algo_table()[a];
    if (e.id == xc::algo::Algo::kLocal) continue;
    printf("%s{\"name\": \"%s\", \"ops\": \"%s\", \"memory\": \"%s\", \"runs_over\": \"%s\", \"summary\": \"%s\"}",
           first ? "" : ", ", e.name, op_list(e.ops).c_str(), memory_list(e.memory).c_str(), backend_name(e.backend),
           json_escape(e.summary).c_str());
    first = 0;
  }
  printf("]");
  printf("},\n  \"env\": [\n");
  const auto &vars = xc::env_registry();
  for (size_t i = 0; i < vars.size(); ++i) {
    const char *value = getenv(vars[i].name);
    printf("    {\"name\": \"%s\", \"value\": %s%s%s, \"default\": \"%s\", \"doc\": \"%s\"}%s\n", vars[i].name,
           value ? "\"" : "", value ? json_escape(value).c_str() : "null", value ? "\"" : "",
           json_escape(vars[i].default_value).c_str(), json_escape(vars[i].doc).c_str(), i + 1 < vars.size() ? "," : "");
  }
  printf("  ]\n}\n");
}

void usage(FILE *to) {
  fprintf(to,
          "usage: xc-info [--json] [--ranks N] | --peers\n"
          "  Reports this build of xcomm, the host's topology (XC_TOPO_FILE loads a\n"
          "  description instead of probing), the algorithm each collective would use\n"
          "  on N ranks (default: the number of cores), and every XC_* setting.\n"
          "  --peers, under a launcher (xcrun -n 4 xc-info --peers): joins the job and\n"
          "  prints how frames travel between its ranks, per peer class (same host,\n"
          "  other host: shm, or the UCX transports UCX chose).\n");
}

}  // namespace

int main(int argc, char **argv) {
  bool json = false;
  int ranks = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--peers") == 0) {
      return print_peers();
    } else if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) {
      ranks = atoi(argv[++i]);
      if (ranks < 1) {
        fprintf(stderr, "xc-info: --ranks needs a positive number\n");
        return 2;
      }
    } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "xc-info: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  Topology t;
  xc::Status st = xc::topo::probe(&t);
  std::string topo_error = st.ok() ? "" : st.message();
  if (ranks == 0) ranks = st.ok() && t.cores > 0 ? t.cores : 2;
  if (json)
    print_json(t, topo_error, ranks);
  else
    print_text(t, topo_error, ranks);
  return 0;
}
