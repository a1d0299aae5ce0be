#include <cstring>
#include <vector>

#include "algo/algorithms.h"
#include "base/dtype.h"
#include "cpu/reduce.h"

namespace xc::algo {

// Each node folds its children's subtree results into its own in order of
// relative rank (own op child 1 op child 2 op child 4 ...), the same order on
// every run, and passes the result to its parent.
Status reduce_binomial(CollContext &c, const void *in, void *out, size_t count, xc_dtype_t dtype, xc_op_t op,
                       int root) {
  int n = c.size(), r = c.rank();
  int vr = (r - root + n) % n;
  size_t bytes = count * dtype_size(dtype);
  const char *acc = static_cast<const char *>(in);  // a leaf sends its input as it is
  char *acc_w = nullptr;
  if (vr == 0) {
    acc_w = static_cast<char *>(out);
    if (in != out && bytes) memcpy(acc_w, in, bytes);
    acc = acc_w;
  }
  for (int mask = 1; mask < n; mask <<= 1) {
    if (vr & mask) return c.send((vr - mask + root) % n, acc, bytes);
    int child = vr + mask;
    if (child >= n) continue;  // no child here; the parent still waits
    if (!acc_w) {
      acc_w = scratch(Scratch::kWork, bytes);
      if (bytes) memcpy(acc_w, in, bytes);
      acc = acc_w;
    }
    char *tmp = scratch(Scratch::kRecv, bytes);
    XC_TRY(c.recv((child + root) % n, tmp, bytes));
    cpu::reduce(acc_w, tmp, count, dtype, op);
  }
  return Status::Ok();
}

Status reduce_scatter_gather(CollContext &c, const void *in, void *out, size_t count, xc_dtype_t dtype, xc_op_t op,
                             int root) {
  int n = c.size(), r = c.rank();
  size_t es = dtype_size(dtype), un = static_cast<size_t>(n);
  thread_local std::vector<size_t> counts, offsets;
  counts.resize(un);
  offsets.resize(un);
  for (size_t i = 0; i < un; ++i) {
    offsets[i] = count * i / un;
    counts[i] = count * (i + 1) / un - offsets[i];
  }
  char *work = scratch(Scratch::kWork, count * es);
  if (count) memcpy(work, in, count * es);
  XC_TRY(ring_reduce_scatter_inplace(c, work, counts.data(), offsets.data(), dtype, op));
  size_t me = static_cast<size_t>(r);
  if (r != root) return c.send(root, work + offsets[me] * es, counts[me] * es);
  char *dst = static_cast<char *>(out);
  if (counts[me]) memcpy(dst + offsets[me] * es, work + offsets[me] * es, counts[me] * es);
  std::vector<Xfer> recvs;
  recvs.reserve(un);
  for (size_t q = 0; q < un; ++q)
    if (q != me) recvs.push_back({static_cast<int>(q), dst + offsets[q] * es, counts[q] * es});
  return c.exchange(nullptr, 0, recvs.data(), recvs.size());
}

}  // namespace xc::algo
