#include <cstring>

#include "algo/algorithms.h"
#include "base/dtype.h"
#include "cpu/reduce.h"

namespace xc::algo {

// Round k pairs r with r ^ 2^k. `partial` is the reduction of r's whole
// 2^(k+1)-aligned group so far; what arrives from a lower partner is a prefix
// of ours, so it goes on the left of both partial and the result.
Status scan_recursive_doubling(CollContext &c, const void *in, void *out, size_t count, xc_dtype_t dtype,
                               xc_op_t op, bool exclusive) {
  int n = c.size(), r = c.rank();
  size_t bytes = count * dtype_size(dtype);
  char *partial = scratch(Scratch::kWork, bytes);
  char *tmp = scratch(Scratch::kRecv, bytes);
  if (bytes) memcpy(partial, in, bytes);
  char *res = static_cast<char *>(out);
  bool have = !exclusive;
  if (have && in != out && bytes) memcpy(res, in, bytes);
  for (int mask = 1; mask < n; mask <<= 1) {
    int partner = r ^ mask;
    if (partner >= n) continue;
    XC_TRY(c.sendrecv(partner, partial, bytes, partner, tmp, bytes));
    if (partner < r) {
      cpu::reduce3(partial, tmp, partial, count, dtype, op);
      if (have) {
        cpu::reduce3(res, tmp, res, count, dtype, op);
      } else {
        if (bytes) memcpy(res, tmp, bytes);
        have = true;
      }
    } else {
      cpu::reduce(partial, tmp, count, dtype, op);
    }
  }
  return Status::Ok();
}

}  // namespace xc::algo
