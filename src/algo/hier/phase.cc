#include "algo/hier/phase.h"

#include "algo/collective.h"
#include "base/log.h"
#include "coll/shm/backend.h"

namespace xc::algo::hier {

Status run_phase(coll::CollContext &s, const CollDesc &d) {
  int n = s.size();
  Locality loc;
  loc.memory = d.memory;
  loc.host_class = s.host_class();
  coll::ShmColl *shm = coll::shm_of(s);
  if (shm && n > 1) {
    loc.all_local = true;
    if (!shm->state()) XC_TRY(shm->ensure(s));
    loc.single_copy = shm->single_copy_ok();
  }
  const char *why = "";
  Algo a = choose(d.kind, selection_bytes(d, n), n, loc, d.in_place, &why);
  XC_TRACE("  phase %s on %d ranks: %s (%s)", coll_kind_name(d.kind), n, algo_name(a), why);
  return run_algorithm(s, d, a);
}

CollDesc phase_desc(CollKind kind, xc_dtype_t dtype, size_t count) {
  CollDesc d;
  d.kind = kind;
  d.dtype = dtype;
  d.count = count;
  return d;
}

std::vector<size_t> piece_counts(size_t count, int n) {
  std::vector<size_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = piece_count(count, i, n);
  return v;
}

std::vector<size_t> displacements(const std::vector<size_t> &counts) {
  std::vector<size_t> v(counts.size());
  size_t at = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    v[i] = at;
    at += counts[i];
  }
  return v;
}

}  // namespace xc::algo::hier
