#include <algorithm>
#include <cstring>

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

Status allgather_bruck(CollContext &c, void *all, size_t block_bytes) {
  int n = c.size(), r = c.rank();
  char *base = static_cast<char *>(all);
  // tmp[i] collects the block of rank (r + i) % n; rank 0 can use all itself.
  char *tmp = r == 0 ? base : scratch(Scratch::kWork, static_cast<size_t>(n) * block_bytes);
  if (r != 0 && block_bytes) memcpy(tmp, base + static_cast<size_t>(r) * block_bytes, block_bytes);
  for (int k = 1; k < n; k <<= 1) {
    size_t blocks = static_cast<size_t>(std::min(k, n - k));
    XC_TRY(c.sendrecv((r - k + n) % n, tmp, blocks * block_bytes, (r + k) % n,
                      tmp + static_cast<size_t>(k) * block_bytes, blocks * block_bytes));
  }
  if (r != 0 && block_bytes)
    for (int i = 1; i < n; ++i)
      memcpy(base + static_cast<size_t>((r + i) % n) * block_bytes, tmp + static_cast<size_t>(i) * block_bytes,
             block_bytes);
  return Status::Ok();
}

Status allgatherv_ring(CollContext &c, void *all, const size_t *counts, const size_t *displs) {
  int n = c.size(), r = c.rank();
  char *base = static_cast<char *>(all);
  int right = (r + 1) % n, left = (r - 1 + n) % n;
  for (int s = 0; s < n - 1; ++s) {
    size_t sb = static_cast<size_t>((r - s + n) % n);
    size_t rb = static_cast<size_t>((r - s - 1 + n) % n);
    XC_TRY(c.sendrecv(right, base + displs[sb], counts[sb], left, base + displs[rb], counts[rb]));
  }
  return Status::Ok();
}

}  // namespace xc::algo
