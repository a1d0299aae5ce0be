// GPUs and their links from NVML and the CUDA runtime, both loaded with
// dlopen; see gpu_probe.h for what is reported and why.
//
// The few NVML declarations needed are written out here rather than taken
// from nvml.h (the CUDA runtime's are in gpu/cuda_runtime.h): the library builds
// without either, and every entry point is looked up with dlsym so an older
// driver that lacks one (nvmlDeviceGetNvLinkRemoteDeviceType came in 2020)
// costs a detail, not the probe. Only the layouts and values below are relied
// upon; they are part of NVIDIA's stable ABI.
#include "topo/gpu_probe.h"


#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "base/env.h"
#include "base/log.h"
#include "gpu/cuda_runtime.h"
#include "topo/topo_internal.h"

namespace xc::topo {
namespace {

// ---------------------------------------------------------------- NVML ABI

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st *;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorNotSupported = 3;
constexpr unsigned kNvmlMaxLinks = 18;     // NVML_NVLINK_MAX_LINKS (H100: 18)
constexpr unsigned kNvmlNameBuffer = 96;   // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kNvmlUuidBuffer = 96;   // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr int kNvmlFeatureEnabled = 1;     // nvmlEnableState_t
constexpr int kNvmlNvlinkDeviceGpu = 0;    // nvmlIntNvLinkDeviceType_t
constexpr int kNvmlNvlinkDeviceIbmNpu = 1;
constexpr int kNvmlNvlinkDeviceSwitch = 2;
constexpr int kNvmlP2pCapsIndexRead = 0;   // nvmlGpuP2PCapsIndex_t
constexpr int kNvmlP2pStatusOk = 0;        // nvmlGpuP2PStatus_t

struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};

template <typename F>
void resolve(void *lib, const char *name, F *fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
}

std::string dl_error() {
  const char *e = dlerror();
  return e ? e : "unknown dlopen error";
}

// ----------------------------------------------------------------- NVML

// One NVML session: dlopen, nvmlInit_v2, and in the destructor
// nvmlShutdown and dlclose (NVML counts its inits, so a user's own session
// is not disturbed).
class Nvml {
 public:
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char *(*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*get_count)(unsigned *) = nullptr;
  nvmlReturn_t (*get_handle)(unsigned, nvmlDevice_t *) = nullptr;
  nvmlReturn_t (*get_name)(nvmlDevice_t, char *, unsigned) = nullptr;
  nvmlReturn_t (*get_uuid)(nvmlDevice_t, char *, unsigned) = nullptr;
  nvmlReturn_t (*get_pci)(nvmlDevice_t, nvmlPciInfo_t *) = nullptr;
  nvmlReturn_t (*get_nvlink_state)(nvmlDevice_t, unsigned, int *) = nullptr;
  nvmlReturn_t (*get_nvlink_remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t *) = nullptr;
  nvmlReturn_t (*get_nvlink_remote_type)(nvmlDevice_t, unsigned, int *) = nullptr;
  nvmlReturn_t (*get_p2p_status)(nvmlDevice_t, nvmlDevice_t, int, int *) = nullptr;

  Nvml() = default;
  Nvml(const Nvml &) = delete;
  Nvml &operator=(const Nvml &) = delete;
  ~Nvml() {
    if (initialised_ && shutdown) shutdown();
    if (lib_) dlclose(lib_);
  }

  // Returns "" when NVML is ready, else the sentence for Topology::nvml.
  std::string open() {
    std::string path = env_get("XC_NVML_LIBRARY");
    if (path.empty()) path = "libnvidia-ml.so.1";
    lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib_) return "not found (" + dl_error() + ")";
    resolve(lib_, "nvmlInit_v2", &init);
    resolve(lib_, "nvmlShutdown", &shutdown);
    resolve(lib_, "nvmlErrorString", &error_string);
    resolve(lib_, "nvmlDeviceGetCount_v2", &get_count);
    resolve(lib_, "nvmlDeviceGetHandleByIndex_v2", &get_handle);
    resolve(lib_, "nvmlDeviceGetName", &get_name);
    resolve(lib_, "nvmlDeviceGetUUID", &get_uuid);
    resolve(lib_, "nvmlDeviceGetPciInfo_v3", &get_pci);
    if (!get_pci) resolve(lib_, "nvmlDeviceGetPciInfo_v2", &get_pci);  // same layout, drivers before 2018
    resolve(lib_, "nvmlDeviceGetNvLinkState", &get_nvlink_state);
    resolve(lib_, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &get_nvlink_remote_pci);
    resolve(lib_, "nvmlDeviceGetNvLinkRemoteDeviceType", &get_nvlink_remote_type);
    resolve(lib_, "nvmlDeviceGetP2PStatus", &get_p2p_status);
    for (auto [fn, name] : {std::pair<bool, const char *>{init != nullptr, "nvmlInit_v2"},
                            {get_count != nullptr, "nvmlDeviceGetCount_v2"},
                            {get_handle != nullptr, "nvmlDeviceGetHandleByIndex_v2"},
                            {get_pci != nullptr, "nvmlDeviceGetPciInfo_v3"}})
      if (!fn) return "unusable (" + path + " has no " + name + ")";
    nvmlReturn_t rc = init();
    if (rc != kNvmlSuccess) return "failed (nvmlInit_v2: " + error(rc) + ")";
    initialised_ = true;
    return "";
  }

  std::string error(nvmlReturn_t rc) const {
    const char *s = error_string ? error_string(rc) : nullptr;
    return (s ? std::string(s) : "error") + " (" + std::to_string(rc) + ")";
  }

 private:
  void *lib_ = nullptr;
  bool initialised_ = false;
};

struct NvmlGpu {
  nvmlDevice_t handle = nullptr;
  unsigned index = 0;
  std::string name, uuid, bus_id;
  std::vector<NvlinkEnd> nvlinks;
};

struct NvmlFacts {
  std::string status;  // for Topology::nvml
  std::vector<NvmlGpu> gpus;
  std::vector<std::vector<bool>> p2p_read;  // NVML's P2P read status, by NVML index
};

// The active NVLinks of one GPU. A far end is a switch when NVML says so, or
// (older drivers without the remote-type call) when its bus id is no GPU's.
std::vector<NvlinkEnd> read_nvlinks(const Nvml &nvml, nvmlDevice_t dev, const std::set<std::string> &gpu_bus_ids) {
  std::vector<NvlinkEnd> ends;
  if (!nvml.get_nvlink_state || !nvml.get_nvlink_remote_pci) return ends;
  for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
    int active = 0;
    nvmlReturn_t rc = nvml.get_nvlink_state(dev, link, &active);
    if (rc == kNvmlErrorNotSupported) break;  // no NVLink on this GPU at all
    if (rc != kNvmlSuccess || active != kNvmlFeatureEnabled) continue;
    nvmlPciInfo_t pci{};
    if (nvml.get_nvlink_remote_pci(dev, link, &pci) != kNvmlSuccess) continue;
    pci.busId[sizeof pci.busId - 1] = '\0';
    NvlinkEnd end;
    end.bus_id = normalize_bus_id(pci.busId);
    int type = -1;
    if (!nvml.get_nvlink_remote_type || nvml.get_nvlink_remote_type(dev, link, &type) != kNvmlSuccess) type = -1;
    if (type == kNvmlNvlinkDeviceIbmNpu) continue;  // a link to a POWER9 CPU, not to a peer
    if (type == kNvmlNvlinkDeviceSwitch) {
      end.kind = NvlinkEnd::Kind::kSwitch;
    } else if (type == kNvmlNvlinkDeviceGpu) {
      end.kind = NvlinkEnd::Kind::kGpu;
    } else {  // unknown: judge by the bus id
      end.kind = gpu_bus_ids.count(end.bus_id) ? NvlinkEnd::Kind::kGpu : NvlinkEnd::Kind::kSwitch;
    }
    ends.push_back(end);
  }
  return ends;
}

NvmlFacts read_nvml() {
  NvmlFacts f;
  Nvml nvml;
  f.status = nvml.open();
  if (!f.status.empty()) return f;
  unsigned count = 0;
  nvmlReturn_t rc = nvml.get_count(&count);
  if (rc != kNvmlSuccess) {
    f.status = "failed (nvmlDeviceGetCount_v2: " + nvml.error(rc) + ")";
    return f;
  }
  std::string skipped;
  for (unsigned i = 0; i < count; ++i) {
    NvmlGpu g;
    g.index = i;
    // A GPU NVML cannot open (no permission, fallen off the bus) is left out:
    // it could not be used either.
    if ((rc = nvml.get_handle(i, &g.handle)) != kNvmlSuccess) {
      skipped += "; GPU " + std::to_string(i) + ": " + nvml.error(rc);
      continue;
    }
    nvmlPciInfo_t pci{};
    if ((rc = nvml.get_pci(g.handle, &pci)) != kNvmlSuccess) {
      skipped += "; GPU " + std::to_string(i) + " PCI info: " + nvml.error(rc);
      continue;
    }
    pci.busId[sizeof pci.busId - 1] = '\0';
    g.bus_id = normalize_bus_id(pci.busId);
    char text[std::max(kNvmlNameBuffer, kNvmlUuidBuffer)] = {0};
    if (nvml.get_name && nvml.get_name(g.handle, text, kNvmlNameBuffer) == kNvmlSuccess) g.name = text;
    memset(text, 0, sizeof text);
    if (nvml.get_uuid && nvml.get_uuid(g.handle, text, kNvmlUuidBuffer) == kNvmlSuccess) g.uuid = text;
    f.gpus.push_back(std::move(g));
  }
  std::set<std::string> bus_ids;
  for (const NvmlGpu &g : f.gpus) bus_ids.insert(g.bus_id);
  for (NvmlGpu &g : f.gpus) g.nvlinks = read_nvlinks(nvml, g.handle, bus_ids);
  size_t n = f.gpus.size();
  f.p2p_read.assign(n, std::vector<bool>(n, false));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      int status = -1;
      if (i != j && nvml.get_p2p_status &&
          nvml.get_p2p_status(f.gpus[i].handle, f.gpus[j].handle, kNvmlP2pCapsIndexRead, &status) == kNvmlSuccess)
        f.p2p_read[i][j] = status == kNvmlP2pStatusOk;
    }
  }
  for (NvmlGpu &g : f.gpus) g.handle = nullptr;  // not valid past nvmlShutdown
  f.status = "loaded";
  if (!skipped.empty()) XC_WARN("topology: NVML could not read every GPU%s", skipped.c_str());
  return f;
}

// --------------------------------------------------------- CUDA runtime

using gpu::cudaError_t;
using gpu::Cudart;
using gpu::kCudaDevicePropRoom;
using gpu::kCudaErrorPeerAccessAlreadyEnabled;
using gpu::kCudaMemcpyDeviceToHost;
using gpu::kCudaMemcpyHostToDevice;
using gpu::kCudaSuccess;

struct CudaFacts {
  std::string status;  // for Topology::cuda
  const Cudart *rt = nullptr;
  int count = 0;
  std::vector<std::string> bus_ids, names;
  std::vector<std::vector<bool>> can_access;
};

CudaFacts read_cuda() {
  CudaFacts f;
  f.rt = gpu::load_cudart(&f.status);
  if (!f.rt) return f;
  const Cudart &rt = *f.rt;
  int count = 0;
  cudaError_t rc = rt.get_device_count(&count);
  if (rt.get_last_error) rt.get_last_error();  // a failed call leaves its error behind
  if (rc != kCudaSuccess || count <= 0) {
    f.status = rc != kCudaSuccess ? "no device (cudaGetDeviceCount: " + rt.error(rc) + ")" : "no device";
    f.rt = nullptr;
    return f;
  }
  f.count = count;
  f.bus_ids.resize(size_t(count));
  f.names.resize(size_t(count));
  for (int d = 0; d < count; ++d) {
    char bus[64] = {0};
    if (rt.get_pci_bus_id && rt.get_pci_bus_id(bus, sizeof bus - 1, d) == kCudaSuccess)
      f.bus_ids[size_t(d)] = normalize_bus_id(bus);
    if (rt.get_properties) {
      std::vector<char> prop(kCudaDevicePropRoom, 0);
      if (rt.get_properties(prop.data(), d) == kCudaSuccess) f.names[size_t(d)] = std::string(prop.data(), strnlen(prop.data(), 256));
    }
  }
  f.can_access.assign(size_t(count), std::vector<bool>(size_t(count), false));
  for (int a = 0; a < count; ++a) {
    for (int b = 0; b < count; ++b) {
      int yes = 0;
      if (a != b && rt.can_access_peer && rt.can_access_peer(&yes, a, b) == kCudaSuccess)
        f.can_access[size_t(a)][size_t(b)] = yes != 0;
    }
  }
  if (rt.get_last_error) rt.get_last_error();
  f.status = "loaded";
  return f;
}

// ------------------------------------------------------- peer copy test

constexpr size_t kPeerTestBytes = 1 << 20;

// Enables peer access from the current device to peer; true when it is on
// (also when it was on already), *enabled when this call turned it on.
bool enable_peer(const Cudart &rt, int peer, bool *enabled, std::string *why) {
  cudaError_t rc = rt.enable_peer(peer, 0);
  *enabled = rc == kCudaSuccess;
  if (rc == kCudaSuccess || rc == kCudaErrorPeerAccessAlreadyEnabled) {
    rt.get_last_error();  // "already enabled" is recorded as an error
    return true;
  }
  *why = "cudaDeviceEnablePeerAccess(" + std::to_string(peer) + "): " + rt.error(rc);
  rt.get_last_error();
  return false;
}

// With peer access on both ways, copies a pattern a → b → a and checks what
// comes back. Peer access this function turned on is turned off again, and
// the calling thread's current device is restored. Returns whether the copy
// came back intact; *why says what failed otherwise.
bool peer_copy_test(const Cudart &rt, int a, int b, std::string *why) {
  int saved = 0;
  if (rt.get_device(&saved) != kCudaSuccess) saved = 0;
  bool ok = true;
  auto check = [&](cudaError_t rc, const char *what) {
    if (ok && rc != kCudaSuccess) {
      ok = false;
      *why = std::string(what) + ": " + rt.error(rc);
    }
    return ok;
  };
  bool enabled_ab = false, enabled_ba = false;
  void *src = nullptr, *back = nullptr, *far = nullptr;
  size_t words = kPeerTestBytes / sizeof(uint32_t);
  std::vector<uint32_t> pattern(words), result(words, 0);
  for (size_t i = 0; i < words; ++i)
    pattern[i] = uint32_t(i * 2654435761u) ^ (uint32_t(a) << 24) ^ (uint32_t(b) << 16) ^ 0x5a5a5a5au;

  if (check(rt.set_device(a), "cudaSetDevice") && !enable_peer(rt, b, &enabled_ab, why)) ok = false;
  if (ok && check(rt.set_device(b), "cudaSetDevice") && !enable_peer(rt, a, &enabled_ba, why)) ok = false;
  if (ok) check(rt.alloc(&far, kPeerTestBytes), "cudaMalloc");
  if (ok) check(rt.fill(far, 0, kPeerTestBytes), "cudaMemset");
  if (ok) check(rt.set_device(a), "cudaSetDevice");
  if (ok) check(rt.alloc(&src, kPeerTestBytes), "cudaMalloc");
  if (ok) check(rt.alloc(&back, kPeerTestBytes), "cudaMalloc");
  if (ok) check(rt.fill(back, 0, kPeerTestBytes), "cudaMemset");
  if (ok) check(rt.copy(src, pattern.data(), kPeerTestBytes, kCudaMemcpyHostToDevice), "cudaMemcpy to the device");
  if (ok) check(rt.copy_peer(far, b, src, a, kPeerTestBytes), "cudaMemcpyPeer there");
  if (ok) check(rt.copy_peer(back, a, far, b, kPeerTestBytes), "cudaMemcpyPeer back");
  if (ok) check(rt.synchronize(), "cudaDeviceSynchronize");
  if (ok) check(rt.copy(result.data(), back, kPeerTestBytes, kCudaMemcpyDeviceToHost), "cudaMemcpy to the host");
  if (ok && memcmp(result.data(), pattern.data(), kPeerTestBytes) != 0) {
    size_t bad = 0;
    while (bad < words && result[bad] == pattern[bad]) ++bad;
    ok = false;
    char text[160];
    snprintf(text, sizeof text, "the data came back wrong (first at byte %zu: 0x%08x, want 0x%08x)",
             bad * sizeof(uint32_t), result[bad], pattern[bad]);
    *why = text;
  }

  // Clean up whatever happened above; errors here change nothing.
  if (rt.set_device(a) == kCudaSuccess) {
    if (src) rt.release(src);
    if (back) rt.release(back);
    if (enabled_ab) rt.disable_peer(b);
  }
  if (rt.set_device(b) == kCudaSuccess) {
    if (far) rt.release(far);
    if (enabled_ba) rt.disable_peer(a);
  }
  rt.set_device(saved);
  rt.get_last_error();
  return ok;
}

struct PeerResult {
  bool works = false;
  std::string why;
};

// Tests every pair the driver allows both ways, once per process: the answer
// is cached by the pair's bus ids (by ordinal where there are none).
void run_peer_tests(const CudaFacts &cf, Topology *t) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, PeerResult> cache;
  const Cudart &rt = *cf.rt;
  std::lock_guard<std::mutex> lock(mu);
  size_t n = t->gpus.size();
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      GpuLink &ij = t->links[i][j], &ji = t->links[j][i];
      if (!ij.p2p_driver || !ji.p2p_driver) continue;
      int a = t->gpus[i].index, b = t->gpus[j].index;
      auto key_of = [&](size_t k) {
        const std::string &bus = t->gpus[k].bus_id;
        return bus.empty() ? "cuda:" + std::to_string(t->gpus[k].index) : bus;
      };
      std::pair<std::string, std::string> key{key_of(i), key_of(j)};
      if (key.second < key.first) std::swap(key.first, key.second);
      auto it = cache.find(key);
      if (it == cache.end()) {
        PeerResult r;
        r.works = peer_copy_test(rt, a, b, &r.why);
        if (r.works) {
          XC_INFO("topology: peer copy between GPU %d and GPU %d works", a, b);
        } else {
          XC_WARN("topology: the driver allows peer access between GPU %d and GPU %d, but a peer copy failed: %s",
                  a, b, r.why.c_str());
        }
        it = cache.emplace(key, r).first;
      }
      ij.p2p_tested = ji.p2p_tested = true;
      ij.p2p_works = ji.p2p_works = it->second.works;
    }
  }
}

int sysfs_numa_node(const std::string &bus_id) {
  if (bus_id.empty()) return -1;
  std::ifstream f("/sys/bus/pci/devices/" + bus_id + "/numa_node");
  int node = -1;
  if (!(f >> node) || node < 0) return -1;
  return node;
}

}  // namespace

std::string normalize_bus_id(const std::string &bus_id) {
  std::string key = pci_address_key(bus_id);
  if (!key.empty()) return key;
  std::string lower = bus_id;  // not a PCI address: compare it as lower-case text
  for (char &c : lower) c = char(tolower(static_cast<unsigned char>(c)));
  return lower;
}

void build_links(const std::vector<std::vector<NvlinkEnd>> &nvlinks,
                 const std::vector<std::vector<bool>> &p2p_driver, Topology *t) {
  size_t n = t->gpus.size();
  static const std::vector<NvlinkEnd> kNone;
  auto ends = [&](size_t i) -> const std::vector<NvlinkEnd> & { return i < nvlinks.size() ? nvlinks[i] : kNone; };
  std::vector<std::string> bus(n);
  for (size_t i = 0; i < n; ++i) bus[i] = normalize_bus_id(t->gpus[i].bus_id);
  std::vector<int> switch_lanes(n, 0);
  // lanes[i][j]: links of GPU i whose far end is GPU j.
  std::vector<std::vector<int>> lanes(n, std::vector<int>(n, 0));
  for (size_t i = 0; i < n; ++i) {
    for (const NvlinkEnd &e : ends(i)) {
      if (e.kind == NvlinkEnd::Kind::kSwitch) {
        ++switch_lanes[i];
        continue;
      }
      std::string far = normalize_bus_id(e.bus_id);
      for (size_t j = 0; j < n; ++j)
        if (j != i && !far.empty() && far == bus[j]) ++lanes[i][j];
    }
  }
  t->nvswitch = std::any_of(switch_lanes.begin(), switch_lanes.end(), [](int l) { return l > 0; });
  t->links.assign(n, std::vector<GpuLink>(n));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      GpuLink &l = t->links[i][j];
      if (i == j) {
        l.type = LinkType::kSelf;
        l.p2p_driver = true;
        continue;
      }
      // Through a switch every pair gets the smaller of the two GPUs' lanes
      // to the switch fabric. A link both ends must report, so a direct
      // NVLink counts the lanes both GPUs see.
      int direct = std::min(lanes[i][j], lanes[j][i]);
      if (switch_lanes[i] > 0 && switch_lanes[j] > 0) {
        l.type = LinkType::kNvswitch;
        l.nvlinks = std::min(switch_lanes[i], switch_lanes[j]);
      } else if (direct > 0) {
        l.type = LinkType::kNvlink;
        l.nvlinks = direct;
      } else {
        l.type = LinkType::kPcie;
      }
      l.p2p_driver = i < p2p_driver.size() && j < p2p_driver[i].size() && p2p_driver[i][j];
    }
  }
}

Status probe_gpus(Topology *t, GpuProbe depth) {
  t->gpus.clear();
  t->links.clear();
  t->nvswitch = false;
  NvmlFacts nv = read_nvml();
  CudaFacts cf;
  if (depth == GpuProbe::kFull)
    cf = read_cuda();
  else
    cf.status = "not asked (start-up probes with NVML only)";
  t->nvml = nv.status;
  t->cuda = cf.status;

  std::vector<std::vector<NvlinkEnd>> nvlinks;
  std::vector<std::vector<bool>> p2p;
  if (cf.count > 0) {
    // CUDA's devices and ordinals: those are the ones this process can use.
    for (int d = 0; d < cf.count; ++d) {
      Gpu g;
      g.index = d;
      g.bus_id = cf.bus_ids[size_t(d)];
      g.name = cf.names[size_t(d)];
      std::vector<NvlinkEnd> ends;
      for (const NvmlGpu &ng : nv.gpus) {
        if (!g.bus_id.empty() && ng.bus_id == g.bus_id) {
          if (!ng.name.empty()) g.name = ng.name;
          g.uuid = ng.uuid;
          ends = ng.nvlinks;
        }
      }
      t->gpus.push_back(g);
      nvlinks.push_back(std::move(ends));
    }
    p2p = cf.can_access;
  } else {
    for (const NvmlGpu &ng : nv.gpus) {
      Gpu g;
      g.index = int(ng.index);
      g.name = ng.name;
      g.bus_id = ng.bus_id;
      g.uuid = ng.uuid;
      t->gpus.push_back(g);
      nvlinks.push_back(ng.nvlinks);
    }
    p2p = nv.p2p_read;
  }
  for (Gpu &g : t->gpus) g.numa_node = sysfs_numa_node(g.bus_id);
  build_links(nvlinks, p2p, t);
  bool peer_test = true;
  XC_TRY(env_flag("XC_TOPO_PEER_TEST", &peer_test));
  if (cf.rt && cf.rt->can_copy() && peer_test) run_peer_tests(cf, t);
  return Status::Ok();
}

}  // namespace xc::topo
