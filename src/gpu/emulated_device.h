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

// Stream capture, as CUDA graphs have it, for tests of code that must
// replay without its host side (tests/device/device_capture.cc): between
// begin and end, work enqueued on the emulated stream of value native
// (xc_stream_wrap's) is recorded, not run; a launch runs the recording
// again, as it was enqueued (same arguments, same pointers).
struct EmulatedGraph;
Status emulated_capture_begin(void *native);
Status emulated_capture_end(void *native, EmulatedGraph **out);
void emulated_graph_launch(EmulatedGraph *graph, void *native);
void emulated_graph_destroy(EmulatedGraph *graph);
// Until the work enqueued on that stream so far has run.
void emulated_stream_synchronize(void *native);

}  // namespace xc::gpu
