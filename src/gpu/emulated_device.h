// The emulated device (XC_DEVICE=emulated), a test facility: device memory
// is shared host memory (memfd) the layer tags as device, so a test may fill
// and check it directly; a peer maps it through /proc/<pid>/fd (IPC); a
// stream is a worker thread that runs its copies, kernels and event marks in
// order; kernels are the bodies of kernels/ compiled for the host. Every
// algorithm above runs on it unchanged, so their logic is tested in CI.
#pragma once

#include "gpu/device.h"

namespace xc::gpu {

// The process's one emulated device.
Device *emulated_device();
// Whether p lies in an emulated allocation or mapping (false before any).
bool emulated_is_device_pointer(const void *p);

}  // namespace xc::gpu
