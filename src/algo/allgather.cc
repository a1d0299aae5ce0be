#include "algo/algorithms.h"

namespace xc::algo {

Status allgather_ring(CollContext &c, void *all, size_t block_bytes) {
  int n = c.size(), r = c.rank();
  char *base = static_cast<char *>(all);
  int right = (r + 1) % n, left = (r - 1 + n) % n;
  for (int s = 0; s < n - 1; ++s) {
    int send_block = (r - s + n) % n;
    int recv_block = (r - s - 1 + n) % n;
    XC_TRY(c.sendrecv(right, base + static_cast<size_t>(send_block) * block_bytes, block_bytes, left,
                      base + static_cast<size_t>(recv_block) * block_bytes, block_bytes));
  }
  return Status::Ok();
}

}  // namespace xc::algo
