// Shared by every extern "C" entry point: the thread-local last error, the
// guard that keeps exceptions from crossing the ABI, and the request pool.
#pragma once

#include <memory>
#include <new>
#include <string>

#include "base/status.h"
#include "p2p/request.h"
#include "runtime/coll_task.h"
#include "runtime/comm.h"
#include "device/stream.h"
#include "xcomm.h"

// Marks an entry point of the ABI; everything else stays hidden.
#define XC_EXPORT extern "C" __attribute__((visibility("default")))

// The body behind xc_request_t: a point-to-point request the engine tracks,
// a started collective (the shared CollTask its worker completes), or a
// device op (the outcome its stream's thread finishes).
struct xc_request_s {
  enum class Kind : uint8_t { kP2p, kCollective, kDevice };
  Kind kind = Kind::kP2p;
  xc::Request req;                      // kP2p (its magic marks every kind of handle)
  std::shared_ptr<xc::CollTask> coll;  // kCollective
  std::shared_ptr<xc::device::OpOutcome> device;  // kDevice
  std::shared_ptr<xc::Fabric> fabric;                    // keeps the engine alive
  std::shared_ptr<const std::vector<int>> rank_of_fabric;  // for status.source
  uint64_t timeout_ms = 0;
  const char *op = "";    // "xc_isend", ...
  int peer = 0;           // communicator rank, for messages
  std::string comm_name;  // for messages
};

namespace xc::api {

// Record st as this thread's last error (prefixed by the function) and return its code.
xc_result_t finish(const char *function, const Status &st);
// Same, for a message that already names the function.
xc_result_t finish_op(const char *function, const Status &st);
// A successful call clears the last error (cheaply when there is none).
extern thread_local bool t_has_error;
void clear_last_error();
inline xc_result_t ok() {
  if (t_has_error) clear_last_error();
  return XC_SUCCESS;
}
// This thread's last error message ("" after a success).
const char *last_error();

// Requests come from a pool that never returns memory, so a stale handle
// finds a freed magic instead of unmapped memory. Freed requests are reused
// oldest first and only once many are free, so a stale handle is unlikely to
// alias a new request (it cannot be ruled out, as with MPI).
xc_request_s *request_alloc();
void request_free(xc_request_s *r);
Status check_request(const xc_request_s *r);

// Fill a user's status from a finished request (status may be NULL).
void fill_status(const Request &req, const std::vector<int> *rank_of_fabric, xc_status_t *status);
// A finished collective's status: its error, any source, any tag, 0 bytes.
void fill_coll_status(const Status &st, xc_status_t *status);

// The error of a finished point-to-point request, naming the op, the peer
// (communicator rank; XC_ANY_SOURCE allowed) and the tag.
Status explain_p2p(const Request &req, const char *op, int peer, int tag, uint64_t timeout_ms, const std::string &comm);

// A request that completes with a device op (stream-ordered; its outcome).
xc_request_s *device_request(const char *op, xc_comm_t comm, int peer, std::shared_ptr<device::OpOutcome> outcome);
// Done yet (xc_test), for any kind.
bool request_done(xc_request_s *r);

// Wait for a request of any kind (deadline: the communicator's timeout,
// for a collective counted from when it started), fill status, free it.
// Returns the request's status with the op named.
Status request_wait(xc_request_s *r, xc_status_t *status);

}  // namespace xc::api

// Wrap an entry point's body: any exception becomes a status.
#define XC_API_GUARD(function, ...)                                                     \
  try {                                                                                 \
    __VA_ARGS__                                                                         \
  } catch (const std::bad_alloc &) {                                                    \
    return ::xc::api::finish(function, ::xc::Error(XC_ERR_NO_MEMORY, "out of memory")); \
  } catch (const std::exception &e) {                                                   \
    return ::xc::api::finish(function, ::xc::Error(XC_ERR_INTERNAL, "%s", e.what()));   \
  } catch (...) {                                                                       \
    return ::xc::api::finish(function, ::xc::Error(XC_ERR_INTERNAL, "unknown exception")); \
  }
