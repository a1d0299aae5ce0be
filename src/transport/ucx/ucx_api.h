// UCX's entry points, loaded with dlopen the first time a job has a peer on
// another host. Linking libucp instead would load UCX into every process
// that uses xcomm, and UCX's own start-up installs signal handlers (its
// UCX_HANDLE_ERRORS backtraces) and memory hooks that a one-host job has no
// use for. The signatures come from UCX's headers (decltype), so a mismatch
// is a compile error; XC_UCX_LIBRARY names another libucp to load.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

#include "base/status.h"

namespace xc::ucx {

#define XC_UCX_ENTRIES(X)          \
  X(ucp_get_version)               \
  X(ucp_config_read)               \
  X(ucp_config_release)            \
  X(ucp_init_version)              \
  X(ucp_cleanup)                   \
  X(ucp_worker_create)             \
  X(ucp_worker_destroy)            \
  X(ucp_worker_get_address)        \
  X(ucp_worker_release_address)    \
  X(ucp_worker_get_efd)            \
  X(ucp_worker_arm)                \
  X(ucp_worker_progress)           \
  X(ucp_worker_set_am_recv_handler) \
  X(ucp_worker_flush_nbx)          \
  X(ucp_ep_create)                 \
  X(ucp_ep_close_nbx)              \
  X(ucp_ep_print_info)             \
  X(ucp_am_send_nbx)               \
  X(ucp_am_recv_data_nbx)          \
  X(ucp_request_check_status)      \
  X(ucp_request_free)              \
  X(ucs_status_string)

struct UcxApi {
  std::string library;  // what was loaded
  unsigned major = 0, minor = 0, release = 0;
#define XC_UCX_FIELD(name) decltype(&::name) name = nullptr;
  XC_UCX_ENTRIES(XC_UCX_FIELD)
#undef XC_UCX_FIELD
};

// The loaded API (once per process; later calls return the same), or an
// error naming what was tried and why it failed. UCX older than the headers
// this was built with is refused.
Status ucx_api(const UcxApi **out);

// ucp_request_free through the loaded API, for completion callbacks that
// carry no transport.
void ucx_request_free(void *request);

// A UCX status in words, as an xcomm error of `code`.
Status ucx_error(const UcxApi &api, ucs_status_t st, xc_result_t code, const std::string &what);

}  // namespace xc::ucx
