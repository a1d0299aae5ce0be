#include "coll/shm/wait.h"

#include <sched.h>

#include <algorithm>
#include <string>

namespace xc::coll {

// Ranks outnumber cores, and every rank sharing our core has arrived (waits
// too): polls (about 10 ns each here) spent on a rank of another core before
// yielding (4 ranks on 2 cores, 8 B allreduce 1.7 -> 1.3 us:
// docs/shm-collectives.md).
constexpr int kShmMateSpins = 300;

namespace {

// ": rank 2 never arrived at it" / ": ranks 2, 3 never arrived at it" /
// ": every rank arrived at it", for this rank's current shared-memory op.
// Ranks are the segment's: the communicator's own, or in a phase of a
// hierarchical op, its host's ranks in the op (said so).
std::string who_never_arrived(const ShmState &st, size_t members) {
  uint64_t s = st.op;
  std::string late;
  int n = 0;
  for (int q = 0; q < st.nranks; ++q)
    if (st.arrival(q, s).flag.load(std::memory_order_acquire) < s) {
      late += (n++ ? ", " : "") + std::to_string(q);
    }
  if (n == 0) return ": every rank arrived at it";
  std::string ranks = static_cast<size_t>(st.nranks) == members ? "rank" : "this host's rank";
  return ": " + ranks + (n > 1 ? "s " : " ") + late + " never arrived at it";
}

}  // namespace

Status shm_slow_wait_check(CollContext &c, const ShmState &st, const char *what) {
  if (c.deadline().expired())
    return Error(XC_ERR_TIMEOUT, "shared-memory collective timed out waiting for %s (op #%d)%s", what, c.seq(),
                 who_never_arrived(st, (*c.op_members())->size()).c_str());
  // Looking for dead peers first takes in what they sent before they went
  // (a MISMATCH frame, say); the news of the op is asked for before a gone
  // peer is blamed: a member that found this op mismatched, reported it,
  // freed and exited normally has not failed, and its report is the reason
  // (blaming its exit instead: 4-5 of 8 runs of fault_blame mismatch).
  // The op's members: this segment's ranks, or, in a phase of a
  // hierarchical op (algo/hier), its whole communicator, so a member that
  // died on another host ends the wait too, named by its communicator rank.
  const std::vector<int> &members = **c.op_members();
  int dead = c.engine().first_failed(members);
  // xc_comm_abort; or a member that met this op's segment set-up message
  // with another signature never joins: it reported the mismatch to everyone.
  XC_TRY(c.interrupted());
  return shm_member_failed(c, dead, "waiting for", what);
}

int shm_op_rank(CollContext &c, int f) {
  const std::vector<int> &members = **c.op_members();
  for (size_t r = 0; f >= 0 && r < members.size(); ++r)
    if (members[r] == f) return static_cast<int>(r);
  return -1;
}

Status shm_member_failed(CollContext &c, int dead, const char *doing, const char *what) {
  int r = shm_op_rank(c, dead);
  if (r < 0) return Status::Ok();
  return Error(XC_ERR_PEER_FAILED, "rank %d failed during a shared-memory collective (op #%d, %s %s)", r, c.seq(), doing,
               what);
}

// Oversubscribed, a waiter yields at once: the rank it waits for may need
// its core. Not so when that rank last ran on another core and every rank
// last seen on ours has arrived at op s: they only wait too, so yielding to
// them costs a switch there and back while the other core catches up.
int shm_arrival_spins(ShmState &st, int r, uint64_t s) {
  if (!st.oversubscribed) return st.spin;
  int mine = sched_getcpu();
  if (mine < 0) return st.spin;
  ShmCtrl *ctrl = st.ctrl;
  std::atomic<int32_t> &my_cpu = ctrl[st.rank].cpu;
  if (my_cpu.load(std::memory_order_relaxed) != mine) my_cpu.store(mine, std::memory_order_relaxed);
  int theirs = ctrl[r].cpu.load(std::memory_order_relaxed);
  if (theirs < 0 || theirs == mine) return st.spin;
  for (int q = 0; q < st.nranks; ++q)
    if (q != st.rank && ctrl[q].cpu.load(std::memory_order_relaxed) == mine &&
        ctrl[q].arrival[s % kShmArrivalDepth].flag.load(std::memory_order_acquire) < s)
      return st.spin;
  return std::max(st.spin, kShmMateSpins);
}

}  // namespace xc::coll
