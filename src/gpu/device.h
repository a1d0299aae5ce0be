// The device layer: everything xcomm needs from a GPU, behind one interface
// with two implementations — CUDA (cuda_device.cc, the driver loaded with
// dlopen) and the emulated device (emulated_device.cc, a test facility:
// device memory is host memory tagged as device, IPC goes through shared
// memory between processes, a stream is a worker thread that runs its work
// in order, kernels run compiled for the host). The algorithms above are
// written once against this interface, so their logic runs in CI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "base/deadline.h"
#include "base/status.h"
#include "kernels/args.cuh"

namespace xc::gpu {

// What a peer process needs to map an allocation. buffer_id is unique per
// allocation in the exporting process (CUDA's buffer id; the emulated
// device's counter), so a freed and reused address never matches a stale
// mapping.
struct IpcHandle {
  uint8_t bytes[64];
  uint64_t buffer_id;
  uint64_t size;  // of the whole allocation
};

// Implementation-defined; only the device that made one may use it.
struct Stream;
struct Event;

// Host memory the device reads and writes too (CUDA: pinned and mapped):
// the flags of stream gates. host and dev name the same bytes.
struct SharedFlags {
  void *host = nullptr;
  void *dev = nullptr;
  size_t bytes = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const char *name() const = 0;  // "cuda", "emulated"
  virtual int ordinal() const = 0;

  // True when p is device memory this process may hand to copies and kernels.
  virtual bool is_device_pointer(const void *p) = 0;

  // IPC-capable device memory (xc_mem_alloc_device).
  virtual Status alloc(size_t bytes, void **out) = 0;
  // Free memory from alloc; XC_ERR_INVALID_ARGUMENT for any other pointer.
  virtual Status free(void *p) = 0;
  virtual bool allocated_here(const void *p) = 0;

  // The allocation holding p: its handle and p's offset in it.
  virtual Status ipc_export(const void *p, IpcHandle *h, size_t *offset) = 0;
  // Map a peer's allocation (pid: the exporting process, for the emulated device).
  virtual Status ipc_open(const IpcHandle &h, int pid, void **base) = 0;
  virtual Status ipc_close(void *base) = 0;

  // Streams: made here, or wrapping the application's (never destroyed here).
  virtual Status stream_create(Stream **out) = 0;
  virtual Status stream_wrap(void *native, Stream **out) = 0;
  virtual void stream_release(Stream *s) = 0;
  virtual Status stream_query(Stream *s, bool *idle) = 0;
  // What libraries that take the stream (NCCL) are handed: CUDA's CUstream
  // (nullptr: the legacy stream); on the emulated device the stream's
  // identity (no CUDA stream exists; the tests' fake NCCL records it).
  virtual void *stream_native(Stream *s) { return s; }
  // Run fn with the device's context current on this thread (CUDA: the
  // primary context, as NCCL's calls need; restored after).
  virtual Status in_context(const std::function<Status()> &fn) { return fn(); }

  // An event recorded on s now; query it until done, then destroy it.
  virtual Status event_record(Stream *s, Event **out) = 0;
  virtual Status event_query(Event *e, bool *done) = 0;
  virtual void event_destroy(Event *e) = 0;

  virtual Status copy_async(void *dst, const void *src, size_t bytes, Stream *s) = 0;
  virtual Status launch_reduce(const kernels::ReduceArgs &args, Stream *s) = 0;
  virtual Status launch_gate(const kernels::GateArgs &args, Stream *s) = 0;
  // An intra-node kernel (kernels/custom.cuh), args.blocks blocks.
  virtual Status launch_custom(const kernels::CustomArgs &args, Stream *s) = 0;
  // Whether work enqueued on s now is being captured into a graph (CUDA
  // stream capture) rather than run: then no host-side step may follow it.
  virtual Status stream_capturing(Stream *s, bool *capturing) = 0;

  virtual Status flags_alloc(size_t bytes, SharedFlags *out) = 0;
  virtual void flags_free(SharedFlags *f) = 0;
};

// The device this process uses (XC_DEVICE: auto, cuda, emulated, none),
// made on first call; nullptr with the reason in *why when there is none.
// ordinal: the device index the communicator's config asked for, or
// -1 - local rank for XC_DEVICE_AUTO (the CUDA device takes the local rank
// modulo its device count). The first call decides the process's device.
// Thread safety: safe.
Device *device_get(int ordinal, Status *why);

// Whether p is device memory as far as this process can tell, whether or
// not a usable device exists (a cudaMalloc pointer in a build whose device
// cannot run is still device memory, to be refused, never touched). The host
// hot path pays one predictable branch when no device can exist: XC_DEVICE
// none, or auto/cuda without a CUDA driver on the machine.
bool pointer_is_device(const void *p);

// Wait for e under the deadline (polling with backoff), then destroy it.
// watch, if set, runs between polls once the wait sleeps; its error ends
// the wait (an NCCL op whose communicator reports an asynchronous error).
Status event_wait(Device *dev, Event *e, Deadline deadline, const std::function<Status()> &watch = {});

}  // namespace xc::gpu
