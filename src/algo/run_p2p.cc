#include "algo/run_p2p.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/dtype.h"
#include "cpu/reduce.h"

namespace xc::algo {

namespace {

// Element counts/displacements → bytes, into per-thread arrays (no allocation
// once they have grown).
const size_t *to_bytes(const CountArray &v, size_t es, int which) {
  thread_local std::vector<size_t> out[4];
  std::vector<size_t> &o = out[which];
  o.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = v[i] * es;
  return v.empty() ? nullptr : o.data();
}

Status not_served(const CollDesc &d, const char *algo) {
  return Error(XC_ERR_INTERNAL, "%s has no algorithm %s", coll_kind_name(d.kind), algo);
}

// ---- reductions: in → out, widened for 16-bit floats, AVG divided at the end ----

// allreduce's algorithms work in place on out.
void copy_input(const void *in, void *out, const CollDesc &d, xc_dtype_t dtype) {
  if (in != out) memcpy(out, in, d.count * dtype_size(dtype));
}

// ---- data movement (bytes) -------------------------------------------------------

size_t block_bytes(const CollDesc &d) { return d.count * dtype_size(d.dtype); }

// allgather(v): this rank's block goes where the algorithm expects it.
void place_own_block(const CollDesc &d, size_t at) {
  size_t bytes = block_bytes(d);
  if (!d.in_place && bytes) memcpy(static_cast<char *>(d.recvbuf) + at, d.sendbuf, bytes);
}

// alltoall(v) in place: the input is recvbuf, read from a copy of its first
// extent bytes.
const void *alltoall_input(const CollDesc &d, size_t extent) {
  if (!d.in_place) return d.sendbuf;
  char *copy = scratch(Scratch::kWideIn, extent);
  if (extent) memcpy(copy, d.recvbuf, extent);
  return copy;
}

}  // namespace

Status run_reduction(CollContext &c, const CollDesc &d, ReduceFn fn) {
  int n = c.size(), r = c.rank();
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
  if (!dtype_is_half(d.dtype)) {
    XC_TRY(fn(c, d, in, d.recvbuf, d.dtype, counts));
    if (d.op == XC_AVG && has_out) cpu::scale_avg(d.recvbuf, out_count, d.dtype, contributions);
    return Status::Ok();
  }
  // float16/bfloat16: reduce a float32 copy in place, round once at the end.
  float *wide = reinterpret_cast<float *>(scratch(Scratch::kWideIn, in_count * sizeof(float)));
  cpu::widen_to_float(in, wide, in_count, d.dtype);
  XC_TRY(fn(c, d, wide, wide, XC_FLOAT32, counts));
  if (!has_out) return Status::Ok();
  if (d.op == XC_AVG) cpu::scale_avg(wide, out_count, XC_FLOAT32, contributions);
  cpu::narrow_from_float(wide, d.recvbuf, out_count, d.dtype);
  return Status::Ok();
}

Status run_dissemination(CollContext &c, const CollDesc &d) {
  return d.kind == CollKind::kBarrier ? barrier_dissemination(c) : not_served(d, "dissemination");
}

Status run_binomial(CollContext &c, const CollDesc &d) {
  char *out = static_cast<char *>(d.recvbuf);
  switch (d.kind) {
    case CollKind::kBroadcast: return broadcast_binomial(c, d.recvbuf, block_bytes(d), d.root);
    case CollKind::kReduce:
      return run_reduction(c, d, [](CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t, const size_t *) {
        return reduce_binomial(c, in, out, d.count, t, d.op, d.root);
      });
    case CollKind::kGather: return gather_binomial(c, d.sendbuf, out, block_bytes(d), d.root);
    case CollKind::kScatter: return scatter_binomial(c, d.sendbuf, out, block_bytes(d), d.root);
    default: return not_served(d, "binomial");
  }
}

Status run_scatter_allgather(CollContext &c, const CollDesc &d) {
  if (d.kind != CollKind::kBroadcast) return not_served(d, "scatter_allgather");
  return broadcast_scatter_allgather(c, d.recvbuf, block_bytes(d), d.root);
}

Status run_reduce_scatter_gather(CollContext &c, const CollDesc &d) {
  if (d.kind != CollKind::kReduce) return not_served(d, "reduce_scatter_gather");
  return run_reduction(c, d, [](CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t, const size_t *) {
    return reduce_scatter_gather(c, in, out, d.count, t, d.op, d.root);
  });
}

Status run_recursive_doubling(CollContext &c, const CollDesc &d) {
  switch (d.kind) {
    case CollKind::kAllreduce:
      return run_reduction(c, d, [](CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t, const size_t *) {
        copy_input(in, out, d, t);
        return allreduce_recursive_doubling(c, out, d.count, t, d.op);
      });
    case CollKind::kScan:
    case CollKind::kExscan:
      return run_reduction(c, d, [](CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t, const size_t *) {
        return scan_recursive_doubling(c, in, out, d.count, t, d.op, d.kind == CollKind::kExscan);
      });
    default: return not_served(d, "recursive_doubling");
  }
}

Status run_ring(CollContext &c, const CollDesc &d) {
  char *out = static_cast<char *>(d.recvbuf);
  size_t es = dtype_size(d.dtype);
  switch (d.kind) {
    case CollKind::kAllreduce:
      return run_reduction(c, d, [](CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t, const size_t *) {
        copy_input(in, out, d, t);
        return allreduce_ring(c, out, d.count, t, d.op);
      });
    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv:
      return run_reduction(c, d, [](CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t,
                             const size_t *counts) { return reduce_scatter_ring(c, in, out, counts, t, d.op); });
    case CollKind::kAllgather:
      place_own_block(d, static_cast<size_t>(c.rank()) * block_bytes(d));
      return allgather_ring(c, out, block_bytes(d));
    case CollKind::kAllgatherv: {
      const size_t *counts = to_bytes(d.recvcounts, es, 0), *displs = to_bytes(d.rdispls, es, 1);
      place_own_block(d, displs[c.rank()]);
      return allgatherv_ring(c, out, counts, displs);
    }
    default: return not_served(d, "ring");
  }
}

Status run_bruck(CollContext &c, const CollDesc &d) {
  char *out = static_cast<char *>(d.recvbuf);
  size_t bytes = block_bytes(d);
  switch (d.kind) {
    case CollKind::kAllgather:
      place_own_block(d, static_cast<size_t>(c.rank()) * bytes);
      return allgather_bruck(c, out, bytes);
    case CollKind::kAlltoall:
      return alltoall_bruck(c, alltoall_input(d, static_cast<size_t>(c.size()) * bytes), out, bytes);
    default: return not_served(d, "bruck");
  }
}

Status run_linear(CollContext &c, const CollDesc &d) {
  char *out = static_cast<char *>(d.recvbuf);
  size_t es = dtype_size(d.dtype), bytes = block_bytes(d);
  switch (d.kind) {
    case CollKind::kGather: return gather_linear(c, d.sendbuf, out, bytes, d.root);
    case CollKind::kGatherv:
      return gatherv_linear(c, d.sendbuf, bytes, out, to_bytes(d.recvcounts, es, 0), to_bytes(d.rdispls, es, 1),
                            d.root);
    case CollKind::kScatter: return scatter_linear(c, d.sendbuf, out, bytes, d.root);
    case CollKind::kScatterv:
      return scatterv_linear(c, d.sendbuf, to_bytes(d.sendcounts, es, 0), to_bytes(d.sdispls, es, 1), out, bytes,
                             d.root);
    default: return not_served(d, "linear");
  }
}

Status run_pairwise(CollContext &c, const CollDesc &d) {
  char *out = static_cast<char *>(d.recvbuf);
  size_t es = dtype_size(d.dtype), bytes = block_bytes(d), n = static_cast<size_t>(c.size());
  switch (d.kind) {
    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv:
      return run_reduction(c, d, [](CollContext &c, const CollDesc &d, const void *in, void *out, xc_dtype_t t,
                             const size_t *counts) { return reduce_scatter_pairwise(c, in, out, counts, t, d.op); });
    case CollKind::kAlltoall: return alltoall_pairwise(c, alltoall_input(d, n * bytes), out, bytes);
    case CollKind::kAlltoallv: {
      const size_t *sc = to_bytes(d.sendcounts, es, 0), *sd = to_bytes(d.sdispls, es, 1);
      const size_t *rc = to_bytes(d.recvcounts, es, 2), *rd = to_bytes(d.rdispls, es, 3);
      size_t extent = 0;
      for (size_t i = 0; i < n && d.in_place; ++i) extent = std::max(extent, rd[i] + rc[i]);
      return alltoallv_pairwise(c, alltoall_input(d, extent), sc, sd, out, rc, rd);
    }
    default: return not_served(d, "pairwise");
  }
}

}  // namespace xc::algo
