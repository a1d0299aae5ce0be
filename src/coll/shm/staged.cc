// Staged allgather(v), alltoall and broadcast: blocks move through the
// segment in pipeline steps (steps.h), with no CMA: allgather(v) stages
// chunk k of its block in step k, alltoall chunk k of each block it sends to
// a peer, broadcast's root chunk k of its buffer.
// Large copies into the output stream (non-temporal stores), so each output
// byte is written once and never read, and the staging stays in cache.
// Measured against single copy (process_vm_readv, whose kernel copy reads
// every output line before writing it): docs/design.md.
#include <algorithm>
#include <cstring>

#include "base/dtype.h"
#include "coll/shm/backend.h"
#include "coll/shm/state.h"
#include "coll/shm/steps.h"
#include "cpu/copy.h"

namespace xc::coll {

namespace {

Status allgather(CollContext &c, const CollDesc &d, ShmState &st, bool may_single_copy) {
  int n = c.size(), r = c.rank();
  size_t es = dtype_size(d.dtype);
  auto off = [&](int j) { return recv_block_displ(d, j) * es; };
  auto len = [&](int j) { return recv_block_count(d, j) * es; };
  char *out = static_cast<char *>(d.recvbuf);
  const char *in = d.in_place ? out + off(r) : static_cast<const char *>(d.sendbuf);
  size_t longest = 0, total = 0;
  for (int j = 0; j < n; ++j) {
    longest = std::max(longest, len(j));
    total += len(j);
  }
  const size_t piece = kShmTwoShotSlotBytes;
  auto chunk = [&](int j, uint64_t k) { return shm_steps_chunk(len(j), piece, k); };
  return shm_run_pipeline(
      c, d, st, may_single_copy, (longest + piece - 1) / piece,
      [&](uint64_t k, char *mine) {
        if (size_t l = chunk(r, k)) memcpy(mine, in + k * piece, l);
      },
      // Out of place, also into our own output block, from the staged copy (in cache).
      [&](uint64_t k, const char *mine) {
        if (size_t l = chunk(r, k); l && !d.in_place) cpu::copy_part(out + off(r) + k * piece, mine, l, total);
      },
      [&](uint64_t k, int j, const char *theirs) {
        if (size_t l = chunk(j, k)) cpu::copy_part(out + off(j) + k * piece, theirs, l, total);
      });
}

// In place works as well: a rank stages piece k of each outgoing block
// before it overwrites that piece with the incoming one, and its own block
// stays where it is.
Status alltoall(CollContext &c, const CollDesc &d, ShmState &st) {
  int n = c.size(), r = c.rank();
  size_t block = d.count * dtype_size(d.dtype), total = block * static_cast<size_t>(n);
  char *out = static_cast<char *>(d.recvbuf);
  const char *in = d.in_place ? out : static_cast<const char *>(d.sendbuf);
  const size_t piece = shm_steps_piece(n);
  if (piece == 0)
    return Error(XC_ERR_UNSUPPORTED, "shm staged alltoall: %d ranks do not fit its %zu-byte staging buffer", n,
                 kShmTwoShotSlotBytes);
  auto chunk = [&](uint64_t k) { return shm_steps_chunk(block, piece, k); };
  return shm_run_pipeline(
      c, d, st, false, (block + piece - 1) / piece,
      [&](uint64_t k, char *mine) {
        for (int j = 0; j < n; ++j)
          if (j != r) memcpy(mine + shm_steps_index(j, r) * piece, in + j * block + k * piece, chunk(k));
      },
      [&](uint64_t k, const char *) {
        size_t at = r * block + k * piece;
        if (!d.in_place) cpu::copy_part(out + at, in + at, chunk(k), total);
      },
      [&](uint64_t k, int j, const char *theirs) {  // in place the output lines are in cache (just staged)
        cpu::copy_part(out + j * block + k * piece, theirs + shm_steps_index(r, j) * piece, chunk(k),
                       d.in_place ? 0 : total);
      });
}

// Broadcast: the root stages chunk k of its buffer in step k and everyone
// else copies it out. The readers share the staged lines in cache, where
// single copy has each of them pin the root's pages, which stops scaling
// once many ranks have cores of their own (docs/design.md).
Status broadcast(CollContext &c, const CollDesc &d, ShmState &st) {
  bool root = c.rank() == d.root;
  size_t bytes = d.count * dtype_size(d.dtype);
  char *buf = static_cast<char *>(d.recvbuf);
  const size_t piece = kShmTwoShotSlotBytes;
  auto chunk = [&](uint64_t k) { return shm_steps_chunk(bytes, piece, k); };
  return shm_run_pipeline(
      c, d, st, false, (bytes + piece - 1) / piece,
      [&](uint64_t k, char *mine) {
        if (root) memcpy(mine, buf + k * piece, chunk(k));
      },
      [](uint64_t, const char *) {},
      [&](uint64_t k, int j, const char *theirs) {
        if (j == d.root) cpu::copy_part(buf + k * piece, theirs, chunk(k), bytes);
      });
}

}  // namespace

Status shm_staged(CollContext &c, const CollDesc &d, bool may_single_copy) {
  bool gathers = d.kind == CollKind::kAllgather || d.kind == CollKind::kAllgatherv;
  if (!gathers && d.kind != CollKind::kAlltoall && d.kind != CollKind::kBroadcast)
    return Error(XC_ERR_UNSUPPORTED, "shm staged does not run %s", coll_kind_name(d.kind));
  XC_TRY(shm_of(c)->ensure(c));
  ShmState &st = *shm_of(c)->state();
  if (d.kind == CollKind::kBroadcast) return broadcast(c, d, st);
  return gathers ? allgather(c, d, st, may_single_copy) : alltoall(c, d, st);
}

}  // namespace xc::coll
