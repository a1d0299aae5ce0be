// What a kernel body sees of where it runs, so one body serves nvcc (the
// GPU) and the host compiler (the emulated device). A body loops over
// elements with first()/stride(); on the host the context is one thread.
#pragma once

#include <stdint.h>

#ifdef __CUDACC__
#define XC_HD __host__ __device__ __forceinline__
#define XC_DEV_ONLY __device__
#else
#define XC_HD inline
#endif

namespace xc::kernels {

#ifdef __CUDA_ARCH__
struct Exec {
  __device__ uint64_t first() const { return blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; }
  __device__ uint64_t stride() const { return static_cast<uint64_t>(gridDim.x) * blockDim.x; }
  __device__ uint64_t now_ns() const {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
  }
  __device__ void pause() const { __nanosleep(500); }
};
#define XC_KERNEL_FN __device__ __forceinline__
#else
struct Exec {
  uint64_t first() const { return 0; }
  uint64_t stride() const { return 1; }
  uint64_t now_ns() const;  // steady clock (gpu/emulated_kernels.cc)
  void pause() const;       // yields the core
};
#define XC_KERNEL_FN inline
#endif

}  // namespace xc::kernels
