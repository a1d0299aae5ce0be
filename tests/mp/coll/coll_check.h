/* What the collective tests share: one "case" (op, dtype, reduction,
   placement, root, count), the seeded input every rank can regenerate for
   any other rank, the reference result computed locally from it, and checks
   that name op/dtype/redop/placement/root/count/rank/element when a result
   differs.

   Inputs are chosen so every reference is exact whatever order the library
   reduces in (floats hold small integers; integers wrap, which is order-free):
     copy ops              raw random bits in every dtype
     integers, not avg     raw random bits (sum/prod wrap, min/max compare in the dtype)
     integers avg          0 .. 15 (the sum never wraps; sum / n truncates)
     floats sum            -8 .. 8 (|sum| <= 64 at 8 ranks: exact even in bfloat16)
     floats avg            0 .. 15 (sum exact; sum / n rounded once, as the library must)
     floats prod           -2, -1, 1, 2 (products are powers of two)
     floats min, max       -100 .. 100
   A case with rank_order set is for a library that reduces every element in
   rank order, with float16/bfloat16 accumulated in float32 and rounded once
   (the device kernels, kernels/reduce.cuh); its inputs need not make every
   order exact, so they test that contract:
     float16/bfloat16      fractional values (sum, avg, min, max: -8 .. 8 in
                           steps of 1/256; prod: +-[0.5, 2) with ten fraction
                           bits), the reference accumulated in float32 in
                           rank order, divided (avg) in float32, rounded once;
                           at 3+ ranks every fourth element of sum and avg
                           cancels (+B, -B, then values below float32's
                           resolution at B), which only rank order keeps
     integers avg          raw random bits: the wrapped sum divided by the
                           number of ranks, truncating
     everything else       as above (exact in any order) */
#ifndef XCOMM_COLL_CHECK_H
#define XCOMM_COLL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "mp_test.h"

/* mp_test.h's per-file rank is used by MP_ASSERT in some files only. */
static inline void ct_uses_mp_rank_(void) { (void)mp_rank; }

typedef struct {
  const char *name;
  xc_dtype_t dtype;
  size_t size;
  int is_int, is_signed;
} ct_dtype;

extern const ct_dtype ct_dtypes[];
extern const size_t ct_num_dtypes;

#define CT_COPY (-1) /* the "reduction" of an op that only moves data */
extern const int ct_redops[];
extern const size_t ct_num_redops;
const char *ct_redop_name(int redop);
int ct_redop_valid(int redop, const ct_dtype *d); /* bitwise ops only on integers */

typedef struct {
  const char *op;     /* "allreduce", ... */
  const ct_dtype *dt;
  int redop;          /* xc_op_t or CT_COPY */
  int in_place;
  int root;           /* -1 for ops without one */
  size_t count;       /* the op's count argument (v-ops: the base of the uneven counts) */
  int rank, nranks;
  uint64_t seed;
  uint64_t salt;      /* differs between cases, so no case sees the previous one's data */
  int rank_order;     /* the library reduces in rank order (see the top): other inputs and references */
} ct_case;

/* Element index for "rank's data meant for peer, element k" (scatter, alltoall). */
static inline uint64_t ct_to(int peer, size_t k) { return ((uint64_t)(unsigned)peer << 32) | (uint64_t)k; }

/* rank's input element idx, as an integer of the case's value class. */
int64_t ct_value(const ct_case *c, int rank, uint64_t idx);
/* buf[i] = rank's input element idx, in the dtype. */
void ct_put(const ct_case *c, void *buf, size_t i, int rank, uint64_t idx);
/* out (one element) = the reduction over ranks [lo, hi) of input element idx;
   a copy of rank lo's element for CT_COPY. */
void ct_expect(const ct_case *c, int lo, int hi, uint64_t idx, void *out);

/* The untouched-memory pattern: every output is filled with it first. */
#define CT_POISON 0xA5

/* Compare buf[i] with want (one element); on a difference report it (the
   first few per rank) and count it. what names the buffer ("recvbuf"). */
void ct_check_elem(const ct_case *c, const char *what, const void *buf, size_t i, const void *want);
/* buf[i] for i in [from, to) must still be poison (gaps, ranks without output). */
void ct_check_poison(const ct_case *c, const char *what, const void *buf, size_t from, size_t to);
/* buf (bytes) must equal before (bytes): an input the op must not write. */
void ct_check_unchanged(const ct_case *c, const char *what, const void *buf, const void *before, size_t bytes);
/* A call failed: report it and exit (the ranks can no longer agree on what comes next). */
void ct_fail_call(const ct_case *c, const char *call, xc_result_t rc);
/* Mismatches reported so far on this rank. */
extern size_t ct_failures;

/* "allreduce int32 sum in-place root 2 count 33" */
void ct_describe(const ct_case *c, char *out, size_t len);

/* Buffers of n elements of the case's dtype (never NULL), filled with
   poison, with CT_GUARD more poisoned elements past the end that the op must
   not write (checked when the run is freed). */
#define CT_GUARD 16
void *ct_alloc(const ct_case *c, size_t n);

/* Uneven counts for the v-ops, equal on every rank: zeros included. */
size_t ct_vcount(size_t base, int rank);
/* Symmetric per-pair counts for alltoallv (count(s, d) == count(d, s)), zero
   for some pairs (never for ranks 0 and 1, so 2 ranks move data too). */
size_t ct_pair_count(size_t base, int s, int d);
/* Non-packed displacements for counts[0..n): blocks laid out in reverse rank
   order with a one-element gap before each; returns the extent (elements,
   with a trailing gap). */
size_t ct_layout(const size_t *counts, int n, size_t *displs);

/* Random finite floats of magnitude 2^-4 .. 2^4, either sign, full mantissa,
   in dtype (a float dtype), from a stream keyed by (seed, rank): inputs whose
   reduction rounds, so any difference in order between ranks shows. */
void ct_fill_random_floats(void *buf, size_t n, xc_dtype_t dtype, uint64_t seed, int rank);
/* FNV-1a of n bytes: results compared between ranks through one allgather. */
uint64_t ct_hash(const void *p, size_t n);

/* True (and the op remembered as skipped) when rc says the op is not built. */
int ct_not_built(xc_result_t rc);

#endif
