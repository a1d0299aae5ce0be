// Names, classification, lookups and bandwidth estimates of a Topology.
#include "topo/topology.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "topo/topo_internal.h"

namespace xc::topo {

const char *link_type_name(LinkType t) {
  switch (t) {
    case LinkType::kSelf: return "self";
    case LinkType::kNvswitch: return "nvswitch";
    case LinkType::kNvlink: return "nvlink";
    case LinkType::kPcie: return "pcie";
    case LinkType::kNone: return "none";
  }
  return "unknown";
}

bool parse_link_type(const std::string &name, LinkType *out) {
  for (LinkType t : {LinkType::kSelf, LinkType::kNvswitch, LinkType::kNvlink, LinkType::kPcie, LinkType::kNone}) {
    if (name == link_type_name(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

const char *host_class_name(HostClass c) {
  switch (c) {
    case HostClass::kNoGpu: return "no_gpu";
    case HostClass::kFullyConnected: return "fully_connected";
    case HostClass::kHybridCubeMesh: return "hybrid_cube_mesh";
    case HostClass::kPartialNvlink: return "partial_nvlink";
    case HostClass::kPcieOnly: return "pcie_only";
  }
  return "unknown";
}

namespace {
bool nvlinked(const GpuLink &l) { return l.type == LinkType::kNvlink || l.type == LinkType::kNvswitch; }
}  // namespace

// Decisions:
// - One GPU is fully connected: no pair lacks an NVLink, and the selector's
//   question ("may every GPU reach every other over NVLink?") answers yes.
//   Two GPUs joined by one NVLink bridge are fully connected for the same
//   reason: their only pair is NVLinked.
// - A links matrix that does not match gpus (a hand-made Topology) counts
//   the missing pairs as not NVLinked.
HostClass Topology::classify() const {
  const size_t n = gpus.size();
  if (n == 0) return HostClass::kNoGpu;
  if (nvswitch) return HostClass::kFullyConnected;
  auto linked = [&](size_t i, size_t j) {
    return i < links.size() && j < links[i].size() && nvlinked(links[i][j]);
  };
  size_t pairs = 0, nv_pairs = 0;
  std::vector<int> degree(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      // A pair counts as linked when either direction says so (the driver
      // reports each end; they agree on real hardware).
      bool l = linked(i, j) || linked(j, i);
      if (l) ++degree[i];
      if (i < j) {
        ++pairs;
        if (l) ++nv_pairs;
      }
    }
  }
  if (nv_pairs == pairs) return HostClass::kFullyConnected;
  // DGX-1 (P100/V100): two fully connected quads plus one link from each
  // GPU to its counterpart in the other quad: degree 4 and not complete.
  if (n == 8 && *std::min_element(degree.begin(), degree.end()) >= 4) return HostClass::kHybridCubeMesh;
  if (nv_pairs > 0) return HostClass::kPartialNvlink;
  return HostClass::kPcieOnly;
}

int Topology::numa_of_cpu(int cpu) const {
  for (const NumaNode &n : numa)
    if (std::find(n.cpus.begin(), n.cpus.end(), cpu) != n.cpus.end()) return n.os_index;
  return -1;
}

const PciDevice *Topology::find_pci(const std::string &bus_id) const {
  std::string want = pci_address_key(bus_id);
  if (want.empty()) return nullptr;
  for (const PciDevice &d : pci)
    if (pci_address_key(d.bus_id) == want) return &d;
  return nullptr;
}

int Topology::numa_of_pci(const std::string &bus_id) const {
  const PciDevice *d = find_pci(bus_id);
  return d ? d->numa_node : -1;
}

void fill_numa_from_pci(Topology *t) {
  for (Gpu &g : t->gpus)
    if (g.numa_node < 0) g.numa_node = t->numa_of_pci(g.bus_id);
  for (Nic &n : t->nics)
    if (n.numa_node < 0) n.numa_node = t->numa_of_pci(n.bus_id);
}

std::string pci_address_key(const std::string &text) {
  // [domain:]bus:device.function, hex; the domain has up to 8 digits (NVML
  // writes 8, Linux and hwloc 4).
  unsigned long parts[4] = {0, 0, 0, 0};
  size_t limits[4] = {8, 2, 2, 1};
  const char seps[4] = {':', ':', '.', '\0'};
  std::vector<std::string> fields;
  std::string cur;
  for (char c : text) {
    if (c == ':' || c == '.') {
      fields.push_back(cur);
      fields.push_back(std::string(1, c));
      cur.clear();
    } else {
      cur += c;
    }
  }
  fields.push_back(cur);
  // Without a domain: bus ':' dev '.' fn (5 fields); with: 7.
  size_t first = 0;
  if (fields.size() == 5) {
    first = 1;
  } else if (fields.size() != 7) {
    return "";
  }
  for (size_t k = first, f = 0; k < 4; ++k, f += 2) {
    const std::string &digits = fields[f];
    if (digits.empty() || digits.size() > limits[k]) return "";
    for (char c : digits)
      if (!isxdigit(static_cast<unsigned char>(c))) return "";
    if (k < 3 && fields[f + 1][0] != seps[k]) return "";
    parts[k] = strtoul(digits.c_str(), nullptr, 16);
  }
  if (parts[3] > 7 || parts[2] > 0x1f) return "";
  char buf[40];
  snprintf(buf, sizeof buf, "%04lx:%02lx:%02lx.%lx", parts[0], parts[1], parts[2], parts[3]);
  return buf;
}

bool operator==(const NumaNode &a, const NumaNode &b) {
  return a.os_index == b.os_index && a.cpus == b.cpus && a.memory_bytes == b.memory_bytes;
}
bool operator==(const Gpu &a, const Gpu &b) {
  return a.index == b.index && a.name == b.name && a.bus_id == b.bus_id && a.uuid == b.uuid &&
         a.numa_node == b.numa_node;
}
bool operator==(const Nic &a, const Nic &b) {
  return a.name == b.name && a.bus_id == b.bus_id && a.numa_node == b.numa_node;
}
bool operator==(const PciDevice &a, const PciDevice &b) {
  return a.bus_id == b.bus_id && a.class_id == b.class_id && a.vendor_id == b.vendor_id &&
         a.device_id == b.device_id && a.link_gbps == b.link_gbps && a.numa_node == b.numa_node;
}
bool operator==(const GpuLink &a, const GpuLink &b) {
  return a.type == b.type && a.nvlinks == b.nvlinks && a.p2p_driver == b.p2p_driver &&
         a.p2p_tested == b.p2p_tested && a.p2p_works == b.p2p_works && a.bandwidth_gbps == b.bandwidth_gbps;
}
bool operator==(const Topology &a, const Topology &b) {
  return a.source == b.source && a.hostname == b.hostname && a.packages == b.packages && a.cores == b.cores &&
         a.pus == b.pus && a.l2_bytes == b.l2_bytes && a.l3_bytes == b.l3_bytes && a.numa == b.numa &&
         a.gpus == b.gpus && a.nics == b.nics && a.pci == b.pci && a.links == b.links &&
         a.nvswitch == b.nvswitch && a.nvml == b.nvml && a.cuda == b.cuda;
}

// Bandwidth estimates, GB/s in one direction (what a large copy achieves is
// some 80-90% of these for NVLink and ~80% of the raw PCIe rate):
//
//   NVLink, per lane (link) and direction, by GPU generation:
//     P100 (NVLink1) 20; V100 (NVLink2) 25 -> 6 lanes 150; A100 (NVLink3) 25
//     -> 12 lanes 300; H100/H200/H800 (NVLink4) 25 -> 18 lanes 450;
//     B100/B200/GB200/B300 (NVLink5) 50 -> 18 lanes 900; GA102 boards joined
//     by a bridge (RTX A6000/A5000/A40/RTX 3090) 14.0625 -> 4 lanes 56.25;
//     anything else 25. An NVSwitch pair gets the lanes of the pair times
//     the same per-lane rate (H100 SXM: 18 x 25 = 450).
//   PCIe, x16, per direction: 0.8 x the link rate the CPU probe read for the
//     slower GPU of the pair when it is known, to 0.01 GB/s (hwloc's GB/s: Gen3 15.75,
//     Gen4 31.5, Gen5 63); otherwise by GPU generation: Gen3 (P100, V100,
//     T4) 12, Gen5 (H100, H200, B-series) 50, everything else Gen4 25.
namespace {

bool name_has(const std::string &name, const char *what) { return name.find(what) != std::string::npos; }

double nvlink_lane_gbps(const std::string &name) {
  if (name_has(name, "P100")) return 20;
  for (const char *n : {"B100", "B200", "B300", "GB200", "GB300"})
    if (name_has(name, n)) return 50;
  for (const char *n : {"A6000", "A5000", "A40", "3090"})
    if (name_has(name, n)) return 14.0625;
  return 25;
}

double pcie_gbps_by_name(const std::string &name) {
  for (const char *n : {"P100", "V100", "T4", "P40", "P4"})
    if (name_has(name, n)) return 12;
  for (const char *n : {"H100", "H200", "H800", "H20", "B100", "B200", "B300", "GB200", "GB300"})
    if (name_has(name, n)) return 50;
  return 25;
}

}  // namespace

double estimate_link_gbps(const Topology &t, int a, int b) {
  if (a < 0 || b < 0 || static_cast<size_t>(a) >= t.links.size() || static_cast<size_t>(b) >= t.links[a].size())
    return 0;
  const GpuLink &l = t.links[a][b];
  auto gpu_name = [&](int i) { return static_cast<size_t>(i) < t.gpus.size() ? t.gpus[i].name : std::string(); };
  switch (l.type) {
    case LinkType::kSelf:
    case LinkType::kNone:
      return 0;
    case LinkType::kNvlink:
    case LinkType::kNvswitch: {
      double lane = std::min(nvlink_lane_gbps(gpu_name(a)), nvlink_lane_gbps(gpu_name(b)));
      return lane * std::max(1, l.nvlinks);
    }
    case LinkType::kPcie: {
      double speed[2] = {0, 0};
      int ends[2] = {a, b};
      for (int k = 0; k < 2; ++k) {
        if (static_cast<size_t>(ends[k]) >= t.gpus.size()) continue;
        if (const PciDevice *d = t.find_pci(t.gpus[ends[k]].bus_id)) speed[k] = d->link_gbps;
      }
      if (speed[0] > 0 && speed[1] > 0) return std::round(80 * std::min(speed[0], speed[1])) / 100;  // 0.01 GB/s
      return std::min(pcie_gbps_by_name(gpu_name(a)), pcie_gbps_by_name(gpu_name(b)));
    }
  }
  return 0;
}

void fill_link_estimates(Topology *t) {
  for (size_t i = 0; i < t->links.size(); ++i)
    for (size_t j = 0; j < t->links[i].size(); ++j)
      if (t->links[i][j].bandwidth_gbps == 0)
        t->links[i][j].bandwidth_gbps = estimate_link_gbps(*t, static_cast<int>(i), static_cast<int>(j));
}

}  // namespace xc::topo
