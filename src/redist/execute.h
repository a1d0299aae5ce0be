// Running a plan: the local work (packing, unpacking, copies, identities)
// here, the communication through a Transport the api layer implements
// with xcomm's own point-to-point and collectives, so this folder needs
// nothing above base/ and runs in tests over a fake one.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "base/status.h"
#include "redist/plan.h"

namespace xc::redist {

struct Transfer {
  int peer = 0;
  void *buf = nullptr;
  size_t count = 0;  // elements
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Post every receive and send as one batch, run `meanwhile` while they
  // are in flight, and wait for all of them.
  virtual Status exchange(const std::vector<Transfer> &sends, const std::vector<Transfer> &recvs,
                          const std::function<void()> &meanwhile) = 0;
  // Collectives on the sub-communicator of mesh dimension k (counts in
  // elements, one entry per member).
  virtual Status allreduce(int k, const void *in, void *out, size_t count, xc_op_t op) = 0;
  virtual Status reduce_scatterv(int k, const void *in, void *out, const size_t *counts, xc_op_t op) = 0;
  virtual Status allgatherv(int k, const void *in, size_t count, void *out, const size_t *counts,
                            const size_t *displs) = 0;
  virtual Status alltoallv(int k, const void *in, const size_t *scounts, const size_t *sdispls, void *out,
                           const size_t *rcounts, const size_t *rdispls) = 0;
};

// Staging memory of bytes, not zeroed: a plan of 100 MiB messages would
// otherwise fault in and clear every page when it is made (half its plan time).
class Staging {
 public:
  void resize(size_t bytes) {
    if (bytes != size_) mem_.reset(bytes ? new char[bytes] : nullptr), size_ = bytes;
  }
  char *data() { return mem_.get(); }

 private:
  std::unique_ptr<char[]> mem_;
  size_t size_ = 0;
};

// Staging and intermediate memory a plan keeps between runs.
struct Buffers {
  Staging mid[2], send, recv;
  void size_for(const Plan &plan);
};

Status run_plan(const Plan &plan, Buffers &bufs, const void *src, void *dst, Transport &t);

// The identity of op for dtype, esize bytes (for a destination Partial).
void identity_of(xc_dtype_t dtype, xc_op_t op, void *out);

}  // namespace xc::redist
