// What a host looks like: cores, NUMA nodes, GPUs and NICs with their PCI
// locality, and how GPUs are linked. One value, probed (hwloc; NVML and the
// CUDA runtime loaded with dlopen, never linked) or loaded from a file
// (XC_TOPO_FILE) so tests run anywhere, and serialisable to and from JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace xc::topo {

// How two GPUs reach each other, best first.
enum class LinkType { kSelf = 0, kNvswitch = 1, kNvlink = 2, kPcie = 3, kNone = 4 };
const char *link_type_name(LinkType t);

// The shape of one host's GPU interconnect, as the algorithm selector sees it.
enum class HostClass {
  kNoGpu = 0,
  kFullyConnected = 1,   // NVSwitch, or an NVLink between every pair
  kHybridCubeMesh = 2,   // 8 GPUs, each NVLinked to 4 or more others in the DGX-1 pattern
  kPartialNvlink = 3,    // some pairs NVLinked, others not
  kPcieOnly = 4,
};
const char *host_class_name(HostClass c);

struct NumaNode {
  int os_index = 0;
  std::vector<int> cpus;  // OS indices of the processing units
  uint64_t memory_bytes = 0;
};

struct Gpu {
  int index = 0;            // CUDA/NVML device index
  std::string name;         // "NVIDIA H100 80GB HBM3"
  std::string bus_id;       // PCI "0000:18:00.0"
  std::string uuid;         // "GPU-..."
  int numa_node = -1;       // OS index, -1 unknown
};

struct Nic {
  std::string name;         // "mlx5_0", "eth0"
  std::string bus_id;
  int numa_node = -1;
};

// A PCI device the CPU probe saw (GPUs, NICs, storage, accelerators: what
// hwloc keeps as "important"), with its locality.
struct PciDevice {
  std::string bus_id;       // "0000:18:00.0" (normalised: 4-digit domain, lower case)
  uint16_t class_id = 0;    // 0x0302 3D controller, 0x0207 InfiniBand, 0x0200 Ethernet
  uint16_t vendor_id = 0, device_id = 0;
  double link_gbps = 0;     // PCIe link speed, GB/s one direction as hwloc reports it; 0 unknown
  int numa_node = -1;       // OS index, -1 unknown
};

struct GpuLink {
  LinkType type = LinkType::kNone;
  int nvlinks = 0;               // NVLink lanes between the pair
  bool p2p_driver = false;       // the driver says peer access works
  bool p2p_tested = false;       // a real peer copy was tried...
  bool p2p_works = false;        // ...and its result was right
  double bandwidth_gbps = 0;     // estimate, one direction
};

struct Topology {
  std::string source;       // "probe" or "file:<path>"
  std::string hostname;
  int packages = 0, cores = 0, pus = 0;
  uint64_t l2_bytes = 0, l3_bytes = 0;  // per instance, largest seen
  std::vector<NumaNode> numa;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  std::vector<PciDevice> pci;               // from the CPU probe; see numa_of_pci
  std::vector<std::vector<GpuLink>> links;  // gpus.size() × gpus.size()
  bool nvswitch = false;
  std::string nvml;         // "not found", "loaded", or why it failed
  std::string cuda;         // likewise for the CUDA runtime

  HostClass classify() const;
  // NUMA node of OS cpu index cpu (-1 unknown).
  int numa_of_cpu(int cpu) const;
  // The PCI device with this bus id (any spelling of the address:
  // NVML's "00000000:18:00.0" matches hwloc's "0000:18:00.0"), or nullptr.
  const PciDevice *find_pci(const std::string &bus_id) const;
  // NUMA node of the PCI device with this bus id (-1 unknown or not seen).
  int numa_of_pci(const std::string &bus_id) const;

  std::string to_json() const;
  static Status from_json(const std::string &text, Topology *out);
};

bool operator==(const NumaNode &a, const NumaNode &b);
bool operator==(const Gpu &a, const Gpu &b);
bool operator==(const Nic &a, const Nic &b);
bool operator==(const PciDevice &a, const PciDevice &b);
bool operator==(const GpuLink &a, const GpuLink &b);
bool operator==(const Topology &a, const Topology &b);  // every field, doubles exactly
inline bool operator!=(const Topology &a, const Topology &b) { return !(a == b); }

// Estimated bandwidth in GB/s, one direction, of the link between GPUs a and
// b as the table in topology.cc gives it for the link type, NVLink lane count
// and GPU generation (0 for kSelf and kNone).
double estimate_link_gbps(const Topology &t, int a, int b);
// Sets every link's bandwidth_gbps that is 0 to its estimate.
void fill_link_estimates(Topology *t);

// load_file(XC_TOPO_FILE) when that is set and not empty, else the live
// machine: hostname, the CPU side (hwloc, or /sys without it), then the GPUs
// (gpu_probe.h); GPUs and NICs get their NUMA node from the PCI devices and
// links without a bandwidth get estimate_link_gbps.
// How much of the GPU side to learn. kFull (tools) also asks the CUDA runtime
// and runs the peer copy test (XC_TOPO_PEER_TEST permitting), which opens a
// context on every GPU. kNvmlOnly (start-up of every job) initialises no CUDA
// in the caller's process: NVML alone gives GPUs, NVLinks and the driver's
// peer answer.
enum class GpuProbe { kFull, kNvmlOnly };
Status probe(Topology *out, GpuProbe depth = GpuProbe::kFull);
// A topology description file (JSON naming an hwloc XML file for the CPU
// side, plus GPUs, NICs and links), as shipped under tests/topo/.
Status load_file(const std::string &path, Topology *out);

}  // namespace xc::topo
