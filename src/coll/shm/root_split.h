// Rooted gather(v) and scatter(v) of large blocks, under single copy and
// one-shot-v: each block is copied from both ends, so two cores copy. The
// root takes the front of each block (gather: pulls it; scatter: writes it
// into the receiver), the peer the rest. In place the root has no block of
// its own to copy and takes 1/n of each (it and every peer then copy
// alike). Out of place it copies its own block with memcpy, which goes
// faster than a peer's copy through CMA, so with a core per rank it takes
// 1/(4n) of each as well (2 ranks, gather 64 MiB 6534 -> 5640 us; 1/3 was
// slower than none).
// Whether the root splits in place with more ranks than cores
// (ShmRootSplit, set up once; XC_SHM_COLL_ROOT_SPLIT forces it): n ranks
// that copy alike share c cores evenly when c divides n, the n-1 peers when
// c divides n-1, and an idle root sleeps once an op runs long. So split
// when ceil(n/c) (n-1)/n <= ceil((n-1)/c), the cores' share of each way,
// and else only blocks below kShmRootSplitShortBytes: in short ops the
// polling root still holds a core, and the copying peers often share the
// other (4 ranks on 2 cores, gather 16 MiB 1057 -> 744 us split; 3 ranks,
// 5.6 MiB blocks 648 -> 910).
// Only the root knows its placement, so it publishes parts (0: the peers
// copy it all). Shares are whole pages, at least kShmRootShareMinBytes: a
// smaller one costs one more copy call than it saves (8 KiB blocks 1.0 ->
// 1.4 us split). The figures: docs/shm-collectives.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "base/status.h"
#include "coll/context.h"
#include "coll/desc.h"
#include "coll/shm/state.h"
#include "coll/shm/tables.h"

namespace xc::coll {

constexpr size_t kShmRootShareMinBytes = 16 << 10;
constexpr size_t kShmRootSplitShortBytes = 2 << 20;
enum class ShmRootSplit {
  kOwnCores,  // a core per rank: in place and out of place
  kAlways,    // in place
  kShortOps,  // in place, blocks below kShmRootSplitShortBytes
  kNever,
};
ShmRootSplit shm_root_split_policy(int n, long cores);
// block: the largest block the root sends or takes.
inline uint32_t shm_root_parts(bool root_in_place, int n, ShmRootSplit split, size_t block) {
  if (!root_in_place) return split == ShmRootSplit::kOwnCores ? 4 * static_cast<uint32_t>(n) : 0;
  bool yes = split == ShmRootSplit::kOwnCores || split == ShmRootSplit::kAlways ||
             (split == ShmRootSplit::kShortOps && block < kShmRootSplitShortBytes);
  return yes ? static_cast<uint32_t>(n) : 0;
}
inline size_t shm_root_share(size_t block, uint64_t parts) {
  size_t share = parts ? block / parts & ~size_t{4095} : 0;
  return share >= kShmRootShareMinBytes ? share : 0;
}

// What this rank writes into a peer's buffer, as the peer's arrival record
// says: the peer keeps our block at address `block` in its memory (0:
// nothing may be written there) and expects `expects` bytes of it from us;
// we write bytes [at, at + len) of it.
struct ShmPeerPart {
  uint64_t block = 0;
  size_t expects = 0;
  size_t at = 0, len = 0;
};

// Write our part of a block of `bytes` (from) into peer's buffer at op s:
// once the peer arrived, read(&part) reads where from its record (it may
// fail), and we write when the peer expects what we send. A peer that
// expects another count gets nothing and the first such disagreement goes
// to *disagreed, for the caller to report once the other peers are served
// (the peer checks the same pair of counts and fails too). Any other failure
// gives up op s, since the peer waits for our part, and is returned.
template <class Read>
Status shm_write_part(CollContext &c, ShmState &st, uint64_t s, const char *op, int peer, const char *from,
                      size_t bytes, Read read, Status *disagreed) {
  Status wrote = st.wait_arrived(c, peer, s);
  ShmPeerPart part;
  if (wrote.ok()) wrote = read(&part);
  if (wrote.ok() && part.block && part.expects != bytes) {
    if (disagreed->ok()) *disagreed = shm_send_mismatch(c, st, op, peer, bytes, part.expects);
    return Status::Ok();
  }
  if (wrote.ok() && part.block) wrote = st.cma_write(c, peer, part.block + part.at, from + part.at, part.len);
  return st.give_up_if(s, std::move(wrote));
}

// Which record a scatter receiver publishes its buffer and count in: single
// copy's (ShmArrival::addr: dst, aux) or one-shot-v's (ShmArrival::v.target).
enum class ShmRecvRecord { kAddr, kV };

// Scatter(v)'s root at op s: write the front of each block it sends
// (shm_root_share of it, split in parts) into its receiver, where that
// receiver's record (rec) says, with shm_write_part's checks and errors.
Status shm_write_fronts(CollContext &c, ShmState &st, uint64_t s, const CollDesc &d, uint32_t parts,
                        ShmRecvRecord rec, Status *disagreed);

}  // namespace xc::coll
