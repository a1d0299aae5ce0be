/* Bit-identical floating-point results on every rank: allreduce of random
   floats (not exact, so any difference in the order of the reduction between
   ranks shows), every float dtype x sum/prod/min/max/avg x out-of-place and in
   place, at counts on both sides of the selector's thresholds. Each rank
   hashes its result and the hashes are gathered through the library; every
   rank must hold the same. (coll_matrix checks the values themselves, with
   data whose reduction is exact.)

     coll_identical */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

/* Counts in elements: small, odd, and one past each of 64 KiB and 512 KiB
   (src/algo/selector.h) in 2-byte elements. */
static const size_t kCounts[] = {1, 7, 1001, (64 << 10) / 2 + 1, (512 << 10) / 2 + 1};

static const char *dtype_name(xc_dtype_t t) {
  size_t i;
  for (i = 0; i < ct_num_dtypes; ++i)
    if (ct_dtypes[i].dtype == t) return ct_dtypes[i].name;
  return "?";
}

int main(void) {
  static const xc_dtype_t kTypes[] = {XC_FLOAT16, XC_BFLOAT16, XC_FLOAT32, XC_FLOAT64};
  static const xc_op_t kOps[] = {XC_SUM, XC_PROD, XC_MIN, XC_MAX, XC_AVG};
  xc_comm_t comm;
  int rank, nranks, bad = 0, cases = 0;
  size_t ti, oi, ci, p;
  int place;
  uint64_t seed = mp_seed(), *hashes;
  MP_CHECK(xc_init(NULL, &comm));
  MP_CHECK(xc_comm_rank(comm, &rank));
  MP_CHECK(xc_comm_size(comm, &nranks));
  mp_rank = rank;
  hashes = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)nranks);
  MP_ASSERT(hashes != NULL, "out of memory");
  for (ti = 0; ti < sizeof kTypes / sizeof kTypes[0]; ++ti)
    for (oi = 0; oi < sizeof kOps / sizeof kOps[0]; ++oi)
      for (ci = 0; ci < sizeof kCounts / sizeof kCounts[0]; ++ci)
        for (place = 0; place < 2; ++place) {
          size_t count = kCounts[ci], bytes = count * xc_dtype_size(kTypes[ti]);
          void *in = malloc(bytes), *out = malloc(bytes);
          uint64_t mine;
          MP_ASSERT(in && out, "out of memory");
          ct_fill_random_floats(place ? out : in, count, kTypes[ti], seed + (uint64_t)cases, rank);
          MP_CHECK(xc_allreduce(place ? XC_IN_PLACE : in, out, count, kTypes[ti], kOps[oi], comm));
          mine = ct_hash(out, bytes);
          MP_CHECK(xc_allgather(&mine, hashes, 1, XC_UINT64, comm));
          for (p = 0; p < (size_t)nranks; ++p)
            if (hashes[p] != mine && bad++ < 8)
              fprintf(stderr,
                      "[rank %d] FAIL allreduce %s %s count %zu %s: result differs from rank %zu's "
                      "(hash 0x%llx vs 0x%llx)\n",
                      rank, dtype_name(kTypes[ti]), ct_redop_name((int)kOps[oi]), count, place ? "in-place" : "out-of-place", p,
                      (unsigned long long)mine, (unsigned long long)hashes[p]);
          free(in);
          free(out);
          ++cases;
        }
  free(hashes);
  MP_CHECK(xc_comm_free(comm));
  if (bad) return 1;
  if (rank == 0) printf("coll_identical: %d ranks, %d allreduce cases bit-identical everywhere\n", nranks, cases);
  return 0;
}
