// The job's identity (id and token), its rendezvous socket, where each rank
// runs (cpus, nearest GPU and NIC), and the environment every rank gets.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "xcrun.h"

extern char **environ;

namespace xcrun {
namespace {

constexpr int kListenBacklog = 4096;  // the kernel caps it at somaxconn

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  size_t got = 0;
  while (got < bytes) {
    ssize_t r = getrandom(buf.data() + got, bytes - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die(std::string("getrandom: ") + strerror(errno));
    got += size_t(r);
  }
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : buf) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

// A TCP socket bound to 127.0.0.1 at a port the kernel picks (listening
// when asked); dies saying what it was for.
int bind_loopback(bool listening, const char *what, uint16_t *port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
      (listening && listen(fd, kListenBacklog) != 0) ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0)
    die(std::string(what) + ": " + strerror(errno));
  *port = ntohs(addr.sin_port);
  return fd;
}

// A listening TCP socket on 127.0.0.1 at a port the kernel picks. It is
// created close-on-exec so that only rank 0, which clears the flag after
// fork, inherits it; and kept above 2 so it cannot collide with stdio.
void open_store_socket(Job *job) {
  uint16_t port = 0;
  int fd = bind_loopback(true, "cannot open the rendezvous socket on 127.0.0.1", &port);
  job->store_fd = above_stdio(fd);
  job->port = port;
}

// A port on 127.0.0.1 that is free now, for a server a rank will start
// (torchrun does the same for MASTER_PORT): the kernel picks one, and the
// socket is closed again. Picked while the store socket is bound, so it is
// never the store's port. Another process could take it in between, as with
// torchrun; the kernel hands out ports in turn, so that is rare.
uint16_t free_port() {
  uint16_t port = 0;
  close(bind_loopback(false, "cannot find a free port on 127.0.0.1 for MASTER_PORT", &port));
  return port;
}

}  // namespace

int above_stdio(int fd) {
  if (fd >= 3) return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (high < 0) die(std::string("fcntl: ") + strerror(errno));
  close(fd);
  return high;
}

Job make_job(const Options &o) {
  if (o.nnodes > 0) return make_multinode_job(o);
  Job job;
  job.id = "j" + std::to_string(getpid()) + "-" + random_hex(4);
  job.token = random_hex(16);
  open_store_socket(&job);
  job.master_port = free_port();
  job.store_addr = "127.0.0.1:" + std::to_string(job.port);
  job.master_addr = "127.0.0.1";
  return job;
}

// What every rank shares: xcrun's environment without the variables xcrun
// manages, then the -x assignments. Each name appears once (getenv would
// see the first): -x replaces an inherited value, a later -x an earlier one.
std::vector<std::string> common_env(const Options &o) {
  auto name_of = [](const std::string &kv) { return kv.substr(0, kv.find('=')); };
  auto set_later = [&](const std::string &name, size_t after) {
    return std::any_of(o.extra_env.begin() + long(after), o.extra_env.end(),
                       [&](const std::string &x) { return name_of(x) == name; });
  };
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    std::string name = name_of(*e);
    if (!is_managed_var(name) && !set_later(name, 0)) env.emplace_back(*e);
  }
  for (size_t i = 0; i < o.extra_env.size(); ++i)
    if (!set_later(name_of(o.extra_env[i]), i + 1)) env.push_back(o.extra_env[i]);
  return env;
}

std::vector<std::string> rank_env(const std::vector<std::string> &common, const Options &o, const Job &job, int local,
                                  const Placement &place) {
  std::vector<std::string> env = common;
  auto set = [&](const char *name, const std::string &value) { env.push_back(std::string(name) + "=" + value); };
  int rank = o.rank_base() + local;
  std::string r = std::to_string(rank), n = std::to_string(o.world_size());
  std::string lr = std::to_string(local), ln = std::to_string(o.np);
  set("XC_RANK", r);
  set("XC_SIZE", n);
  set("XC_LOCAL_RANK", lr);
  set("XC_LOCAL_SIZE", ln);
  // The cpus the ranks share: the library's own count (every online cpu)
  // cannot see a cpuset or taskset once a rank is bound to one core.
  if (place.host_cpus > 0) set("XC_LOCAL_CORES", std::to_string(place.host_cpus));
  if (o.nnodes > 0) {  // the layout, so a start-up timeout can name the nodes that never came
    set("XC_NNODES", std::to_string(o.nnodes));
    set("XC_NODE_RANK", std::to_string(o.node_rank));
  }
  set("XC_STORE_ADDR", job.store_addr);
  set("XC_STORE_TOKEN", job.token);
  set("XC_JOB_ID", job.id);
  if (rank == 0) set("XC_STORE_FD", std::to_string(job.store_fd));
  if (place.gpu >= 0) set("XC_LOCAL_GPU", std::to_string(place.gpu));
  if (!place.nic.empty()) set("XC_LOCAL_NIC", place.nic);
  // The torchrun names, so a program written for torchrun runs unchanged.
  // xcomm itself reads XC_STORE_ADDR under xcrun (its launcher detection
  // puts xcrun first); MASTER_PORT is for the program's own rendezvous,
  // torch.distributed's TCPStore, which rank 0 binds: a port of its own.
  set("RANK", r);
  set("WORLD_SIZE", n);
  set("LOCAL_RANK", lr);
  set("LOCAL_WORLD_SIZE", ln);
  set("MASTER_ADDR", job.master_addr);
  set("MASTER_PORT", std::to_string(job.master_port));
  return env;
}

// ------------------------------------------------------------- placement
//
// Where each rank runs. xcrun reads the machine from /sys and /proc (no
// hwloc: it must start fast and link nothing), within the cpus it may use
// itself (sched_getaffinity: a cgroup cpuset, taskset, a Slurm allocation):
//
// * The NUMA node of a rank is the node of its GPU when the GPUs' nodes are
//   known (rank r uses GPU r mod G, and the data it moves lives there);
//   otherwise the ranks are dealt to the nodes in contiguous blocks, in
//   proportion to each node's cores. Blocks, not round robin: ranks r and
//   r+1 are neighbours in rings and halving steps, and keeping them on one
//   node keeps that traffic off the inter-socket link; block order also
//   follows the usual GPU numbering (GPUs 0..3 on node 0 and so on).
// * --bind-to core: each rank gets one physical core (all its hardware
//   threads) of its node; the ranks of one node are spread evenly over its
//   cores, so a node's cache and memory bandwidth are shared out evenly
//   while ranks r and r+1 stay close. More ranks than cores on a node: they
//   share cores in turn, with a warning.
// * --bind-to numa: every cpu of the rank's node.
// * --bind-to none: xcrun's own affinity, untouched.
// * Default: core when no node gets more ranks than it has cores (in
//   particular whenever ranks <= cores and no GPU rule applies), else
//   none: an oversubscribed run is better left to the scheduler.
//
// XC_LOCAL_GPU is the local rank modulo the number of GPUs (those in
// /proc/driver/nvidia/gpus, narrowed by a numeric CUDA_VISIBLE_DEVICES and
// counted in its order), XC_LOCAL_NIC the network device on the rank's
// node, preferring RDMA devices (/sys/class/infiniband) to network
// interfaces, physical to virtual, and up to down; else the first of them.
//
// XCRUN_FSROOT, like hwloc's HWLOC_FSROOT, reads /sys and /proc under
// another root; the tests describe made-up machines with it.

namespace {

std::string fs_path(const std::string &path) {
  const char *root = getenv("XCRUN_FSROOT");
  return (root ? root : "") + path;
}

// First line of a file, without trailing white space.
bool read_line(const std::string &path, std::string *out) {
  FILE *f = fopen(fs_path(path).c_str(), "re");
  if (!f) return false;
  char buf[65536];
  bool ok = fgets(buf, sizeof buf, f) != nullptr;
  fclose(f);
  if (!ok) buf[0] = '\0';
  *out = buf;
  while (!out->empty() && isspace(static_cast<unsigned char>(out->back()))) out->pop_back();
  return true;
}

int read_int(const std::string &path, int fallback) {
  std::string text;
  if (!read_line(path, &text)) return fallback;
  char *end = nullptr;
  long v = strtol(text.c_str(), &end, 10);
  return end != text.c_str() && *end == '\0' ? int(v) : fallback;
}

bool exists(const std::string &path) { return access(fs_path(path).c_str(), F_OK) == 0; }

std::vector<std::string> list_dir(const std::string &path) {
  std::vector<std::string> names;
  if (DIR *d = opendir(fs_path(path).c_str())) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

constexpr int kMaxCpu = 1 << 20;

// "0-3,8,10-11" (the kernel's cpu list format); false when malformed.
bool parse_cpu_list(const std::string &text, std::vector<int> *out) {
  out->clear();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    int lo = 0, hi = 0, used = 0;
    if (sscanf(item.c_str(), "%d-%d%n", &lo, &hi, &used) == 2 && size_t(used) == item.size()) {
    } else if (sscanf(item.c_str(), "%d%n", &lo, &used) == 1 && size_t(used) == item.size()) {
      hi = lo;
    } else {
      return false;
    }
    if (lo < 0 || hi < lo || hi >= kMaxCpu) return false;
    for (int c = lo; c <= hi; ++c) out->push_back(c);
    pos = end + 1;
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return true;
}

std::vector<int> intersect(const std::vector<int> &a, const std::vector<int> &b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

constexpr size_t kMaskBits = 8 * sizeof(unsigned long);

// The cpus xcrun may run on, sorted.
std::vector<int> own_affinity() {
  for (size_t ncpu = 1024; ncpu <= size_t(kMaxCpu); ncpu *= 4) {
    std::vector<unsigned long> mask((ncpu + kMaskBits - 1) / kMaskBits, 0);
    if (sched_getaffinity(0, mask.size() * sizeof(unsigned long), reinterpret_cast<cpu_set_t *>(mask.data())) == 0) {
      std::vector<int> cpus;
      for (size_t c = 0; c < ncpu; ++c)
        if (mask[c / kMaskBits] >> (c % kMaskBits) & 1) cpus.push_back(int(c));
      return cpus;
    }
    if (errno != EINVAL) break;  // EINVAL: the kernel's mask is larger
  }
  return {};
}

std::vector<unsigned long> to_mask(const std::vector<int> &cpus) {
  std::vector<unsigned long> mask(cpus.empty() ? 0 : size_t(cpus.back()) / kMaskBits + 1, 0);
  for (int c : cpus) mask[size_t(c) / kMaskBits] |= 1UL << (size_t(c) % kMaskBits);
  return mask;
}

struct NumaNode {
  int id = -1;                // OS index, -1 when the kernel tells of none
  std::vector<int> cpus;      // those xcrun may use
  std::vector<size_t> cores;  // indices into Machine::cores
};

struct NetDevice {
  std::string name;
  int numa = -1;
};

struct Machine {
  std::vector<int> allowed;
  std::vector<NumaNode> nodes;          // only nodes with cpus xcrun may use
  std::vector<std::vector<int>> cores;  // physical cores: their allowed hardware threads
  std::vector<int> gpu_numa;            // by CUDA ordinal: the GPU's NUMA node, -1 unknown
  std::vector<NetDevice> nics;          // most preferred first
};

std::vector<int> read_cpu_list(const std::string &path) {
  std::string text;
  std::vector<int> cpus;
  if (!read_line(path, &text) || !parse_cpu_list(text, &cpus)) cpus.clear();
  return cpus;
}

void read_cpus(Machine *m) {
  m->allowed = own_affinity();
  std::vector<int> online;
  std::string text;
  if (read_line("/sys/devices/system/cpu/online", &text) && parse_cpu_list(text, &online) && !online.empty())
    m->allowed = intersect(m->allowed, online);
  std::vector<int> covered;
  for (const std::string &name : list_dir("/sys/devices/system/node")) {
    if (name.compare(0, 4, "node") != 0 || name.size() == 4 ||
        name.find_first_not_of("0123456789", 4) != std::string::npos)
      continue;
    NumaNode node;
    node.id = atoi(name.c_str() + 4);
    node.cpus = intersect(read_cpu_list("/sys/devices/system/node/" + name + "/cpulist"), m->allowed);
    if (node.cpus.empty()) continue;  // memory only, or outside our cpuset
    covered.insert(covered.end(), node.cpus.begin(), node.cpus.end());
    m->nodes.push_back(node);
  }
  std::sort(m->nodes.begin(), m->nodes.end(), [](const NumaNode &a, const NumaNode &b) { return a.id < b.id; });
  std::sort(covered.begin(), covered.end());
  std::vector<int> rest;
  std::set_difference(m->allowed.begin(), m->allowed.end(), covered.begin(), covered.end(), std::back_inserter(rest));
  if (!rest.empty()) {  // no NUMA information (or cpus it does not name)
    NumaNode node;
    node.cpus = rest;
    m->nodes.push_back(node);
  }
  // Physical cores, node by node: a cpu and its hardware-thread siblings.
  for (NumaNode &node : m->nodes) {
    std::vector<int> placed;
    for (int cpu : node.cpus) {
      if (std::binary_search(placed.begin(), placed.end(), cpu)) continue;
      std::string topo = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      std::vector<int> siblings = read_cpu_list(topo + "core_cpus_list");
      if (siblings.empty()) siblings = read_cpu_list(topo + "thread_siblings_list");
      std::vector<int> core = intersect(siblings, node.cpus);
      if (!std::binary_search(core.begin(), core.end(), cpu)) core = {cpu};
      for (int c : core) placed.insert(std::upper_bound(placed.begin(), placed.end(), c), c);
      node.cores.push_back(m->cores.size());
      m->cores.push_back(core);
    }
  }
}

// GPUs the ranks can use, in CUDA's order: the driver's list (by PCI bus
// id, which is CUDA's order under CUDA_DEVICE_ORDER=PCI_BUS_ID and on the
// usual machines of one GPU model) narrowed by CUDA_VISIBLE_DEVICES. UUIDs
// or MIG names there are counted but not located.
void read_gpus(Machine *m) {
  std::vector<std::string> buses = list_dir("/proc/driver/nvidia/gpus");
  std::vector<int> numa;
  for (const std::string &bus : buses) numa.push_back(read_int("/sys/bus/pci/devices/" + bus + "/numa_node", -1));
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");
  if (!visible || buses.empty()) {
    m->gpu_numa = numa;
    return;
  }
  // CUDA stops at the first entry it cannot use.
  std::string text = visible;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    char *stop = nullptr;
    long index = strtol(item.c_str(), &stop, 10);
    if (!item.empty() && *stop == '\0') {
      if (index < 0 || size_t(index) >= buses.size()) break;
      m->gpu_numa.push_back(numa[size_t(index)]);
    } else if (item.compare(0, 4, "GPU-") == 0 || item.compare(0, 4, "MIG-") == 0) {
      m->gpu_numa.push_back(-1);
    } else {
      break;
    }
  }
}

void read_nics(Machine *m) {
  struct Candidate {
    NetDevice dev;
    int rank;  // lower is preferred
  };
  std::vector<Candidate> found;
  for (const std::string &name : list_dir("/sys/class/infiniband"))
    found.push_back({{name, read_int("/sys/class/infiniband/" + name + "/device/numa_node", -1)}, 0});
  for (const std::string &name : list_dir("/sys/class/net")) {
    if (name == "lo") continue;
    std::string dir = "/sys/class/net/" + name;
    std::string state;
    bool up = read_line(dir + "/operstate", &state) && state == "up";
    bool physical = exists(dir + "/device");
    found.push_back({{name, read_int(dir + "/device/numa_node", -1)}, 1 + (physical ? 0 : 2) + (up ? 0 : 1)});
  }
  std::stable_sort(found.begin(), found.end(), [](const Candidate &a, const Candidate &b) { return a.rank < b.rank; });
  for (const Candidate &c : found) m->nics.push_back(c.dev);
}

const std::string &nearest_nic(const Machine &m, int numa) {
  static const std::string none;
  if (m.nics.empty()) return none;
  for (const NetDevice &d : m.nics)
    if (numa >= 0 && d.numa == numa) return d.name;
  return m.nics.front().name;
}

}  // namespace

std::string cpu_list_text(const std::vector<int> &cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(cpus[i]);
    if (j > i) text += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return text;
}

std::vector<Placement> place_ranks(const Options &o) {
  Machine m;
  read_cpus(&m);
  read_gpus(&m);
  read_nics(&m);
  int np = o.np;
  std::vector<Placement> places(static_cast<size_t>(np));
  for (Placement &p : places) p.host_cpus = int(m.allowed.size());
  size_t total_cores = m.cores.size();

  // Each rank's node: its GPU's when every GPU's node is one of ours, else
  // contiguous blocks in proportion to the nodes' cores.
  std::vector<size_t> node_of(size_t(np), 0);
  auto node_index = [&](int id) -> int {
    for (size_t k = 0; k < m.nodes.size(); ++k)
      if (m.nodes[k].id == id && id >= 0) return int(k);
    return -1;
  };
  bool by_gpu = !m.gpu_numa.empty() && !m.nodes.empty() &&
                std::all_of(m.gpu_numa.begin(), m.gpu_numa.end(), [&](int id) { return node_index(id) >= 0; });
  std::vector<size_t> node_of_core;  // cores are numbered node by node
  for (size_t k = 0; k < m.nodes.size(); ++k) node_of_core.insert(node_of_core.end(), m.nodes[k].cores.size(), k);
  for (int r = 0; r < np; ++r) {
    if (by_gpu) {
      node_of[size_t(r)] = size_t(node_index(m.gpu_numa[size_t(r) % m.gpu_numa.size()]));
    } else if (total_cores > 0) {
      node_of[size_t(r)] = node_of_core[size_t(uint64_t(r) * total_cores / uint64_t(np))];
    }
  }
  std::vector<int> ranks_on(m.nodes.size(), 0);
  if (!m.nodes.empty())
    for (size_t k : node_of) ++ranks_on[k];
  bool oversubscribed = false;
  for (size_t k = 0; k < m.nodes.size(); ++k) oversubscribed |= size_t(ranks_on[k]) > m.nodes[k].cores.size();

  BindTo bind = o.bind_to;
  if (total_cores == 0 && bind != BindTo::kNone) {
    if (bind != BindTo::kDefault) say("cannot tell which cpus this host has; the ranks are not bound");
    bind = BindTo::kNone;
  }
  if (bind == BindTo::kDefault) bind = oversubscribed ? BindTo::kNone : BindTo::kCore;
  if (bind == BindTo::kCore && oversubscribed) {
    for (size_t k = 0; k < m.nodes.size(); ++k)
      if (size_t(ranks_on[k]) > m.nodes[k].cores.size())
        say("--bind-to core: " + plural(ranks_on[k], "rank") + " on the " + plural(int(m.nodes[k].cores.size()), "core") +
            (m.nodes[k].id >= 0 ? " of NUMA node " + std::to_string(m.nodes[k].id) : "") + "; they share cores");
  }

  std::vector<int> seen_on(m.nodes.size(), 0);
  for (int r = 0; r < np; ++r) {
    Placement &p = places[size_t(r)];
    if (!m.gpu_numa.empty()) p.gpu = r % int(m.gpu_numa.size());
    if (m.nodes.empty()) {
      p.cpus = m.allowed;
      p.how = "not bound";
      p.nic = nearest_nic(m, -1);
      continue;
    }
    const NumaNode &node = m.nodes[node_of[size_t(r)]];
    p.numa_node = node.id;
    p.nic = nearest_nic(m, node.id);
    std::string where = node.id >= 0 ? "NUMA node " + std::to_string(node.id) : "the only NUMA node";
    int j = seen_on[node_of[size_t(r)]]++;  // the rank's place among those on its node
    size_t cores = node.cores.size(), here = size_t(ranks_on[node_of[size_t(r)]]);
    switch (bind) {
      case BindTo::kCore: {
        size_t slot = here <= cores ? size_t(j) * cores / here : size_t(j) % cores;
        p.cpus = m.cores[node.cores[slot]];
        p.how = "core on " + where;
        p.mask = to_mask(p.cpus);
        break;
      }
      case BindTo::kNuma:
        p.cpus = node.cpus;
        p.how = where;
        p.mask = to_mask(p.cpus);
        break;
      default:
        p.cpus = m.allowed;
        p.how = "not bound";
        break;
    }
  }
  return places;
}

}  // namespace xcrun
