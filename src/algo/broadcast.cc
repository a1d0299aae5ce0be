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

}  // namespace xc::algo
