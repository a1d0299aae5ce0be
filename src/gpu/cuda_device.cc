#include "gpu/cuda_device.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "gpu/fatbin.h"
#include "gpu/kernel_names.h"
#include "xcomm_build_config.h"

namespace xc::gpu {

namespace {

// Stream and Event are declared, not defined, by device.h, and the emulated
// device has its own: defining xc::gpu::Stream here too would be two
// definitions of one class in one library. So the handles point at types
// of this file's own: a stream at a CudaStream, an event at the driver's
// event itself (no allocation per op).
struct CudaStream {
  CUstream s;  // nullptr: the legacy default stream
  bool owned;  // made by stream_create, destroyed by stream_release
};

Stream *to_handle(CudaStream *s) { return reinterpret_cast<Stream *>(s); }
CudaStream *from_handle(Stream *s) { return reinterpret_cast<CudaStream *>(s); }
Event *to_handle(CUevent e) { return reinterpret_cast<Event *>(e); }
CUevent from_handle(Event *e) { return reinterpret_cast<CUevent>(e); }

CUdeviceptr dptr(const void *p) { return reinterpret_cast<uintptr_t>(p); }
void *ptr(CUdeviceptr d) { return reinterpret_cast<void *>(static_cast<uintptr_t>(d)); }

// A reduction's block: 256 threads, 8 warps, the usual size for a loop
// that streams memory.
constexpr unsigned kReduceThreads = 256;
// Blocks per SM of a reduction: 4 × 256 threads keep every SM's memory
// pipeline busy; more only queue behind them (the body loops over its share).
constexpr unsigned kReduceBlocksPerSm = 4;
// An intra-node kernel's block: its first n threads keep the flag barrier.
constexpr unsigned kCustomThreads = 512;

// cudaMalloc may carve allocations under 2 MiB out of one larger block, and
// CUDA IPC then shares (and maps at its own base) the whole block: a peer
// would read at the wrong offset, and opening a second allocation of the
// same block fails "already mapped". Allocations in multiples of 2 MiB are
// blocks of their own (the CUDA programming guide's advice for IPC).
constexpr size_t kIpcGranularity = size_t{2} << 20;

// Unregistered host memory is an error to the driver, pinned host memory
// is CU_MEMORYTYPE_HOST: both are host. Managed memory is reported as
// device (the runtime's cudaMemoryTypeManaged is that plus IS_MANAGED).
bool memory_is_device(const CudaDriver &cu, const void *p) {
  unsigned type = 0;
  return p && cu.pointer_get_attribute(&type, kCuPointerAttributeMemoryType, dptr(p)) == kCudaSuccess &&
         type == kCuMemorytypeDevice;
}

// The kernels nvcc built into this library, nullptr in a build without them.
const void *embedded_kernels() {
#if XC_HAVE_CUDA
  return kKernelsFatbin;
#else
  return nullptr;
#endif
}

}  // namespace

// Makes the device's context current on the calling thread for the scope's
// life and gives the thread its previous context back after. Calls come
// from the application's threads and from xcomm's own, and a thread must
// not find its current device changed behind its back (NCCL likewise
// restores the device it found). Both calls only read and write the
// driver's per-thread state.
class CudaDevice::Scope {
 public:
  explicit Scope(const CudaDevice &d) : d_(d) {
    if (d.cu_.ctx_get_current(&prev_) != kCudaSuccess) prev_ = nullptr;
    if (prev_ == d.ctx_) return;
    status_ = d.check(d.cu_.ctx_set_current(d.ctx_), "cuCtxSetCurrent");
    switched_ = status_.ok();
  }
  ~Scope() {
    if (switched_) d_.cu_.ctx_set_current(prev_);
  }
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;
  const Status &status() const { return status_; }

 private:
  const CudaDevice &d_;
  CUcontext prev_ = nullptr;
  bool switched_ = false;
  Status status_;
};

#define XC_CUDA_SCOPE(name) \
  Scope name(*this);        \
  XC_TRY(name.status())

Status CudaDevice::check(CUresult rc, const char *call) const {
  if (rc == kCudaSuccess) return Status::Ok();
  return Error(XC_ERR_CUDA, "%s failed: %s", call, cu_.error(rc).c_str());
}

Device *make_cuda_device(int ordinal, Status *why) {
  const void *fatbin = embedded_kernels();
  if (!fatbin) {
    *why = Error(XC_ERR_UNSUPPORTED, "built without CUDA kernels (-Dcuda=disabled or nvcc not found)");
    return nullptr;
  }
  std::string not_loaded;
  const CudaDriver *cu = load_cuda_driver(&not_loaded);
  if (!cu) {
    *why = Status(XC_ERR_UNSUPPORTED, not_loaded);
    return nullptr;
  }
  // No GPU, or the toolkit's stub in place of a driver: nothing to use, as
  // without a driver. Any other failure is a driver that is there and broken,
  // which must not pass for a machine without CUDA.
  constexpr CUresult kCudaErrorStubLibrary = 34;
  CUresult rc = cu->init(0);
  if (rc == kCudaErrorNoDevice || rc == kCudaErrorStubLibrary) {
    // The stub knows no error strings: its code is named here.
    std::string text = rc == kCudaErrorStubLibrary ? cu->name + " is the toolkit's stub, not a driver (34)"
                                                   : cu->error(rc);
    *why = Error(XC_ERR_UNSUPPORTED, "no CUDA device (cuInit: %s)", text.c_str());
    return nullptr;
  }
  if (rc != kCudaSuccess) {
    *why = Error(XC_ERR_CUDA, "cuInit failed: %s", cu->error(rc).c_str());
    return nullptr;
  }
  int count = 0;
  if ((rc = cu->device_get_count(&count)) != kCudaSuccess) {
    *why = Error(XC_ERR_CUDA, "cuDeviceGetCount failed: %s", cu->error(rc).c_str());
    return nullptr;
  }
  if (count == 0) {
    *why = Error(XC_ERR_UNSUPPORTED, "no CUDA device (cuDeviceGetCount: 0)");
    return nullptr;
  }
  int index = (ordinal >= 0 ? ordinal : -1 - ordinal) % count;
  CUdevice dev = 0;
  if ((rc = cu->device_get(&dev, index)) != kCudaSuccess) {
    *why = Error(XC_ERR_CUDA, "cuDeviceGet(%d) failed: %s", index, cu->error(rc).c_str());
    return nullptr;
  }
  std::unique_ptr<CudaDevice> d(new CudaDevice(*cu, index, dev));
  Status s = d->open(fatbin);
  if (!s.ok()) {
    *why = std::move(s.with_context("CUDA device " + std::to_string(index)));
    return nullptr;
  }
  return d.release();
}

bool cuda_driver_present() {
  std::string why;
  return load_cuda_driver(&why) != nullptr;
}

// The driver is initialised once, here or by make_cuda_device (cuInit may be
// called again); pointer queries before cuInit fail.
bool cuda_pointer_is_device(const void *p) {
  static const CudaDriver *const cu = [] {
    std::string why;
    const CudaDriver *d = load_cuda_driver(&why);
    return d && d->init(0) == kCudaSuccess ? d : nullptr;
  }();
  return cu && memory_is_device(*cu, p);
}

Status CudaDevice::open(const void *fatbin) {
  XC_TRY(check(cu_.primary_ctx_retain(&ctx_, dev_), "cuDevicePrimaryCtxRetain"));
  XC_CUDA_SCOPE(scope);
  int sms = 0;
  if (cu_.device_get_attribute(&sms, kCuDeviceAttributeMultiprocessorCount, dev_) == kCudaSuccess && sms > 0)
    max_blocks_ = kReduceBlocksPerSm * static_cast<unsigned>(sms);
  // Loaded now rather than at the first op: a GPU the fatbin has no code
  // for (before sm_80: no SASS, and compute_90 PTX does not run there) is
  // refused here with the reason, and every stream op needs the gate anyway.
  Status s = check(cu_.module_load_data(&module_, fatbin), "cuModuleLoadData");
  if (!s.ok()) {
    module_ = nullptr;
    return std::move(s.with_context("loading the kernels (built for sm_80, sm_90 and compute_90 PTX)"));
  }
  XC_TRY(load_kernels());
  // A stream wait holds no SM and, with several processes on one GPU, does
  // not keep the GPU's time slice spinning the way a polling kernel does.
  int mem_ops = 0;
  wait_value_gates_ = cu_.stream_wait_value64 &&
                      cu_.device_get_attribute(&mem_ops, kCuDeviceAttributeCanUse64BitStreamMemOps, dev_) ==
                          kCudaSuccess &&
                      mem_ops == 1;
  return Status::Ok();
}

Status CudaDevice::load_kernels() {
  XC_TRY(check(cu_.module_get_function(&gate_, module_, kGateKernelName), "cuModuleGetFunction(xc_gate)"));
  std::vector<CUfunction> all{gate_};
  for (int d = 0; d < reduce_table::kNumDtypes; ++d)
    for (int o = 0; o < reduce_table::kNumOps; ++o) {
      std::string name = reduce_kernel_name(static_cast<xc_dtype_t>(d), static_cast<xc_op_t>(o));
      if (name.empty()) continue;
      XC_TRY(check(cu_.module_get_function(&reduce_[d][o], module_, name.c_str()),
                   ("cuModuleGetFunction(" + name + ")").c_str()));
      all.push_back(reduce_[d][o]);
    }
  XC_TRY(check(cu_.module_get_function(&custom_gather_, module_, kCustomGatherKernelName),
               "cuModuleGetFunction(xc_custom_gather)"));
  all.push_back(custom_gather_);
  for (int d = 0; d < reduce_table::kNumDtypes; ++d)
    for (int o = 0; o < reduce_table::kNumOps; ++o) {
      if (o == XC_AVG) continue;  // SUM's kernel
      std::string name = custom_kernel_name(static_cast<xc_dtype_t>(d), static_cast<xc_op_t>(o));
      if (name.empty()) continue;
      XC_TRY(check(cu_.module_get_function(&custom_[d][o], module_, name.c_str()),
                   ("cuModuleGetFunction(" + name + ")").c_str()));
      all.push_back(custom_[d][o]);
    }
  // Without cuFuncLoad (drivers before 12.4) the kernels load at their first
  // launch, as lazy loading has it.
  if (cu_.func_load)
    for (CUfunction f : all) XC_TRY(check(cu_.func_load(f), "cuFuncLoad"));
  return Status::Ok();
}

// Releases only what this device holds: the module and one reference to
// the primary context (the application's runtime may hold others). At
// process exit the driver may be gone already; it then answers
// CUDA_ERROR_DEINITIALIZED and nothing is done, which is what exit does anyway.
CudaDevice::~CudaDevice() {
  if (!ctx_) return;
  if (module_) {
    Scope scope(*this);
    if (scope.status().ok()) cu_.module_unload(module_);
  }
  cu_.primary_ctx_release(dev_);
}

bool CudaDevice::is_device_pointer(const void *p) {
  if (!p) return false;
  if (device_ranges_.contains(reinterpret_cast<uintptr_t>(p))) return true;
  Scope scope(*this);  // for the address range below; the type needs no context
  if (!scope.status().ok() || !memory_is_device(cu_, p)) return false;
  CUdeviceptr base = 0;
  size_t bytes = 0;
  if (cu_.mem_get_address_range(&base, &bytes, dptr(p)) == kCudaSuccess)
    device_ranges_.add(static_cast<uintptr_t>(base), bytes);
  return true;
}

// cuMemAlloc memory can be exported with cuIpcGetMemHandle, which memory
// from the stream-ordered or virtual-memory allocators cannot without
// extra setup: the peers of xc_mem_alloc_device memory map it directly.
Status CudaDevice::alloc(size_t bytes, void **out) {
  if (bytes == 0) {
    *out = nullptr;
    return Status::Ok();
  }
  XC_CUDA_SCOPE(scope);
  CUdeviceptr p = 0;
  size_t whole = (bytes + kIpcGranularity - 1) / kIpcGranularity * kIpcGranularity;
  Status s = check(cu_.mem_alloc(&p, whole), "cuMemAlloc");
  if (!s.ok()) return std::move(s.with_context("allocating " + std::to_string(bytes) + " bytes"));
  std::lock_guard<std::mutex> lock(alloc_mu_);
  allocations_[static_cast<uintptr_t>(p)] = whole;
  *out = ptr(p);
  return Status::Ok();
}

// Forgotten before cuMemFree is asked: a free the driver refuses leaves a
// sticky error on a dead context, where nothing could be freed again anyway.
Status CudaDevice::free(void *p) {
  uintptr_t base = reinterpret_cast<uintptr_t>(p);
  {
    std::lock_guard<std::mutex> lock(alloc_mu_);
    if (allocations_.erase(base) == 0)
      return Error(XC_ERR_INVALID_ARGUMENT, "%p is not device memory from xc_mem_alloc_device (or freed already)", p);
  }
  {
    std::lock_guard<std::mutex> lock(export_mu_);
    exported_.erase(base);
  }
  device_ranges_.forget(base);
  XC_CUDA_SCOPE(scope);
  return check(cu_.mem_free(dptr(p)), "cuMemFree");
}

bool CudaDevice::allocated_here(const void *p) {
  std::lock_guard<std::mutex> lock(alloc_mu_);
  return allocations_.count(reinterpret_cast<uintptr_t>(p)) != 0;
}

// Making a handle is a call into the kernel driver; an allocation is
// exported once and its handle served from the cache after, as long as the
// allocation at that base is the same one (its buffer id).
Status CudaDevice::ipc_export(const void *p, IpcHandle *h, size_t *offset) {
  XC_CUDA_SCOPE(scope);
  CUdeviceptr base = 0;
  size_t bytes = 0;
  XC_TRY(check(cu_.mem_get_address_range(&base, &bytes, dptr(p)), "cuMemGetAddressRange"));
  unsigned long long buffer_id = 0;
  XC_TRY(check(cu_.pointer_get_attribute(&buffer_id, kCuPointerAttributeBufferId, base),
               "cuPointerGetAttribute(BUFFER_ID)"));
  CUipcMemHandle handle;
  {
    std::lock_guard<std::mutex> lock(export_mu_);
    auto it = exported_.find(static_cast<uintptr_t>(base));
    if (it != exported_.end() && it->second.buffer_id == buffer_id) {
      handle = it->second.handle;
    } else {
      XC_TRY(check(cu_.ipc_get_mem_handle(&handle, base), "cuIpcGetMemHandle"));
      exported_[static_cast<uintptr_t>(base)] = Exported{buffer_id, handle};
    }
  }
  static_assert(sizeof h->bytes == sizeof handle.reserved, "an IpcHandle holds a CUDA IPC handle");
  memcpy(h->bytes, handle.reserved, sizeof h->bytes);
  h->buffer_id = buffer_id;
  h->size = bytes;
  *offset = static_cast<size_t>(dptr(p) - base);
  return Status::Ok();
}

// Peer access between the two GPUs is enabled by the driver when needed
// (LAZY_ENABLE_PEER_ACCESS); the pid is the emulated device's business.
Status CudaDevice::ipc_open(const IpcHandle &h, int /*pid*/, void **base) {
  CUipcMemHandle handle;
  memcpy(handle.reserved, h.bytes, sizeof handle.reserved);
  XC_CUDA_SCOPE(scope);
  CUdeviceptr d = 0;
  CUresult rc = cu_.ipc_open_mem_handle(&d, handle, kCuIpcMemLazyEnablePeerAccess);
  // Mapped whole, the allocation is as large here as at its owner; a
  // sub-allocation maps its driver's whole block, larger, at the block's base.
  CUdeviceptr mapped = 0;
  size_t bytes = 0;
  if (rc == kCudaSuccess && cu_.mem_get_address_range(&mapped, &bytes, d) == kCudaSuccess &&
      (mapped != d || bytes != h.size)) {
    (void)cu_.ipc_close_mem_handle(d);
    rc = kCudaErrorAlreadyMapped;
  }
  if (rc == kCudaErrorAlreadyMapped)
    return Error(XC_ERR_UNSUPPORTED,
                 "a peer's device buffer (an allocation of %llu bytes) is part of a larger block of the CUDA "
                 "allocator, which CUDA IPC can only share whole: allocate buffers that other ranks read with "
                 "xc_mem_alloc_device, or with cudaMalloc in multiples of 2 MiB",
                 static_cast<unsigned long long>(h.size));
  XC_TRY(check(rc, "cuIpcOpenMemHandle"));
  *base = ptr(d);
  return Status::Ok();
}

Status CudaDevice::ipc_close(void *base) {
  XC_CUDA_SCOPE(scope);
  return check(cu_.ipc_close_mem_handle(dptr(base)), "cuIpcCloseMemHandle");
}

// Non-blocking: xcomm's streams never wait for, nor hold up, work on the
// legacy default stream (as NCCL's internal streams).
Status CudaDevice::stream_create(Stream **out) {
  XC_CUDA_SCOPE(scope);
  CUstream s = nullptr;
  XC_TRY(check(cu_.stream_create(&s, kCuStreamNonBlocking), "cuStreamCreate"));
  *out = to_handle(new CudaStream{s, true});
  return Status::Ok();
}

void *CudaDevice::stream_native(Stream *s) { return from_handle(s)->s; }

Status CudaDevice::in_context(const std::function<Status()> &fn) {
  XC_CUDA_SCOPE(scope);
  return fn();
}

Status CudaDevice::stream_wrap(void *native, Stream **out) {
  *out = to_handle(new CudaStream{static_cast<CUstream>(native), false});
  return Status::Ok();
}

void CudaDevice::stream_release(Stream *s) {
  if (!s) return;
  std::unique_ptr<CudaStream> cs(from_handle(s));
  if (!cs->owned) return;
  // The driver lets queued work finish and frees the stream after.
  Scope scope(*this);
  if (scope.status().ok()) cu_.stream_destroy(cs->s);
}

Status CudaDevice::stream_query(Stream *s, bool *idle) {
  XC_CUDA_SCOPE(scope);
  CUresult rc = cu_.stream_query(from_handle(s)->s);
  if (rc != kCudaSuccess && rc != kCudaErrorNotReady) return check(rc, "cuStreamQuery");
  *idle = rc == kCudaSuccess;
  return Status::Ok();
}

Status CudaDevice::event_record(Stream *s, Event **out) {
  XC_CUDA_SCOPE(scope);
  CUevent e = nullptr;
  XC_TRY(check(cu_.event_create(&e, kCuEventDisableTiming), "cuEventCreate"));
  Status st = check(cu_.event_record(e, from_handle(s)->s), "cuEventRecord");
  if (!st.ok()) {
    cu_.event_destroy(e);
    return st;
  }
  *out = to_handle(e);
  return Status::Ok();
}

Status CudaDevice::event_query(Event *e, bool *done) {
  XC_CUDA_SCOPE(scope);
  CUresult rc = cu_.event_query(from_handle(e));
  if (rc != kCudaSuccess && rc != kCudaErrorNotReady) return check(rc, "cuEventQuery");
  *done = rc == kCudaSuccess;
  return Status::Ok();
}

void CudaDevice::event_destroy(Event *e) {
  if (!e) return;
  Scope scope(*this);
  if (scope.status().ok()) cu_.event_destroy(from_handle(e));
}

// Unified addressing: the driver tells the direction from the pointers, so
// one call serves host↔device, device↔device and peer copies.
Status CudaDevice::copy_async(void *dst, const void *src, size_t bytes, Stream *s) {
  if (bytes == 0) return Status::Ok();
  XC_CUDA_SCOPE(scope);
  return check(cu_.memcpy_async(dptr(dst), dptr(src), bytes, from_handle(s)->s), "cuMemcpyAsync");
}

Status CudaDevice::launch_reduce(const kernels::ReduceArgs &args, Stream *s) {
  if (args.count == 0) return Status::Ok();
  if (args.nsrc < 1 || args.nsrc > kernels::kMaxSources)
    return Error(XC_ERR_INVALID_ARGUMENT, "reduction of %d sources (1 to %d)", args.nsrc, kernels::kMaxSources);
  // AVG reaches here as SUM with a divisor; an AVG that slipped through is
  // still summed, never refused.
  xc_op_t op = reduce_table::kernel_op(static_cast<xc_op_t>(args.op));
  CUfunction f = nullptr;
  if (args.dtype >= 0 && args.dtype < reduce_table::kNumDtypes && op >= 0 && op < reduce_table::kNumOps)
    f = reduce_[static_cast<size_t>(args.dtype)][static_cast<size_t>(op)];
  if (!f) return Error(XC_ERR_INVALID_ARGUMENT, "no reduction kernel for dtype %d, op %d", args.dtype, args.op);
  uint64_t want = (args.count + kReduceThreads - 1) / kReduceThreads;
  unsigned blocks = static_cast<unsigned>(std::min<uint64_t>(want, max_blocks_));
  // The arguments travel by value as the kernel's one parameter; the driver
  // copies them at the launch, so args need not outlive this call.
  void *params[] = {const_cast<kernels::ReduceArgs *>(&args)};
  XC_CUDA_SCOPE(scope);
  return check(cu_.launch_kernel(f, blocks, 1, 1, kReduceThreads, 1, 1, 0, from_handle(s)->s, params, nullptr),
               "cuLaunchKernel(reduce)");
}

Status CudaDevice::launch_custom(const kernels::CustomArgs &args, Stream *s) {
  if (args.blocks < 1 || args.blocks > static_cast<unsigned>(kernels::kCustomMaxBlocks))
    return Error(XC_ERR_INVALID_ARGUMENT, "intra-node kernel of %u blocks (1 to %d)", args.blocks,
                 kernels::kCustomMaxBlocks);
  CUfunction f = custom_gather_;
  if (args.mode != kernels::kCustomAllgather) {
    xc_op_t op = reduce_table::kernel_op(static_cast<xc_op_t>(args.op));
    f = nullptr;
    if (args.dtype >= 0 && args.dtype < reduce_table::kNumDtypes && op >= 0 && op < reduce_table::kNumOps)
      f = custom_[static_cast<size_t>(args.dtype)][static_cast<size_t>(op)];
    if (!f) return Error(XC_ERR_INVALID_ARGUMENT, "no intra-node kernel for dtype %d, op %d", args.dtype, args.op);
  }
  void *params[] = {const_cast<kernels::CustomArgs *>(&args)};
  XC_CUDA_SCOPE(scope);
  return check(cu_.launch_kernel(f, args.blocks, 1, 1, kCustomThreads, 1, 1, 0, from_handle(s)->s, params, nullptr),
               "cuLaunchKernel(custom)");
}

// Without cuStreamIsCapturing nothing can be capturing either (it came
// with graphs, CUDA 10).
Status CudaDevice::stream_capturing(Stream *s, bool *capturing) {
  *capturing = false;
  if (!cu_.stream_is_capturing) return Status::Ok();
  XC_CUDA_SCOPE(scope);
  int status = kCuStreamCaptureStatusNone;
  XC_TRY(check(cu_.stream_is_capturing(from_handle(s)->s, &status), "cuStreamIsCapturing"));
  *capturing = status != kCuStreamCaptureStatusNone;
  return Status::Ok();
}

// A stream wait on the flag where the device has 64-bit waits: it opens
// only when the flag reaches the value, so whoever would open the gate on an
// abort or at the deadline raises the flag instead (device/stream.cc does).
// Otherwise the gate kernel: one thread polling the flag.
Status CudaDevice::launch_gate(const kernels::GateArgs &args, Stream *s) {
  XC_CUDA_SCOPE(scope);
  if (wait_value_gates_)
    return check(cu_.stream_wait_value64(from_handle(s)->s, dptr(const_cast<const uint64_t *>(args.flag)), args.value,
                                         kCuStreamWaitValueGeq),
                 "cuStreamWaitValue64");
  void *params[] = {const_cast<kernels::GateArgs *>(&args)};
  return check(cu_.launch_kernel(gate_, 1, 1, 1, 1, 1, 1, 0, from_handle(s)->s, params, nullptr),
               "cuLaunchKernel(xc_gate)");
}

// Pinned and mapped, so the gate kernel reads the flags where the host
// writes them; portable, so it stays pinned for every context of the process.
Status CudaDevice::flags_alloc(size_t bytes, SharedFlags *out) {
  if (bytes == 0) return Error(XC_ERR_INVALID_ARGUMENT, "flags of 0 bytes");
  XC_CUDA_SCOPE(scope);
  void *host = nullptr;
  XC_TRY(check(cu_.mem_host_alloc(&host, bytes, kCuMemhostallocPortable | kCuMemhostallocDevicemap),
               "cuMemHostAlloc"));
  memset(host, 0, bytes);
  CUdeviceptr dev = 0;
  Status s = check(cu_.mem_host_get_device_pointer(&dev, host, 0), "cuMemHostGetDevicePointer");
  if (!s.ok()) {
    cu_.mem_free_host(host);
    return s;
  }
  *out = SharedFlags{host, ptr(dev), bytes};
  return Status::Ok();
}

void CudaDevice::flags_free(SharedFlags *f) {
  if (!f || !f->host) return;
  Scope scope(*this);
  if (scope.status().ok()) cu_.mem_free_host(f->host);
  *f = SharedFlags{};
}

}  // namespace xc::gpu
