// xc-bench: reaching device memory from the host for `-m device`. xc-bench
// uses the public header only and links no part of CUDA: on a GPU the CUDA
// runtime (and, for the floors, the driver) is loaded with dlopen, and the
// few entry points it needs are declared in device_mem.cc.
//
// Device memory (from xc_mem_alloc_device) is filled and read back through
// host staging buffers with these copies, never touched directly:
//   XC_DEVICE=emulated   memcpy (the emulated device's "device memory" is host
//                        memory the library tags as device, a test facility)
//   otherwise            cudaMemcpy, kind cudaMemcpyDefault, from the runtime
//                        named by XC_CUDART_LIBRARY, else libcudart.so, .so.13,
//                        .so.12 (the library's own search, so both load one)
#pragma once

#include <cstddef>
#include <string>

namespace xcb {

// Chooses how device memory is reached (once per process; later calls
// return the first answer). false with the reason in *why when neither way
// works (XC_DEVICE=none, or no CUDA runtime to load).
bool device_open(std::string *why);
// "emulated" or "cuda", once device_open has succeeded.
const char *device_kind();
// Copies between host and device memory (either direction may also be
// host to host). A CUDA failure prints it and exits(1), like die().
// Both return once the copy is complete (the host-to-device one waits for
// the DMA from pageable memory too), so the next xcomm op sees the data.
void copy_to_device(void *dst, const void *src, size_t bytes);
void copy_to_host(void *dst, const void *src, size_t bytes);

// The device's own floors, beside which the table reads (CUDA only):
// an empty kernel launched and its stream synchronised, average of 1000;
// and one device-to-device cudaMemcpyAsync of `bytes`, in GB/s (10^9 B/s,
// bytes copied / time, the algbw convention). Measured on the device that
// holds `device_ptr` (memory from xc_mem_alloc_device).
struct DeviceFloors {
  double launch_us = 0;
  double d2d_gbps = 0;
};
// false with the reason (which CUDA call failed, and its error) in *why.
bool device_floors(const void *device_ptr, size_t bytes, DeviceFloors *out, std::string *why);

// The header lines of a -m device run, each ending in a newline (on a GPU
// it measures the floors there and then, on `bytes`: call it on one rank
// while the others wait):
//   # Memory: device (emulated|cuda)
//   # Device floors: kernel launch X us, D2D copy Y GB/s (N MiB)
// or "# Device floors: N/A (emulated device)", or "N/A (why)" when a CUDA call
// failed (the run goes on: the floors are a reference, not the benchmark).
// device_ptr NULL (no buffers: barrier): the floors are N/A.
std::string device_header(const void *device_ptr, size_t bytes);

}  // namespace xcb
