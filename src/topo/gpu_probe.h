// The GPU side of the live topology: which GPUs this process can use, how
// each pair is linked (NVLink lanes, NVSwitch, PCIe) and whether peer access
// between them really works.
//
// Nothing here is linked against the driver: NVML (libnvidia-ml.so.1, or
// XC_NVML_LIBRARY) and the CUDA runtime (libcudart.so[.13|.12], or
// XC_CUDART_LIBRARY) are loaded with dlopen, and every symbol is looked up
// with dlsym, so a machine without a GPU, a driver or a toolkit gets an empty
// GPU list and a sentence in Topology::nvml / Topology::cuda saying why.
//
// Which GPUs, and their indices: when the CUDA runtime sees devices, the list
// is CUDA's (its ordinals, after CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER),
// with NVML's facts joined by PCI bus id; without it, NVML's list and
// NVML's indices.
//
// Peer access: GpuLink::p2p_driver is the CUDA runtime's
// cudaDeviceCanAccessPeer when the runtime is there, else NVML's P2P read
// status. That answer is sometimes wrong (a PCIe switch or IOMMU that
// drops or corrupts peer traffic), so when XC_TOPO_PEER_TEST is on (the
// default) every pair the driver allows is tried once per process with a
// 1 MiB peer copy there and back, checked on the host; the result is cached
// for the life of the process.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "topo/topology.h"

namespace xc::topo {

// Fills t->gpus, t->links, t->nvswitch, t->nvml and t->cuda from the live
// machine. Returns Ok whenever the machine could be looked at, GPUs or not;
// what could not be learned is said in t->nvml / t->cuda.
// Thread safety: safe to call from several threads.
// depth kNvmlOnly leaves the CUDA runtime alone (t->cuda says so).
Status probe_gpus(Topology *t, GpuProbe depth = GpuProbe::kFull);

// What is at the far end of one active NVLink of a GPU.
struct NvlinkEnd {
  enum class Kind { kGpu, kSwitch };
  Kind kind = Kind::kGpu;
  std::string bus_id;  // normalised ("0000:18:00.0"); the remote GPU's for kGpu
};

// Fills t->links (t->gpus.size() squared) and t->nvswitch from each GPU's
// active NVLinks (nvlinks[i] belongs to t->gpus[i]; missing rows mean none)
// and the driver's peer answers (p2p_driver[i][j]; missing means no). Peer
// tests are not touched: the link's p2p_tested/p2p_works stay false.
// Separate from probe_gpus so the rules can be tested without a GPU.
// Bandwidths are left at 0: probe() fills them in by GPU generation.
void build_links(const std::vector<std::vector<NvlinkEnd>> &nvlinks,
                 const std::vector<std::vector<bool>> &p2p_driver, Topology *t);

// "00000000:18:00.0" (NVML), "0000:18:00.0" (CUDA, sysfs) → "0000:18:00.0";
// text that is no PCI address comes back lower-cased and otherwise as is.
std::string normalize_bus_id(const std::string &bus_id);

}  // namespace xc::topo
