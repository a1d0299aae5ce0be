// The CUDA device: the driver loaded with dlopen, the kernels of kernels/
// from the fatbin embedded at build time.
#pragma once

#include "gpu/device.h"

namespace xc::gpu {

// nullptr with the reason (XC_ERR_UNSUPPORTED) when CUDA cannot run here.
Device *make_cuda_device(int ordinal, Status *why);
// A CUDA driver library can be loaded on this machine.
bool cuda_driver_present();
// p is device (or managed) memory per the driver; false without a driver.
bool cuda_pointer_is_device(const void *p);

}  // namespace xc::gpu
