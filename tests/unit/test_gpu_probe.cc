// topo/gpu_probe: the GPU side of the topology, on a machine without a GPU.
//
// This one file has two roles. Built plainly it is the test. Built with
// XC_FAKE_GPU_DRIVER (tests/unit/meson.build makes fake_gpu_driver.so from
// it) it is a stand-in for libnvidia-ml.so.1 and libcudart.so whose GPUs,
// NVLinks and peer-copy faults are set by FAKE_GPU_* variables: the tests
// point XC_NVML_LIBRARY and XC_CUDART_LIBRARY at it, so every path of the
// probe (NVML parsing, NVSwitch detection, CUDA/NVML matching by bus id, the
// peer copy test and its cache) runs on any machine.
#ifdef XC_FAKE_GPU_DRIVER

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

// FAKE_GPU_COUNT        GPUs NVML sees (default 0)
// FAKE_GPU_BUS_BASE     PCI bus of NVML GPU 0, hex; GPU i is on bus base+i
// FAKE_GPU_NVLINKS      direct NVLinks "A-B:LANES,..." by NVML index
// FAKE_GPU_SWITCH_LANES NVLinks from every GPU to an NVSwitch
// FAKE_GPU_NO_REMOTE_TYPE  the remote-device-type call fails (old driver)
// FAKE_GPU_NVML_P2P     pairs "A-B,..." NVML calls peer-capable (default all)
// FAKE_GPU_NVML_INIT_FAIL  nvmlInit_v2 fails
// FAKE_GPU_CUDA_COUNT   devices the CUDA runtime sees (default FAKE_GPU_COUNT)
// FAKE_GPU_CUDA_REVERSE CUDA ordinal d is NVML GPU count-1-d
// FAKE_GPU_CUDA_PEER    pairs "A-B,..." of CUDA ordinals cudaDeviceCanAccessPeer allows (default all)
// FAKE_GPU_CORRUPT      "A-B,...": peer copies from CUDA device A to B come out wrong

int env_int(const char *name, int fallback) {
  const char *v = getenv(name);
  return v && *v ? int(strtol(v, nullptr, 0)) : fallback;
}

struct PairSpec {
  int a, b, lanes;
};

std::vector<PairSpec> env_pairs(const char *name) {
  std::vector<PairSpec> out;
  const char *v = getenv(name);
  if (!v) return out;
  std::string text = v;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    PairSpec p{0, 0, 1};
    if (sscanf(text.substr(pos, end - pos).c_str(), "%d-%d:%d", &p.a, &p.b, &p.lanes) >= 2) out.push_back(p);
    pos = end + 1;
  }
  return out;
}

bool pair_listed(const char *name, int a, int b, bool when_unset) {
  if (!getenv(name)) return when_unset;
  for (const PairSpec &p : env_pairs(name))
    if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) return true;
  return false;
}

int gpu_count() { return env_int("FAKE_GPU_COUNT", 0); }
int bus_of(int gpu) { return env_int("FAKE_GPU_BUS_BASE", 0x10) + gpu; }
int cuda_count() { return env_int("FAKE_GPU_CUDA_COUNT", gpu_count()); }
int nvml_of_cuda(int d) { return getenv("FAKE_GPU_CUDA_REVERSE") ? cuda_count() - 1 - d : d; }

// NVLinks of one GPU: the far end's bus and whether it is a switch.
struct FakeLink {
  int bus;
  bool is_switch;
};

std::vector<FakeLink> links_of(int gpu) {
  std::vector<FakeLink> links;
  for (const PairSpec &p : env_pairs("FAKE_GPU_NVLINKS")) {
    int other = p.a == gpu ? p.b : p.b == gpu ? p.a : -1;
    for (int l = 0; other >= 0 && l < p.lanes; ++l) links.push_back({bus_of(other), false});
  }
  for (int l = 0; l < env_int("FAKE_GPU_SWITCH_LANES", 0); ++l) links.push_back({0xc0 + l % 4, true});
  return links;
}

int device_of(void *handle) { return int(reinterpret_cast<intptr_t>(handle)) - 1; }

struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

void fill_pci(NvmlPciInfo *pci, int bus) {
  memset(pci, 0, sizeof *pci);
  pci->bus = unsigned(bus);
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", bus);  // NVML's spelling
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", bus);
}

// CUDA side: "device memory" is host memory tagged with its device.
std::mutex g_mu;
thread_local int g_current = 0;
std::map<void *, int> g_allocations;
bool g_peer_enabled[64][64];
int g_direct_copies = 0, g_staged_copies = 0, g_nvml_inits = 0;

}  // namespace

extern "C" {

// --- what the tests read back
int fake_gpu_direct_copies() { return g_direct_copies; }
int fake_gpu_staged_copies() { return g_staged_copies; }
int fake_gpu_live_allocations() { return int(g_allocations.size()); }
int fake_gpu_nvml_inits() { return g_nvml_inits; }
int fake_gpu_peer_enabled() {
  int n = 0;
  for (auto &row : g_peer_enabled)
    for (bool on : row) n += on;
  return n;
}

// --- NVML
int nvmlInit_v2() {
  if (getenv("FAKE_GPU_NVML_INIT_FAIL")) return 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  ++g_nvml_inits;
  return 0;
}
int nvmlShutdown() {
  --g_nvml_inits;
  return 0;
}
const char *nvmlErrorString(int rc) { return rc == 9 ? "Driver Not Loaded" : "Fake NVML error"; }
int nvmlDeviceGetCount_v2(unsigned *count) {
  *count = unsigned(gpu_count());
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **device) {
  if (int(index) >= gpu_count()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = reinterpret_cast<void *>(intptr_t(index) + 1);
  return 0;
}
int nvmlDeviceGetName(void *device, char *name, unsigned length) {
  snprintf(name, length, "Fake GPU %d", device_of(device));
  return 0;
}
int nvmlDeviceGetUUID(void *device, char *uuid, unsigned length) {
  snprintf(uuid, length, "GPU-fake-%d-%02x", device_of(device), bus_of(device_of(device)));
  return 0;
}
int nvmlDeviceGetPciInfo_v3(void *device, NvmlPciInfo *pci) {
  fill_pci(pci, bus_of(device_of(device)));
  return 0;
}
int nvmlDeviceGetNvLinkState(void *device, unsigned link, int *active) {
  std::vector<FakeLink> links = links_of(device_of(device));
  if (links.empty()) return 3;  // NVML_ERROR_NOT_SUPPORTED
  if (link >= 18) return 2;
  *active = link < links.size() ? 1 : 0;
  return 0;
}
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *device, unsigned link, NvmlPciInfo *pci) {
  std::vector<FakeLink> links = links_of(device_of(device));
  if (link >= links.size()) return 2;
  fill_pci(pci, links[link].bus);
  return 0;
}
int nvmlDeviceGetNvLinkRemoteDeviceType(void *device, unsigned link, int *type) {
  if (getenv("FAKE_GPU_NO_REMOTE_TYPE")) return 3;
  std::vector<FakeLink> links = links_of(device_of(device));
  if (link >= links.size()) return 2;
  *type = links[link].is_switch ? 2 : 0;
  return 0;
}
int nvmlDeviceGetP2PStatus(void *a, void *b, int index, int *status) {
  if (index != 0) return 3;
  *status = pair_listed("FAKE_GPU_NVML_P2P", device_of(a), device_of(b), true) ? 0 : 4;
  return 0;
}

// --- CUDA runtime
int cudaGetDeviceCount(int *count) {
  *count = cuda_count();
  return *count > 0 ? 0 : 100;  // cudaErrorNoDevice
}
const char *cudaGetErrorString(int rc) { return rc == 100 ? "no CUDA-capable device is detected" : "fake CUDA error"; }
int cudaGetLastError() { return 0; }
int cudaDeviceGetPCIBusId(char *bus, int length, int device) {
  if (device < 0 || device >= cuda_count()) return 101;
  snprintf(bus, size_t(length), "0000:%02X:00.0", bus_of(nvml_of_cuda(device)));  // CUDA's spelling
  return 0;
}
int cudaGetDeviceProperties_v2(char *prop, int device) {
  snprintf(prop, 256, "Fake CUDA device %d", device);
  return 0;
}
int cudaDeviceCanAccessPeer(int *yes, int device, int peer) {
  *yes = device != peer && pair_listed("FAKE_GPU_CUDA_PEER", device, peer, true);
  return 0;
}
int cudaGetDevice(int *device) {
  *device = g_current;
  return 0;
}
int cudaSetDevice(int device) {
  if (device < 0 || device >= cuda_count()) return 101;  // cudaErrorInvalidDevice
  g_current = device;
  return 0;
}
int cudaMalloc(void **p, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mu);
  *p = malloc(bytes);
  g_allocations[*p] = g_current;
  return 0;
}
int cudaFree(void *p) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_allocations.erase(p);
  free(p);
  return 0;
}
int cudaMemset(void *p, int value, size_t bytes) {
  memset(p, value, bytes);
  return 0;
}
int cudaMemcpy(void *dst, const void *src, size_t bytes, int) {
  memcpy(dst, src, bytes);
  return 0;
}
int cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_allocations.count(dst) == 0 || g_allocations[dst] != dst_device) return 1;  // cudaErrorInvalidValue
  memcpy(dst, src, bytes);
  // A real runtime stages the copy through the host when peer access is off.
  if (g_peer_enabled[src_device][dst_device] && g_peer_enabled[dst_device][src_device]) {
    ++g_direct_copies;
    for (const PairSpec &p : env_pairs("FAKE_GPU_CORRUPT"))
      if (p.a == src_device && p.b == dst_device) static_cast<char *>(dst)[4096] ^= 0x40;
  } else {
    ++g_staged_copies;
  }
  return 0;
}
int cudaDeviceSynchronize() { return 0; }
int cudaDeviceEnablePeerAccess(int peer, unsigned) {
  if (peer == g_current || !pair_listed("FAKE_GPU_CUDA_PEER", g_current, peer, true)) return 217;
  if (g_peer_enabled[g_current][peer]) return 704;  // cudaErrorPeerAccessAlreadyEnabled
  g_peer_enabled[g_current][peer] = true;
  return 0;
}
int cudaDeviceDisablePeerAccess(int peer) {
  if (!g_peer_enabled[g_current][peer]) return 705;  // cudaErrorPeerAccessNotEnabled
  g_peer_enabled[g_current][peer] = false;
  return 0;
}

}  // extern "C"

#else  // the test

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "topo/gpu_probe.h"
#include "unit_test.h"

using xc::topo::LinkType;
using xc::topo::NvlinkEnd;
using xc::topo::Topology;

namespace {

const char *fake_driver() {
  const char *path = getenv("XC_TEST_FAKE_GPU_DRIVER");
  if (!path) fail_msg("XC_TEST_FAKE_GPU_DRIVER is not set (run through meson test)");
  return path;
}

// The test holds the fake open for its whole run, so that its counters
// live on while the probe loads and unloads it.
void *fake_handle() {
  static void *lib = nullptr;
  if (!lib && !(lib = dlopen(fake_driver(), RTLD_NOW | RTLD_LOCAL)))
    fail_msg("cannot load the fake driver: %s", dlerror());
  return lib;
}

int fake_counter(const char *name) {
  auto fn = reinterpret_cast<int (*)()>(dlsym(fake_handle(), name));
  if (!fn) fail_msg("fake driver has no %s", name);
  return fn();
}

const char *const kVars[] = {
    "XC_NVML_LIBRARY",      "XC_CUDART_LIBRARY", "XC_TOPO_PEER_TEST",  "FAKE_GPU_COUNT",
    "FAKE_GPU_BUS_BASE",    "FAKE_GPU_NVLINKS",  "FAKE_GPU_SWITCH_LANES", "FAKE_GPU_NO_REMOTE_TYPE",
    "FAKE_GPU_NVML_P2P",    "FAKE_GPU_NVML_INIT_FAIL", "FAKE_GPU_CUDA_COUNT", "FAKE_GPU_CUDA_REVERSE",
    "FAKE_GPU_CUDA_PEER",   "FAKE_GPU_CORRUPT",
};

int clean_env(void **) {
  for (const char *v : kVars) unsetenv(v);
  return 0;
}

// The fake stands in for NVML only; the CUDA runtime is absent.
void use_fake_nvml_only() {
  setenv("XC_NVML_LIBRARY", fake_driver(), 1);
  setenv("XC_CUDART_LIBRARY", "/nonexistent/libcudart.so", 1);
}

void use_fake_nvml_and_cuda() {
  setenv("XC_NVML_LIBRARY", fake_driver(), 1);
  setenv("XC_CUDART_LIBRARY", fake_driver(), 1);
}

bool starts_with(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

// The bandwidth stays 0 here: probe() estimates it by GPU generation.
void expect_link(const Topology &t, size_t i, size_t j, LinkType type, int nvlinks) {
  const xc::topo::GpuLink &l = t.links[i][j];
  if (l.type != type || l.nvlinks != nvlinks || l.bandwidth_gbps != 0)
    fail_msg("link %zu-%zu: type %d, %d lanes, %g GB/s; want type %d, %d lanes, 0 GB/s", i, j, int(l.type),
             l.nvlinks, l.bandwidth_gbps, int(type), nvlinks);
}

void expect_square(const Topology &t, size_t n) {
  assert_int_equal(t.gpus.size(), n);
  assert_int_equal(t.links.size(), n);
  for (const auto &row : t.links) assert_int_equal(row.size(), n);
}

// This machine: no GPU, no driver. The probe still succeeds and says why
// there is nothing. (Skipped where a driver is installed.)
void live_machine_without_gpu(void **) {
  Topology t;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  if (t.nvml == "loaded") skip();
  assert_true(t.gpus.empty());
  assert_true(t.links.empty());
  assert_false(t.nvswitch);
  if (!starts_with(t.nvml, "not found (") || t.nvml.find("libnvidia-ml.so.1") == std::string::npos)
    fail_msg("nvml: '%s', want 'not found (libnvidia-ml.so.1: ...)'", t.nvml.c_str());
  if (!starts_with(t.cuda, "not found (") && !starts_with(t.cuda, "no device"))
    fail_msg("cuda: '%s', want 'not found (...)' or 'no device'", t.cuda.c_str());
}

void nvml_absent_is_handled(void **) {
  setenv("XC_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  setenv("XC_CUDART_LIBRARY", "/nonexistent/libcudart.so", 1);
  Topology t;
  t.gpus.resize(3);  // whatever was there is replaced
  t.nvswitch = true;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  assert_true(t.gpus.empty());
  assert_true(t.links.empty());
  assert_false(t.nvswitch);
  if (!starts_with(t.nvml, "not found (/nonexistent/libnvidia-ml.so.1: "))
    fail_msg("nvml: '%s'", t.nvml.c_str());
  if (!starts_with(t.cuda, "not found (/nonexistent/libcudart.so: ")) fail_msg("cuda: '%s'", t.cuda.c_str());
}

// A library that loads but is no NVML / no CUDA runtime: missing symbols
// are a sentence, not a crash.
void missing_symbols_are_handled(void **) {
  setenv("XC_NVML_LIBRARY", "libm.so.6", 1);
  setenv("XC_CUDART_LIBRARY", "libm.so.6", 1);
  Topology t;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  assert_true(t.gpus.empty());
  assert_string_equal(t.nvml.c_str(), "unusable (libm.so.6 has no nvmlInit_v2)");
  assert_string_equal(t.cuda.c_str(), "not found (libm.so.6 has no cudaGetDeviceCount)");
}

void nvml_init_failure_is_handled(void **) {
  use_fake_nvml_only();
  setenv("FAKE_GPU_COUNT", "2", 1);
  setenv("FAKE_GPU_NVML_INIT_FAIL", "1", 1);
  Topology t;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  assert_true(t.gpus.empty());
  assert_string_equal(t.nvml.c_str(), "failed (nvmlInit_v2: Driver Not Loaded (9))");
}

// NVML without the CUDA runtime: NVML's GPUs, PCIe between them, the
// driver's peer answer from NVML, nothing tested.
void nvml_pcie_only(void **) {
  use_fake_nvml_only();
  setenv("FAKE_GPU_COUNT", "3", 1);
  setenv("FAKE_GPU_BUS_BASE", "0x1a", 1);
  setenv("FAKE_GPU_NVML_P2P", "0-1", 1);
  Topology t;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  assert_string_equal(t.nvml.c_str(), "loaded");
  assert_true(starts_with(t.cuda, "not found ("));
  expect_square(t, 3);
  assert_int_equal(t.gpus[1].index, 1);
  assert_string_equal(t.gpus[1].name.c_str(), "Fake GPU 1");
  assert_string_equal(t.gpus[1].bus_id.c_str(), "0000:1b:00.0");
  assert_string_equal(t.gpus[1].uuid.c_str(), "GPU-fake-1-1b");
  assert_false(t.nvswitch);
  for (size_t i = 0; i < 3; ++i) {
    for (size_t j = 0; j < 3; ++j) {
      if (i == j) {
        expect_link(t, i, j, LinkType::kSelf, 0);
      } else {
        expect_link(t, i, j, LinkType::kPcie, 0);
        bool want = (i == 0 && j == 1) || (i == 1 && j == 0);
        assert_int_equal(t.links[i][j].p2p_driver, want);
      }
      assert_false(t.links[i][j].p2p_tested);
    }
  }
  assert_int_equal(fake_counter("fake_gpu_nvml_inits"), 0);  // every init was shut down
}

void nvswitch_system(void **) {
  for (bool old_driver : {false, true}) {
    clean_env(nullptr);
    use_fake_nvml_only();
    setenv("FAKE_GPU_COUNT", "8", 1);
    setenv("FAKE_GPU_SWITCH_LANES", "18", 1);
    if (old_driver) setenv("FAKE_GPU_NO_REMOTE_TYPE", "1", 1);  // found by the switch's bus id instead
    Topology t;
    ASSERT_OK(xc::topo::probe_gpus(&t));
    expect_square(t, 8);
    assert_true(t.nvswitch);
    for (size_t i = 0; i < 8; ++i)
      for (size_t j = 0; j < 8; ++j)
        expect_link(t, i, j, i == j ? LinkType::kSelf : LinkType::kNvswitch, i == j ? 0 : 18);
  }
}

// Direct NVLinks between some pairs; an older driver without the remote
// device type, so GPUs are recognised by bus id.
void nvlink_pairs(void **) {
  use_fake_nvml_only();
  setenv("FAKE_GPU_COUNT", "4", 1);
  setenv("FAKE_GPU_NVLINKS", "0-1:4,2-3:2,1-2:1", 1);
  setenv("FAKE_GPU_NO_REMOTE_TYPE", "1", 1);
  Topology t;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  expect_square(t, 4);
  assert_false(t.nvswitch);
  expect_link(t, 0, 1, LinkType::kNvlink, 4);
  expect_link(t, 1, 0, LinkType::kNvlink, 4);
  expect_link(t, 2, 3, LinkType::kNvlink, 2);
  expect_link(t, 1, 2, LinkType::kNvlink, 1);
  expect_link(t, 0, 2, LinkType::kPcie, 0);
  expect_link(t, 3, 0, LinkType::kPcie, 0);
  expect_link(t, 3, 3, LinkType::kSelf, 0);
}

// With the CUDA runtime the list is CUDA's, in CUDA's order (here the
// reverse of NVML's), joined with NVML by bus id; every pair the runtime
// allows is tested with a real peer copy, once per process.
void cuda_order_and_peer_test(void **) {
  use_fake_nvml_and_cuda();
  setenv("FAKE_GPU_COUNT", "4", 1);
  setenv("FAKE_GPU_BUS_BASE", "0x40", 1);
  setenv("FAKE_GPU_CUDA_REVERSE", "1", 1);
  setenv("FAKE_GPU_NVLINKS", "0-1:4", 1);  // NVML indices: CUDA 3 and 2
  setenv("FAKE_GPU_CUDA_PEER", "0-1,0-2,0-3,1-2,1-3", 1);  // not 2-3
  int copies_before = fake_counter("fake_gpu_direct_copies");
  Topology t;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  assert_string_equal(t.cuda.c_str(), "loaded");
  assert_string_equal(t.nvml.c_str(), "loaded");
  expect_square(t, 4);
  for (int d = 0; d < 4; ++d) {
    char bus[32], name[32];
    snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x40 + 3 - d);
    snprintf(name, sizeof name, "Fake GPU %d", 3 - d);
    assert_int_equal(t.gpus[size_t(d)].index, d);
    assert_string_equal(t.gpus[size_t(d)].bus_id.c_str(), bus);
    assert_string_equal(t.gpus[size_t(d)].name.c_str(), name);  // NVML's name wins
  }
  expect_link(t, 2, 3, LinkType::kNvlink, 4);
  expect_link(t, 0, 1, LinkType::kPcie, 0);
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = 0; j < 4; ++j) {
      if (i == j) continue;
      bool allowed = !((i == 2 && j == 3) || (i == 3 && j == 2));
      const xc::topo::GpuLink &l = t.links[i][j];
      if (l.p2p_driver != allowed || l.p2p_tested != allowed || l.p2p_works != allowed)
        fail_msg("link %zu-%zu: driver %d tested %d works %d, want all %d", i, j, l.p2p_driver, l.p2p_tested,
                 l.p2p_works, allowed);
    }
  }
  // Five pairs, two copies each, all with peer access on; nothing left behind.
  assert_int_equal(fake_counter("fake_gpu_direct_copies") - copies_before, 10);
  assert_int_equal(fake_counter("fake_gpu_staged_copies"), 0);
  assert_int_equal(fake_counter("fake_gpu_live_allocations"), 0);
  assert_int_equal(fake_counter("fake_gpu_peer_enabled"), 0);

  // The answer is the process's: a second probe copies nothing.
  Topology again;
  ASSERT_OK(xc::topo::probe_gpus(&again));
  assert_int_equal(fake_counter("fake_gpu_direct_copies") - copies_before, 10);
  assert_true(again.links[0][1].p2p_tested && again.links[0][1].p2p_works);
}

// The driver says yes, the copy comes back wrong: the link is marked as not
// working, the others still work.
void corrupt_peer_copy_is_caught(void **) {
  use_fake_nvml_and_cuda();
  setenv("FAKE_GPU_COUNT", "3", 1);
  setenv("FAKE_GPU_BUS_BASE", "0x60", 1);
  setenv("FAKE_GPU_CORRUPT", "0-1", 1);
  Topology t;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  expect_square(t, 3);
  for (auto [i, j] : {std::pair<size_t, size_t>{0, 1}, {1, 0}}) {
    assert_true(t.links[i][j].p2p_driver);
    assert_true(t.links[i][j].p2p_tested);
    assert_false(t.links[i][j].p2p_works);
  }
  assert_true(t.links[0][2].p2p_tested && t.links[0][2].p2p_works);
  assert_true(t.links[2][1].p2p_tested && t.links[2][1].p2p_works);
  assert_int_equal(fake_counter("fake_gpu_live_allocations"), 0);
  assert_int_equal(fake_counter("fake_gpu_peer_enabled"), 0);
}

void peer_test_can_be_turned_off(void **) {
  use_fake_nvml_and_cuda();
  setenv("FAKE_GPU_COUNT", "2", 1);
  setenv("FAKE_GPU_BUS_BASE", "0x80", 1);
  setenv("XC_TOPO_PEER_TEST", "0", 1);
  int copies_before = fake_counter("fake_gpu_direct_copies");
  Topology t;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  expect_square(t, 2);
  assert_true(t.links[0][1].p2p_driver);
  assert_false(t.links[0][1].p2p_tested);
  assert_false(t.links[0][1].p2p_works);
  assert_int_equal(fake_counter("fake_gpu_direct_copies"), copies_before);
}

// The runtime loads but sees no device: NVML's list is used.
void cuda_without_device(void **) {
  use_fake_nvml_and_cuda();
  setenv("FAKE_GPU_COUNT", "2", 1);
  setenv("FAKE_GPU_CUDA_COUNT", "0", 1);
  Topology t;
  ASSERT_OK(xc::topo::probe_gpus(&t));
  assert_string_equal(t.cuda.c_str(), "no device (cudaGetDeviceCount: no CUDA-capable device is detected (100))");
  expect_square(t, 2);
  assert_false(t.links[0][1].p2p_tested);
}

// The rules alone, on the DGX-1 hybrid cube mesh: each GPU NVLinked to four
// others, two of them with two lanes.
void build_links_hybrid_cube_mesh(void **) {
  Topology t;
  t.gpus.resize(8);
  for (int i = 0; i < 8; ++i) {
    char bus[32];
    snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x10 + i);
    t.gpus[size_t(i)].index = i;
    t.gpus[size_t(i)].bus_id = bus;
  }
  struct Edge {
    int a, b, lanes;
  };
  const Edge edges[] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1}, {1, 5, 2},
                        {2, 3, 1}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2},
                        {5, 7, 1}, {6, 7, 1}};
  std::vector<std::vector<NvlinkEnd>> nvlinks(8);
  for (const Edge &e : edges) {
    for (int l = 0; l < e.lanes; ++l) {
      nvlinks[size_t(e.a)].push_back({NvlinkEnd::Kind::kGpu, t.gpus[size_t(e.b)].bus_id});
      // The other end as NVML spells it: the normalisation must match it.
      nvlinks[size_t(e.b)].push_back({NvlinkEnd::Kind::kGpu, "00000000:" + t.gpus[size_t(e.a)].bus_id.substr(5)});
    }
  }
  std::vector<std::vector<bool>> p2p(8, std::vector<bool>(8, true));
  xc::topo::build_links(nvlinks, p2p, &t);
  expect_square(t, 8);
  assert_false(t.nvswitch);
  expect_link(t, 0, 3, LinkType::kNvlink, 2);
  expect_link(t, 3, 0, LinkType::kNvlink, 2);
  expect_link(t, 0, 1, LinkType::kNvlink, 1);
  expect_link(t, 0, 5, LinkType::kPcie, 0);
  expect_link(t, 7, 7, LinkType::kSelf, 0);
  assert_true(t.links[0][5].p2p_driver);
  assert_false(t.links[0][5].p2p_tested);

  // Missing rows mean no NVLinks and no peer access.
  xc::topo::build_links({}, {}, &t);
  expect_link(t, 0, 3, LinkType::kPcie, 0);
  assert_false(t.links[0][3].p2p_driver);
}

void bus_ids_are_normalised(void **) {
  assert_string_equal(xc::topo::normalize_bus_id("00000000:1A:00.0").c_str(), "0000:1a:00.0");
  assert_string_equal(xc::topo::normalize_bus_id("0000:1a:00.0").c_str(), "0000:1a:00.0");
  assert_string_equal(xc::topo::normalize_bus_id("0001:C1:1F.7").c_str(), "0001:c1:1f.7");
  assert_string_equal(xc::topo::normalize_bus_id("").c_str(), "");
  assert_string_equal(xc::topo::normalize_bus_id("Not-A-Bus").c_str(), "not-a-bus");
  assert_string_equal(xc::topo::normalize_bus_id("0000:1a:00.0x").c_str(), "0000:1a:00.0x");
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test_setup(live_machine_without_gpu, clean_env),
      cmocka_unit_test_setup(nvml_absent_is_handled, clean_env),
      cmocka_unit_test_setup(missing_symbols_are_handled, clean_env),
      cmocka_unit_test_setup(nvml_init_failure_is_handled, clean_env),
      cmocka_unit_test_setup(nvml_pcie_only, clean_env),
      cmocka_unit_test_setup(nvswitch_system, clean_env),
      cmocka_unit_test_setup(nvlink_pairs, clean_env),
      cmocka_unit_test_setup(cuda_order_and_peer_test, clean_env),
      cmocka_unit_test_setup(corrupt_peer_copy_is_caught, clean_env),
      cmocka_unit_test_setup(peer_test_can_be_turned_off, clean_env),
      cmocka_unit_test_setup(cuda_without_device, clean_env),
      cmocka_unit_test(build_links_hybrid_cube_mesh),
      cmocka_unit_test(bus_ids_are_normalised),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}

#endif  // XC_FAKE_GPU_DRIVER
