// Entry points for memory the library moves fastest: host memory
// (xc_mem_alloc), device memory peers can map (xc_mem_alloc_device), one
// xc_mem_free for both; registered device buffers.
#include "api/api_support.h"
#include "cpu/host_mem.h"
#include "device/ipc.h"
#include "gpu/device.h"
#include "runtime/device_ops.h"

constexpr uint32_t kBufferMagic = 0x42554631;  // "BUF1"
constexpr uint32_t kBufferFreed = 0x42554646;

struct xc_buffer_s {
  uint32_t magic = kBufferMagic;
  void *ptr = nullptr;
};

using xc::Error;
using xc::Status;
using xc::api::finish;

XC_EXPORT xc_result_t xc_mem_alloc(xc_comm_t comm, size_t bytes, void **ptr) {
  XC_API_GUARD("xc_mem_alloc", {
    Status st = xc::check_comm(comm);
    if (st.ok() && !ptr) st = Error(XC_ERR_INVALID_ARGUMENT, "ptr is NULL");
    void *got = nullptr;
    if (st.ok() && bytes) st = xc::host_mem_alloc(bytes, &got);
    if (st.ok()) *ptr = got;  // untouched on failure
    return finish("xc_mem_alloc", st);
  })
}

XC_EXPORT xc_result_t xc_mem_free(xc_comm_t comm, void *ptr) {
  XC_API_GUARD("xc_mem_free", {
    Status st = comm ? xc::check_comm(comm) : Status::Ok();
    if (st.ok() && ptr) {
      Status unused;
      xc::gpu::Device *dev = xc::gpu::pointer_is_device(ptr) ? xc::gpu::device_get(-1, &unused) : nullptr;
      st = dev && dev->allocated_here(ptr) ? dev->free(ptr) : xc::host_mem_free(ptr);
    }
    return finish("xc_mem_free", st);
  })
}

XC_EXPORT xc_result_t xc_mem_alloc_device(xc_comm_t comm, size_t bytes, void **ptr) {
  XC_API_GUARD("xc_mem_alloc_device", {
    Status st = xc::check_usable(comm);
    if (st.ok() && !ptr) st = Error(XC_ERR_INVALID_ARGUMENT, "ptr is NULL");
    xc::gpu::Device *dev = nullptr;
    if (st.ok()) dev = xc::device_for(comm, &st);
    void *got = nullptr;
    if (st.ok() && bytes) st = dev->alloc(bytes, &got);
    if (st.ok()) *ptr = got;
    return finish("xc_mem_alloc_device", st);
  })
}

XC_EXPORT xc_result_t xc_buffer_register(xc_comm_t comm, void *ptr, size_t bytes, xc_buffer_t *out) {
  XC_API_GUARD("xc_buffer_register", {
    Status st = xc::check_usable(comm);
    if (st.ok() && !out) st = Error(XC_ERR_INVALID_ARGUMENT, "out is NULL");
    if (st.ok() && (!ptr || !bytes)) st = Error(XC_ERR_INVALID_ARGUMENT, "ptr is NULL or bytes is 0");
    xc::gpu::Device *dev = nullptr;
    if (st.ok()) dev = xc::device_for(comm, &st);
    if (st.ok() && !xc::gpu::pointer_is_device(ptr))
      st = Error(XC_ERR_INVALID_ARGUMENT, "%p is not device memory (registration is for device buffers)", ptr);
    if (st.ok()) st = xc::device::register_buffer(dev, ptr, bytes);
    if (st.ok()) {
      auto *b = new xc_buffer_s();
      b->ptr = ptr;
      *out = b;
    }
    return finish("xc_buffer_register", st);
  })
}

XC_EXPORT xc_result_t xc_buffer_deregister(xc_buffer_t buf) {
  XC_API_GUARD("xc_buffer_deregister", {
    if (!buf) return xc::api::ok();
    if (buf->magic != kBufferMagic)
      return finish("xc_buffer_deregister", Error(buf->magic == kBufferFreed ? XC_ERR_INVALID_USAGE : XC_ERR_INVALID_ARGUMENT,
                                                  "not a registered buffer (or deregistered already)"));
    Status st = xc::device::deregister_buffer(buf->ptr);
    buf->magic = kBufferFreed;  // the shell stays, so a second call is reported
    return finish("xc_buffer_deregister", st);
  })
}
