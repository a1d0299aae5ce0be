// Topology <-> JSON. The writer emits every field; the reader (apply_json)
// accepts what the writer emits, plus the conveniences of hand-written
// description files (see topo_internal.h), and refuses anything it does not
// know with the line and column of the offending value.
//
// Format (to_json):
//   {"source": "...", "hostname": "...", "packages": 2, "cores": 112, "pus": 224,
//    "l2_bytes": 2097152, "l3_bytes": 110100480,
//    "numa": [{"os_index": 0, "cpus": [0, 1, ...], "memory_bytes": 1099511627776}, ...],
//    "gpus": [{"index": 0, "name": "...", "bus_id": "0000:18:00.0", "uuid": "GPU-...", "numa_node": 0}, ...],
//    "nics": [{"name": "mlx5_0", "bus_id": "0000:19:00.0", "numa_node": 0}, ...],
//    "pci":  [{"bus_id": "0000:18:00.0", "class": "0302", "id": "10de:2330", "link_gbps": 63, "numa_node": 0}, ...],
//    "links": [[{"type": "self", "nvlinks": 0, "p2p_driver": false, "p2p_tested": false,
//                "p2p_works": false, "bandwidth_gbps": 0}, ...], ...],   // gpus x gpus
//    "nvswitch": true, "nvml": "...", "cuda": "..."}
// Doubles are written so that they read back bit for bit; integers are read
// as integers (64-bit memory sizes are exact).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "topo/topo_internal.h"
#include "topo/topology.h"

namespace xc::topo {

namespace {

std::string hex(unsigned v, int digits) {
  char buf[16];
  snprintf(buf, sizeof buf, "%0*x", digits, v);
  return buf;
}

void write_link(std::string &o, const GpuLink &l) {
  o += "{\"type\": " + json::quote(link_type_name(l.type));
  o += ", \"nvlinks\": " + std::to_string(l.nvlinks);
  o += std::string(", \"p2p_driver\": ") + (l.p2p_driver ? "true" : "false");
  o += std::string(", \"p2p_tested\": ") + (l.p2p_tested ? "true" : "false");
  o += std::string(", \"p2p_works\": ") + (l.p2p_works ? "true" : "false");
  o += ", \"bandwidth_gbps\": " + json::number(l.bandwidth_gbps) + "}";
}

}  // namespace

std::string Topology::to_json() const {
  std::string o = "{\n";
  o += "  \"source\": " + json::quote(source) + ",\n";
  o += "  \"hostname\": " + json::quote(hostname) + ",\n";
  o += "  \"packages\": " + std::to_string(packages) + ",\n";
  o += "  \"cores\": " + std::to_string(cores) + ",\n";
  o += "  \"pus\": " + std::to_string(pus) + ",\n";
  o += "  \"l2_bytes\": " + std::to_string(l2_bytes) + ",\n";
  o += "  \"l3_bytes\": " + std::to_string(l3_bytes) + ",\n";
  o += "  \"numa\": [";
  for (size_t i = 0; i < numa.size(); ++i) {
    const NumaNode &n = numa[i];
    o += i ? ",\n    " : "\n    ";
    o += "{\"os_index\": " + std::to_string(n.os_index) + ", \"cpus\": [";
    for (size_t k = 0; k < n.cpus.size(); ++k) o += (k ? ", " : "") + std::to_string(n.cpus[k]);
    o += "], \"memory_bytes\": " + std::to_string(n.memory_bytes) + "}";
  }
  o += numa.empty() ? "],\n" : "\n  ],\n";
  o += "  \"gpus\": [";
  for (size_t i = 0; i < gpus.size(); ++i) {
    const Gpu &g = gpus[i];
    o += i ? ",\n    " : "\n    ";
    o += "{\"index\": " + std::to_string(g.index) + ", \"name\": " + json::quote(g.name) +
         ", \"bus_id\": " + json::quote(g.bus_id) + ", \"uuid\": " + json::quote(g.uuid) +
         ", \"numa_node\": " + std::to_string(g.numa_node) + "}";
  }
  o += gpus.empty() ? "],\n" : "\n  ],\n";
  o += "  \"nics\": [";
  for (size_t i = 0; i < nics.size(); ++i) {
    const Nic &n = nics[i];
    o += i ? ",\n    " : "\n    ";
    o += "{\"name\": " + json::quote(n.name) + ", \"bus_id\": " + json::quote(n.bus_id) +
         ", \"numa_node\": " + std::to_string(n.numa_node) + "}";
  }
  o += nics.empty() ? "],\n" : "\n  ],\n";
  o += "  \"pci\": [";
  for (size_t i = 0; i < pci.size(); ++i) {
    const PciDevice &d = pci[i];
    o += i ? ",\n    " : "\n    ";
    o += "{\"bus_id\": " + json::quote(d.bus_id) + ", \"class\": \"" + hex(d.class_id, 4) + "\", \"id\": \"" +
         hex(d.vendor_id, 4) + ":" + hex(d.device_id, 4) + "\", \"link_gbps\": " + json::number(d.link_gbps) +
         ", \"numa_node\": " + std::to_string(d.numa_node) + "}";
  }
  o += pci.empty() ? "],\n" : "\n  ],\n";
  o += "  \"links\": [";
  for (size_t i = 0; i < links.size(); ++i) {
    o += i ? ",\n    [" : "\n    [";
    for (size_t j = 0; j < links[i].size(); ++j) {
      o += j ? ",\n     " : "";
      write_link(o, links[i][j]);
    }
    o += "]";
  }
  o += links.empty() ? "],\n" : "\n  ],\n";
  o += std::string("  \"nvswitch\": ") + (nvswitch ? "true" : "false") + ",\n";
  o += "  \"nvml\": " + json::quote(nvml) + ",\n";
  o += "  \"cuda\": " + json::quote(cuda) + "\n";
  o += "}\n";
  return o;
}

namespace {

using json::Kind;
using json::Value;

std::string index_path(const std::string &base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

Status expect_kind(const Value &v, Kind kind, const std::string &what) {
  if (v.kind == kind) return Status::Ok();
  return json::error_at(v, what, std::string("expected ") + json::kind_name(kind) + ", found " + json::kind_name(v.kind));
}

Status unknown_key(const Value &v, const std::string &what, const std::string &key, const char *known) {
  return json::error_at(v, what, "unknown key \"" + key + "\" (known: " + known + ")");
}

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}
Status parse_cpu_list(const Value &v, const std::string &what, std::vector<int> *out) {
  out->clear();
  const std::string &s = v.text;
  size_t pos = 0;
  while (pos < s.size()) {
    char *end = nullptr;
    long a = strtol(s.c_str() + pos, &end, 10);
    if (end == s.c_str() + pos || a < 0) return json::error_at(v, what, "bad cpu list \"" + s + "\"");
    long b = a;
    pos = end - s.c_str();
    if (pos < s.size() && s[pos] == '-') {
      b = strtol(s.c_str() + pos + 1, &end, 10);
      if (end == s.c_str() + pos + 1 || b < a || b - a > 1 << 20)
        return json::error_at(v, what, "bad cpu range in \"" + s + "\"");
      pos = end - s.c_str();
    }
    for (long c = a; c <= b; ++c) out->push_back(static_cast<int>(c));
    if (pos < s.size()) {
      if (s[pos] != ',') return json::error_at(v, what, "bad cpu list \"" + s + "\"");
      ++pos;
    }
  }
  return Status::Ok();
}

Status read_numa(const Value &v, const std::string &what, NumaNode *n) {
  XC_TRY(expect_kind(v, Kind::kObject, what));
  for (const auto &[key, m] : v.members) {
    std::string w = what + "." + key;
    if (key == "os_index") {
      XC_TRY(json::get_int(m, w, &n->os_index));
    } else if (key == "cpus") {
      n->cpus.clear();
      if (m.kind == Kind::kString) {  // "0-55,112-167", as Linux writes cpulist
        XC_TRY(parse_cpu_list(m, w, &n->cpus));
      } else {
        XC_TRY(expect_kind(m, Kind::kArray, w));
        for (size_t i = 0; i < m.items.size(); ++i) {
          int c;
          XC_TRY(json::get_int(m.items[i], index_path(w, i), &c));
          n->cpus.push_back(c);
        }
      }
    } else if (key == "memory_bytes") {
      XC_TRY(json::get_u64(m, w, &n->memory_bytes));
    } else {
      return unknown_key(m, what, key, "os_index, cpus, memory_bytes");
    }
  }
  return Status::Ok();
}

Status read_gpu(const Value &v, const std::string &what, Gpu *g) {
  XC_TRY(expect_kind(v, Kind::kObject, what));
  for (const auto &[key, m] : v.members) {
    std::string w = what + "." + key;
    if (key == "index") {
      XC_TRY(json::get_int(m, w, &g->index));
    } else if (key == "name") {
      XC_TRY(json::get_string(m, w, &g->name));
    } else if (key == "bus_id") {
      XC_TRY(json::get_string(m, w, &g->bus_id));
    } else if (key == "uuid") {
      XC_TRY(json::get_string(m, w, &g->uuid));
    } else if (key == "numa_node") {
      XC_TRY(json::get_int(m, w, &g->numa_node));
    } else {
      return unknown_key(m, what, key, "index, name, bus_id, uuid, numa_node");
    }
  }
  return Status::Ok();
}

Status read_nic(const Value &v, const std::string &what, Nic *n) {
  XC_TRY(expect_kind(v, Kind::kObject, what));
  for (const auto &[key, m] : v.members) {
    std::string w = what + "." + key;
    if (key == "name") {
      XC_TRY(json::get_string(m, w, &n->name));
    } else if (key == "bus_id") {
      XC_TRY(json::get_string(m, w, &n->bus_id));
    } else if (key == "numa_node") {
      XC_TRY(json::get_int(m, w, &n->numa_node));
    } else {
      return unknown_key(m, what, key, "name, bus_id, numa_node");
    }
  }
  return Status::Ok();
}

bool parse_hex16(const std::string &s, uint16_t *out) {
  if (s.empty() || s.size() > 4) return false;
  for (char c : s)
    if (!isxdigit(static_cast<unsigned char>(c))) return false;
  *out = static_cast<uint16_t>(strtoul(s.c_str(), nullptr, 16));
  return true;
}

Status read_pci(const Value &v, const std::string &what, PciDevice *d) {
  XC_TRY(expect_kind(v, Kind::kObject, what));
  for (const auto &[key, m] : v.members) {
    std::string w = what + "." + key;
    if (key == "bus_id") {
      XC_TRY(json::get_string(m, w, &d->bus_id));
    } else if (key == "class") {
      std::string s;
      XC_TRY(json::get_string(m, w, &s));
      if (!parse_hex16(s, &d->class_id)) return json::error_at(m, w, "expected 4 hex digits such as \"0302\"");
    } else if (key == "id") {
      std::string s;
      XC_TRY(json::get_string(m, w, &s));
      size_t colon = s.find(':');
      if (colon == std::string::npos || !parse_hex16(s.substr(0, colon), &d->vendor_id) ||
          !parse_hex16(s.substr(colon + 1), &d->device_id))
        return json::error_at(m, w, "expected vendor:device in hex such as \"10de:2330\"");
    } else if (key == "link_gbps") {
      XC_TRY(json::get_double(m, w, &d->link_gbps));
    } else if (key == "numa_node") {
      XC_TRY(json::get_int(m, w, &d->numa_node));
    } else {
      return unknown_key(m, what, key, "bus_id, class, id, link_gbps, numa_node");
    }
  }
  return Status::Ok();
}

Status read_link(const Value &v, const std::string &what, GpuLink *l) {
  XC_TRY(expect_kind(v, Kind::kObject, what));
  for (const auto &[key, m] : v.members) {
    std::string w = what + "." + key;
    if (key == "type") {
      std::string s;
      XC_TRY(json::get_string(m, w, &s));
      if (!parse_link_type(s, &l->type))
        return json::error_at(m, w, "\"" + s + "\" is not one of self, nvswitch, nvlink, pcie, none");
    } else if (key == "nvlinks") {
      XC_TRY(json::get_int(m, w, &l->nvlinks));
      if (l->nvlinks < 0) return json::error_at(m, w, "must not be negative");
    } else if (key == "p2p_driver") {
      XC_TRY(json::get_bool(m, w, &l->p2p_driver));
    } else if (key == "p2p_tested") {
      XC_TRY(json::get_bool(m, w, &l->p2p_tested));
    } else if (key == "p2p_works") {
      XC_TRY(json::get_bool(m, w, &l->p2p_works));
    } else if (key == "bandwidth_gbps") {
      XC_TRY(json::get_double(m, w, &l->bandwidth_gbps));
      if (l->bandwidth_gbps < 0) return json::error_at(m, w, "must not be negative");
    } else {
      return unknown_key(m, what, key, "type, nvlinks, p2p_driver, p2p_tested, p2p_works, bandwidth_gbps");
    }
  }
  return Status::Ok();
}

// One token of the compact matrix. The driver's peer-access answer is
// guessed the way it usually comes out: yes over NVLink and within one PCIe
// switch (PIX, PXB), no through a host bridge or between sockets (PHB, NODE,
// SYS) or when the path is not named (PCI).
bool parse_link_token(const std::string &tok, GpuLink *l) {
  *l = GpuLink();
  auto lanes = [&](size_t prefix) {
    if (tok.size() <= prefix || tok.size() > prefix + 3) return false;
    for (size_t k = prefix; k < tok.size(); ++k)
      if (!isdigit(static_cast<unsigned char>(tok[k]))) return false;
    l->nvlinks = atoi(tok.c_str() + prefix);
    l->p2p_driver = true;
    return l->nvlinks > 0;
  };
  if (tok == "X") {
    l->type = LinkType::kSelf;
  } else if (tok.compare(0, 3, "NVS") == 0) {
    l->type = LinkType::kNvswitch;
    return lanes(3);
  } else if (tok.compare(0, 2, "NV") == 0) {
    l->type = LinkType::kNvlink;
    return lanes(2);
  } else if (tok == "PIX" || tok == "PXB") {
    l->type = LinkType::kPcie;
    l->p2p_driver = true;
  } else if (tok == "PCI" || tok == "PHB" || tok == "NODE" || tok == "SYS") {
    l->type = LinkType::kPcie;
  } else if (tok == "-") {
    l->type = LinkType::kNone;
  } else {
    return false;
  }
  return true;
}

Status read_compact_row(const Value &v, const std::string &what, std::vector<GpuLink> *row) {
  row->clear();
  size_t pos = 0;
  const std::string &s = v.text;
  while (pos < s.size()) {
    while (pos < s.size() && isspace(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos >= s.size()) break;
    size_t end = pos;
    while (end < s.size() && !isspace(static_cast<unsigned char>(s[end]))) ++end;
    std::string tok = s.substr(pos, end - pos);
    GpuLink l;
    if (!parse_link_token(tok, &l))
      return json::error_at(v, what,
                            "entry " + std::to_string(row->size()) + " \"" + tok +
                                "\" is not one of X, NV<n>, NVS<n>, PCI, PIX, PXB, PHB, NODE, SYS, -");
    row->push_back(l);
    pos = end;
  }
  return Status::Ok();
}

Status read_links(const Value &v, const std::string &what, std::vector<std::vector<GpuLink>> *links) {
  XC_TRY(expect_kind(v, Kind::kArray, what));
  links->assign(v.items.size(), {});
  for (size_t i = 0; i < v.items.size(); ++i) {
    const Value &row = v.items[i];
    std::string w = index_path(what, i);
    if (row.kind == Kind::kString) {
      XC_TRY(read_compact_row(row, w, &(*links)[i]));
      continue;
    }
    if (row.kind != Kind::kArray)
      return json::error_at(row, w,
                            std::string("expected an array of links or a string such as \"X NV2 SYS\", found ") +
                                json::kind_name(row.kind));
    for (size_t j = 0; j < row.items.size(); ++j) {
      GpuLink l;
      XC_TRY(read_link(row.items[j], index_path(w, j), &l));
      (*links)[i].push_back(l);
    }
  }
  return Status::Ok();
}

template <typename T>
Status read_array(const Value &v, const std::string &what, std::vector<T> *out,
                  Status (*read)(const Value &, const std::string &, T *)) {
  XC_TRY(expect_kind(v, Kind::kArray, what));
  std::vector<T> items(v.items.size());
  for (size_t i = 0; i < v.items.size(); ++i) XC_TRY(read(v.items[i], index_path(what, i), &items[i]));
  *out = std::move(items);
  return Status::Ok();
}

}  // namespace

Status apply_json(const Value &root, const JsonOptions &opts, Topology *t) {
  XC_TRY(expect_kind(root, Kind::kObject, "topology"));
  const Value *links_value = nullptr;
  bool gpus_given = false;
  for (const auto &[key, m] : root.members) {
    if (key == "source") {
      XC_TRY(json::get_string(m, key, &t->source));
    } else if (key == "hostname") {
      XC_TRY(json::get_string(m, key, &t->hostname));
    } else if (key == "packages") {
      XC_TRY(json::get_int(m, key, &t->packages));
    } else if (key == "cores") {
      XC_TRY(json::get_int(m, key, &t->cores));
    } else if (key == "pus") {
      XC_TRY(json::get_int(m, key, &t->pus));
    } else if (key == "l2_bytes") {
      XC_TRY(json::get_u64(m, key, &t->l2_bytes));
    } else if (key == "l3_bytes") {
      XC_TRY(json::get_u64(m, key, &t->l3_bytes));
    } else if (key == "numa") {
      XC_TRY(read_array<NumaNode>(m, key, &t->numa, read_numa));
    } else if (key == "gpus") {
      XC_TRY(read_array<Gpu>(m, key, &t->gpus, read_gpu));
      gpus_given = true;
      // An index left out is the GPU's position in the list.
      for (size_t i = 0; i < m.items.size(); ++i)
        if (!m.items[i].get("index")) t->gpus[i].index = static_cast<int>(i);
    } else if (key == "nics") {
      XC_TRY(read_array<Nic>(m, key, &t->nics, read_nic));
    } else if (key == "pci") {
      XC_TRY(read_array<PciDevice>(m, key, &t->pci, read_pci));
    } else if (key == "links") {
      XC_TRY(read_links(m, key, &t->links));
      links_value = &m;
    } else if (key == "nvswitch") {
      XC_TRY(json::get_bool(m, key, &t->nvswitch));
    } else if (key == "nvml") {
      XC_TRY(json::get_string(m, key, &t->nvml));
    } else if (key == "cuda") {
      XC_TRY(json::get_string(m, key, &t->cuda));
    } else if (opts.description && (key == "hwloc_xml" || key == "comment")) {
      // read by load_file
    } else {
      return json::error_at(m, "topology",
                            "unknown key \"" + key +
                                "\" (known: source, hostname, packages, cores, pus, l2_bytes, l3_bytes, numa, gpus, "
                                "nics, pci, links, nvswitch, nvml, cuda" +
                                (opts.description ? ", hwloc_xml, comment)" : ")"));
    }
  }
  // The links matrix must be gpus x gpus.
  const size_t n = t->gpus.size();
  const Value &where = links_value ? *links_value : root;
  if (t->links.size() != n) {
    if (!links_value && gpus_given)
      return json::error_at(root, "topology", "\"gpus\" has " + std::to_string(n) + " entries but \"links\" is missing");
    return json::error_at(where, "links",
                          "has " + std::to_string(t->links.size()) + " rows for " + std::to_string(n) + " GPUs");
  }
  for (size_t i = 0; i < n; ++i)
    if (t->links[i].size() != n)
      return json::error_at(links_value ? links_value->items[i] : where, index_path("links", i),
                            "has " + std::to_string(t->links[i].size()) + " entries for " + std::to_string(n) +
                                " GPUs");
  return Status::Ok();
}

Status Topology::from_json(const std::string &text, Topology *out) {
  json::Value root;
  XC_TRY_CTX(json::parse(text, &root), "topology JSON");
  Topology t;
  XC_TRY_CTX(apply_json(root, JsonOptions(), &t), "topology JSON");
  *out = std::move(t);
  return Status::Ok();
}

}  // namespace xc::topo
