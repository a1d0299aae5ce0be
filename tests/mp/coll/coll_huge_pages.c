/* Large allgather, allgatherv and allreduce where the selector's pipeline
   gives way to single copy if every rank's buffers are on 2 MiB pages
   (src/algo/selector.h: single_copy_on_huge_pages), checked against
   results computed locally from every rank's seeded input.

   coll_huge_pages all    every buffer from xc_mem_alloc (single copy where
                          THP is offered)
   coll_huge_pages mixed  the last rank's from malloc (every rank keeps the
                          pipeline: they must agree, whatever each has)

   The sizes meet both sides of each rule: 5 MiB gathered switches only
   with more ranks than cores (without, single copy runs anyway), 33 MiB
   only without; allreduce switches at 20 MiB without, and neither way at
   32 MiB. huge_pages.sh counts the switches in the XC_DEBUG=INFO log. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_test.h"

static xc_comm_t g_world;
static int g_n, g_malloc_rank; /* g_malloc_rank: -1 in "all" */

static void *buffer(size_t bytes) {
  void *p = NULL;
  if (mp_rank == g_malloc_rank) {
    p = malloc(bytes ? bytes : 1);
    MP_ASSERT(p, "malloc of %zu bytes", bytes);
  } else {
    MP_CHECK(xc_mem_alloc(g_world, bytes, &p));
  }
  return p;
}

static void release(void *p) {
  if (mp_rank == g_malloc_rank)
    free(p);
  else
    MP_CHECK(xc_mem_free(NULL, p));
}

/* allgatherv with counts[j] int32 from rank j (allgather: all equal), out of
   place and in place. */
static void check_gather(xc_comm_t comm, const size_t *counts, int v, uint64_t seed, uint64_t tag) {
  size_t displs[64], total = 0;
  for (int j = 0; j < g_n; ++j) {
    displs[j] = total;
    total += counts[j];
  }
  size_t mine = counts[mp_rank];
  int32_t *in = buffer(mine * sizeof(int32_t)), *out = buffer(total * sizeof(int32_t));
  int32_t *want = malloc(total * sizeof(int32_t));
  MP_ASSERT(want, "malloc");
  for (int j = 0; j < g_n; ++j) mp_fill(want + displs[j], counts[j] * sizeof(int32_t), seed, (uint64_t)j, tag);
  for (int in_place = 0; in_place < 2; ++in_place) {
    memset(out, 0xee, total * sizeof(int32_t));
    const void *src = in;
    if (in_place) {
      memcpy(out + displs[mp_rank], want + displs[mp_rank], mine * sizeof(int32_t));
      src = XC_IN_PLACE;
    } else {
      memcpy(in, want + displs[mp_rank], mine * sizeof(int32_t));
    }
    if (v)
      MP_CHECK(xc_allgatherv(src, mine, out, counts, displs, XC_INT32, comm));
    else
      MP_CHECK(xc_allgather(src, out, mine, XC_INT32, comm));
    for (int j = 0; j < g_n; ++j)
      MP_ASSERT(memcmp(out + displs[j], want + displs[j], counts[j] * sizeof(int32_t)) == 0,
                "%s%s of %zu elements: block of rank %d differs", v ? "allgatherv" : "allgather",
                in_place ? " in place" : "", total, j);
  }
  free(want);
  release(in);
  release(out);
}

static void check_gathers(xc_comm_t comm, size_t total_bytes, uint64_t seed) {
  size_t counts[64], each = total_bytes / sizeof(int32_t) / (size_t)g_n + 1;
  for (int j = 0; j < g_n; ++j) counts[j] = each;
  check_gather(comm, counts, 0, seed, 1);
  for (int j = 0; j < g_n; ++j) counts[j] = each - 1000 + (size_t)j * 997; /* uneven */
  check_gather(comm, counts, 1, seed, 2);
}

static void check_allreduce(xc_comm_t comm, size_t count, uint64_t seed) {
  int32_t *in = buffer(count * sizeof(int32_t)), *out = buffer(count * sizeof(int32_t));
  uint32_t *want = calloc(count, sizeof *want);
  int32_t *other = malloc(count * sizeof(int32_t));
  MP_ASSERT(want && other, "malloc");
  mp_fill(in, count * sizeof(int32_t), seed, (uint64_t)mp_rank, 3);
  MP_CHECK(xc_allreduce(in, out, count, XC_INT32, XC_SUM, comm));
  for (int j = 0; j < g_n; ++j) { /* int32 sums wrap alike in any order */
    mp_fill(other, count * sizeof(int32_t), seed, (uint64_t)j, 3);
    for (size_t i = 0; i < count; ++i) want[i] += (uint32_t)other[i];
  }
  for (size_t i = 0; i < count; ++i)
    MP_ASSERT((uint32_t)out[i] == want[i], "allreduce of %zu elements: element %zu is %d, want %u", count, i, out[i],
              want[i]);
  free(want);
  free(other);
  release(in);
  release(out);
}

int main(int argc, char **argv) {
  xc_comm_t world;
  MP_CHECK(xc_init(NULL, &world));
  g_world = world;
  MP_CHECK(xc_comm_rank(world, &mp_rank));
  MP_CHECK(xc_comm_size(world, &g_n));
  MP_ASSERT(argc == 2 && (!strcmp(argv[1], "all") || !strcmp(argv[1], "mixed")), "usage: %s all|mixed", argv[0]);
  MP_ASSERT(g_n <= 64, "at most 64 ranks");
  g_malloc_rank = strcmp(argv[1], "mixed") ? -1 : g_n - 1;
  uint64_t seed = mp_seed();
  if (mp_rank == 0)
    printf("coll_huge_pages %s: %d ranks, seed 0x%llx (replay with XC_TEST_SEED)\n", argv[1], g_n,
           (unsigned long long)seed);
  if (g_n > 1) {
    check_gathers(world, (size_t)5 << 20, seed);
    check_gathers(world, (size_t)33 << 20, seed ^ 1);
    check_allreduce(world, ((size_t)20 << 20) / sizeof(int32_t) + 3, seed);
    check_allreduce(world, ((size_t)32 << 20) / sizeof(int32_t) + 3, seed ^ 1); /* two-shot stays */
  }
  MP_CHECK(xc_comm_free(world));
  if (mp_rank == 0) printf("coll_huge_pages %s: ok\n", argv[1]);
  return 0;
}
