// ShmColl: the lazy, collective set-up of a communicator's shared segment,
// and what one-shot stages per op (for the selector).
#include "coll/shm/backend.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/dtype.h"
#include "base/env.h"
#include "base/log.h"
#include "coll/shm/root_split.h"
#include "coll/shm/state.h"
#include "coll/shm/wait.h"
#include "topo/cores.h"

namespace xc::coll {

namespace {

constexpr uint64_t kProbeMagic = 0x78636d6170726f62ULL;  // "xcmaprob"
constexpr size_t kNameBytes = 128;

size_t segment_bytes(int n) {
  size_t per_rank = sizeof(ShmCtrl) + kShmSmallSlotDepth * kShmSmallSlotBytes + 2 * kShmOneShotMaxBytes +
                    2 * kShmTwoShotSlotBytes;
  return sizeof(ShmHeader) + sizeof(shm::Doorbell) + static_cast<size_t>(n) * per_rank;
}

// Unique on this host; under xcrun it starts like every segment of the job,
// so xcrun's sweep removes it after a crash.
std::string segment_name() {
  static std::atomic<unsigned> counter{0};
  std::string job = env_get("XC_JOB_ID");
  char name[kNameBytes];
  snprintf(name, sizeof name, "/xcomm-%s-coll-%ld-%u", job.empty() ? "solo" : job.c_str(), static_cast<long>(getpid()),
           counter.fetch_add(1));
  return name;
}

void layout(ShmState &st) {
  char *base = static_cast<char *>(st.segment.base());
  st.header = reinterpret_cast<ShmHeader *>(base);
  st.bell = reinterpret_cast<shm::Doorbell *>(base + sizeof(ShmHeader));
  st.ctrl = reinterpret_cast<ShmCtrl *>(base + sizeof(ShmHeader) + sizeof(shm::Doorbell));
  st.small = reinterpret_cast<char *>(st.ctrl + st.nranks);
  st.oneshot = st.small + static_cast<size_t>(st.nranks) * kShmSmallSlotDepth * kShmSmallSlotBytes;
  st.twoshot = st.oneshot + static_cast<size_t>(st.nranks) * 2 * kShmOneShotMaxBytes;
}

// Can this process read rank r's memory with process_vm_readv (ptrace rules)?
bool probe_cma(ShmState &st, int r) {
  uint64_t got = 0;
  int err = shm::cma_copy(static_cast<pid_t>(st.ctrl[r].pid), &got, st.ctrl[r].probe_addr, sizeof got, false);
  return err == 0 && got == kProbeMagic;
}

// A member maps the segment rank 0 named. Rank 0 sends the name before it
// makes the segment, so it may not exist yet; or no more: rank 0 removes it
// once every rank mapped it, or when it gave the op up (a member died, or
// met it with another op and reported that). Until it can be mapped, wait
// within the op's deadline for it, or for the reason it will never come: a
// report, or a member found dead (named as the cause, as rank 0 named it).
// Giving up because rank 0 died, remove what it may have left under the
// name (killed between making the segment and anyone mapping it); a live
// rank 0 removes its segment itself when it gives up, and may still be
// making it (its rename would fail under a member's removal).
Status attach_when_made(CollContext &c, const std::string &name, size_t bytes, shm::Segment *out) {
  for (bool seen = false;;) {
    Status attached = shm::Segment::attach(name, bytes, out);
    if (attached.ok()) return attached;
    if (!shm::Segment::gone(name)) {
      if (seen) return attached;  // it exists and still cannot be mapped
      seen = true;  // made between the two looks: map it now
      continue;
    }
    Status why = c.interrupted();
    if (why.ok()) why = shm_member_failed(c, c.engine().first_failed(**c.op_members()), "setting up", "its segment");
    if (why.ok() && c.deadline().expired())
      why = Error(XC_ERR_TIMEOUT, "timed out waiting for rank 0's segment (op #%d)", c.seq());
    if (!why.ok()) {
      if (c.engine().first_failed({c.fabric_rank(0)}) >= 0) shm::Segment::forget(name);
      return why;
    }
    cpu_yield();
  }
}

}  // namespace

ShmColl::ShmColl() = default;
ShmColl::~ShmColl() = default;

bool ShmColl::ready() const { return state_ != nullptr; }
bool ShmColl::single_copy_ok() const { return state_ && state_->cma_ok; }

Status ShmColl::ensure(CollContext &c) {
  if (state_) return Status::Ok();
  auto st = std::make_unique<ShmState>();
  int n = c.size(), me = c.rank();
  st->nranks = n;
  st->rank = me;
  size_t bytes = segment_bytes(n);
  char name[kNameBytes] = {};
  if (me == 0) {
    std::string s = segment_name();
    snprintf(name, sizeof name, "%s", s.c_str());
    // The name first, then the segment: killed in between, this rank leaves
    // nothing behind; killed after, what it leaves is what the members were
    // told of, and they remove it when they give up (attach_when_made). The
    // other way round a kill in between left a segment no one could name
    // under launchers with no sweep of their own.
    for (int r = 1; r < n; ++r) XC_TRY(c.send(r, name, sizeof name));
    XC_TRY_CTX(shm::Segment::create_whole(name, bytes, &st->segment), "shared-memory collectives");
  } else {
    XC_TRY(c.recv(0, name, sizeof name));
    name[kNameBytes - 1] = '\0';
    XC_TRY_CTX(attach_when_made(c, name, bytes, &st->segment), "shared-memory collectives");
  }
  // Until every rank joined, the name is all that lets a process open the
  // segment, and all a crash leaves behind in /dev/shm: a rank that gives up
  // here (a peer died, a mismatch, the deadline) removes it on its way out,
  // whoever created it; without this a rank killed during the first
  // collective of a split communicator left the segment behind under
  // launchers with no sweep of their own (7 of 58 trials).
  struct RemoveOnExit {
    shm::Segment *seg;
    ~RemoveOnExit() { seg->remove(); }  // on success a no-op: removed once all joined
  } remove_on_exit{&st->segment};
  layout(*st);
  for (int r = 0; r < n; ++r) st->fabric_ranks.push_back(c.fabric_rank(r));
  st->oversubscribed = topo::oversubscribed(n);
  bool balance = true;
  XC_TRY(env_flag("XC_SHM_COLL_BALANCE", &balance));
  if (st->oversubscribed && balance) st->balance.start();
  // Oversubscribed, the peer we wait for may need our core: yield at once.
  st->spin = st->oversubscribed ? 0 : 2000;
  if (env_is_set("XC_SHM_COLL_SPIN")) {
    int64_t spin = 0;
    XC_TRY(env_int("XC_SHM_COLL_SPIN", &spin));
    st->spin = static_cast<int>(spin);
  }
  // Each root publishes its own split, so ranks need not agree on this.
  st->root_split = shm_root_split_policy(n, topo::host_cores());
  if (env_is_set("XC_SHM_COLL_ROOT_SPLIT")) {
    bool split = false;
    XC_TRY(env_flag("XC_SHM_COLL_ROOT_SPLIT", &split));
    st->root_split = split ? ShmRootSplit::kOwnCores : ShmRootSplit::kNever;
  }
  st->scratch.resize(3 * kShmCmaChunkBytes);
  st->probe_word = kProbeMagic;

  ShmState &s = *st;
  // Write our ring of small slots once now: the first small ops that use each
  // slot would otherwise each pay a cold miss and a TLB walk on a fresh page
  // (0.37 against 0.13 µs per 128 B gather over its first 20 calls).
  memset(s.small_slot(me, 0), 0, kShmSmallSlotDepth * kShmSmallSlotBytes);
  s.ctrl[me].pid = getpid();
  s.ctrl[me].probe_addr = reinterpret_cast<uint64_t>(&s.probe_word);
  // The last rank to map it removes the name at once: nobody needs it any
  // more, and the window in which a crash leaves it behind is as short as it
  // can be (rank 0 removing it after its wait below left a kill between the
  // two behind).
  if (s.header->joined.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint32_t>(n)) s.segment.remove();
  s.notify();
  XC_TRY(shm_wait(c, s, "every rank to map the segment",
                  [&] { return s.header->joined.load(std::memory_order_acquire) == static_cast<uint32_t>(n); }));
  s.segment.remove();  // idempotent: the last to join did already
  s.pids.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) s.pids[static_cast<size_t>(r)] = static_cast<pid_t>(s.ctrl[r].pid);

  // Single copy works only if every rank may read every other one; the
  // kernel's rule is symmetric for ranks of one user, so one neighbour each
  // (and everyone's verdict ANDed) tells.
  bool cma = true, tables = true;
  XC_TRY(env_flag("XC_SHM_COLL_CMA", &cma));
  XC_TRY(env_flag("XC_SHM_COLL_TABLES", &tables));
  bool ok = cma && (n == 1 || probe_cma(s, (me + 1) % n));
  if (!ok) s.header->cma_bad.store(1, std::memory_order_release);
  if (!shm::Doorbell::register_heavy_barrier()) s.header->heavy_bad.store(1, std::memory_order_release);
  if (!tables) s.header->tables_off.store(1, std::memory_order_release);
  s.header->tested.fetch_add(1, std::memory_order_acq_rel);
  s.notify();
  XC_TRY(shm_wait(c, s, "every rank to probe single-copy",
                  [&] { return s.header->tested.load(std::memory_order_acquire) == static_cast<uint32_t>(n); }));
  s.cma_ok = s.header->cma_bad.load(std::memory_order_acquire) == 0;
  s.tables = s.header->tables_off.load(std::memory_order_acquire) == 0;
  // Safe to switch now: whatever a peer still waits for in set-up was
  // published with the fenced ring, and from here on all use the light pair.
  s.light_bell = s.header->heavy_bad.load(std::memory_order_acquire) == 0;
  XC_INFO("shared-memory collectives over %d ranks ready (%zu bytes; single-copy %s; %s wake-ups)", n, bytes,
          s.cma_ok ? "on" : "off", s.light_bell ? "fence-free" : "fenced");
  state_ = std::move(st);
  return Status::Ok();
}

size_t shm_oneshot_bytes(const CollDesc &d, int nranks) {
  // Only the root (gatherv, scatterv) or each rank alone (alltoallv) knows
  // these sizes: no size alike on every rank (shm_oneshot_v decides per rank).
  if (d.kind == CollKind::kGatherv || d.kind == CollKind::kScatterv || d.kind == CollKind::kAlltoallv)
    return SIZE_MAX;
  return selection_bytes(d, nranks);  // what one rank stages is what the selector weighs
}

}  // namespace xc::coll
