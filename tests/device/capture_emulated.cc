// The emulated device's stream capture (gpu/emulated_device.h) as C functions for
// test device_capture.c: it links the library's layers, so these reach the
// same emulated device its xc_* calls use.
#include "gpu/emulated_device.h"

extern "C" {

int test_capture_begin(void *native) { return xc::gpu::emulated_capture_begin(native).code(); }

void *test_capture_end(void *native) {
  xc::gpu::EmulatedGraph *g = nullptr;
  return xc::gpu::emulated_capture_end(native, &g).ok() ? g : nullptr;
}

void test_graph_launch(void *graph, void *native) {
  xc::gpu::emulated_graph_launch(static_cast<xc::gpu::EmulatedGraph *>(graph), native);
}

void test_graph_destroy(void *graph) { xc::gpu::emulated_graph_destroy(static_cast<xc::gpu::EmulatedGraph *>(graph)); }

void test_stream_synchronize(void *native) { xc::gpu::emulated_stream_synchronize(native); }
}
