// Entry points for memory the library moves fastest (xc_mem_alloc/free).
// Every communicator is a host one so far, so both give host memory.
#include "api/api_support.h"
#include "cpu/host_mem.h"

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
    if (st.ok() && ptr) st = xc::host_mem_free(ptr);
    return finish("xc_mem_free", st);
  })
}
