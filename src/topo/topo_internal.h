// What the files of topo/ share and nothing else uses.
#pragma once

#include <string>

#include "base/status.h"
#include "topo/json.h"
#include "topo/topology.h"

namespace xc::topo {

// The CPU side of the live machine: packages, cores, PUs, caches, NUMA
// nodes, PCI devices and NICs (hwloc when built with it, else /sys).
Status probe_cpu_live(Topology *t);
// The same from an hwloc XML file (XC_ERR_UNSUPPORTED without hwloc).
Status probe_cpu_xml(const std::string &xml_path, Topology *t);

// "0000:18:00.0" from any common spelling of a PCI address ("18:00.0",
// NVML's "00000000:18:00.0", upper case); "" when text is not one. (Stricter
// than gpu_probe.h's normalize_bus_id, which passes other text through.)
std::string pci_address_key(const std::string &text);

// The live machine's CPU side read from /sys alone (what probe_cpu_live
// falls back to without hwloc; tests compare the two).
Status probe_cpu_sysfs(Topology *t);

// Name <-> value of the enums as written in JSON ("nvlink", "pcie_only").
bool parse_link_type(const std::string &name, LinkType *out);

// How apply_json treats a document.
struct JsonOptions {
  // A description file for load_file: may carry "hwloc_xml" and "comment",
  // and keys it leaves out keep what *t already holds. Otherwise (from_json)
  // those two keys are refused.
  bool description = false;
};

// Sets the fields of *t named in the JSON object root. Unknown keys, wrong
// types and a links matrix that is not gpus × gpus are errors that say where
// (XC_ERR_INVALID_ARGUMENT). "links" is either the full form to_json writes
// (rows of link objects) or the compact one: one string per GPU with a token
// per peer, as xc-info and nvidia-smi print them: X (self), NV<n> (n NVLinks),
// NVS<n> (n NVLinks into an NVSwitch), PCI / PIX / PXB / PHB / NODE / SYS
// (PCIe), "-" (no path).
Status apply_json(const json::Value &root, const JsonOptions &opts, Topology *t);

// Fills each GPU's and NIC's numa_node that is -1 from t->pci by bus id.
void fill_numa_from_pci(Topology *t);

}  // namespace xc::topo
