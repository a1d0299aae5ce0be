// probe(): the topology of this host, from XC_TOPO_FILE or the live machine.
// load_file(): a topology description file.
//
// A description file is a JSON object with the keys of Topology::to_json
// (any subset) plus two of its own:
//   "hwloc_xml": an hwloc XML file, relative to the JSON file's folder, that
//                gives the CPU side (packages, cores, PUs, caches, NUMA
//                nodes, PCI devices, NICs); keys in the JSON override it;
//   "comment":   free text, ignored.
// "links" may use the compact form (one string per GPU, "X NV2 NV1 SYS ..."):
// see apply_json in topo_internal.h. After reading, GPUs and NICs without a
// numa_node get the one of their PCI device, links without a bandwidth get
// the estimate of fill_link_estimates (topology.cc documents the numbers),
// and source becomes "file:<path>". So a file written by `xc-info --json`'s
// "topology" member, or by to_json, loads back as it was (but for source).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/env.h"
#include "base/host_id.h"
#include "base/log.h"
#include "topo/gpu_probe.h"
#include "topo/topo_internal.h"
#include "topo/topology.h"

namespace xc::topo {

namespace {

Status read_whole_file(const std::string &path, std::string *out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return SystemError(errno, "cannot open topology file %s", path.c_str());
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return SystemError(errno, "cannot read topology file %s", path.c_str());
  *out = ss.str();
  return Status::Ok();
}

std::string dir_of(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// What a hand-written matrix can get wrong and the JSON reader cannot see:
// the diagonal is the GPU itself and nothing else is.
Status check_links(const json::Value &root, const Topology &t) {
  const json::Value *where = root.get("links");
  if (!where) where = &root;
  for (size_t i = 0; i < t.links.size(); ++i)
    for (size_t j = 0; j < t.links[i].size(); ++j)
      if ((i == j) != (t.links[i][j].type == LinkType::kSelf))
        return json::error_at(*where, "links[" + std::to_string(i) + "][" + std::to_string(j) + "]",
                              i == j ? "a GPU's link to itself must be \"self\" (X)"
                                     : "\"self\" (X) belongs on the diagonal only");
  return Status::Ok();
}

}  // namespace

Status load_file(const std::string &path, Topology *out) {
  std::string text;
  XC_TRY(read_whole_file(path, &text));
  json::Value root;
  XC_TRY_CTX(json::parse(text, &root), path);
  if (root.kind != json::Kind::kObject)
    return Error(XC_ERR_INVALID_ARGUMENT, "%s: a topology file is a JSON object, found %s", path.c_str(),
                 json::kind_name(root.kind));

  Topology t;
  if (const json::Value *xml = root.get("hwloc_xml")) {
    std::string name;
    XC_TRY_CTX(json::get_string(*xml, "hwloc_xml", &name), path);
    if (name.empty()) return Status(json::error_at(*xml, "hwloc_xml", "empty file name")).with_context(path);
    std::string xml_path = name[0] == '/' ? name : dir_of(path) + "/" + name;
    XC_TRY_CTX(probe_cpu_xml(xml_path, &t), path + ": hwloc_xml");
  }
  XC_TRY_CTX(apply_json(root, JsonOptions{true}, &t), path);
  XC_TRY_CTX(check_links(root, t), path);

  fill_numa_from_pci(&t);
  fill_link_estimates(&t);
  t.source = "file:" + path;
  if (t.nvml.empty()) t.nvml = "not probed (topology file)";
  if (t.cuda.empty()) t.cuda = "not probed (topology file)";
  *out = std::move(t);
  return Status::Ok();
}

Status probe(Topology *out, GpuProbe depth) {
  std::string file = env_get("XC_TOPO_FILE");
  if (!file.empty()) return load_file(file, out).with_context("XC_TOPO_FILE");

  Topology t;
  t.source = "probe";
  t.hostname = host_name();
  XC_TRY_CTX(probe_cpu_live(&t), "CPU topology");
  Status st = probe_gpus(&t, depth);
  if (!st.ok()) {
    // The CPU side stands on its own: a GPU probe that failed leaves no GPUs
    // and says why, as a machine without a driver would.
    XC_WARN("GPU topology: %s", st.message().c_str());
    t.gpus.clear();
    t.links.clear();
    t.nvswitch = false;
    if (t.nvml.empty()) t.nvml = "probe failed: " + st.message();
  }
  fill_numa_from_pci(&t);
  fill_link_estimates(&t);
  *out = std::move(t);
  return Status::Ok();
}

}  // namespace xc::topo
