// The CUDA implementation of the device layer: the driver API through
// dlopen (gpu/cuda_driver.h), the device's primary context (the one the CUDA
// runtime uses, so memory and streams pass freely between the application
// and xcomm), and the kernels from the fatbin embedded at build time
// (gpu/fatbin.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "base/reduce_table.h"
#include "base/status.h"
#include "gpu/cuda_driver.h"
#include "gpu/device.h"
#include "gpu/range_cache.h"

namespace xc::gpu {

// The device `ordinal` modulo the number of devices (ordinal -1 - r: local
// rank r modulo the number, device_get's XC_DEVICE_AUTO), ready for use;
// nullptr with the reason in *why otherwise: XC_ERR_UNSUPPORTED where there
// is no CUDA here ("built without CUDA kernels ...", "libcuda.so.1 not
// found: ...", "no CUDA device ..."), XC_ERR_CUDA where the driver is there
// and fails. Each call makes a new device (device_get keeps one per
// process). Thread safety: safe.
Device *make_cuda_device(int ordinal, Status *why);

// A CUDA driver library loads on this machine (XC_CUDA_LIBRARY, else
// libcuda.so.1), in any build: one without kernels still has to tell device
// pointers from host ones, to refuse them. Thread safety: safe.
bool cuda_driver_present();

// p is device (or managed: the driver reports it as device) memory; false
// without a driver or a device. Asks the driver every time, with no context
// needed (a pointer's memory type is known to the driver, not to a
// context); the caller keeps the device answers (gpu/device.cc). The driver
// is the one found at the first call, for the life of the process.
// Thread safety: safe.
bool cuda_pointer_is_device(const void *p);

class CudaDevice final : public Device {
 public:
  ~CudaDevice() override;
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  const char *name() const override { return "cuda"; }
  int ordinal() const override { return ordinal_; }

  bool is_device_pointer(const void *p) override;

  Status alloc(size_t bytes, void **out) override;
  Status free(void *p) override;
  bool allocated_here(const void *p) override;  // p is what alloc returned

  Status ipc_export(const void *p, IpcHandle *h, size_t *offset) override;
  Status ipc_open(const IpcHandle &h, int pid, void **base) override;
  Status ipc_close(void *base) override;

  Status stream_create(Stream **out) override;
  Status stream_wrap(void *native, Stream **out) override;
  void stream_release(Stream *s) override;
  Status stream_query(Stream *s, bool *idle) override;
  void *stream_native(Stream *s) override;
  Status in_context(const std::function<Status()> &fn) override;

  Status event_record(Stream *s, Event **out) override;
  Status event_query(Event *e, bool *done) override;
  void event_destroy(Event *e) override;

  Status copy_async(void *dst, const void *src, size_t bytes, Stream *s) override;
  Status launch_reduce(const kernels::ReduceArgs &args, Stream *s) override;
  Status launch_gate(const kernels::GateArgs &args, Stream *s) override;
  Status launch_custom(const kernels::CustomArgs &args, Stream *s) override;
  Status stream_capturing(Stream *s, bool *capturing) override;

  Status flags_alloc(size_t bytes, SharedFlags *out) override;
  void flags_free(SharedFlags *f) override;

 private:
  friend Device *make_cuda_device(int ordinal, Status *why);
  class Scope;

  CudaDevice(const CudaDriver &cu, int ordinal, CUdevice dev) : cu_(cu), ordinal_(ordinal), dev_(dev) {}
  // Retains the primary context and loads the kernels; the destructor
  // undoes whatever part of it was done.
  Status open(const void *fatbin);
  // XC_ERR_CUDA "<call> failed: <driver's text> (<code>)" unless rc is success.
  Status check(CUresult rc, const char *call) const;
  // Looks up and loads every reduction kernel (reduce_) and the gate.
  Status load_kernels();

  const CudaDriver &cu_;
  const int ordinal_;
  const CUdevice dev_;
  CUcontext ctx_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction gate_ = nullptr;
  unsigned max_blocks_ = 1024;  // of a reduction: enough to fill every SM (open)
  // Gates are stream waits on the flag (cuStreamWaitValue64) rather than
  // the gate kernel: set by open where the driver and device offer them.
  bool wait_value_gates_ = false;

  // The reduction kernels, every one loaded onto the GPU by open. With lazy
  // loading (the driver's default since CUDA 12.2) the first launch of a
  // kernel may wait for the whole context to go idle, and a gate holding a
  // stream until this very reduction is done would then never let it.
  std::array<std::array<CUfunction, reduce_table::kNumOps>, reduce_table::kNumDtypes> reduce_{};
  // The intra-node kernels (kernels/custom.cuh), loaded likewise.
  std::array<std::array<CUfunction, reduce_table::kNumOps>, reduce_table::kNumDtypes> custom_{};
  CUfunction custom_gather_ = nullptr;

  std::mutex alloc_mu_;
  std::map<uintptr_t, size_t> allocations_;  // base -> bytes, of alloc

  // The IPC handle of each allocation exported, by base; the buffer id tells
  // a live allocation from a freed one whose address came back.
  struct Exported {
    uint64_t buffer_id;
    CUipcMemHandle handle;
  };
  std::mutex export_mu_;
  std::map<uintptr_t, Exported> exported_;

  RangeCache device_ranges_;
};

}  // namespace xc::gpu
