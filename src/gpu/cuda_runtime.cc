#include "gpu/cuda_runtime.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "base/env.h"

namespace xc::gpu {

namespace {

template <typename F>
void resolve(void *lib, const char *name, F *fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
}

std::string dl_error() {
  const char *e = dlerror();
  return e ? e : "unknown dlopen error";
}

}  // namespace

std::string Cudart::error(cudaError_t rc) const {
  const char *s = get_error_string ? get_error_string(rc) : nullptr;
  return (s ? std::string(s) : "error") + " (" + std::to_string(rc) + ")";
}

const Cudart *load_cudart(std::string *why) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Cudart>> loaded;
  std::vector<std::string> names;
  std::string path = env_get("XC_CUDART_LIBRARY");
  if (!path.empty()) {
    names.push_back(path);
  } else {
    names = {"libcudart.so", "libcudart.so.13", "libcudart.so.12"};
  }
  std::lock_guard<std::mutex> lock(mu);
  for (const std::string &name : names) {
    auto it = loaded.find(name);
    if (it != loaded.end()) return it->second.get();
  }
  std::string errors;
  for (const std::string &name : names) {
    void *lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      errors += (errors.empty() ? "" : "; ") + dl_error();
      continue;
    }
    auto rt = std::make_unique<Cudart>();
    rt->name = name;
    resolve(lib, "cudaGetDeviceCount", &rt->get_device_count);
    if (!rt->get_device_count) {
      errors += (errors.empty() ? "" : "; ") + name + " has no cudaGetDeviceCount";
      dlclose(lib);
      continue;
    }
    resolve(lib, "cudaGetErrorString", &rt->get_error_string);
    resolve(lib, "cudaGetLastError", &rt->get_last_error);
    resolve(lib, "cudaDeviceGetPCIBusId", &rt->get_pci_bus_id);
    resolve(lib, "cudaGetDeviceProperties_v2", &rt->get_properties);  // CUDA 12's name for it
    if (!rt->get_properties) resolve(lib, "cudaGetDeviceProperties", &rt->get_properties);
    resolve(lib, "cudaDeviceCanAccessPeer", &rt->can_access_peer);
    resolve(lib, "cudaGetDevice", &rt->get_device);
    resolve(lib, "cudaSetDevice", &rt->set_device);
    resolve(lib, "cudaMalloc", &rt->alloc);
    resolve(lib, "cudaFree", &rt->release);
    resolve(lib, "cudaMemset", &rt->fill);
    resolve(lib, "cudaMemcpy", &rt->copy);
    resolve(lib, "cudaMemcpyPeer", &rt->copy_peer);
    resolve(lib, "cudaDeviceSynchronize", &rt->synchronize);
    resolve(lib, "cudaDeviceEnablePeerAccess", &rt->enable_peer);
    resolve(lib, "cudaDeviceDisablePeerAccess", &rt->disable_peer);
    const Cudart *out = rt.get();
    loaded[name] = std::move(rt);
    return out;
  }
  *why = "not found (" + errors + ")";
  return nullptr;
}

}  // namespace xc::gpu
