// The small host messages that steer device ops, over the point-to-point
// engine: posted, then waited for together under the op's deadline.
#pragma once

#include <memory>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "device/comm_view.h"
#include "p2p/request.h"

namespace xc::device {

// One message posted on the engine, outside any Messages: for exchanges
// that outlive an op (the kernels' registry). Cancel it if not done before
// it goes.
std::unique_ptr<Request> post_message(const CommView &c, bool send, uint64_t ctx_offset, int peer, int tag,
                                      void *data, size_t bytes, bool collective);

class Messages {
 public:
  explicit Messages(const CommView &c) : c_(c) {}
  // Withdraws whatever was not waited for (an op that gave up early).
  ~Messages();
  Messages(const Messages &) = delete;
  Messages &operator=(const Messages &) = delete;
  // Send bytes of data (kept alive by the caller until wait) to rank peer.
  Request *send(uint64_t ctx_offset, int peer, int tag, const void *data, size_t bytes, bool collective);
  // Receive up to bytes from peer (-1: any) with tag (-1: any).
  Request *recv(uint64_t ctx_offset, int peer, int tag, void *data, size_t bytes, bool collective);
  // Wait for one / all posted; the first error, naming what was waited for.
  Status wait(Request *r, Deadline deadline, const char *what);
  Status wait_all(Deadline deadline, const char *what);
  // The communicator rank a receive matched.
  int source_rank(const Request *r) const;

 private:
  Request *post(bool send, uint64_t ctx_offset, int peer, int tag, void *data, size_t bytes, bool collective);
  const CommView &c_;
  std::vector<std::unique_ptr<Request>> reqs_;
};

}  // namespace xc::device
