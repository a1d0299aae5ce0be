// Unit tests of the topology module: every shipped description under
// tests/topo/ (XC_TOPO_DIR) loads with the CPU side from its hwloc XML and is
// classified as it should be; JSON round trips are exact; malformed JSON,
// missing files and bad matrices give errors that say where; XC_TOPO_FILE is
// honoured by probe(); the live probe works on this machine, GPU or not.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>  // before unit_test.h: cmocka defines a fail() macro
#include <string>
#include <vector>

#include "unit_test.h"

#include "topo/topo_internal.h"
#include "topo/topology.h"
#include "xcomm_build_config.h"

using namespace xc;
using namespace xc::topo;

namespace {

std::string topo_dir() {
  const char *d = getenv("XC_TOPO_DIR");
  if (!d || !*d) fail_msg("XC_TOPO_DIR is not set (meson test sets it to tests/topo)");
  return d;
}

std::string tmp_dir() {
  static std::string dir;
  if (dir.empty()) {
    char tmpl[] = "/tmp/xc_test_topo.XXXXXX";
    if (!mkdtemp(tmpl)) fail_msg("mkdtemp failed");
    dir = tmpl;
  }
  return dir;
}

std::string write_tmp(const std::string &name, const std::string &text) {
  std::string path = tmp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Loads a shipped file, or in a build without hwloc checks the refusal and
// skips the rest of the test.
Topology load(const char *name) {
  std::string path = topo_dir() + "/" + name;
  Topology t;
#if XC_HAVE_HWLOC
  ASSERT_OK(load_file(path, &t));
  assert_string_equal(t.source.c_str(), ("file:" + path).c_str());
#else
  expect_error(load_file(path, &t), XC_ERR_UNSUPPORTED, "no hwloc");
  skip();
#endif
  return t;
}

void expect_round_trip(const Topology &t) {
  std::string text = t.to_json();
  Topology back;
  Status st = Topology::from_json(text, &back);
  if (!st.ok()) fail_msg("from_json(to_json(t)) failed: %s\n%s", st.message().c_str(), text.c_str());
  if (back != t) fail_msg("round trip changed the topology:\n%s\n---\n%s", text.c_str(), back.to_json().c_str());
  assert_string_equal(back.to_json().c_str(), text.c_str());
}

std::vector<int> range(int a, int b) {  // [a, b)
  std::vector<int> v;
  for (int i = a; i < b; ++i) v.push_back(i);
  return v;
}

std::vector<int> concat(std::vector<int> a, const std::vector<int> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// hwloc keeps PCI link speeds as floats: a relative 1e-6 is exact enough.
bool near(double a, double b) { return std::fabs(a - b) < 1e-6 * std::max(1.0, std::fabs(b)); }

// ------------------------------------------------------- shipped files ---

void test_dgx_h100(void **) {
  Topology t = load("dgx_h100.json");
  assert_int_equal(static_cast<int>(t.classify()), static_cast<int>(HostClass::kFullyConnected));
  assert_string_equal(host_class_name(t.classify()), "fully_connected");
  assert_string_equal(t.hostname.c_str(), "dgx-h100");
  assert_true(t.nvswitch);
  assert_int_equal(t.packages, 2);
  assert_int_equal(t.cores, 16);
  assert_int_equal(t.pus, 32);
  assert_int_equal(t.l2_bytes, 2u << 20);
  assert_int_equal(t.l3_bytes, 105u << 20);
  assert_int_equal(t.numa.size(), 2);
  assert_true(t.numa[0].cpus == concat(range(0, 8), range(16, 24)));
  assert_true(t.numa[1].cpus == concat(range(8, 16), range(24, 32)));
  assert_int_equal(t.numa[0].memory_bytes, 1ULL << 40);
  assert_int_equal(t.gpus.size(), 8);
  assert_int_equal(t.nics.size(), 8);
  for (int i = 0; i < 8; ++i) {
    assert_int_equal(t.gpus[i].index, i);
    assert_int_equal(t.gpus[i].numa_node, i < 4 ? 0 : 1);  // from the XML's PCI tree
    assert_string_equal(t.nics[i].name.c_str(), ("mlx5_" + std::to_string(i)).c_str());
    assert_int_equal(t.nics[i].numa_node, i < 4 ? 0 : 1);
    for (int j = 0; j < 8; ++j) {
      const GpuLink &l = t.links[i][j];
      if (i == j) {
        assert_int_equal(static_cast<int>(l.type), static_cast<int>(LinkType::kSelf));
        assert_true(l.bandwidth_gbps == 0);
      } else {
        assert_int_equal(static_cast<int>(l.type), static_cast<int>(LinkType::kNvswitch));
        assert_int_equal(l.nvlinks, 18);
        assert_true(l.p2p_driver);
        assert_true(near(l.bandwidth_gbps, 450));  // NVLink4: 18 lanes x 25 GB/s
      }
    }
  }
  assert_string_equal(t.gpus[0].bus_id.c_str(), "0000:1b:00.0");
  const PciDevice *d = t.find_pci("00000000:1B:00.0");  // NVML's spelling
  assert_non_null(d);
  assert_int_equal(d->class_id, 0x0302);
  assert_int_equal(d->vendor_id, 0x10de);
  assert_int_equal(d->device_id, 0x2330);
  assert_true(d->link_gbps > 60 && d->link_gbps < 64);  // Gen5 x16
  assert_int_equal(t.nics[5].bus_id.size(), 12);
  assert_int_equal(t.numa_of_pci(t.nics[5].bus_id), 1);
  assert_string_equal(t.nvml.c_str(), "not probed (topology file)");
}

void test_dgx1_v100(void **) {
  Topology t = load("dgx1_v100.json");
  assert_int_equal(static_cast<int>(t.classify()), static_cast<int>(HostClass::kHybridCubeMesh));
  assert_string_equal(host_class_name(t.classify()), "hybrid_cube_mesh");
  assert_false(t.nvswitch);
  assert_int_equal(t.packages, 2);
  assert_int_equal(t.numa.size(), 2);
  assert_int_equal(t.gpus.size(), 8);
  assert_int_equal(t.nics.size(), 4);
  for (int i = 0; i < 8; ++i) {
    assert_int_equal(t.gpus[i].numa_node, i < 4 ? 0 : 1);
    int lanes = 0, peers = 0;
    for (int j = 0; j < 8; ++j) {
      const GpuLink &l = t.links[i][j];
      if (l.type == LinkType::kNvlink) {
        lanes += l.nvlinks, ++peers;
        assert_true(near(l.bandwidth_gbps, 25.0 * l.nvlinks));  // NVLink2: 25 GB/s per lane
        assert_true(i / 4 == j / 4 || j == (i + 4) % 8);        // its quad, or its counterpart
      } else if (i != j) {
        assert_int_equal(static_cast<int>(l.type), static_cast<int>(LinkType::kPcie));
        assert_false(l.p2p_driver);                         // SYS
        assert_true(l.bandwidth_gbps == 12.6);  // 0.8 x Gen3 x16 (15.75) from the XML
      }
    }
    assert_int_equal(lanes, 6);
    assert_int_equal(peers, 4);
  }
  assert_int_equal(t.links[0][3].nvlinks, 2);
  assert_int_equal(t.links[0][1].nvlinks, 1);
}

void test_pcie4(void **) {
  Topology t = load("pcie4.json");
  assert_int_equal(static_cast<int>(t.classify()), static_cast<int>(HostClass::kPcieOnly));
  assert_string_equal(host_class_name(t.classify()), "pcie_only");
  assert_int_equal(t.packages, 1);
  assert_int_equal(t.numa.size(), 1);
  assert_int_equal(t.cores, 8);
  assert_int_equal(t.pus, 16);
  assert_int_equal(t.l3_bytes, 16u << 20);
  assert_int_equal(t.l2_bytes, 512u << 10);
  assert_int_equal(t.gpus.size(), 4);
  for (const Gpu &g : t.gpus) assert_int_equal(g.numa_node, 0);
  assert_int_equal(t.nics.size(), 1);
  assert_string_equal(t.nics[0].name.c_str(), "eth0");
  assert_string_equal(t.nics[0].bus_id.c_str(), "0000:21:00.0");
  assert_int_equal(t.nics[0].numa_node, 0);
  assert_true(t.links[1][2].bandwidth_gbps == 25.21);  // 0.8 x Gen4 x16 (31.51)
}

void test_nvlink_bridge2(void **) {
  // Two GPUs and one NVLink bridge between them: every pair (the only one)
  // is NVLinked, so the host is fully connected.
  Topology t = load("nvlink_bridge2.json");
  assert_int_equal(static_cast<int>(t.classify()), static_cast<int>(HostClass::kFullyConnected));
  assert_false(t.nvswitch);
  assert_int_equal(t.gpus.size(), 2);
  assert_int_equal(static_cast<int>(t.links[0][1].type), static_cast<int>(LinkType::kNvlink));
  assert_int_equal(t.links[0][1].nvlinks, 4);
  assert_true(near(t.links[1][0].bandwidth_gbps, 56.25));  // GA102 bridge: 4 x 14.0625
}

void test_cpu_2socket(void **) {
  Topology t = load("cpu_2socket.json");
  assert_int_equal(static_cast<int>(t.classify()), static_cast<int>(HostClass::kNoGpu));
  assert_string_equal(host_class_name(t.classify()), "no_gpu");
  assert_true(t.gpus.empty());
  assert_true(t.links.empty());
  assert_int_equal(t.packages, 2);
  assert_int_equal(t.cores, 16);
  assert_int_equal(t.pus, 32);
  assert_int_equal(t.numa.size(), 2);
  assert_int_equal(t.numa[0].os_index, 0);
  assert_int_equal(t.numa[1].os_index, 1);
  // Linux numbering: the second thread of core c of 16 is cpu c + 16.
  assert_true(t.numa[0].cpus == concat(range(0, 8), range(16, 24)));
  assert_true(t.numa[1].cpus == concat(range(8, 16), range(24, 32)));
  assert_int_equal(t.numa[1].memory_bytes, 64ULL << 30);
  assert_int_equal(t.numa_of_cpu(0), 0);
  assert_int_equal(t.numa_of_cpu(17), 0);
  assert_int_equal(t.numa_of_cpu(9), 1);
  assert_int_equal(t.numa_of_cpu(31), 1);
  assert_int_equal(t.numa_of_cpu(32), -1);
  assert_int_equal(t.numa_of_cpu(-1), -1);
  assert_int_equal(t.nics.size(), 1);
  assert_string_equal(t.nics[0].name.c_str(), "ens1f0");
  assert_int_equal(t.nics[0].numa_node, 1);
}

void test_round_trip_files(void **) {
  for (const char *name :
       {"dgx_h100.json", "dgx1_v100.json", "pcie4.json", "nvlink_bridge2.json", "cpu_2socket.json"}) {
    Topology t = load(name);
    expect_round_trip(t);
    // A dump loads back through load_file too (all but source, which names the file).
    std::string path = write_tmp(std::string("dump_") + name, t.to_json());
    Topology again;
    ASSERT_OK(load_file(path, &again));
    again.source = t.source;
    if (again != t) fail_msg("%s: a to_json dump loaded with load_file differs", name);
  }
}

// ------------------------------------------------------------ live -----

void test_live_probe(void **) {
  unsetenv("XC_TOPO_FILE");
  Topology t;
  ASSERT_OK(probe(&t));
  assert_string_equal(t.source.c_str(), "probe");
  assert_false(t.hostname.empty());
  assert_true(t.cores > 0);
  assert_true(t.pus >= t.cores);
  assert_true(t.packages > 0);
  assert_false(t.numa.empty());
  size_t cpus = 0;
  for (const NumaNode &n : t.numa) cpus += n.cpus.size();
  assert_int_equal(cpus, static_cast<size_t>(t.pus));
  assert_int_equal(t.numa_of_cpu(t.numa[0].cpus[0]), t.numa[0].os_index);
  assert_false(t.nvml.empty());
  assert_int_equal(t.links.size(), t.gpus.size());
  if (t.gpus.empty())
    assert_int_equal(static_cast<int>(t.classify()), static_cast<int>(HostClass::kNoGpu));
  else
    assert_int_not_equal(static_cast<int>(t.classify()), static_cast<int>(HostClass::kNoGpu));
  expect_round_trip(t);
}

void test_sysfs_agrees(void **) {
  // The /sys reader (what a build without hwloc uses) sees the same machine.
  Topology live, sys;
  ASSERT_OK(probe_cpu_live(&live));
  ASSERT_OK(probe_cpu_sysfs(&sys));
  assert_int_equal(sys.packages, live.packages);
  assert_int_equal(sys.numa.size(), live.numa.size());
  assert_true(sys.pus >= live.pus);  // hwloc leaves out PUs this process may not use
  assert_true(sys.cores > 0);
  for (const Nic &n : live.nics) {
    bool seen = false;
    for (const Nic &m : sys.nics) seen = seen || (m.name == n.name && m.bus_id == n.bus_id);
    if (!seen) fail_msg("hwloc's NIC %s (%s) is not in /sys's list", n.name.c_str(), n.bus_id.c_str());
  }
  expect_round_trip(sys);
}

void test_topo_file_env(void **) {
  std::string path = topo_dir() + "/dgx1_v100.json";
  setenv("XC_TOPO_FILE", path.c_str(), 1);
  Topology t;
  Status st = probe(&t);
#if XC_HAVE_HWLOC
  ASSERT_OK(st);
  assert_string_equal(t.source.c_str(), ("file:" + path).c_str());
  assert_int_equal(static_cast<int>(t.classify()), static_cast<int>(HostClass::kHybridCubeMesh));
#else
  expect_error(st, XC_ERR_UNSUPPORTED, "XC_TOPO_FILE");
#endif
  setenv("XC_TOPO_FILE", "/nonexistent/topology.json", 1);
  expect_error(probe(&t), XC_ERR_SYSTEM, "XC_TOPO_FILE: cannot open topology file /nonexistent/topology.json");
  setenv("XC_TOPO_FILE", "", 1);  // empty means unset
  ASSERT_OK(probe(&t));
  assert_string_equal(t.source.c_str(), "probe");
  unsetenv("XC_TOPO_FILE");
}

// ------------------------------------------------------------ errors ---

void expect_bad_json(const std::string &text, const char *substr) {
  Topology t;
  t.hostname = "untouched";
  Status st = Topology::from_json(text, &t);
  if (st.ok()) fail_msg("from_json accepted: %s", text.c_str());
  expect_error(st, XC_ERR_INVALID_ARGUMENT, substr);
  expect_error(st, XC_ERR_INVALID_ARGUMENT, "topology JSON: line ");
  assert_string_equal(t.hostname.c_str(), "untouched");  // outputs untouched on failure
}

void test_malformed_json(void **) {
  expect_bad_json("", "line 1, column 1: expected a value, found end of input");
  expect_bad_json("{", "line 1, column 2: expected a member name");
  expect_bad_json("{\"hostname\": \"a\",}", "line 1, column 18: expected a member name");
  expect_bad_json("{\"hostname\" \"a\"}", "expected ':' after member name \"hostname\"");
  expect_bad_json("{\n  \"gpus\": [}\n", "line 2, column 12: expected a value, found '}'");
  expect_bad_json("{\"gpus\": [1 2]}", "line 1, column 13: expected ',' or ']' in an array");
  expect_bad_json("{} x", "line 1, column 4: unexpected 'x' after the end of the document");
  expect_bad_json("{\"hostname\": nul}", "expected a value, found 'n'");
  expect_bad_json("{\"hostname\": \"abc}", "unterminated string");
  expect_bad_json("{\"hostname\": \"a\tb\"}", "control character in a string");
  expect_bad_json("{\"hostname\": \"\\x\"}", "invalid escape \\x");
  expect_bad_json("{\"hostname\": \"\\u12\"}", "expected 4 hex digits after \\u");
  expect_bad_json("{\"hostname\": \"\\udc00\"}", "a low surrogate without a high one");
  expect_bad_json("{\"cores\": 012}", "a number may not start with 0");
  expect_bad_json("{\"cores\": 1.}", "expected a digit after '.'");
  expect_bad_json("{\"cores\": -}", "expected a digit");
  expect_bad_json("{\"cores\": 1e}", "expected a digit in the exponent");
  expect_bad_json(std::string(100, '[') + std::string(100, ']'), "nesting deeper than 64 levels");
  expect_bad_json("{\"cores\": 1, \"cores\": 2}", "line 1, column 14: duplicate member \"cores\"");
  expect_bad_json(std::string("{\"hostname\": \"a\"}\0", 18), "byte 0x00");
  // Well-formed JSON that is not a topology.
  expect_bad_json("[]", "line 1, column 1: topology: expected an object, found an array");
  expect_bad_json("{\"cpus\": 4}", "unknown key \"cpus\"");
  expect_bad_json("{\"hwloc_xml\": \"a.xml\"}", "unknown key \"hwloc_xml\"");  // only in files
  expect_bad_json("{\"cores\": \"4\"}", "line 1, column 11: cores: expected an integer, found a string");
  expect_bad_json("{\"cores\": 4.5}", "cores: expected an integer, found 4.5");
  expect_bad_json("{\"cores\": 99999999999}", "cores: 99999999999 is out of range");
  expect_bad_json("{\"l3_bytes\": -1}", "l3_bytes: expected a non-negative integer");
  expect_bad_json("{\"l3_bytes\": 18446744073709551616}", "l3_bytes: 18446744073709551616 is out of range");
  expect_bad_json("{\"nvswitch\": 1}", "nvswitch: expected true or false, found a number");
  expect_bad_json("{\"numa\": [{\"os_index\": 0, \"cpus\": [0, \"1\"]}]}", "numa[0].cpus[1]: expected an integer");
  expect_bad_json("{\"numa\": [{\"cpus\": \"0-x\"}]}", "numa[0].cpus: bad cpu range in \"0-x\"");
  expect_bad_json("{\"numa\": [{\"cpus\": \"1;2\"}]}", "numa[0].cpus: bad cpu list \"1;2\"");
  expect_bad_json("{\"gpus\": [{\"name\": \"a\", \"bus\": \"b\"}], \"links\": [\"X\"]}",
                  "line 1, column 32: gpus[0]: unknown key \"bus\"");
  expect_bad_json("{\"pci\": [{\"class\": \"03020\"}]}", "pci[0].class: expected 4 hex digits");
  expect_bad_json("{\"pci\": [{\"id\": \"10de\"}]}", "pci[0].id: expected vendor:device");
  expect_bad_json("{\"gpus\": [{}, {}], \"links\": [\"X NV2\", \"NV2 X\", \"X\"]}", "links: has 3 rows for 2 GPUs");
  expect_bad_json("{\"gpus\": [{}, {}], \"links\": [\"X NV2\", \"NV2\"]}", "line 1, column 39: links[1]: has 1 entries for 2 GPUs");
  expect_bad_json("{\"gpus\": [{}, {}]}", "\"gpus\" has 2 entries but \"links\" is missing");
  expect_bad_json("{\"gpus\": [{}], \"links\": [\"Y\"]}", "links[0]: entry 0 \"Y\" is not one of X, NV<n>");
  expect_bad_json("{\"gpus\": [{}, {}], \"links\": [\"X NV\", \"NV X\"]}", "entry 1 \"NV\"");
  expect_bad_json("{\"gpus\": [{}], \"links\": [[{\"type\": \"nvlinks\"}]]}",
                  "links[0][0].type: \"nvlinks\" is not one of self, nvswitch, nvlink, pcie, none");
  expect_bad_json("{\"gpus\": [{}], \"links\": [[{\"bandwidth_gbps\": 1e999}]]}", "is not a finite number");
  expect_bad_json("{\"gpus\": [{}], \"links\": [7]}", "links[0]: expected an array of links or a string");
}

void test_file_errors(void **) {
  Topology t;
  t.hostname = "untouched";
  expect_error(load_file(tmp_dir() + "/none.json", &t), XC_ERR_SYSTEM, "none.json: No such file or directory");
  std::string bad = write_tmp("bad.json", "{\n  \"hostname\": \"x\"\n  \"gpus\": []\n}\n");
  expect_error(load_file(bad, &t), XC_ERR_INVALID_ARGUMENT, (bad + ": line 3, column 3: expected ',' or '}'").c_str());
  std::string arr = write_tmp("array.json", "[1]");
  expect_error(load_file(arr, &t), XC_ERR_INVALID_ARGUMENT, "a topology file is a JSON object, found an array");
  std::string xml_num = write_tmp("xml_num.json", "{\"hwloc_xml\": 5}");
  expect_error(load_file(xml_num, &t), XC_ERR_INVALID_ARGUMENT, "hwloc_xml: expected a string, found a number");
  std::string missing = write_tmp("missing_xml.json", "{\"hwloc_xml\": \"missing.xml\"}");
#if XC_HAVE_HWLOC
  expect_error(load_file(missing, &t), XC_ERR_SYSTEM,
               (missing + ": hwloc_xml: hwloc XML file " + tmp_dir() + "/missing.xml: No such file").c_str());
  write_tmp("garbage.xml", "<topology version=\"2.0\"><object type=\"Nonsense\"");
  std::string garbage = write_tmp("garbage.json", "{\"hwloc_xml\": \"garbage.xml\"}");
  expect_error(load_file(garbage, &t), XC_ERR_INVALID_ARGUMENT, "garbage.xml: not a valid hwloc XML topology");
#else
  expect_error(load_file(missing, &t), XC_ERR_UNSUPPORTED, "this build of xcomm has no hwloc");
#endif
  std::string diag = write_tmp("diag.json", "{\"gpus\": [{}, {}], \"links\": [\"NV2 NV2\", \"NV2 X\"]}");
  expect_error(load_file(diag, &t), XC_ERR_INVALID_ARGUMENT, "links[0][0]: a GPU's link to itself must be \"self\"");
  std::string off = write_tmp("off.json", "{\"gpus\": [{}, {}], \"links\": [\"X X\", \"NV2 X\"]}");
  expect_error(load_file(off, &t), XC_ERR_INVALID_ARGUMENT, "links[0][1]: \"self\" (X) belongs on the diagonal only");
  std::string comment = write_tmp("comment.json", "{\"comment\": 3}");
  ASSERT_OK(load_file(comment, &t));  // a comment is anything
  assert_string_equal(t.source.c_str(), ("file:" + comment).c_str());
  assert_true(t.gpus.empty());
}

void test_description_overrides(void **) {
#if !XC_HAVE_HWLOC
  skip();
#endif
  // JSON keys win over the XML; NICs given without a NUMA node get their PCI
  // device's; a full-form link keeps its bandwidth, a compact one is estimated.
  std::string xml = topo_dir() + "/dgx1_v100.xml";
  std::string path = write_tmp("override.json",
                               "{\"hwloc_xml\": \"" + xml + "\", \"cores\": 40, \"pus\": 80,\n"
                               " \"nics\": [{\"name\": \"ib0\", \"bus_id\": \"0000:84:00.0\"}, {\"name\": \"virt0\"}],\n"
                               " \"gpus\": [{\"name\": \"Tesla P100-SXM2-16GB\", \"bus_id\": \"0000:85:00.0\"},\n"
                               "          {\"name\": \"Tesla P100-SXM2-16GB\", \"bus_id\": \"0000:06:00.0\", \"numa_node\": 7}],\n"
                               " \"links\": [[{\"type\": \"self\"}, {\"type\": \"nvlink\", \"nvlinks\": 2, \"bandwidth_gbps\": 33.5}],\n"
                               "           \"NV2 X\"]}");
  Topology t;
  ASSERT_OK(load_file(path, &t));
  assert_int_equal(t.packages, 2);  // from the XML
  assert_int_equal(t.cores, 40);    // from the JSON
  assert_int_equal(t.pus, 80);
  assert_int_equal(t.nics.size(), 2);
  assert_int_equal(t.nics[0].numa_node, 1);
  assert_int_equal(t.nics[1].numa_node, -1);
  assert_int_equal(t.gpus[0].index, 0);
  assert_int_equal(t.gpus[1].index, 1);
  assert_int_equal(t.gpus[0].numa_node, 1);
  assert_int_equal(t.gpus[1].numa_node, 7);  // given, kept
  assert_true(t.links[0][1].bandwidth_gbps == 33.5);
  assert_true(near(t.links[1][0].bandwidth_gbps, 40));  // P100 NVLink1: 2 x 20
  assert_true(t.links[1][0].p2p_driver);
  assert_false(t.links[0][1].p2p_driver);  // full form: what it says (default false)
  assert_int_equal(static_cast<int>(t.classify()), static_cast<int>(HostClass::kFullyConnected));
  expect_round_trip(t);
}

// ------------------------------------------------------ classification ---

Topology with_links(const std::vector<std::string> &rows, bool nvswitch = false) {
  std::string text = "{\"gpus\": [";
  for (size_t i = 0; i < rows.size(); ++i) text += i ? ", {}" : "{}";
  text += "], \"links\": [";
  for (size_t i = 0; i < rows.size(); ++i) text += (i ? ", \"" : "\"") + rows[i] + "\"";
  text += std::string("], \"nvswitch\": ") + (nvswitch ? "true" : "false") + "}";
  Topology t;
  ASSERT_OK(Topology::from_json(text, &t));
  return t;
}

// An n x n matrix with NV1 where linked(i, j), PIX elsewhere.
template <typename F>
Topology graph(int n, F linked) {
  std::vector<std::string> rows;
  for (int i = 0; i < n; ++i) {
    std::string r;
    for (int j = 0; j < n; ++j) r += (j ? " " : "") + std::string(i == j ? "X" : linked(i, j) ? "NV1" : "PIX");
    rows.push_back(r);
  }
  return with_links(rows);
}

int cls(const Topology &t) { return static_cast<int>(t.classify()); }

void test_classify(void **) {
  const int no = static_cast<int>(HostClass::kNoGpu), full = static_cast<int>(HostClass::kFullyConnected),
            hcm = static_cast<int>(HostClass::kHybridCubeMesh),
            partial = static_cast<int>(HostClass::kPartialNvlink), pcie = static_cast<int>(HostClass::kPcieOnly);
  assert_int_equal(cls(Topology()), no);
  assert_int_equal(cls(with_links({"X"})), full);  // one GPU: no pair lacks an NVLink
  assert_int_equal(cls(with_links({"X PIX", "PIX X"})), pcie);
  assert_int_equal(cls(with_links({"X PIX", "PIX X"}, true)), full);  // nvswitch decides
  assert_int_equal(cls(with_links({"X NVS18", "NVS18 X"})), full);
  assert_int_equal(cls(with_links({"X -", "- X"})), pcie);
  assert_int_equal(cls(with_links({"X NV4 PIX", "NV4 X PIX", "PIX PIX X"})), partial);
  assert_int_equal(cls(graph(4, [](int, int) { return true; })), full);
  assert_int_equal(cls(graph(8, [](int, int) { return true; })), full);
  assert_int_equal(cls(graph(8, [](int, int) { return false; })), pcie);
  // DGX-1: quads plus counterparts.
  auto dgx1 = [](int i, int j) { return i / 4 == j / 4 || (i + 4) % 8 == j; };
  assert_int_equal(cls(graph(8, dgx1)), hcm);
  // One link fewer: GPU 0 has 3 NVLink peers -> no longer a cube mesh.
  assert_int_equal(cls(graph(8, [&](int i, int j) { return dgx1(i, j) && !(i + j == 4 && (i == 0 || j == 0)); })),
                   partial);
  // A ring of 8 (degree 2), and the DGX-1 pattern on 6 or 16 GPUs, are partial.
  assert_int_equal(cls(graph(8, [](int i, int j) { return (i + 1) % 8 == j || (j + 1) % 8 == i; })), partial);
  assert_int_equal(cls(graph(16, [](int i, int j) { return i / 4 == j / 4 || (i + 4) % 8 == j % 8; })), partial);
  // An NVLink seen from one end only still counts (the pair is linked).
  assert_int_equal(cls(with_links({"X NV1", "PIX X"})), full);
}

// --------------------------------------------------------------- misc ---

void test_json_strings_and_numbers(void **) {
  Topology t;
  t.hostname = "a\"b\\c\nd\te\x01 \xc3\xa9 /";
  t.source = "";
  t.nvml = std::string("nul\0byte", 8);
  t.l3_bytes = UINT64_MAX;
  t.numa.push_back({3, {0, 5, 7}, (1ULL << 53) + 1});  // not representable as a double
  t.pci.push_back({"0000:18:00.0", 0x0302, 0x10de, 0xffff, 12.800000000000001, 2});
  t.gpus.push_back({0, "g", "", "", -1});
  t.links = {{GpuLink()}};
  t.links[0][0].bandwidth_gbps = 1e-300;
  t.links[0][0].p2p_works = true;
  expect_round_trip(t);

  Topology u;
  ASSERT_OK(Topology::from_json(" {\"hostname\": \"\\u00e9\\ud83d\\ude00\\/\\b\\f\\r\"} ", &u));
  assert_string_equal(u.hostname.c_str(), "\xc3\xa9\xf0\x9f\x98\x80/\b\f\r");
  ASSERT_OK(Topology::from_json("{\"numa\": [{\"os_index\": 1, \"cpus\": \"0-3,8,10-11\", \"memory_bytes\": 0}]}", &u));
  assert_true(u.numa[0].cpus == std::vector<int>({0, 1, 2, 3, 8, 10, 11}));
  ASSERT_OK(Topology::from_json("{\"gpus\": [{}], \"links\": [[{\"bandwidth_gbps\": 2.5E+1}]]}", &u));
  assert_true(u.links[0][0].bandwidth_gbps == 25);
}

void test_bus_ids(void **) {
  assert_string_equal(pci_address_key("00000000:1B:00.0").c_str(), "0000:1b:00.0");
  assert_string_equal(pci_address_key("0000:1b:00.0").c_str(), "0000:1b:00.0");
  assert_string_equal(pci_address_key("1b:00.0").c_str(), "0000:1b:00.0");
  assert_string_equal(pci_address_key("10000:01:1f.7").c_str(), "10000:01:1f.7");
  for (const char *bad : {"", "eth0", "0000:1b:00", "0000:1b:00.8", "0000:1b:20.0", "0000:1bb:00.0", ":1b:00.0",
                          "0000:1b.00.0", "x0000:1b:00.0"})
    assert_string_equal(pci_address_key(bad).c_str(), "");
  Topology t;
  t.pci.push_back({"0000:1b:00.0", 0x0302, 0x10de, 0x2330, 0, 1});
  assert_int_equal(t.numa_of_pci("00000000:1B:00.0"), 1);
  assert_int_equal(t.numa_of_pci("0000:1c:00.0"), -1);
  assert_int_equal(t.numa_of_pci(""), -1);
  assert_null(t.find_pci("garbage"));
}

void test_names(void **) {
  assert_string_equal(link_type_name(LinkType::kSelf), "self");
  assert_string_equal(link_type_name(LinkType::kNvswitch), "nvswitch");
  assert_string_equal(link_type_name(LinkType::kNvlink), "nvlink");
  assert_string_equal(link_type_name(LinkType::kPcie), "pcie");
  assert_string_equal(link_type_name(LinkType::kNone), "none");
  assert_string_equal(link_type_name(static_cast<LinkType>(42)), "unknown");
  assert_string_equal(host_class_name(HostClass::kPartialNvlink), "partial_nvlink");
  assert_string_equal(host_class_name(static_cast<HostClass>(42)), "unknown");
  LinkType lt;
  assert_true(parse_link_type("pcie", &lt));
  assert_int_equal(static_cast<int>(lt), static_cast<int>(LinkType::kPcie));
  assert_false(parse_link_type("PCIe", &lt));
}

int teardown_tmp(void **) {
  std::string cmd = "rm -rf '" + tmp_dir() + "'";
  return system(cmd.c_str()) == 0 ? 0 : -1;
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dgx_h100),
      cmocka_unit_test(test_dgx1_v100),
      cmocka_unit_test(test_pcie4),
      cmocka_unit_test(test_nvlink_bridge2),
      cmocka_unit_test(test_cpu_2socket),
      cmocka_unit_test(test_round_trip_files),
      cmocka_unit_test(test_live_probe),
      cmocka_unit_test(test_sysfs_agrees),
      cmocka_unit_test(test_topo_file_env),
      cmocka_unit_test(test_malformed_json),
      cmocka_unit_test(test_file_errors),
      cmocka_unit_test(test_description_overrides),
      cmocka_unit_test(test_classify),
      cmocka_unit_test(test_json_strings_and_numbers),
      cmocka_unit_test(test_bus_ids),
      cmocka_unit_test(test_names),
  };
  return cmocka_run_group_tests(tests, nullptr, teardown_tmp);
}
