#include "algo/collective.h"

#include "algo/forced.h"
#include "algo/hier/backend.h"
#include "base/log.h"
#include "coll/shm/backend.h"

namespace xc::algo {

namespace {

// True when the op moves no data on any rank (decidable alike everywhere).
bool nothing_to_do(const CollDesc &d) {
  switch (d.kind) {
    case CollKind::kBarrier:
    case CollKind::kGatherv:  // sizes known at the root only
    case CollKind::kScatterv:
    case CollKind::kAlltoallv: return false;
    case CollKind::kAllgatherv:
    case CollKind::kReduceScatterv: return d.recvcounts.total() == 0;
    default: return d.count == 0;
  }
}

// No algorithm this dispatcher runs moves d's memory for its op (the
// device algorithms of the table run in the device layer, not here).
Status memory_unsupported(const CollDesc &d) {
  for (int a = 0; a < kAlgoCount; ++a) {
    const AlgoEntry &e = algo_table()[a];
    bool runs_here = (e.memory & mem_bit(MemKind::kHost)) != 0;
    if (runs_here && (e.ops & op_bit(d.kind)) && (e.memory & mem_bit(d.memory))) return Status::Ok();
  }
  return Error(XC_ERR_UNSUPPORTED, "%s on %s memory: no algorithm of this build moves it", coll_kind_name(d.kind),
               mem_kind_name(d.memory));
}

// Why algo_usable said no to a forced choice.
const char *unusable_reason(const AlgoEntry &e, const Locality &loc) {
  if (!(e.memory & mem_bit(loc.memory))) return "it does not move this memory";
  if (e.backend == coll::BackendId::kHier)
    return !loc.hierarchical ? "not on several hosts with more than one rank on some"
                             : "hosts hold unequal numbers of ranks";
  return loc.all_local ? "no single-copy path" : "not all on one host";
}

}  // namespace

Status run_algorithm(CollContext &c, const CollDesc &d, Algo algo) {
  if (!algo_applies(d.kind, algo))
    return Error(XC_ERR_INTERNAL, "%s has no algorithm %s", coll_kind_name(d.kind), algo_name(algo));
  if (nothing_to_do(d)) return Status::Ok();
  return algo_entry(algo).run(c, d);
}

Status run_collective(CollContext &c, const CollDesc &d) {
  int n = c.size();
  const ForcedChoice &fc = forced_choice(d.kind);
  if (!fc.status.ok()) return fc.status;  // a bad XC_ALGO fails every call alike
  bool forced = fc.forced;
  Algo algo = fc.algo;
  if (nothing_to_do(d)) return Status::Ok();
  if (d.memory != MemKind::kHost) XC_TRY(memory_unsupported(d));
  Locality loc;
  loc.memory = d.memory;
  loc.host_class = c.host_class();
  // ensure() is collective: every rank reaches it at this op alike (same
  // members, same XC_ALGO).
  coll::ShmColl *shm = coll::shm_of(c);
  if (shm && n > 1 && (!forced || algo_entry(algo).backend == coll::BackendId::kShm)) {
    loc.all_local = true;
    if (!shm->state()) XC_TRY(shm->ensure(c));  // set up by the first op; no Status built after
    loc.single_copy = shm->single_copy_ok();
  }
  // Several hosts: what every rank knows of how the members spread (no
  // set-up needed to choose; the algorithm sets its backend up).
  if (const hier::HierColl *h = hier::hier_of(c)) {
    loc.hosts = h->layout().hosts();
    loc.hierarchical = h->layout().hierarchical();
    loc.equal_hosts = h->layout().equal();
  }
  size_t bytes = selection_bytes(d, n);
  const char *reason = "XC_ALGO";
  bool by_policy = !forced || n == 1 || !algo_usable(d.kind, algo, loc);
  if (by_policy) {
    Algo wanted = algo;
    algo = choose(d.kind, bytes, n, loc, d.in_place, &reason);
    if (forced && n > 1)
      XC_INFO("%s: XC_ALGO asks for %s, which these ranks cannot use (%s); using %s", coll_kind_name(d.kind),
              algo_name(wanted), unusable_reason(algo_entry(wanted), loc), algo_name(algo));
  }
  // A forced pipeline stays one; the selector's may give way at arrival.
  bool may_single_copy = by_policy && single_copy_on_huge_pages(algo, d.kind, bytes, n, loc);
  XC_INFO("%s %zu B on %d ranks: %s (%s%s)", coll_kind_name(d.kind), bytes, n, algo_name(algo), reason,
          !may_single_copy ? ""
          : d.kind == CollKind::kAllgather || d.kind == CollKind::kAllgatherv
              ? "; single copy if every rank's buffers are on 2 MiB pages or a rank waits for its core"
              : "; single copy if every rank's buffers are on 2 MiB pages");
  // The common small op: what run_algorithm would do, without its checks
  // (one-shot runs every kind; nothing_to_do was asked above).
  if (algo == Algo::kShmOneShot) return coll::shm_oneshot(c, d);
  if (may_single_copy)
    return algo == Algo::kShmTwoShot ? coll::shm_twoshot(c, d, true) : coll::shm_staged(c, d, true);
  return run_algorithm(c, d, algo);
}

}  // namespace xc::algo
