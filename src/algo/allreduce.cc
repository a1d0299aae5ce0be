#include "algo/algorithms.h"
#include "algo/collective.h"
#include "base/dtype.h"
#include "cpu/reduce.h"

namespace xc::algo {

namespace {

// left = left op right, where left holds the lower rank's data, so every rank
// computes the same bits whatever the op's quirks (min(+0,-0), NaN payloads).
void reduce_ordered(char *mine, const char *theirs, bool theirs_is_left, size_t count, xc_dtype_t dtype, xc_op_t op) {
  if (theirs_is_left)
    cpu::reduce3(mine, theirs, mine, count, dtype, op);
  else
    cpu::reduce(mine, theirs, count, dtype, op);
}

}  // namespace

Status allreduce_recursive_doubling(CollContext &c, void *buf, size_t count, xc_dtype_t dtype, xc_op_t op) {
  int n = c.size(), r = c.rank();
  size_t bytes = count * dtype_size(dtype);
  char *mine = static_cast<char *>(buf);
  char *theirs = scratch(Scratch::kRecv, bytes);
  int pof2 = 1;
  while (pof2 * 2 <= n) pof2 *= 2;
  int rem = n - pof2;
  // Fold the extra ranks in: among the first 2*rem, even ranks hand their data
  // to the odd rank above and wait for the result.
  int vr;
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      XC_TRY(c.send(r + 1, mine, bytes));
      XC_TRY(c.recv(r + 1, mine, bytes));
      return Status::Ok();
    }
    XC_TRY(c.recv(r - 1, theirs, bytes));
    reduce_ordered(mine, theirs, true, count, dtype, op);
    vr = r / 2;
  } else {
    vr = r - rem;
  }
  auto real_rank = [rem](int v) { return v < rem ? v * 2 + 1 : v + rem; };
  for (int mask = 1; mask < pof2; mask <<= 1) {
    int partner = real_rank(vr ^ mask);
    XC_TRY(c.sendrecv(partner, mine, bytes, partner, theirs, bytes));
    reduce_ordered(mine, theirs, partner < r, count, dtype, op);
  }
  if (r < 2 * rem) XC_TRY(c.send(r - 1, mine, bytes));
  return Status::Ok();
}

Status allreduce_ring(CollContext &c, void *buf, size_t count, xc_dtype_t dtype, xc_op_t op) {
  int n = c.size(), r = c.rank();
  size_t esize = dtype_size(dtype);
  char *base = static_cast<char *>(buf);
  auto chunk_begin = [&](int i) { return count * static_cast<size_t>(i) / static_cast<size_t>(n); };
  auto chunk_count = [&](int i) { return chunk_begin(i + 1) - chunk_begin(i); };
  char *tmp = scratch(Scratch::kRecv, (count / static_cast<size_t>(n) + 1) * esize);
  int right = (r + 1) % n, left = (r - 1 + n) % n;
  // Reduce-scatter: after n-1 steps this rank holds the final chunk (r+1)%n.
  for (int s = 0; s < n - 1; ++s) {
    int send_chunk = (r - s + n) % n;
    int recv_chunk = (r - s - 1 + n) % n;
    XC_TRY(c.sendrecv(right, base + chunk_begin(send_chunk) * esize, chunk_count(send_chunk) * esize, left, tmp,
                      chunk_count(recv_chunk) * esize));
    cpu::reduce(base + chunk_begin(recv_chunk) * esize, tmp, chunk_count(recv_chunk), dtype, op);
  }
  // All-gather the final chunks: every rank then holds the same bits.
  for (int s = 0; s < n - 1; ++s) {
    int send_chunk = (r + 1 - s + n) % n;
    int recv_chunk = (r - s + n) % n;
    XC_TRY(c.sendrecv(right, base + chunk_begin(send_chunk) * esize, chunk_count(send_chunk) * esize, left,
                      base + chunk_begin(recv_chunk) * esize, chunk_count(recv_chunk) * esize));
  }
  return Status::Ok();
}

Status allreduce(CollContext &c, void *buf, size_t count, xc_dtype_t dtype, xc_op_t op) {
  CollDesc d;
  d.kind = CollKind::kAllreduce;
  d.in_place = true;
  d.recvbuf = buf;
  d.count = count;
  d.dtype = dtype;
  d.op = op;
  Algo a = choose(CollKind::kAllreduce, selection_bytes(d, c.size()), c.size(), Locality{}, true);
  return run_algorithm(c, d, a);
}

}  // namespace xc::algo
