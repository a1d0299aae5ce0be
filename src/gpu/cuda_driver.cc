#include "gpu/cuda_driver.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "base/env.h"

namespace xc::gpu {

namespace {

template <typename F>
bool resolve(void *lib, const char *symbol, F *fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, symbol));
  return *fn != nullptr;
}

// The driver in lib, or nullptr with the first missing symbol in *missing.
std::unique_ptr<CudaDriver> resolve_all(void *lib, std::string *missing) {
  auto d = std::make_unique<CudaDriver>();
#define XC_CUDA_DRIVER_RESOLVE(field, plain, symbol) \
  if (!resolve(lib, symbol, &d->field)) {            \
    *missing = symbol;                               \
    return nullptr;                                  \
  }
  XC_CUDA_DRIVER_ENTRIES(XC_CUDA_DRIVER_RESOLVE)
#undef XC_CUDA_DRIVER_RESOLVE
#define XC_CUDA_DRIVER_OPTIONAL(field, plain, symbol) (void)resolve(lib, symbol, &d->field);
  XC_CUDA_DRIVER_OPTIONAL_ENTRIES(XC_CUDA_DRIVER_OPTIONAL)
#undef XC_CUDA_DRIVER_OPTIONAL
  return d;
}

}  // namespace

std::string CudaDriver::error(CUresult rc) const {
  const char *s = nullptr;
  if (get_error_string(rc, &s) != kCudaSuccess || !s) s = "unknown error";
  return std::string(s) + " (" + std::to_string(rc) + ")";
}

const CudaDriver *load_cuda_driver(std::string *why) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<CudaDriver>> loaded;
  std::string name = env_get("XC_CUDA_LIBRARY");
  if (name.empty()) name = "libcuda.so.1";  // the driver's soname; plain libcuda.so is the toolkit's link stub
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(name);
  if (it != loaded.end()) return it->second.get();
  void *lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    *why = name + " not found: " + (e ? e : "unknown dlopen error");
    return nullptr;
  }
  std::string missing;
  std::unique_ptr<CudaDriver> d = resolve_all(lib, &missing);
  if (!d) {
    // Too old a driver for the _v2 names (before CUDA 11), or no driver at all.
    *why = name + " lacks " + missing;
    dlclose(lib);
    return nullptr;
  }
  d->name = name;
  const CudaDriver *out = d.get();
  loaded[name] = std::move(d);
  return out;
}

}  // namespace xc::gpu
