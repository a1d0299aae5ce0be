// The CUDA driver API, loaded with dlopen: the library links against no part
// of CUDA, so it loads and runs its host paths on a machine with no driver,
// and this file compiles without the toolkit (a -Dcuda=disabled build has
// the loader too; only the kernels are missing there). The types, values and
// signatures below are written out by hand from cuda.h; they are NVIDIA's
// stable ABI, and tests/unit/test_cuda_device.cc checks each one against
// cuda.h wherever the toolkit is installed.
#pragma once

#include <cstddef>
#include <string>

namespace xc::gpu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // CUdeviceptr_v2 on 64-bit hosts
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
struct CUipcMemHandle {  // passed by value: a 64-byte struct, as in cuda.h
  char reserved[64];
};

constexpr CUresult kCudaSuccess = 0;                // CUDA_SUCCESS
constexpr CUresult kCudaErrorNoDevice = 100;        // CUDA_ERROR_NO_DEVICE
constexpr CUresult kCudaErrorNotReady = 600;        // CUDA_ERROR_NOT_READY
constexpr int kCuPointerAttributeMemoryType = 2;    // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kCuPointerAttributeBufferId = 7;      // CU_POINTER_ATTRIBUTE_BUFFER_ID
constexpr unsigned kCuMemorytypeDevice = 2;         // CU_MEMORYTYPE_DEVICE
constexpr unsigned kCuIpcMemLazyEnablePeerAccess = 1;  // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
constexpr unsigned kCuStreamNonBlocking = 1;        // CU_STREAM_NON_BLOCKING
constexpr unsigned kCuEventDisableTiming = 2;       // CU_EVENT_DISABLE_TIMING
constexpr unsigned kCuMemhostallocPortable = 1;     // CU_MEMHOSTALLOC_PORTABLE
constexpr unsigned kCuMemhostallocDevicemap = 2;    // CU_MEMHOSTALLOC_DEVICEMAP
constexpr int kCuDeviceAttributeMultiprocessorCount = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kCuDeviceAttributeCanUse64BitStreamMemOps = 122;  // CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS
constexpr unsigned kCuStreamWaitValueGeq = 0;       // CU_STREAM_WAIT_VALUE_GEQ
constexpr int kCuStreamCaptureStatusNone = 0;       // CU_STREAM_CAPTURE_STATUS_NONE
constexpr CUresult kCudaErrorAlreadyMapped = 208;   // CUDA_ERROR_ALREADY_MAPPED

// The entry points: (field of CudaDriver, the name cuda.h declares, the
// symbol that name is #defined to and that is looked up). The _v2 symbols
// are the ones cuda.h binds the plain names to; the plain, not the _ptsz,
// names of the stream calls keep a NULL stream the legacy default stream,
// as it is for the application.
#define XC_CUDA_DRIVER_ENTRIES(X)                                                           \
  X(init, cuInit, "cuInit")                                                                 \
  X(get_error_string, cuGetErrorString, "cuGetErrorString")                                 \
  X(device_get_count, cuDeviceGetCount, "cuDeviceGetCount")                                 \
  X(device_get, cuDeviceGet, "cuDeviceGet")                                                 \
  X(device_get_attribute, cuDeviceGetAttribute, "cuDeviceGetAttribute")                     \
  X(primary_ctx_retain, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")               \
  X(primary_ctx_release, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")         \
  X(ctx_get_current, cuCtxGetCurrent, "cuCtxGetCurrent")                                    \
  X(ctx_set_current, cuCtxSetCurrent, "cuCtxSetCurrent")                                    \
  X(pointer_get_attribute, cuPointerGetAttribute, "cuPointerGetAttribute")                  \
  X(mem_alloc, cuMemAlloc, "cuMemAlloc_v2")                                                 \
  X(mem_free, cuMemFree, "cuMemFree_v2")                                                    \
  X(mem_get_address_range, cuMemGetAddressRange, "cuMemGetAddressRange_v2")                 \
  X(mem_host_alloc, cuMemHostAlloc, "cuMemHostAlloc")                                       \
  X(mem_host_get_device_pointer, cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2") \
  X(mem_free_host, cuMemFreeHost, "cuMemFreeHost")                                          \
  X(memcpy_async, cuMemcpyAsync, "cuMemcpyAsync")                                           \
  X(ipc_get_mem_handle, cuIpcGetMemHandle, "cuIpcGetMemHandle")                             \
  X(ipc_open_mem_handle, cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2")                       \
  X(ipc_close_mem_handle, cuIpcCloseMemHandle, "cuIpcCloseMemHandle")                       \
  X(stream_create, cuStreamCreate, "cuStreamCreate")                                        \
  X(stream_destroy, cuStreamDestroy, "cuStreamDestroy_v2")                                  \
  X(stream_query, cuStreamQuery, "cuStreamQuery")                                           \
  X(event_create, cuEventCreate, "cuEventCreate")                                           \
  X(event_record, cuEventRecord, "cuEventRecord")                                           \
  X(event_query, cuEventQuery, "cuEventQuery")                                              \
  X(event_destroy, cuEventDestroy, "cuEventDestroy_v2")                                     \
  X(module_load_data, cuModuleLoadData, "cuModuleLoadData")                                 \
  X(module_unload, cuModuleUnload, "cuModuleUnload")                                        \
  X(module_get_function, cuModuleGetFunction, "cuModuleGetFunction")                        \
  X(launch_kernel, cuLaunchKernel, "cuLaunchKernel")

// Entry points a driver may lack (nullptr then): newer than the oldest
// driver xcomm runs on, each with a way around it.
#define XC_CUDA_DRIVER_OPTIONAL_ENTRIES(X)                                      \
  X(stream_wait_value64, cuStreamWaitValue64, "cuStreamWaitValue64_v2") /* 11.7 */ \
  X(func_load, cuFuncLoad, "cuFuncLoad")                                 /* 12.4 */ \
  X(stream_is_capturing, cuStreamIsCapturing, "cuStreamIsCapturing")     /* 10.0 */

// The driver's entry points; a driver missing one is refused whole.
struct CudaDriver {
  std::string name;  // the library loaded
  CUresult (*init)(unsigned);
  CUresult (*get_error_string)(CUresult, const char **);
  CUresult (*device_get_count)(int *);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*device_get_attribute)(int *, int, CUdevice);
  CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
  CUresult (*primary_ctx_release)(CUdevice);
  CUresult (*ctx_get_current)(CUcontext *);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*pointer_get_attribute)(void *, int, CUdeviceptr);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*mem_get_address_range)(CUdeviceptr *, size_t *, CUdeviceptr);
  CUresult (*mem_host_alloc)(void **, size_t, unsigned);
  CUresult (*mem_host_get_device_pointer)(CUdeviceptr *, void *, unsigned);
  CUresult (*mem_free_host)(void *);
  CUresult (*memcpy_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*ipc_get_mem_handle)(CUipcMemHandle *, CUdeviceptr);
  CUresult (*ipc_open_mem_handle)(CUdeviceptr *, CUipcMemHandle, unsigned);
  CUresult (*ipc_close_mem_handle)(CUdeviceptr);
  CUresult (*stream_create)(CUstream *, unsigned);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*stream_query)(CUstream);
  CUresult (*event_create)(CUevent *, unsigned);
  CUresult (*event_record)(CUevent, CUstream);
  CUresult (*event_query)(CUevent);
  CUresult (*event_destroy)(CUevent);
  CUresult (*module_load_data)(CUmodule *, const void *);
  CUresult (*module_unload)(CUmodule);
  CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream, void **, void **);
  // Optional (XC_CUDA_DRIVER_OPTIONAL_ENTRIES): nullptr where the driver lacks them.
  CUresult (*stream_wait_value64)(CUstream, CUdeviceptr, unsigned long long, unsigned) = nullptr;
  CUresult (*func_load)(CUfunction) = nullptr;
  CUresult (*stream_is_capturing)(CUstream, int *) = nullptr;  // *: CUstreamCaptureStatus

  // "out of memory (2)"; never empty, also for a code the driver does not know.
  std::string error(CUresult rc) const;
};

// The driver named by XC_CUDA_LIBRARY, else libcuda.so.1 by the loader's
// search. Loaded once per name and never unloaded (contexts, modules and
// exit handlers must not outlive its code). nullptr with the reason in *why
// ("libcuda.so.1 not found: <dlerror>", "libcuda.so.1 lacks cuIpcOpenMemHandle_v2").
// Thread safety: safe to call from several threads.
const CudaDriver *load_cuda_driver(std::string *why);

}  // namespace xc::gpu
