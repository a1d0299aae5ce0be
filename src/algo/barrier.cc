#include "algo/algorithms.h"

namespace xc::algo {

Status barrier_dissemination(CollContext &c) {
  int n = c.size(), r = c.rank();
  for (int k = 1; k < n; k <<= 1) XC_TRY(c.sendrecv((r + k) % n, nullptr, 0, (r - k + n) % n, nullptr, 0));
  return Status::Ok();
}

}  // namespace xc::algo
