// A fault-tolerant agreement among the live members of a communicator
// (xc_comm_agree, and the first step of xc_comm_shrink): the bitwise AND of
// their flags and a set of failed members, the same on every survivor, even
// when members (the coordinator included) fail during it.
//
// Coordinator-based two-phase commit with failover; docs/fault-tolerance.md
// has the algorithm and the argument for why it is uniform. It assumes what
// the transports give: a member is reported dead only once its process is
// gone, and frames it sent before it died are delivered before its death is.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "p2p/engine.h"

namespace xc {

struct AgreeInput {
  P2pEngine *engine = nullptr;
  std::shared_ptr<const std::vector<int>> members;  // fabric rank of each member
  int me = 0;            // my index in members
  uint64_t ctx = 0;      // a context only agreements use
  int tag_base = 0;      // this agreement's 4 tags: tag_base .. tag_base + 3
  uint32_t flag = 0;
  std::vector<char> known_failed;  // members this rank already counts as failed (may be empty)
  Deadline deadline;
};

struct AgreeResult {
  uint32_t flag = 0;
  std::vector<char> failed;  // by member index: 1 = agreed failed
};

// Collective over the live members. XC_ERR_TIMEOUT when a live member never
// takes part before the deadline.
Status agree(const AgreeInput &in, AgreeResult *out);

}  // namespace xc
