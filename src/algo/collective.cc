#include "algo/collective.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/algorithms.h"
#include "coll/shm/backend.h"
#include "base/dtype.h"
#include "base/env.h"
#include "base/log.h"
#include "cpu/reduce.h"

namespace xc::algo {

namespace {

bool is_half(xc_dtype_t d) { return d == XC_FLOAT16 || d == XC_BFLOAT16; }

// Element counts/displacements → bytes, into per-thread arrays (no allocation
// once they have grown).
const size_t *to_bytes(const CountArray &v, size_t es, int which) {
  thread_local std::vector<size_t> out[4];
  std::vector<size_t> &o = out[which];
  o.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = v[i] * es;
  return v.empty() ? nullptr : o.data();
}

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

// The first p2p algorithm of kind: what one rank runs (it only copies).
Algo single_rank_algo(CollKind kind) {
  for (Algo a : {Algo::kDissemination, Algo::kBinomial, Algo::kRecursiveDoubling, Algo::kRing, Algo::kLinear,
                 Algo::kPairwise})
    if (algo_applies(kind, a)) return a;
  return Algo::kLocal;
}

Status unknown_combination(const CollDesc &d, Algo a) {
  return Error(XC_ERR_INTERNAL, "%s has no algorithm %s", coll_kind_name(d.kind), algo_name(a));
}

// ---- reductions: in → out, widened for 16-bit floats, AVG divided at the end ----

Status reduce_with(CollContext &c, const CollDesc &d, Algo a, const void *in, void *out, xc_dtype_t dtype,
                   const size_t *counts) {
  size_t es = dtype_size(dtype);
  switch (d.kind) {
    case CollKind::kAllreduce:
      if (in != out) memcpy(out, in, d.count * es);
      if (a == Algo::kRing) return allreduce_ring(c, out, d.count, dtype, d.op);
      if (a == Algo::kRecursiveDoubling) return allreduce_recursive_doubling(c, out, d.count, dtype, d.op);
      break;
    case CollKind::kReduce:
      if (a == Algo::kBinomial) return reduce_binomial(c, in, out, d.count, dtype, d.op, d.root);
      if (a == Algo::kReduceScatterGather) return reduce_scatter_gather(c, in, out, d.count, dtype, d.op, d.root);
      break;
    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv:
      if (a == Algo::kRing) return reduce_scatter_ring(c, in, out, counts, dtype, d.op);
      if (a == Algo::kPairwise) return reduce_scatter_pairwise(c, in, out, counts, dtype, d.op);
      break;
    case CollKind::kScan:
    case CollKind::kExscan:
      if (a == Algo::kRecursiveDoubling)
        return scan_recursive_doubling(c, in, out, d.count, dtype, d.op, d.kind == CollKind::kExscan);
      break;
    default: break;
  }
  return unknown_combination(d, a);
}

Status run_reduction(CollContext &c, const CollDesc &d, Algo a) {
  int n = c.size(), r = c.rank();
  // reduce_scatter(v): per-rank block counts, in elements.
  thread_local std::vector<size_t> uniform;
  const size_t *counts = nullptr;
  if (d.kind == CollKind::kReduceScatter) {
    uniform.assign(static_cast<size_t>(n), d.count);
    counts = uniform.data();
  } else if (d.kind == CollKind::kReduceScatterv) {
    counts = d.recvcounts.data();
  }
  size_t in_count = d.count, out_count = d.count;
  bool has_out = true;
  switch (d.kind) {
    case CollKind::kReduce: has_out = r == d.root; break;
    case CollKind::kExscan: has_out = r != 0; break;
    case CollKind::kReduceScatter: in_count = d.count * static_cast<size_t>(n); break;
    case CollKind::kReduceScatterv:
      in_count = d.recvcounts.total();
      out_count = d.recvcounts[static_cast<size_t>(r)];
      break;
    default: break;
  }
  // AVG divides by the number of inputs reduced: n, or the prefix length.
  int contributions = d.kind == CollKind::kScan ? r + 1 : d.kind == CollKind::kExscan ? r : n;
  const void *in = d.in_place ? d.recvbuf : d.sendbuf;
  if (!is_half(d.dtype)) {
    XC_TRY(reduce_with(c, d, a, in, d.recvbuf, d.dtype, counts));
    if (d.op == XC_AVG && has_out) cpu::scale_avg(d.recvbuf, out_count, d.dtype, contributions);
    return Status::Ok();
  }
  // float16/bfloat16: reduce a float32 copy in place, round once at the end.
  float *wide = reinterpret_cast<float *>(scratch(Scratch::kWideIn, in_count * sizeof(float)));
  cpu::widen_to_float(in, wide, in_count, d.dtype);
  XC_TRY(reduce_with(c, d, a, wide, wide, XC_FLOAT32, counts));
  if (!has_out) return Status::Ok();
  if (d.op == XC_AVG) cpu::scale_avg(wide, out_count, XC_FLOAT32, contributions);
  cpu::narrow_from_float(wide, d.recvbuf, out_count, d.dtype);
  return Status::Ok();
}

// ---- data movement (bytes) -------------------------------------------------------

Status run_movement(CollContext &c, const CollDesc &d, Algo a) {
  int n = c.size(), r = c.rank();
  size_t es = dtype_size(d.dtype), bytes = d.count * es, un = static_cast<size_t>(n);
  char *out = static_cast<char *>(d.recvbuf);
  switch (d.kind) {
    case CollKind::kBarrier:
      if (a == Algo::kDissemination) return barrier_dissemination(c);
      break;
    case CollKind::kBroadcast:
      if (a == Algo::kBinomial) return broadcast_binomial(c, d.recvbuf, bytes, d.root);
      if (a == Algo::kScatterAllgather) return broadcast_scatter_allgather(c, d.recvbuf, bytes, d.root);
      break;
    case CollKind::kAllgather:
      if (!d.in_place && bytes) memcpy(out + static_cast<size_t>(r) * bytes, d.sendbuf, bytes);
      if (a == Algo::kRing) return allgather_ring(c, out, bytes);
      if (a == Algo::kBruck) return allgather_bruck(c, out, bytes);
      break;
    case CollKind::kAllgatherv: {
      const size_t *counts = to_bytes(d.recvcounts, es, 0), *displs = to_bytes(d.rdispls, es, 1);
      if (!d.in_place && bytes) memcpy(out + displs[r], d.sendbuf, bytes);
      if (a == Algo::kRing) return allgatherv_ring(c, out, counts, displs);
      break;
    }
    case CollKind::kGather:
      if (a == Algo::kLinear) return gather_linear(c, d.sendbuf, out, bytes, d.root);
      if (a == Algo::kBinomial) return gather_binomial(c, d.sendbuf, out, bytes, d.root);
      break;
    case CollKind::kGatherv:
      if (a == Algo::kLinear)
        return gatherv_linear(c, d.sendbuf, bytes, out, to_bytes(d.recvcounts, es, 0), to_bytes(d.rdispls, es, 1),
                              d.root);
      break;
    case CollKind::kScatter:
      if (a == Algo::kLinear) return scatter_linear(c, d.sendbuf, out, bytes, d.root);
      if (a == Algo::kBinomial) return scatter_binomial(c, d.sendbuf, out, bytes, d.root);
      break;
    case CollKind::kScatterv:
      if (a == Algo::kLinear)
        return scatterv_linear(c, d.sendbuf, to_bytes(d.sendcounts, es, 0), to_bytes(d.sdispls, es, 1), out, bytes,
                               d.root);
      break;
    case CollKind::kAlltoall: {
      const void *in = d.sendbuf;
      if (d.in_place) {  // the input is recvbuf: read it from a copy
        char *copy = scratch(Scratch::kWideIn, un * bytes);
        if (bytes) memcpy(copy, out, un * bytes);
        in = copy;
      }
      if (a == Algo::kPairwise) return alltoall_pairwise(c, in, out, bytes);
      if (a == Algo::kBruck) return alltoall_bruck(c, in, out, bytes);
      break;
    }
    case CollKind::kAlltoallv: {
      const size_t *sc = to_bytes(d.sendcounts, es, 0), *sd = to_bytes(d.sdispls, es, 1);
      const size_t *rc = to_bytes(d.recvcounts, es, 2), *rd = to_bytes(d.rdispls, es, 3);
      const void *in = d.sendbuf;
      if (d.in_place) {
        size_t extent = 0;
        for (size_t i = 0; i < un; ++i) extent = std::max(extent, rd[i] + rc[i]);
        char *copy = scratch(Scratch::kWideIn, extent);
        if (extent) memcpy(copy, out, extent);
        in = copy;
      }
      if (a == Algo::kPairwise) return alltoallv_pairwise(c, in, sc, sd, out, rc, rd);
      break;
    }
    default: break;
  }
  return unknown_combination(d, a);
}

Status run_shm(CollContext &c, const CollDesc &d, Algo a) {
  switch (a) {
    case Algo::kShmOneShot: return shm_oneshot(c, d);
    case Algo::kShmSingleCopy: return shm_single_copy(c, d);
    case Algo::kShmTwoShot: return shm_twoshot(c, d);
    case Algo::kShmStaged: return shm_staged(c, d);
    default: break;
  }
  return unknown_combination(d, a);
}

// XC_ALGO, read and parsed once per process: per op kind, whether it forces
// an algorithm (or the error every call of that kind reports alike).
struct ForcedChoice {
  Status status;
  bool forced = false;
  Algo algo = Algo::kLocal;
};

const ForcedChoice &forced_choice(CollKind kind) {
  static const std::vector<ForcedChoice> table = [] {
    std::string spec = env_get("XC_ALGO");
    std::vector<ForcedChoice> t(static_cast<size_t>(kCollKindCount));
    for (int k = 0; k < kCollKindCount; ++k) {
      ForcedChoice &f = t[static_cast<size_t>(k)];
      f.status = forced_algo(spec, static_cast<CollKind>(k), &f.forced, &f.algo);
    }
    return t;
  }();
  return table[static_cast<size_t>(kind)];
}

}  // namespace

Status run_algorithm(CollContext &c, const CollDesc &d, Algo algo) {
  if (algo == Algo::kLocal) algo = single_rank_algo(d.kind);
  if (!algo_applies(d.kind, algo)) return unknown_combination(d, algo);
  if (nothing_to_do(d)) return Status::Ok();
  if (is_shm_algo(algo)) return run_shm(c, d, algo);
  if (coll_kind_reduces(d.kind)) return run_reduction(c, d, algo);
  return run_movement(c, d, algo);
}

Status run_collective(CollContext &c, const CollDesc &d) {
  int n = c.size();
  const ForcedChoice &fc = forced_choice(d.kind);
  if (!fc.status.ok()) return fc.status;  // a bad XC_ALGO fails every call alike
  bool forced = fc.forced;
  Algo algo = fc.algo;
  if (nothing_to_do(d)) return Status::Ok();
  Locality loc;
  // ensure() is collective: every rank reaches it at this op alike (same
  // members, same XC_ALGO).
  coll::ShmColl *shm = coll::shm_of(c);
  if (shm && n > 1 && (!forced || is_shm_algo(algo))) {
    loc.all_local = true;
    if (!shm->state()) XC_TRY(shm->ensure(c));  // set up by the first op; no Status built after
    loc.single_copy = shm->single_copy_ok();
  }
  size_t bytes = selection_bytes(d, n);
  const char *reason = "XC_ALGO";
  bool by_policy = !forced || n == 1 || !algo_usable(d.kind, algo, loc);
  if (by_policy) {
    Algo wanted = algo;
    algo = choose(d.kind, bytes, n, loc, d.in_place, &reason);
    if (forced && n > 1)
      XC_INFO("%s: XC_ALGO asks for %s, which these ranks cannot use (%s); using %s", coll_kind_name(d.kind),
              algo_name(wanted), loc.all_local ? "no single-copy path" : "not all on one host", algo_name(algo));
  }
  // A forced pipeline stays one; the selector's may give way at arrival.
  bool may_single_copy = by_policy && single_copy_on_huge_pages(algo, d.kind, bytes, n, loc);
  XC_INFO("%s %zu B on %d ranks: %s (%s%s)", coll_kind_name(d.kind), bytes, n, algo_name(algo), reason,
          may_single_copy ? "; single copy if every rank's buffers are on 2 MiB pages" : "");
  // The common small op: what run_algorithm would do, without its checks
  // (one-shot runs every kind; nothing_to_do was asked above).
  if (algo == Algo::kShmOneShot) return shm_oneshot(c, d);
  if (may_single_copy) return algo == Algo::kShmTwoShot ? shm_twoshot(c, d, true) : shm_staged(c, d, true);
  return run_algorithm(c, d, algo);
}

}  // namespace xc::algo
