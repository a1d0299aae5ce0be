// The CUDA runtime, loaded with dlopen: the library links against no part
// of CUDA, so it loads and runs its host paths on a machine with no driver,
// no GPU and no toolkit. The few declarations needed are written out here
// rather than taken from cuda_runtime_api.h; only these layouts and values
// are relied upon, and they are part of NVIDIA's stable ABI. Every entry
// point is looked up with dlsym, so a runtime that lacks one costs that
// feature, not the load.
#pragma once

#include <cstddef>
#include <string>

namespace xc::gpu {

using cudaError_t = int;
constexpr cudaError_t kCudaSuccess = 0;
constexpr cudaError_t kCudaErrorPeerAccessAlreadyEnabled = 704;
constexpr int kCudaMemcpyHostToDevice = 1;
constexpr int kCudaMemcpyDeviceToHost = 2;
// cudaDeviceProp begins with char name[256] in every CUDA version; the rest
// of it (about 1 KiB today) is never read, only given room.
constexpr size_t kCudaDevicePropRoom = 16384;

// The entry points in use; a null one is missing from the loaded runtime
// (get_device_count never is).
struct Cudart {
  std::string name;
  cudaError_t (*get_device_count)(int *) = nullptr;
  const char *(*get_error_string)(cudaError_t) = nullptr;
  cudaError_t (*get_last_error)() = nullptr;
  cudaError_t (*get_pci_bus_id)(char *, int, int) = nullptr;
  cudaError_t (*get_properties)(void *, int) = nullptr;
  cudaError_t (*can_access_peer)(int *, int, int) = nullptr;
  cudaError_t (*get_device)(int *) = nullptr;
  cudaError_t (*set_device)(int) = nullptr;
  cudaError_t (*alloc)(void **, size_t) = nullptr;
  cudaError_t (*release)(void *) = nullptr;
  cudaError_t (*fill)(void *, int, size_t) = nullptr;
  cudaError_t (*copy)(void *, const void *, size_t, int) = nullptr;
  cudaError_t (*copy_peer)(void *, int, const void *, int, size_t) = nullptr;
  cudaError_t (*synchronize)() = nullptr;
  cudaError_t (*enable_peer)(int, unsigned) = nullptr;
  cudaError_t (*disable_peer)(int) = nullptr;

  // "invalid device ordinal (101)".
  std::string error(cudaError_t rc) const;
  // Every entry point a device-to-device copy needs is there.
  bool can_copy() const {
    return get_last_error && get_device && set_device && alloc && release && fill && copy && copy_peer &&
           synchronize && enable_peer && disable_peer;
  }
};

// The runtime named by XC_CUDART_LIBRARY, else the first of libcudart.so,
// .so.13 and .so.12 the loader finds. Loaded once per name and never
// unloaded (it keeps contexts and exit handlers that must not outlive its
// code). nullptr with the reason in *why when none loads.
// Thread safety: safe to call from several threads.
const Cudart *load_cudart(std::string *why);

}  // namespace xc::gpu
