// Collective algorithms over point-to-point messages (CollContext). Each one
// works for any number of ranks, including non-powers of two, and gives every
// rank the bit-identical result.
#pragma once

#include <cstddef>

#include "algo/coll_context.h"
#include "xcomm.h"

namespace xc::algo {

// Dissemination barrier: ceil(log2 n) rounds of zero-byte messages.
Status barrier_dissemination(CollContext &c);

// Binomial tree from root.
Status broadcast_binomial(CollContext &c, void *buf, size_t bytes, int root);

// Ring: all holds size blocks of block_bytes; this rank's block is already in
// place at rank * block_bytes.
Status allgather_ring(CollContext &c, void *all, size_t block_bytes);

// In place on buf. Picks recursive doubling for small messages and a ring
// (reduce-scatter + allgather) for large ones; float16/bfloat16 accumulate in
// float32. AVG divides once at the end.
Status allreduce(CollContext &c, void *buf, size_t count, xc_dtype_t dtype, xc_op_t op);

Status allreduce_recursive_doubling(CollContext &c, void *buf, size_t count, xc_dtype_t dtype, xc_op_t op);
Status allreduce_ring(CollContext &c, void *buf, size_t count, xc_dtype_t dtype, xc_op_t op);

}  // namespace xc::algo
