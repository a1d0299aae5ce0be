/* The main job: every rank contributes a vector, allreduce sums it, and each
   rank checks the result against the sum it can compute itself. Run with
   xcrun -n 4 build/examples/c/hello_allreduce */
#include <stdio.h>
#include <stdlib.h>

#include "xcomm.h"

#define CHECK(call)                                                                  \
  do {                                                                               \
    xc_result_t rc_ = (call);                                                        \
    if (rc_ != XC_SUCCESS) {                                                         \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, xc_strerror(rc_), xc_last_error()); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

int main(void) {
  xc_comm_t world;
  int rank, size, local_rank, local_size;
  enum { N = 1 << 20 };
  CHECK(xc_init(NULL, &world));
  CHECK(xc_comm_rank(world, &rank));
  CHECK(xc_comm_size(world, &size));
  CHECK(xc_comm_local_rank(world, &local_rank));
  CHECK(xc_comm_local_size(world, &local_size));

  /* Rank r contributes (r + 1) * (i % 7) at index i. */
  double *v = malloc(N * sizeof *v);
  if (!v) return 1;
  for (size_t i = 0; i < N; ++i) v[i] = (double)(rank + 1) * (double)(i % 7);
  CHECK(xc_allreduce(XC_IN_PLACE, v, N, XC_FLOAT64, XC_SUM, world));

  double ranks_sum = (double)size * (size + 1) / 2;
  size_t wrong = 0;
  for (size_t i = 0; i < N; ++i)
    if (v[i] != ranks_sum * (double)(i % 7)) ++wrong;
  printf("rank %d of %d (local %d of %d): allreduce of %d doubles (%.1f MiB) %s; v[6] = %.0f\n", rank, size,
         local_rank, local_size, N, N * 8.0 / (1 << 20), wrong ? "WRONG" : "correct", v[6]);
  free(v);
  CHECK(xc_comm_free(world));
  return wrong ? 1 : 0;
}
