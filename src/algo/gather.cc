#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/algorithms.h"

namespace xc::algo {

namespace {

int comm_rank(int vr, int root, int n) { return (vr + root) % n; }

}  // namespace

Status gather_linear(CollContext &c, const void *in, void *out, size_t block_bytes, int root) {
  int n = c.size(), r = c.rank();
  if (r != root) return c.send(root, in, block_bytes);
  char *base = static_cast<char *>(out);
  char *mine = base + static_cast<size_t>(r) * block_bytes;
  if (in && in != mine && block_bytes) memcpy(mine, in, block_bytes);
  std::vector<Xfer> recvs;
  recvs.reserve(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q)
    if (q != root) recvs.push_back({q, base + static_cast<size_t>(q) * block_bytes, block_bytes});
  return c.exchange(nullptr, 0, recvs.data(), recvs.size());
}

// Every node collects the blocks of its subtree (relative ranks vr .. vr +
// size - 1, contiguous) and hands them to its parent in one message.
Status gather_binomial(CollContext &c, const void *in, void *out, size_t block_bytes, int root) {
  int n = c.size(), r = c.rank();
  int vr = (r - root + n) % n;
  char *base = static_cast<char *>(out);
  int lowbit = vr == 0 ? n : (vr & -vr);
  size_t subtree = static_cast<size_t>(std::min(lowbit, n - vr));
  char *tmp = (vr == 0 && root == 0) ? base : scratch(Scratch::kWork, subtree * block_bytes);
  const void *own = in ? in : base + static_cast<size_t>(r) * block_bytes;  // root in place
  if (own != tmp && block_bytes) memcpy(tmp, own, block_bytes);
  size_t have = 1;
  for (int mask = 1; mask < n; mask <<= 1) {
    if (vr & mask) return c.send(comm_rank(vr - mask, root, n), tmp, have * block_bytes);
    int child = vr + mask;
    if (child >= n) continue;  // no child here; the parent still waits
    size_t blocks = static_cast<size_t>(std::min(mask, n - child));
    XC_TRY(c.recv(comm_rank(child, root, n), tmp + static_cast<size_t>(mask) * block_bytes, blocks * block_bytes));
    have += blocks;
  }
  // The root: tmp[i] is the block of rank (root + i) % n.
  if (tmp != base && block_bytes)
    for (int i = 0; i < n; ++i)
      memcpy(base + static_cast<size_t>(comm_rank(i, root, n)) * block_bytes, tmp + static_cast<size_t>(i) * block_bytes,
             block_bytes);
  return Status::Ok();
}

Status gatherv_linear(CollContext &c, const void *in, size_t my_bytes, void *out, const size_t *counts,
                      const size_t *displs, int root) {
  int n = c.size(), r = c.rank();
  if (r != root) return c.send(root, in, my_bytes);
  char *base = static_cast<char *>(out);
  char *mine = base + displs[r];
  if (in && in != mine && my_bytes) memcpy(mine, in, my_bytes);
  std::vector<Xfer> recvs;
  recvs.reserve(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q)
    if (q != root) recvs.push_back({q, base + displs[q], counts[q]});
  return c.exchange(nullptr, 0, recvs.data(), recvs.size());
}

Status scatter_linear(CollContext &c, const void *in, void *out, size_t block_bytes, int root) {
  int n = c.size(), r = c.rank();
  if (r != root) return c.recv(root, out, block_bytes);
  const char *base = static_cast<const char *>(in);
  if (out && block_bytes) memcpy(out, base + static_cast<size_t>(r) * block_bytes, block_bytes);
  std::vector<Xfer> sends;
  sends.reserve(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q)
    if (q != root) sends.push_back({q, base + static_cast<size_t>(q) * block_bytes, block_bytes});
  return c.exchange(sends.data(), sends.size(), nullptr, 0);
}

// The mirror of gather_binomial: every node receives its subtree's blocks
// from its parent and passes each child its part, the largest first.
Status scatter_binomial(CollContext &c, const void *in, void *out, size_t block_bytes, int root) {
  int n = c.size(), r = c.rank();
  int vr = (r - root + n) % n;
  const char *tmp;
  int lowbit = 1;
  if (vr == 0) {
    while (lowbit < n) lowbit <<= 1;
    const char *base = static_cast<const char *>(in);
    if (root == 0) {
      tmp = base;
    } else {  // rotate so that tmp[i] is the block of rank (root + i) % n
      char *rot = scratch(Scratch::kWork, static_cast<size_t>(n) * block_bytes);
      if (block_bytes)
        for (int i = 0; i < n; ++i)
          memcpy(rot + static_cast<size_t>(i) * block_bytes,
                 base + static_cast<size_t>(comm_rank(i, root, n)) * block_bytes, block_bytes);
      tmp = rot;
    }
  } else {
    lowbit = vr & -vr;
    size_t blocks = static_cast<size_t>(std::min(lowbit, n - vr));
    char *mine = scratch(Scratch::kWork, blocks * block_bytes);
    XC_TRY(c.recv(comm_rank(vr - lowbit, root, n), mine, blocks * block_bytes));
    tmp = mine;
  }
  for (int mask = lowbit >> 1; mask > 0; mask >>= 1) {
    int child = vr + mask;
    if (child >= n) continue;
    size_t blocks = static_cast<size_t>(std::min(mask, n - child));
    XC_TRY(c.send(comm_rank(child, root, n), tmp + static_cast<size_t>(mask) * block_bytes, blocks * block_bytes));
  }
  if (out && block_bytes) memcpy(out, tmp, block_bytes);
  return Status::Ok();
}

Status scatterv_linear(CollContext &c, const void *in, const size_t *counts, const size_t *displs, void *out,
                       size_t my_bytes, int root) {
  int n = c.size(), r = c.rank();
  if (r != root) return c.recv(root, out, my_bytes);
  const char *base = static_cast<const char *>(in);
  if (out && my_bytes) memcpy(out, base + displs[r], my_bytes);
  std::vector<Xfer> sends;
  sends.reserve(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q)
    if (q != root) sends.push_back({q, base + displs[q], counts[q]});
  return c.exchange(sends.data(), sends.size(), nullptr, 0);
}

}  // namespace xc::algo
