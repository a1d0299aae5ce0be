// The CPU side of a Topology: packages, cores, PUs, L2/L3, NUMA nodes with
// their cpus and memory, and the PCI devices that matter (GPUs, NICs,
// storage, accelerators) with their NUMA locality. hwloc reads it from the
// live machine or from an XML file; without hwloc the live machine is read
// from /sys (no XML then).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "base/log.h"
#include "topo/topo_internal.h"
#include "xcomm_build_config.h"

#if XC_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace xc::topo {

namespace {

// PCI classes worth keeping, the ones hwloc's HWLOC_TYPE_FILTER_KEEP_IMPORTANT
// keeps: storage, network, display/3D, processors, accelerators, InfiniBand,
// Fibre Channel, CXL memory.
bool important_pci_class(unsigned class_id) {
  unsigned base = class_id >> 8;
  return base == 0x01 || base == 0x02 || base == 0x03 || base == 0x0b || base == 0x12 || class_id == 0x0c04 ||
         class_id == 0x0c06 || class_id == 0x0502;
}

void sort_numa(Topology *t) {
  std::sort(t->numa.begin(), t->numa.end(),
            [](const NumaNode &a, const NumaNode &b) { return a.os_index < b.os_index; });
  for (NumaNode &n : t->numa) std::sort(n.cpus.begin(), n.cpus.end());
}

}  // namespace

// ---------------------------------------------------------------- hwloc ----

#if XC_HAVE_HWLOC
namespace {

class HwlocTopology {
 public:
  HwlocTopology() = default;
  HwlocTopology(const HwlocTopology &) = delete;
  HwlocTopology &operator=(const HwlocTopology &) = delete;
  ~HwlocTopology() {
    if (t_) hwloc_topology_destroy(t_);
  }
  Status init() {
    if (hwloc_topology_init(&t_) != 0) {
      t_ = nullptr;
      return SystemError(errno, "hwloc_topology_init");
    }
    // PCI devices and their OS devices (NICs) are what makes the CPU side
    // useful to us: GPU and NIC locality.
    hwloc_topology_set_io_types_filter(t_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    return Status::Ok();
  }
  hwloc_topology_t get() const { return t_; }

 private:
  hwloc_topology_t t_ = nullptr;
};

std::string bus_id_of(hwloc_obj_t pcidev) {
  char buf[32];
  snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", pcidev->attr->pcidev.domain, pcidev->attr->pcidev.bus,
           pcidev->attr->pcidev.dev, pcidev->attr->pcidev.func);
  return buf;
}

// The NUMA node an I/O object is attached to: the one NUMA node of its
// closest non-I/O ancestor, -1 when that ancestor spans several (a device
// hanging off the Machine of a multi-socket host) or none.
int numa_of_io(hwloc_topology_t topo, hwloc_obj_t obj) {
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj);
  if (!anc || !anc->nodeset || hwloc_bitmap_weight(anc->nodeset) != 1) return -1;
  return hwloc_bitmap_first(anc->nodeset);
}

bool is_nic(hwloc_obj_t osdev) {
#if HWLOC_API_VERSION >= 0x00030000
  return (osdev->attr->osdev.types & (HWLOC_OBJ_OSDEV_NETWORK | HWLOC_OBJ_OSDEV_OPENFABRICS)) != 0;
#else
  return osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK || osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
#endif
}

void fill_from_hwloc(hwloc_topology_t topo, Topology *t) {
  auto count = [&](hwloc_obj_type_t type) {
    int n = hwloc_get_nbobjs_by_type(topo, type);
    return n > 0 ? n : 0;
  };
  t->pus = count(HWLOC_OBJ_PU);
  t->cores = count(HWLOC_OBJ_CORE);
  t->packages = count(HWLOC_OBJ_PACKAGE);
  if (t->cores == 0) t->cores = t->pus;                    // platforms without a Core level
  if (t->packages == 0 && t->pus > 0) t->packages = 1;

  t->l2_bytes = t->l3_bytes = 0;
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_L2CACHE, o));)
    t->l2_bytes = std::max<uint64_t>(t->l2_bytes, o->attr->cache.size);
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_L3CACHE, o));)
    t->l3_bytes = std::max<uint64_t>(t->l3_bytes, o->attr->cache.size);

  t->numa.clear();
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o));) {
    NumaNode n;
    n.os_index = static_cast<int>(o->os_index);
    n.memory_bytes = o->attr->numanode.local_memory;
    if (o->cpuset) {
      for (int cpu = hwloc_bitmap_first(o->cpuset); cpu >= 0; cpu = hwloc_bitmap_next(o->cpuset, cpu))
        n.cpus.push_back(cpu);
    }
    t->numa.push_back(std::move(n));
  }
  sort_numa(t);

  t->pci.clear();
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_pcidev(topo, o));) {
    if (!important_pci_class(o->attr->pcidev.class_id)) continue;
    PciDevice d;
    d.bus_id = bus_id_of(o);
    d.class_id = o->attr->pcidev.class_id;
    d.vendor_id = o->attr->pcidev.vendor_id;
    d.device_id = o->attr->pcidev.device_id;
    // hwloc keeps the speed as a float: take its 7 significant digits, not
    // the float's binary tail (31.50769, not 31.507692337036133).
    char speed[32];
    snprintf(speed, sizeof speed, "%.7g", static_cast<double>(o->attr->pcidev.linkspeed));
    d.link_gbps = strtod(speed, nullptr);
    d.numa_node = numa_of_io(topo, o);
    t->pci.push_back(std::move(d));
  }

  t->nics.clear();
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(topo, o));) {
    if (!is_nic(o) || !o->name) continue;
    Nic n;
    n.name = o->name;
    hwloc_obj_t p = o->parent;
    while (p && p->type != HWLOC_OBJ_PCI_DEVICE && hwloc_obj_type_is_io(p->type)) p = p->parent;
    if (p && p->type == HWLOC_OBJ_PCI_DEVICE) n.bus_id = bus_id_of(p);
    n.numa_node = numa_of_io(topo, o);
    t->nics.push_back(std::move(n));
  }
}

}  // namespace
#endif  // XC_HAVE_HWLOC

Status probe_cpu_xml(const std::string &xml_path, Topology *t) {
#if XC_HAVE_HWLOC
  if (access(xml_path.c_str(), R_OK) != 0) return SystemError(errno, "hwloc XML file %s", xml_path.c_str());
  HwlocTopology topo;
  XC_TRY(topo.init());
  // The file is readable (checked above), so a failure here is its content
  // (hwloc parses it in set_xml already, and builds the topology in load).
  if (hwloc_topology_set_xml(topo.get(), xml_path.c_str()) != 0 || hwloc_topology_load(topo.get()) != 0)
    return Error(XC_ERR_INVALID_ARGUMENT, "hwloc cannot load %s: not a valid hwloc XML topology (%s)",
                 xml_path.c_str(), strerror(errno));
  fill_from_hwloc(topo.get(), t);
  return Status::Ok();
#else
  (void)t;
  return Error(XC_ERR_UNSUPPORTED, "cannot read hwloc XML file %s: this build of xcomm has no hwloc",
               xml_path.c_str());
#endif
}

// -------------------------------------------------------------- /sys ------

namespace {

bool read_text(const std::string &path, std::string *out) {
  std::ifstream f(path);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  while (!out->empty() && (out->back() == '\n' || out->back() == ' ')) out->pop_back();
  return true;
}

long read_long(const std::string &path, long fallback) {
  std::string s;
  if (!read_text(path, &s) || s.empty()) return fallback;
  char *end = nullptr;
  long v = strtol(s.c_str(), &end, 0);
  return end == s.c_str() ? fallback : v;
}

// "0-3,8,10-11"
std::vector<int> parse_cpulist(const std::string &s) {
  std::vector<int> out;
  const char *p = s.c_str();
  while (*p) {
    char *end = nullptr;
    long a = strtol(p, &end, 10);
    if (end == p) break;
    long b = a;
    p = end;
    if (*p == '-') {
      b = strtol(p + 1, &end, 10);
      if (end == p + 1) break;
      p = end;
    }
    for (long c = a; c <= b && c - a < (1 << 20); ++c) out.push_back(static_cast<int>(c));
    if (*p != ',') break;
    ++p;
  }
  return out;
}

// "2048K", "32M", "1G" -> bytes
uint64_t parse_size(const std::string &s) {
  char *end = nullptr;
  unsigned long long v = strtoull(s.c_str(), &end, 10);
  switch (*end) {
    case 'K': return v << 10;
    case 'M': return v << 20;
    case 'G': return v << 30;
    default: return v;
  }
}

std::vector<std::string> list_dir(const std::string &path) {
  std::vector<std::string> out;
  DIR *d = opendir(path.c_str());
  if (!d) return out;
  while (struct dirent *e = readdir(d))
    if (e->d_name[0] != '.') out.push_back(e->d_name);
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The PCI bus id of a device under /sys/class/<cls>/<name>: the last path
// component of its device link's target that is one ("" for virtual ones).
std::string pci_parent_of(const std::string &class_entry) {
  std::string dev = class_entry + "/device";
  char real[PATH_MAX];
  if (!realpath(dev.c_str(), real)) return "";
  std::string path = real, found;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    std::string part = path.substr(pos, next - pos);
    if (part.size() >= 12 && !pci_address_key(part).empty()) found = pci_address_key(part);
    pos = next + 1;
  }
  return found;
}

}  // namespace

Status probe_cpu_sysfs(Topology *t) {
  const std::string cpu_root = "/sys/devices/system/cpu";
  std::string text;
  std::vector<int> online;
  if (read_text(cpu_root + "/online", &text)) online = parse_cpulist(text);
  if (online.empty()) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < n; ++i) online.push_back(static_cast<int>(i));
  }
  t->pus = static_cast<int>(online.size());

  std::set<long> packages;
  std::set<std::pair<long, std::pair<long, long>>> cores;
  t->l2_bytes = t->l3_bytes = 0;
  for (int cpu : online) {
    std::string base = cpu_root + "/cpu" + std::to_string(cpu);
    long pkg = read_long(base + "/topology/physical_package_id", 0);
    long die = read_long(base + "/topology/die_id", 0);
    long core = read_long(base + "/topology/core_id", cpu);
    packages.insert(pkg);
    cores.insert({pkg, {die, core}});
    for (const std::string &idx : list_dir(base + "/cache")) {
      if (idx.compare(0, 5, "index") != 0) continue;
      std::string dir = base + "/cache/" + idx, type, size;
      long level = read_long(dir + "/level", 0);
      if (!read_text(dir + "/type", &type) || type == "Instruction" || !read_text(dir + "/size", &size)) continue;
      uint64_t bytes = parse_size(size);
      if (level == 2) t->l2_bytes = std::max(t->l2_bytes, bytes);
      if (level == 3) t->l3_bytes = std::max(t->l3_bytes, bytes);
    }
  }
  t->packages = packages.empty() ? 1 : static_cast<int>(packages.size());
  t->cores = cores.empty() ? t->pus : static_cast<int>(cores.size());

  t->numa.clear();
  const std::string node_root = "/sys/devices/system/node";
  for (const std::string &name : list_dir(node_root)) {
    if (name.compare(0, 4, "node") != 0 || name.size() == 4 ||
        name.find_first_not_of("0123456789", 4) != std::string::npos)
      continue;
    NumaNode n;
    n.os_index = atoi(name.c_str() + 4);
    if (read_text(node_root + "/" + name + "/cpulist", &text)) n.cpus = parse_cpulist(text);
    std::ifstream meminfo(node_root + "/" + name + "/meminfo");
    std::string line;
    while (std::getline(meminfo, line)) {
      size_t at = line.find("MemTotal:");
      if (at == std::string::npos) continue;
      n.memory_bytes = strtoull(line.c_str() + at + 9, nullptr, 10) << 10;  // kB
      break;
    }
    t->numa.push_back(std::move(n));
  }
  if (t->numa.empty()) {  // a kernel without NUMA support: one node holds everything
    NumaNode n;
    n.cpus = online;
    n.memory_bytes = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    t->numa.push_back(std::move(n));
  }
  sort_numa(t);
  const int only_node = t->numa.size() == 1 ? t->numa[0].os_index : -1;

  t->pci.clear();
  const std::string pci_root = "/sys/bus/pci/devices";
  for (const std::string &name : list_dir(pci_root)) {
    std::string dir = pci_root + "/" + name;
    long cls = read_long(dir + "/class", -1);
    if (cls < 0 || !important_pci_class(static_cast<unsigned>(cls >> 8))) continue;
    PciDevice d;
    d.bus_id = pci_address_key(name);
    if (d.bus_id.empty()) continue;
    d.class_id = static_cast<uint16_t>(cls >> 8);
    d.vendor_id = static_cast<uint16_t>(read_long(dir + "/vendor", 0));
    d.device_id = static_cast<uint16_t>(read_long(dir + "/device", 0));
    // The same formula as hwloc: GT/s x lanes x encoding / 8 bits.
    std::string speed;
    long width = read_long(dir + "/current_link_width", 0);
    if (read_text(dir + "/current_link_speed", &speed) && width > 0) {
      double gts = strtod(speed.c_str(), nullptr);
      double encoding = gts >= 8 ? 128.0 / 130.0 : 0.8;
      char rate[32];  // 7 significant digits, as from hwloc
      snprintf(rate, sizeof rate, "%.7g", gts * static_cast<double>(width) * encoding / 8);
      d.link_gbps = strtod(rate, nullptr);
    }
    long node = read_long(dir + "/numa_node", -1);
    d.numa_node = node >= 0 ? static_cast<int>(node) : only_node;
    t->pci.push_back(std::move(d));
  }

  t->nics.clear();
  for (const char *cls : {"infiniband", "net"}) {
    std::string root = std::string("/sys/class/") + cls;
    for (const std::string &name : list_dir(root)) {
      struct stat st;
      if (lstat((root + "/" + name + "/device").c_str(), &st) != 0) continue;  // virtual: lo, bridges, ifb
      Nic n;
      n.name = name;
      n.bus_id = pci_parent_of(root + "/" + name);
      n.numa_node = t->numa_of_pci(n.bus_id);
      if (n.numa_node < 0) n.numa_node = only_node;
      t->nics.push_back(std::move(n));
    }
  }
  return Status::Ok();
}

Status probe_cpu_live(Topology *t) {
#if XC_HAVE_HWLOC
  HwlocTopology topo;
  Status st = topo.init();
  if (st.ok()) {
#if HWLOC_API_VERSION >= 0x00020100
    // GPUs are ours to probe (NVML and the CUDA runtime through dlopen):
    // keep hwloc from initialising CUDA, OpenCL, ROCm, Level Zero or an X
    // display inside the caller's process.
    for (const char *c : {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl"})
      hwloc_topology_set_components(topo.get(), HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, c);
#endif
    if (hwloc_topology_load(topo.get()) == 0) {
      fill_from_hwloc(topo.get(), t);
      return Status::Ok();
    }
  }
  // hwloc could not read this machine: /sys still can.
  XC_INFO("hwloc could not read this machine's topology (%s); reading /sys instead", strerror(errno));
#endif
  return probe_cpu_sysfs(t);
}

}  // namespace xc::topo
