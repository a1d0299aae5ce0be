// A redistribution plan as this rank runs it: a short list of steps, each a
// collective on one mesh dimension's sub-communicator, one batch of
// point-to-point messages with the local copies beside it, or the identity
// written for a destination Partial. The planner (planner.h) makes it; the
// executor (execute.h) runs it over a Transport.
#pragma once

#include <cstdint>
#include <vector>

#include "redist/box.h"

namespace xc::redist {

// The buffers a step reads and writes: the caller's two, and the plan's two
// intermediate ones (reductions chain through them).
enum class Buf : uint8_t { kSrc, kMidA, kMidB, kDst };

// Elements of box go from view `from` of one buffer to view `to` of another.
struct Piece {
  Box box;
  View from, to;
};

// One message of a point-to-point step: its pieces packed one after the
// other at `offset` (elements) of the staging buffer.
struct Message {
  int peer = 0;
  size_t offset = 0, count = 0;
  std::vector<Piece> pieces;  // sends: local -> staging; receives: staging -> local
};

enum class StepKind : uint8_t { kP2p, kAllgather, kAlltoall, kReduceScatter, kAllreduce, kFill };

struct Step {
  StepKind kind = StepKind::kP2p;
  Buf in = Buf::kSrc, out = Buf::kDst;
  int mesh_dim = -1;  // collectives: the sub-communicator they run on
  xc_op_t op = XC_SUM;
  // kP2p
  std::vector<Message> sends, recvs;
  std::vector<Piece> copies;  // in -> out, local
  // Collectives: pack from `in` into send staging (empty: send `in` as it
  // is), the collective, unpack from receive staging into `out` (empty:
  // received straight into `out`). Counts and displacements per member.
  std::vector<Piece> pack, unpack;
  std::vector<size_t> send_counts, send_displs, recv_counts, recv_displs;
  size_t count = 0;  // allreduce, allgather's own block, fill: elements
  size_t send_total = 0, recv_total = 0;
};

struct PlanInfo {
  uint32_t step_kinds = 0;
  uint64_t bytes_sent = 0, bytes_received = 0, bytes_copied = 0, lower_bound_bytes = 0;
  uint64_t messages_sent = 0, messages_received = 0;
  uint32_t collective_steps = 0, p2p_steps = 0;
};

struct Plan {
  std::vector<Step> steps;
  size_t esize = 0;
  xc_dtype_t dtype = XC_UINT8;
  size_t src_count = 0, dst_count = 0;    // this rank's local elements
  size_t mid_count[2] = {0, 0};           // intermediate buffers
  size_t send_staging = 0, recv_staging = 0;  // elements
  std::vector<bool> mesh_dims_used;       // sub-communicators to make
  PlanInfo info;
  // Relabelling (COSTA): perm[j] = the rank that should take part j of dst.
  std::vector<int> relabel;
  uint64_t relabel_saved = 0;  // bytes all ranks together would receive less
};

}  // namespace xc::redist
