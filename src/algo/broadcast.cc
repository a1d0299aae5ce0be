#include <vector>

#include "algo/algorithms.h"

namespace xc::algo {

Status broadcast_binomial(CollContext &c, void *buf, size_t bytes, int root) {
  int n = c.size();
  int vr = (c.rank() - root + n) % n;  // rank relative to the root
  int mask = 1;
  while (mask < n) {
    if (vr & mask) {
      XC_TRY(c.recv((c.rank() - mask + n) % n, buf, bytes));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < n) XC_TRY(c.send((c.rank() + mask) % n, buf, bytes));
  return Status::Ok();
}

Status broadcast_scatter_allgather(CollContext &c, void *buf, size_t bytes, int root) {
  int n = c.size(), r = c.rank();
  size_t un = static_cast<size_t>(n);
  // Piece v (relative rank v = rank - root) is bytes [bytes*v/n, bytes*(v+1)/n).
  std::vector<size_t> counts(un), displs(un);
  for (int q = 0; q < n; ++q) {
    size_t v = static_cast<size_t>((q - root + n) % n);
    displs[static_cast<size_t>(q)] = bytes * v / un;
    counts[static_cast<size_t>(q)] = bytes * (v + 1) / un - displs[static_cast<size_t>(q)];
  }
  char *base = static_cast<char *>(buf);
  if (r == root) {
    std::vector<Xfer> sends;
    sends.reserve(un);
    for (int q = 0; q < n; ++q)
      if (q != root) sends.push_back({q, base + displs[static_cast<size_t>(q)], counts[static_cast<size_t>(q)]});
    XC_TRY(c.exchange(sends.data(), sends.size(), nullptr, 0));
  } else {
    XC_TRY(c.recv(root, base + displs[static_cast<size_t>(r)], counts[static_cast<size_t>(r)]));
  }
  return allgatherv_ring(c, buf, counts.data(), displs.data());
}

}  // namespace xc::algo
