// xc-bench: copies to and from device memory, and the device's floors
// (device_mem.h). The CUDA entry points are declared here, not taken from
// cuda_runtime_api.h / cuda.h, so xc-bench builds without the toolkit (as
// the library's src/gpu/cuda_runtime.h does): cudaError_t and CUresult are
// ints, streams, modules and functions opaque pointers, CUdeviceptr a 64-bit
// integer, and every name used is the plain (legacy default stream) export.
#include "device_mem.h"

#include <dlfcn.h>
#include <strings.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench.h"

namespace xcb {
namespace {

using cudaError_t = int;
using CUresult = int;
constexpr int kCudaMemcpyDeviceToDevice = 3;
constexpr int kCudaMemcpyDefault = 4;                // direction from the pointers (UVA)
constexpr int kCuPointerAttributeDeviceOrdinal = 9;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL

struct Runtime {
  std::string name;  // the library that loaded
  cudaError_t (*get_device_count)(int *) = nullptr;
  const char *(*error_string)(cudaError_t) = nullptr;
  cudaError_t (*memcpy)(void *, const void *, size_t, int) = nullptr;
  cudaError_t (*device_synchronize)() = nullptr;
  // For the floors only (a runtime that lacks them still copies).
  cudaError_t (*memcpy_async)(void *, const void *, size_t, int, void *) = nullptr;
  cudaError_t (*stream_synchronize)(void *) = nullptr;
  cudaError_t (*set_device)(int) = nullptr;
  cudaError_t (*malloc)(void **, size_t) = nullptr;
  cudaError_t (*free)(void *) = nullptr;
};

struct State {
  bool opened = false, ok = false, emulated = false;
  std::string why;
  Runtime rt;
};

State &state() {
  static State s;
  return s;
}

template <typename F>
void sym(void *lib, const char *name, F *out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
}

// "invalid argument (1)".
std::string rt_error(const Runtime &rt, cudaError_t rc) {
  const char *text = rt.error_string ? rt.error_string(rc) : nullptr;
  return std::string(text ? text : "CUDA runtime error") + " (" + std::to_string(rc) + ")";
}

// dlopen the first of names that loads (never closed: the CUDA libraries keep
// contexts and exit handlers that must not outlive their code). nullptr with
// every name's dlerror in *why.
void *open_first(const char *const *names, size_t n, std::string *loaded, std::string *why) {
  for (size_t i = 0; i < n; ++i) {
    if (void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) {
      *loaded = names[i];
      return lib;
    }
    const char *err = dlerror();
    *why += std::string(why->empty() ? "" : "; ") + (err ? err : names[i]);
  }
  return nullptr;
}

bool open_once(State *s) {
  const char *dev = getenv("XC_DEVICE");
  if (dev && strcasecmp(dev, "emulated") == 0) {
    s->emulated = true;
    return true;
  }
  const std::string hint = " (on a machine without a GPU, XC_DEVICE=emulated runs the emulated device)";
  if (dev && strcasecmp(dev, "none") == 0) {
    s->why = "no device: XC_DEVICE=none" + hint;
    return false;
  }
  // As the library chooses (src/gpu/cuda_runtime.h), so both use one runtime.
  const char *path = getenv("XC_CUDART_LIBRARY");
  const char *defaults[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12"};
  std::string errors;
  void *lib = path && *path ? open_first(&path, 1, &s->rt.name, &errors)
                            : open_first(defaults, sizeof defaults / sizeof defaults[0], &s->rt.name, &errors);
  if (!lib) {
    s->why = "no CUDA runtime to load: " + errors + hint;
    return false;
  }
  Runtime &rt = s->rt;
  sym(lib, "cudaGetDeviceCount", &rt.get_device_count);
  sym(lib, "cudaGetErrorString", &rt.error_string);
  sym(lib, "cudaMemcpy", &rt.memcpy);
  sym(lib, "cudaDeviceSynchronize", &rt.device_synchronize);
  sym(lib, "cudaMemcpyAsync", &rt.memcpy_async);
  sym(lib, "cudaStreamSynchronize", &rt.stream_synchronize);
  sym(lib, "cudaSetDevice", &rt.set_device);
  sym(lib, "cudaMalloc", &rt.malloc);
  sym(lib, "cudaFree", &rt.free);
  if (!rt.get_device_count || !rt.memcpy || !rt.device_synchronize) {
    s->why = rt.name + " lacks cudaGetDeviceCount, cudaMemcpy or cudaDeviceSynchronize";
    return false;
  }
  int count = 0;
  cudaError_t rc = rt.get_device_count(&count);
  if (rc != 0 || count == 0) {
    s->why = rt.name + ": no CUDA device: cudaGetDeviceCount " +
             (rc != 0 ? "failed: " + rt_error(rt, rc) : std::string("found none")) + hint;
    return false;
  }
  return true;
}

// cudaMemcpy, then cudaDeviceSynchronize: a copy from pageable host memory
// may return before its DMA has landed, and the op that reads the data runs
// on xcomm's stream, not on the legacy stream that this copy used.
void cuda_copy(void *dst, const void *src, size_t bytes, const char *direction) {
  const Runtime &rt = state().rt;
  cudaError_t rc = rt.memcpy(dst, src, bytes, kCudaMemcpyDefault);
  const char *call = "cudaMemcpy";
  if (rc == 0) {
    rc = rt.device_synchronize();
    call = "cudaDeviceSynchronize after cudaMemcpy";
  }
  if (rc != 0) {
    fprintf(stderr, "%s: rank %d: %s (%s, %zu B, %p -> %p) failed: %s\n", g_prog, g_rank, call, direction, bytes,
            src, dst, rt_error(rt, rc).c_str());
    exit(1);
  }
}

void copy(void *dst, const void *src, size_t bytes, const char *direction) {
  if (bytes == 0) return;
  const State &s = state();
  if (!s.ok) {  // a bug in xc-bench: -m device always opens first
    fprintf(stderr, "%s: rank %d: device copy before device_open\n", g_prog, g_rank);
    abort();
  }
  if (s.emulated)
    memcpy(dst, src, bytes);
  else
    cuda_copy(dst, src, bytes, direction);
}

// ---- the floors (CUDA only) ---------------------------------------------------------
// An empty kernel, as PTX the driver compiles for the device it runs on
// (ISA 8.0: CUDA 12.0 and later, CUDA 13 included; sm_80 runs on sm_80 and
// every later architecture).
const char kEmptyPtx[] =
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry xc_bench_empty()\n"
    "{\n"
    "\tret;\n"
    "}\n";

struct Driver {
  std::string name;
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*get_error_string)(CUresult, const char **) = nullptr;
  CUresult (*pointer_get_attribute)(void *, int, unsigned long long) = nullptr;
  CUresult (*module_load_data)(void **, const void *) = nullptr;
  CUresult (*module_get_function)(void **, void *, const char *) = nullptr;
  CUresult (*module_unload)(void *) = nullptr;
  CUresult (*launch_kernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                            void **, void **) = nullptr;
  CUresult (*stream_synchronize)(void *) = nullptr;
};

bool load_driver(Driver *d, std::string *why) {
  const char *path = getenv("XC_CUDA_LIBRARY");  // as the library's: that path, else libcuda.so.1
  const char *name = path && *path ? path : "libcuda.so.1";
  std::string errors;
  void *lib = open_first(&name, 1, &d->name, &errors);
  if (!lib) {
    *why = "no CUDA driver to load: " + errors;
    return false;
  }
  sym(lib, "cuInit", &d->init);
  sym(lib, "cuGetErrorString", &d->get_error_string);
  sym(lib, "cuPointerGetAttribute", &d->pointer_get_attribute);
  sym(lib, "cuModuleLoadData", &d->module_load_data);
  sym(lib, "cuModuleGetFunction", &d->module_get_function);
  sym(lib, "cuModuleUnload", &d->module_unload);
  sym(lib, "cuLaunchKernel", &d->launch_kernel);
  sym(lib, "cuStreamSynchronize", &d->stream_synchronize);
  if (!d->init || !d->pointer_get_attribute || !d->module_load_data || !d->module_get_function ||
      !d->module_unload || !d->launch_kernel || !d->stream_synchronize) {
    *why = d->name + " lacks one of cuInit, cuPointerGetAttribute, cuModuleLoadData, cuModuleGetFunction, "
                     "cuModuleUnload, cuLaunchKernel, cuStreamSynchronize";
    return false;
  }
  return true;
}

bool cu_ok(const Driver &d, CUresult rc, const char *call, std::string *why) {
  if (rc == 0) return true;
  const char *text = nullptr;
  if (d.get_error_string) d.get_error_string(rc, &text);
  *why = std::string(call) + " failed: " + (text ? text : "CUDA driver error") + " (" + std::to_string(rc) + ")";
  return false;
}

bool rt_ok(const Runtime &rt, cudaError_t rc, const char *call, std::string *why) {
  if (rc == 0) return true;
  *why = std::string(call) + " failed: " + rt_error(rt, rc);
  return false;
}

#define FLOOR_CU(call, expr)                        \
  do {                                              \
    if (!cu_ok(d, (expr), call, why)) return false; \
  } while (0)
#define FLOOR_RT(call, expr)                         \
  do {                                               \
    if (!rt_ok(rt, (expr), call, why)) return false; \
  } while (0)

// (a): average of kLaunches launches of one empty one-thread block, each
// followed by cuStreamSynchronize (legacy stream), after a few untimed ones
// (the first pays for loading the module onto the device).
bool launch_floor(const Driver &d, double *us, std::string *why) {
  constexpr int kWarmup = 10, kLaunches = 1000;
  void *module = nullptr, *fn = nullptr;
  FLOOR_CU("cuModuleLoadData (the empty kernel's PTX)", d.module_load_data(&module, kEmptyPtx));
  bool ok = cu_ok(d, d.module_get_function(&fn, module, "xc_bench_empty"), "cuModuleGetFunction", why);
  double t0 = 0;
  for (int i = -kWarmup; ok && i < kLaunches; ++i) {
    if (i == 0) t0 = now_us();
    ok = cu_ok(d, d.launch_kernel(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), "cuLaunchKernel", why) &&
         cu_ok(d, d.stream_synchronize(nullptr), "cuStreamSynchronize", why);
  }
  if (ok) *us = (now_us() - t0) / kLaunches;
  d.module_unload(module);
  return ok;
}

// (b): kCopies back-to-back cudaMemcpyAsync DtoD of `bytes` on the legacy
// stream and one cudaStreamSynchronize, after two untimed ones.
bool copy_floor(const Runtime &rt, size_t bytes, double *gbps, std::string *why) {
  constexpr int kWarmup = 2, kCopies = 20;
  struct DeviceBuf {  // cudaFree on every way out
    const Runtime &rt;
    void *p = nullptr;
    ~DeviceBuf() {
      if (p) rt.free(p);
    }
  } src{rt}, dst{rt};
  FLOOR_RT("cudaMalloc", rt.malloc(&src.p, bytes));
  FLOOR_RT("cudaMalloc", rt.malloc(&dst.p, bytes));
  double t0 = 0;
  for (int i = -kWarmup; i < kCopies; ++i) {
    if (i == 0) {
      FLOOR_RT("cudaStreamSynchronize", rt.stream_synchronize(nullptr));
      t0 = now_us();
    }
    FLOOR_RT("cudaMemcpyAsync (device to device)",
             rt.memcpy_async(dst.p, src.p, bytes, kCudaMemcpyDeviceToDevice, nullptr));
  }
  FLOOR_RT("cudaStreamSynchronize", rt.stream_synchronize(nullptr));
  double us = now_us() - t0;
  *gbps = static_cast<double>(bytes) * kCopies / us * 1e-3;  // B/µs → GB/s
  return true;
}

}  // namespace

bool device_open(std::string *why) {
  State &s = state();
  if (!s.opened) {
    s.opened = true;
    s.ok = open_once(&s);
  }
  if (!s.ok && why) *why = s.why;
  return s.ok;
}

const char *device_kind() { return state().emulated ? "emulated" : "cuda"; }

void copy_to_device(void *dst, const void *src, size_t bytes) { copy(dst, src, bytes, "host to device"); }
void copy_to_host(void *dst, const void *src, size_t bytes) { copy(dst, src, bytes, "device to host"); }

bool device_floors(const void *device_ptr, size_t bytes, DeviceFloors *out, std::string *why) {
  const State &s = state();
  if (!s.ok || s.emulated) {
    *why = "no CUDA device in use";
    return false;
  }
  const Runtime &rt = s.rt;
  if (!rt.memcpy_async || !rt.stream_synchronize || !rt.set_device || !rt.malloc || !rt.free) {
    *why = rt.name + " lacks one of cudaMemcpyAsync, cudaStreamSynchronize, cudaSetDevice, cudaMalloc, cudaFree";
    return false;
  }
  Driver d;
  if (!load_driver(&d, why)) return false;
  FLOOR_CU("cuInit", d.init(0));
  // The device xcomm put the buffers on; cudaSetDevice makes its primary
  // context current, which the driver calls below then use.
  int ordinal = -1;
  FLOOR_CU("cuPointerGetAttribute (DEVICE_ORDINAL of an xc_mem_alloc_device buffer)",
           d.pointer_get_attribute(&ordinal, kCuPointerAttributeDeviceOrdinal,
                                   static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(device_ptr))));
  FLOOR_RT("cudaSetDevice", rt.set_device(ordinal));
  DeviceFloors f;
  if (!launch_floor(d, &f.launch_us, why)) return false;
  if (!copy_floor(rt, bytes, &f.d2d_gbps, why)) return false;
  *out = f;
  return true;
}

std::string device_header(const void *device_ptr, size_t bytes) {
  std::string lines = std::string("# Memory: device (") + device_kind() + ")\n";
  if (state().emulated) return lines + "# Device floors: N/A (emulated device)\n";
  if (!device_ptr || bytes == 0) return lines + "# Device floors: N/A (no device buffers)\n";
  DeviceFloors f;
  std::string why;
  if (!device_floors(device_ptr, bytes, &f, &why)) return lines + "# Device floors: N/A (" + why + ")\n";
  char size[32], line[160];
  if (bytes >= (1u << 20))
    snprintf(size, sizeof size, "%.4g MiB", static_cast<double>(bytes) / (1u << 20));
  else if (bytes >= 1024)
    snprintf(size, sizeof size, "%.4g KiB", static_cast<double>(bytes) / 1024);
  else
    snprintf(size, sizeof size, "%zu B", bytes);
  snprintf(line, sizeof line, "# Device floors: kernel launch %.2f us, D2D copy %.1f GB/s (%s)\n", f.launch_us,
           f.d2d_gbps, size);
  return lines + line;
}

}  // namespace xcb
