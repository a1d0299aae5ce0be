// The device kernels (kernels/device_kernels.cu) as nvcc built them: a
// fatbin embedded in the library by kernels/embed_fatbin.py, which the CUDA
// device hands to cuModuleLoadData. Defined only in a build with CUDA
// (XC_HAVE_CUDA in xcomm_build_config.h); nothing may name these otherwise.
#pragma once

#include <cstddef>

namespace xc::gpu {

extern const unsigned char kKernelsFatbin[];
extern const size_t kKernelsFatbinSize;

}  // namespace xc::gpu
