#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/algorithms.h"
#include "base/dtype.h"
#include "cpu/reduce.h"

namespace xc::algo {

Status ring_reduce_scatter_inplace(CollContext &c, void *work, const size_t *counts, const size_t *offsets,
                                   xc_dtype_t dtype, xc_op_t op) {
  int n = c.size(), r = c.rank();
  size_t es = dtype_size(dtype), most = 0;
  for (int i = 0; i < n; ++i) most = std::max(most, counts[i]);
  char *base = static_cast<char *>(work);
  char *tmp = scratch(Scratch::kRecv, most * es);
  int right = (r + 1) % n, left = (r - 1 + n) % n;
  // Step s passes block r-s-1 on and folds the left neighbour's partial sum
  // of block r-s-2 into ours; after n-1 steps block r is complete here.
  for (int s = 0; s < n - 1; ++s) {
    size_t sb = static_cast<size_t>((r - s - 1 + 2 * n) % n);
    size_t rb = static_cast<size_t>((r - s - 2 + 2 * n) % n);
    XC_TRY(c.sendrecv(right, base + offsets[sb] * es, counts[sb] * es, left, tmp, counts[rb] * es));
    cpu::reduce(base + offsets[rb] * es, tmp, counts[rb], dtype, op);
  }
  return Status::Ok();
}

Status reduce_scatter_ring(CollContext &c, const void *in, void *out, const size_t *counts, xc_dtype_t dtype,
                           xc_op_t op) {
  int n = c.size();
  size_t r = static_cast<size_t>(c.rank()), es = dtype_size(dtype);
  thread_local std::vector<size_t> offsets;
  offsets.resize(static_cast<size_t>(n));
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    offsets[static_cast<size_t>(i)] = total;
    total += counts[i];
  }
  // The ring works on the whole input; in place it uses it directly.
  char *work = static_cast<char *>(out);
  if (in != out) {
    work = scratch(Scratch::kWork, total * es);
    if (total) memcpy(work, in, total * es);
  }
  XC_TRY(ring_reduce_scatter_inplace(c, work, counts, offsets.data(), dtype, op));
  char *mine = work + offsets[r] * es;
  if (mine != out && counts[r]) memmove(out, mine, counts[r] * es);
  return Status::Ok();
}

Status reduce_scatter_pairwise(CollContext &c, const void *in, void *out, const size_t *counts, xc_dtype_t dtype,
                               xc_op_t op) {
  int n = c.size(), r = c.rank();
  size_t es = dtype_size(dtype), me = static_cast<size_t>(r);
  const char *src = static_cast<const char *>(in);
  size_t my_off = 0;
  for (size_t i = 0; i < me; ++i) my_off += counts[i];
  // Accumulate into our own block: in place it is where the input has it
  // (never sent), otherwise out.
  char *acc = static_cast<char *>(out);
  if (in == out)
    acc += my_off * es;
  else if (counts[me])
    memcpy(acc, src + my_off * es, counts[me] * es);
  char *tmp = scratch(Scratch::kRecv, counts[me] * es);
  size_t to_off = my_off + counts[me];  // offset of block (r + s) % n, advanced as s grows
  for (int s = 1; s < n; ++s) {
    size_t to = static_cast<size_t>((r + s) % n);
    if (to == 0) to_off = 0;
    int from = (r - s + n) % n;
    XC_TRY(c.sendrecv(static_cast<int>(to), src + to_off * es, counts[to] * es, from, tmp, counts[me] * es));
    cpu::reduce(acc, tmp, counts[me], dtype, op);
    to_off += counts[to];
  }
  if (acc != out && counts[me]) memmove(out, acc, counts[me] * es);
  return Status::Ok();
}

}  // namespace xc::algo
