/* Started by any launcher: the world must have the size the launcher gave,
   every rank a distinct rank (allreduce of ranks), and the ranks sharing
   memory exactly those with the same host id. With "parity" the ranks were
   given XC_HOST_ID by rank parity, i.e. two "hosts": a message to the other
   host arrives (UCX) or fails cleanly as unsupported (a build without an
   inter-host transport), while the split by host and the world's free go
   through the bootstrap store.
   With "nodes=P" the ranks were given XC_HOST_ID by blocks of P (node k holds
   ranks kP .. kP+P-1), as launchers started on several nodes lay them out;
   only what stays on one host or goes through the store is checked. */
#include "mp_test.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s NRANKS all|parity|nodes=P\n", argv[0]);
    return 2;
  }
  int expect_size = atoi(argv[1]);
  int parity = strcmp(argv[2], "parity") == 0;
  int per_node = strncmp(argv[2], "nodes=", 6) == 0 ? atoi(argv[2] + 6) : 0;
  xc_comm_t world;
  int rank, size, local_rank, local_size;
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &rank));
  mp_rank = rank;
  MP_CHECK(xc_comm_size(world, &size));
  MP_CHECK(xc_comm_local_rank(world, &local_rank));
  MP_CHECK(xc_comm_local_size(world, &local_size));
  MP_ASSERT(size == expect_size, "world size %d, launcher started %d", size, expect_size);

#define HOST_OF(r) (parity ? (r) % 2 : per_node > 0 ? (r) / per_node : 0)
  int host = HOST_OF(rank);
  int want_local_size = 0, want_local_rank = 0;
  for (int r = 0; r < size; ++r) {
    if (HOST_OF(r) != host) continue;
    if (r < rank) ++want_local_rank;
    ++want_local_size;
  }
  MP_ASSERT(local_size == want_local_size && local_rank == want_local_rank, "local %d of %d, expected %d of %d",
            local_rank, local_size, want_local_rank, want_local_size);

  /* Ranks of one host reduce among themselves through a split by host. */
  xc_comm_t same_host;
  MP_CHECK(xc_comm_split(world, host, rank, NULL, &same_host));
  int64_t sum = rank;
  MP_CHECK(xc_allreduce(XC_IN_PLACE, &sum, 1, XC_INT64, XC_SUM, same_host));
  int64_t want = 0;
  for (int r = 0; r < size; ++r)
    if (HOST_OF(r) == host) want += r;
  MP_ASSERT(sum == want, "sum of ranks on my host %lld, expected %lld", (long long)sum, (long long)want);

  if (parity && size > 1) {
    /* Even ranks send to the next, odd ranks receive from the one before:
       delivered when the build has a transport between hosts (UCX), else
       refused on both sides as unsupported, never anything else. */
    int other = rank % 2 == 0 ? (rank + 1 < size ? rank + 1 : -1) : rank - 1;
    if (other >= 0) {
      int x = rank % 2 == 0 ? rank : -1;
      xc_result_t rc = rank % 2 == 0 ? xc_send(&x, 1, XC_INT32, other, 0, world)
                                     : xc_recv(&x, 1, XC_INT32, other, 0, world, NULL);
      MP_ASSERT(rc == XC_SUCCESS || (rc == XC_ERR_UNSUPPORTED && xc_last_error()[0] != '\0'),
                "message between hosts (rank %d <-> %d): %s (%s)", rank, other, xc_strerror(rc), xc_last_error());
      MP_ASSERT(rc != XC_SUCCESS || x == (rank % 2 == 0 ? rank : other), "received %d from rank %d", x, other);
    }
  }
  /* Groups made by their members alone (xc_comm_create_group); with
     "parity" they span the two hosts, so the members' exchange goes through
     the bootstrap store: the group of every rank, reversed, twice with one
     tag (freed in between: the second must not read the first's records),
     then the pair {1, 0} made by ranks 0 and 1 alone, then the even ranks. */
  for (int round = 0; round < 2; ++round) {
    int list[64];
    MP_ASSERT(size <= 64, "size %d", size);
    for (int i = 0; i < size; ++i) list[i] = size - 1 - i;
    xc_comm_t all;
    int gr = -1, gs = -1;
    MP_CHECK(xc_comm_create_group(world, size, list, 5, NULL, &all));
    MP_CHECK(xc_comm_rank(all, &gr));
    MP_CHECK(xc_comm_size(all, &gs));
    MP_ASSERT(gr == size - 1 - rank && gs == size, "create_group round %d: rank %d size %d", round, gr, gs);
    MP_CHECK(xc_comm_free(all));
  }
  if (size >= 2 && rank < 2) {
    int pair[2] = {1, 0};
    xc_comm_t two;
    int gr = -1;
    MP_CHECK(xc_comm_create_group(world, 2, pair, 6, NULL, &two));
    MP_CHECK(xc_comm_rank(two, &gr));
    MP_ASSERT(gr == 1 - rank, "create_group {1, 0}: rank %d", gr);
    MP_CHECK(xc_comm_free(two));
  }
  /* the even ranks (one host with "parity"): their exchange and their
     collectives go through the transport even though the parent spans hosts */
  if (rank % 2 == 0 && per_node == 0) {
    int evens[32], k = 0;
    for (int r = 0; r < size && k < 32; r += 2) evens[k++] = r;
    xc_comm_t ev;
    MP_CHECK(xc_comm_create_group(world, k, evens, 7, NULL, &ev));
    int64_t s = rank, want_s = 0;
    for (int i = 0; i < k; ++i) want_s += evens[i];
    MP_CHECK(xc_allreduce(XC_IN_PLACE, &s, 1, XC_INT64, XC_SUM, ev));
    MP_ASSERT(s == want_s, "create_group of the even ranks: sum %lld, expected %lld", (long long)s, (long long)want_s);
    MP_CHECK(xc_comm_free(ev));
  }

  MP_CHECK(xc_comm_free(same_host));
  MP_CHECK(xc_comm_free(world));
  printf("rank %d of %d: ok (local %d of %d)\n", rank, size, local_rank, local_size);
  return 0;
}
