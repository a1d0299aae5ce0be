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
  // The block's place in the grid, for kernels whose blocks each keep step
  // with the same block of the peer ranks (kernels/custom.cuh).
  __device__ unsigned block() const { return blockIdx.x; }
  __device__ unsigned thread() const { return threadIdx.x; }
  __device__ unsigned threads() const { return blockDim.x; }
  __device__ void sync_block() const { __syncthreads(); }
  __device__ bool all_in_block(bool v) const { return __syncthreads_and(v) != 0; }
  // Orders this thread's writes before its later ones for every observer:
  // peer GPUs and the host included.
  __device__ void fence_system() const { __threadfence_system(); }
};
#define XC_KERNEL_FN __device__ __forceinline__
#else
struct Exec {
  uint64_t first() const { return 0; }
  uint64_t stride() const { return 1; }
  uint64_t now_ns() const;  // steady clock (gpu/emulated_kernels.cc)
  void pause() const;       // yields the core
  unsigned block() const { return 0; }
  unsigned thread() const { return 0; }
  unsigned threads() const { return 1; }
  void sync_block() const {}
  bool all_in_block(bool v) const { return v; }
  void fence_system() const;  // a full fence (gpu/emulated_kernels.cc)
};
#define XC_KERNEL_FN inline
#endif

}  // namespace xc::kernels
