// gpu/cuda_driver.h writes the driver's types, values and signatures out by
// hand. Built only where cuda.h is found (tests/unit/meson.build), this file
// holds them against it: every value, every size, the shape of every entry
// point, and the symbol each plain name is #defined to, so a hand-written
// _v2 or a parameter of the wrong width fails the build or the test here
// rather than a launch on a GPU.
#include <cuda.h>

#include <cstring>
#include <type_traits>

#include "gpu/cuda_driver.h"
#include "gpu/device.h"
#include "unit_test.h"

namespace g = xc::gpu;

static_assert(g::kCudaSuccess == CUDA_SUCCESS);
static_assert(g::kCudaErrorNoDevice == CUDA_ERROR_NO_DEVICE);
static_assert(g::kCudaErrorNotReady == CUDA_ERROR_NOT_READY);
static_assert(g::kCuPointerAttributeMemoryType == CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
static_assert(g::kCuPointerAttributeBufferId == CU_POINTER_ATTRIBUTE_BUFFER_ID);
static_assert(g::kCuMemorytypeDevice == CU_MEMORYTYPE_DEVICE);
static_assert(g::kCuIpcMemLazyEnablePeerAccess == CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
static_assert(g::kCuStreamNonBlocking == CU_STREAM_NON_BLOCKING);
static_assert(g::kCuEventDisableTiming == CU_EVENT_DISABLE_TIMING);
static_assert(g::kCuMemhostallocPortable == CU_MEMHOSTALLOC_PORTABLE);
static_assert(g::kCuMemhostallocDevicemap == CU_MEMHOSTALLOC_DEVICEMAP);
static_assert(g::kCuDeviceAttributeMultiprocessorCount == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(g::kCuDeviceAttributeCanUse64BitStreamMemOps == CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS);
static_assert(g::kCuStreamWaitValueGeq == CU_STREAM_WAIT_VALUE_GEQ);
static_assert(g::kCudaErrorAlreadyMapped == CUDA_ERROR_ALREADY_MAPPED);
static_assert(sizeof(g::CUresult) == sizeof(CUresult));
static_assert(sizeof(g::CUdeviceptr) == sizeof(CUdeviceptr));
static_assert(sizeof(g::CUipcMemHandle) == sizeof(CUipcMemHandle));
static_assert(sizeof(g::IpcHandle::bytes) == CU_IPC_HANDLE_SIZE);

namespace {

template <class T, class = void>
struct Complete : std::false_type {};
template <class T>
struct Complete<T, std::void_t<decltype(sizeof(T))>> : std::true_type {};

// Two parameter (or result) types the ABI passes alike: same size, both
// pointers or neither, both structs or neither, and pointers to things of
// one size where both sizes are known (CUstream_st and void are not).
template <class A, class B>
constexpr bool same_slot() {
  if constexpr (sizeof(A) != sizeof(B) || std::is_pointer_v<A> != std::is_pointer_v<B> ||
                std::is_class_v<A> != std::is_class_v<B>) {
    return false;
  } else if constexpr (std::is_pointer_v<A>) {
    using PA = std::remove_cv_t<std::remove_pointer_t<A>>;
    using PB = std::remove_cv_t<std::remove_pointer_t<B>>;
    if constexpr (Complete<PA>::value && Complete<PB>::value) return same_slot<PA, PB>();
    else return true;
  } else {
    return true;
  }
}

template <class A, class B>
struct SameShape : std::false_type {};
template <class R1, class... A1, class R2, class... A2>
struct SameShape<R1 (*)(A1...), R2 (*)(A2...)> {
  static constexpr bool value = []() {
    if constexpr (sizeof...(A1) != sizeof...(A2)) return false;
    else return same_slot<R1, R2>() && (same_slot<A1, A2>() && ...);
  }();
};

#define XC_ABI_STR(x) #x
#define XC_ABI_EXPANDED(x) XC_ABI_STR(x)  // the symbol cuda.h binds the name to
#define XC_ABI_SHAPE(field, plain, symbol)                                                   \
  static_assert(SameShape<decltype(g::CudaDriver::field), decltype(&::plain)>::value,        \
                "CudaDriver::" #field " differs from cuda.h's " #plain);
XC_CUDA_DRIVER_ENTRIES(XC_ABI_SHAPE)
XC_CUDA_DRIVER_OPTIONAL_ENTRIES(XC_ABI_SHAPE)
#undef XC_ABI_SHAPE

}  // namespace

void cuda_driver_matches_cuda_h(void **) {
#define XC_ABI_SYMBOL(field, plain, symbol)                                                    \
  if (strcmp(XC_ABI_EXPANDED(plain), symbol) != 0)                                             \
    fail_msg("CudaDriver::%s looks up %s, cuda.h calls %s", #field, symbol, XC_ABI_EXPANDED(plain));
  XC_CUDA_DRIVER_ENTRIES(XC_ABI_SYMBOL)
  XC_CUDA_DRIVER_OPTIONAL_ENTRIES(XC_ABI_SYMBOL)
#undef XC_ABI_SYMBOL
}
