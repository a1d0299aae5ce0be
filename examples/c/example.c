/* The tour every language's example takes: start, allreduce, pass a message
   to the right-hand neighbour, split into two groups and reduce inside each.
   It checks every result and exits 1 on a mismatch.
   Run: xcrun -n 4 build/examples/example_c */
#include <stdio.h>
#include <stdlib.h>

#include "xcomm.h"

#define CHECK(call)                                                                      \
  do {                                                                                   \
    xc_result_t rc_ = (call);                                                            \
    if (rc_ != XC_SUCCESS) {                                                             \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, xc_strerror(rc_), xc_last_error()); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

static int wrong(const char *what, long got, long want, int rank) {
  if (got == want) return 0;
  fprintf(stderr, "rank %d: %s is %ld, expected %ld\n", rank, what, got, want);
  return 1;
}

int main(void) {
  xc_comm_t world, half;
  int rank, size, half_rank, half_size, errors = 0;
  CHECK(xc_init(NULL, &world));
  CHECK(xc_comm_rank(world, &rank));
  CHECK(xc_comm_size(world, &size));

  /* 1. allreduce: the sum of all ranks. */
  long sum = rank;
  CHECK(xc_allreduce(XC_IN_PLACE, &sum, 1, XC_INT64, XC_SUM, world));
  errors += wrong("sum of ranks", sum, (long)size * (size - 1) / 2, rank);

  /* 2. send to the right, receive from the left (sendrecv cannot deadlock). */
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  long out = 100 + rank, in = -1;
  xc_status_t st;
  CHECK(xc_sendrecv(&out, 1, right, 7, &in, 1, left, 7, XC_INT64, world, &st));
  errors += wrong("message from the left", in, 100 + left, rank);

  /* 3. two groups, even and odd ranks, each reducing on its own. */
  CHECK(xc_comm_split(world, rank % 2, rank, NULL, &half));
  CHECK(xc_comm_rank(half, &half_rank));
  CHECK(xc_comm_size(half, &half_size));
  long group_sum = rank, want = 0;
  for (int r = rank % 2; r < size; r += 2) want += r;
  CHECK(xc_allreduce(XC_IN_PLACE, &group_sum, 1, XC_INT64, XC_SUM, half));
  errors += wrong("sum in my group", group_sum, want, rank);

  printf("rank %d/%d: world sum %ld, got %ld from rank %d, group %d (rank %d/%d) sum %ld: %s\n", rank, size, sum, in,
         left, rank % 2, half_rank, half_size, group_sum, errors ? "WRONG" : "ok");
  CHECK(xc_comm_free(half));
  CHECK(xc_comm_free(world));
  return errors ? 1 : 0;
}
