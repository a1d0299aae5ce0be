#include <cstring>

#include "algo/algorithms.h"

namespace xc::algo {

Status alltoall_pairwise(CollContext &c, const void *in, void *out, size_t block_bytes) {
  int n = c.size(), r = c.rank();
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  auto at = [block_bytes](int i) { return static_cast<size_t>(i) * block_bytes; };
  if (block_bytes) memcpy(dst + at(r), src + at(r), block_bytes);
  // Step s: send to r + s and receive from r - s, so every pair meets once.
  for (int s = 1; s < n; ++s) {
    int to = (r + s) % n, from = (r - s + n) % n;
    XC_TRY(c.sendrecv(to, src + at(to), block_bytes, from, dst + at(from), block_bytes));
  }
  return Status::Ok();
}

// Bruck: rotate so position i holds the block for rank r + i; in round k move
// every block whose position has bit k to rank r + k; each block then sits at
// rank r + i, position i, and is rotated back to the sender's slot.
Status alltoall_bruck(CollContext &c, const void *in, void *out, size_t block_bytes) {
  int n = c.size(), r = c.rank();
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  auto at = [block_bytes](int i) { return static_cast<size_t>(i) * block_bytes; };
  if (block_bytes == 0) return Status::Ok();  // the same on every rank: all skip alike
  char *tmp = scratch(Scratch::kWork, at(n));
  for (int i = 0; i < n; ++i) memcpy(tmp + at(i), src + at((r + i) % n), block_bytes);
  size_t half = at(n / 2 + 1);
  char *pack = scratch(Scratch::kRecv, 2 * half);
  char *unpack = pack + half;
  for (int k = 1; k < n; k <<= 1) {
    int blocks = 0;
    for (int i = 0; i < n; ++i)
      if (i & k) memcpy(pack + at(blocks++), tmp + at(i), block_bytes);
    XC_TRY(c.sendrecv((r + k) % n, pack, at(blocks), (r - k + n) % n, unpack, at(blocks)));
    blocks = 0;
    for (int i = 0; i < n; ++i)
      if (i & k) memcpy(tmp + at(i), unpack + at(blocks++), block_bytes);
  }
  for (int i = 0; i < n; ++i) memcpy(dst + at((r - i + n) % n), tmp + at(i), block_bytes);
  return Status::Ok();
}

Status alltoallv_pairwise(CollContext &c, const void *in, const size_t *scounts, const size_t *sdispls, void *out,
                          const size_t *rcounts, const size_t *rdispls) {
  int n = c.size(), r = c.rank();
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  size_t me = static_cast<size_t>(r);
  if (rcounts[me]) memcpy(dst + rdispls[me], src + sdispls[me], rcounts[me]);
  for (int s = 1; s < n; ++s) {
    size_t to = static_cast<size_t>((r + s) % n), from = static_cast<size_t>((r - s + n) % n);
    XC_TRY(c.sendrecv(static_cast<int>(to), src + sdispls[to], scounts[to], static_cast<int>(from), dst + rdispls[from],
                      rcounts[from]));
  }
  return Status::Ok();
}

}  // namespace xc::algo
