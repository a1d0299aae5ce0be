// Ranks outnumber cores, and the scheduler may leave more of them on one
// core than on another for a long while (4 ranks on 2 cores: 3 + 1 per core
// took 2.4 us per 8 B allreduce, 2 + 2 1.35; docs/shm-collectives.md): the
// highest rank of a core that has more than its share moves itself to the
// allowed core with the fewest, without binding (docs/design.md, "Where
// the ranks sit").
#pragma once

#include <cstdint>
#include <vector>

#include "coll/shm/layout.h"

namespace xc::coll {

// The first look at op kShmBalanceFirstOp, then every kShmBalanceEveryOps ops
// (about 1.5 ms of 8 B allreduces on 4 ranks and 2 cores).
constexpr uint64_t kShmBalanceFirstOp = 64;
constexpr uint64_t kShmBalanceEveryOps = 1024;

class ShmCpuBalance {
 public:
  // Ranks outnumber cores (and XC_SHM_COLL_BALANCE is not 0): look from now on.
  void start() { next_ = kShmBalanceFirstOp; }
  // At the start of op s (ShmState::enter): one compare, and now and then a look.
  void at_op(uint64_t s, ShmCtrl *ctrl, int nranks, int rank) {
    if (s >= next_) look(s, ctrl, nranks, rank);
  }

 private:
  void look(uint64_t s, ShmCtrl *ctrl, int nranks, int rank);

  uint64_t next_ = UINT64_MAX;  // the op at which to look next (never unless started)
  std::vector<int> ranks_on_cpu_;  // our ranks per cpu, counted at each look
};

}  // namespace xc::coll
