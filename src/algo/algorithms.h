// Collective algorithms over point-to-point messages (CollContext). Each one
// works for any number of ranks, including non-powers of two and 1, and for
// empty blocks. Reductions take the input in `in` and write `out` (in == out
// is allowed: in place); they reduce in the dtype they are given (the
// dispatcher, collective.cc, widens float16/bfloat16 to float32 and applies
// AVG's division), with a fixed combination order so a result delivered to
// several ranks is bit-identical everywhere. Data-movement algorithms work in
// bytes; `counts`/`displs` arrays are per communicator rank, in bytes.
#pragma once

#include <cstddef>

#include "coll/context.h"
#include "xcomm.h"

namespace xc::algo {

using coll::CollContext;
using coll::Xfer;

// ---- per-thread scratch ---------------------------------------------------------
// Buffers that only grow, one per slot, so algorithms do not allocate per call.
// A slot is owned by one layer at a time: the dispatcher's widening uses the
// kWide* slots, algorithms kWork and kRecv, the hierarchical algorithms
// (algo/hier), which run the others in their phases, kHier*.
enum class Scratch { kWideIn, kWideOut, kWork, kRecv, kHierA, kHierB, kCount };
char *scratch(Scratch slot, size_t bytes);

// ---- barrier, broadcast ----------------------------------------------------------

// Dissemination barrier: ceil(log2 n) rounds of zero-byte messages.
Status barrier_dissemination(CollContext &c);

// Binomial tree from root.
Status broadcast_binomial(CollContext &c, void *buf, size_t bytes, int root);
// Large messages: the root scatters n pieces, then a ring allgathers them.
Status broadcast_scatter_allgather(CollContext &c, void *buf, size_t bytes, int root);

// ---- allgather ------------------------------------------------------------------------

// all holds size blocks of block_bytes; this rank's block is already in place
// at rank * block_bytes.
Status allgather_ring(CollContext &c, void *all, size_t block_bytes);
// Bruck: ceil(log2 n) rounds, for small blocks; any n.
Status allgather_bruck(CollContext &c, void *all, size_t block_bytes);
// Ring over blocks of different sizes at arbitrary offsets of all (this
// rank's block already in place).
Status allgatherv_ring(CollContext &c, void *all, const size_t *counts, const size_t *displs);

// ---- gather, scatter -------------------------------------------------------------------

// Rank i's block_bytes go to root's out at i * block_bytes. in may be nullptr
// at the root when its block is already in place.
Status gather_linear(CollContext &c, const void *in, void *out, size_t block_bytes, int root);
Status gather_binomial(CollContext &c, const void *in, void *out, size_t block_bytes, int root);
// counts/displs are read at the root only; my_bytes is this rank's block.
Status gatherv_linear(CollContext &c, const void *in, size_t my_bytes, void *out, const size_t *counts,
                      const size_t *displs, int root);

// Root's in holds size blocks; rank i receives block i into out. out may be
// nullptr at the root (in place: its block stays in in).
Status scatter_linear(CollContext &c, const void *in, void *out, size_t block_bytes, int root);
Status scatter_binomial(CollContext &c, const void *in, void *out, size_t block_bytes, int root);
Status scatterv_linear(CollContext &c, const void *in, const size_t *counts, const size_t *displs, void *out,
                       size_t my_bytes, int root);

// ---- alltoall --------------------------------------------------------------------------

// in and out hold size blocks; block i of in goes to rank i. in != out.
Status alltoall_pairwise(CollContext &c, const void *in, void *out, size_t block_bytes);
Status alltoall_bruck(CollContext &c, const void *in, void *out, size_t block_bytes);
Status alltoallv_pairwise(CollContext &c, const void *in, const size_t *scounts, const size_t *sdispls, void *out,
                          const size_t *rcounts, const size_t *rdispls);

// ---- reductions (elements of dtype) -------------------------------------------------------

// In place on buf. allreduce() is the point-to-point policy's choice run as
// the dispatcher runs it (run_algorithm: float16/bfloat16 widened, AVG
// divided), for direct callers; the two below reduce only.
Status allreduce(CollContext &c, void *buf, size_t count, xc_dtype_t dtype, xc_op_t op);
Status allreduce_recursive_doubling(CollContext &c, void *buf, size_t count, xc_dtype_t dtype, xc_op_t op);
Status allreduce_ring(CollContext &c, void *buf, size_t count, xc_dtype_t dtype, xc_op_t op);

// out is written at the root only (may be nullptr elsewhere).
Status reduce_binomial(CollContext &c, const void *in, void *out, size_t count, xc_dtype_t dtype, xc_op_t op,
                       int root);
// Large vectors: ring reduce-scatter, then the root gathers the pieces.
Status reduce_scatter_gather(CollContext &c, const void *in, void *out, size_t count, xc_dtype_t dtype, xc_op_t op,
                             int root);

// in holds sum(counts) elements, block i (counts[i] elements) for rank i;
// this rank's reduced block goes to out[0..counts[rank]). in == out allowed.
Status reduce_scatter_ring(CollContext &c, const void *in, void *out, const size_t *counts, xc_dtype_t dtype,
                           xc_op_t op);
// The ring's core: work holds every block (counts/offsets in elements, per
// rank); afterwards block rank of work holds the complete reduction.
Status ring_reduce_scatter_inplace(CollContext &c, void *work, const size_t *counts, const size_t *offsets,
                                   xc_dtype_t dtype, xc_op_t op);
Status reduce_scatter_pairwise(CollContext &c, const void *in, void *out, const size_t *counts, xc_dtype_t dtype,
                               xc_op_t op);

// Prefix reductions in rank order (x0 op x1 op ... op xr), recursive
// doubling. exscan leaves out untouched at rank 0.
Status scan_recursive_doubling(CollContext &c, const void *in, void *out, size_t count, xc_dtype_t dtype,
                               xc_op_t op, bool exclusive);

}  // namespace xc::algo
