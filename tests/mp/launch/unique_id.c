/* xc_get_unique_id + xc_comm_init_rank across processes (the NCCL pattern):
   rank 0 of the world makes an id, the world broadcasts it, and every
   process joins a new job under the reversed rank. That job's ranks must
   agree with the arguments and its collectives and messages must work. */
#include "mp_test.h"

int main(void) {
  xc_comm_t world, comm;
  int rank, size, crank, csize;
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &rank));
  mp_rank = rank;
  MP_CHECK(xc_comm_size(world, &size));
  xc_unique_id_t id;
  memset(&id, 0, sizeof id);
  if (rank == 0) MP_CHECK(xc_get_unique_id(&id));
  MP_CHECK(xc_broadcast(&id, sizeof id, XC_UINT8, 0, world));
  MP_CHECK(xc_comm_init_rank(size, &id, size - 1 - rank, NULL, &comm));
  MP_CHECK(xc_comm_rank(comm, &crank));
  MP_CHECK(xc_comm_size(comm, &csize));
  MP_ASSERT(crank == size - 1 - rank && csize == size, "joined as %d of %d", crank, csize);

  /* Each rank contributes seeded data; the sum is checked against a local reference. */
  enum { N = 5000 };
  static int64_t mine[N], got[N], want[N];
  uint64_t seed = mp_seed();
  memset(want, 0, sizeof want);
  for (int r = 0; r < csize; ++r) {
    int64_t v[N];
    mp_fill(v, sizeof v, seed, (uint64_t)r, 1);
    for (int i = 0; i < N; ++i) want[i] = (int64_t)((uint64_t)want[i] + (uint64_t)v[i]);
    if (r == crank) memcpy(mine, v, sizeof v);
  }
  MP_CHECK(xc_allreduce(mine, got, N, XC_INT64, XC_SUM, comm));
  MP_ASSERT(memcmp(got, want, sizeof want) == 0, "allreduce on the unique-id communicator differs");

  /* A ring of messages in the new numbering. */
  int right = (crank + 1) % csize, left = (crank - 1 + csize) % csize, out = crank * 7, in = -1;
  xc_status_t st;
  MP_CHECK(xc_sendrecv(&out, 1, right, 3, &in, 1, left, 3, XC_INT32, comm, &st));
  MP_ASSERT(in == left * 7 && st.source == left, "ring got %d from %d", in, st.source);

  MP_CHECK(xc_comm_free(comm));
  MP_CHECK(xc_comm_free(world));
  return 0;
}
