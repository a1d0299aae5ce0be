/* xc_mem_alloc / xc_mem_free: sizes from one byte to a few MiB come back
   2 MiB aligned, zeroed, writable end to end and (where the kernel offers
   transparent huge pages) eligible for them; collectives on such buffers
   give the locally computed results; bad input fails with a message and
   frees nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_test.h"

#define ALIGN ((size_t)2 << 20)

/* 1 when the kernel may back madvised memory with huge pages. */
static int thp_offered(void) {
  char line[256] = "";
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  if (!fgets(line, sizeof line, f)) line[0] = 0;
  fclose(f);
  return strstr(line, "[never]") == NULL && line[0] != 0;
}

/* The THPeligible field of the mapping holding p in /proc/self/smaps (-1: none). */
static int thp_eligible(const void *p) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[512];
  int inside = 0, found = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
    } else if (inside && sscanf(line, "THPeligible: %d", &found) == 1) {
      break;
    }
  }
  fclose(f);
  return found;
}

static void check_sizes(xc_comm_t comm, uint64_t seed) {
  const size_t sizes[] = {1, 4097, ALIGN, 3 * ALIGN + 5};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    size_t n = sizes[i];
    unsigned char *p = NULL, *want = malloc(n);
    MP_ASSERT(want, "malloc");
    MP_CHECK(xc_mem_alloc(comm, n, (void **)&p));
    MP_ASSERT(p && (uintptr_t)p % ALIGN == 0, "%zu bytes at %p: not 2 MiB aligned", n, (void *)p);
    for (size_t j = 0; j < n; ++j) MP_ASSERT(p[j] == 0, "%zu bytes: byte %zu is %u, not zero", n, j, p[j]);
    mp_fill(want, n, seed, 7, i);
    memcpy(p, want, n);
    MP_ASSERT(memcmp(p, want, n) == 0, "%zu bytes do not read back", n);
    if (thp_offered()) MP_ASSERT(thp_eligible(p) == 1, "%zu bytes at %p: not eligible for huge pages", n, (void *)p);
    MP_CHECK(xc_mem_free(comm, p));
    free(want);
  }
}

/* allreduce (out of place and in place) and alltoall, every buffer from
   xc_mem_alloc, against results computed from every rank's seeded input. */
static void check_collectives(xc_comm_t comm, int n, uint64_t seed) {
  const size_t count = ((size_t)1 << 20) + 3; /* 4 MiB + 12 B of int32: beyond one-shot */
  const size_t per_peer = 100003;
  size_t bytes = count * sizeof(int32_t), a2a = per_peer * (size_t)n * sizeof(int32_t);
  int32_t *in, *out, *other, *send, *recv;
  MP_CHECK(xc_mem_alloc(comm, bytes, (void **)&in));
  MP_CHECK(xc_mem_alloc(comm, bytes, (void **)&out));
  MP_CHECK(xc_mem_alloc(comm, a2a, (void **)&send));
  MP_CHECK(xc_mem_alloc(comm, a2a, (void **)&recv));
  other = malloc(a2a > bytes ? a2a : bytes);
  MP_ASSERT(other, "malloc");

  mp_fill(in, bytes, seed, (uint64_t)mp_rank, 1);
  MP_CHECK(xc_allreduce(in, out, count, XC_INT32, XC_SUM, comm));
  MP_CHECK(xc_allreduce(XC_IN_PLACE, in, count, XC_INT32, XC_SUM, comm));
  {  /* reference: every rank's input summed, wrapping like int32 sums do */
    uint32_t *want = calloc(count, sizeof *want);
    MP_ASSERT(want, "calloc");
    for (int r = 0; r < n; ++r) {
      mp_fill(other, bytes, seed, (uint64_t)r, 1);
      for (size_t j = 0; j < count; ++j) want[j] += (uint32_t)other[j];
    }
    for (size_t j = 0; j < count; ++j) {
      MP_ASSERT((uint32_t)out[j] == want[j], "allreduce element %zu: %d, want %u", j, out[j], want[j]);
      MP_ASSERT((uint32_t)in[j] == want[j], "in-place allreduce element %zu: %d, want %u", j, in[j], want[j]);
    }
    free(want);
  }

  mp_fill(send, a2a, seed, (uint64_t)mp_rank, 2);
  MP_CHECK(xc_alltoall(send, recv, per_peer, XC_INT32, comm));
  for (int r = 0; r < n; ++r) {
    mp_fill(other, a2a, seed, (uint64_t)r, 2);
    const int32_t *theirs = other + (size_t)mp_rank * per_peer;
    MP_ASSERT(memcmp(recv + (size_t)r * per_peer, theirs, per_peer * sizeof(int32_t)) == 0,
              "alltoall block from rank %d differs", r);
  }

  free(other);
  MP_CHECK(xc_mem_free(comm, in));
  MP_CHECK(xc_mem_free(comm, out));
  MP_CHECK(xc_mem_free(comm, send));
  MP_CHECK(xc_mem_free(NULL, recv)); /* no communicator needed */
}

static void check_bad_input(xc_comm_t comm) {
  void *p = (void *)1;
  MP_EXPECT_ERR(xc_mem_alloc(NULL, 8, &p), XC_ERR_INVALID_ARGUMENT);
  MP_EXPECT_ERR(xc_mem_alloc(comm, 8, NULL), XC_ERR_INVALID_ARGUMENT);
  MP_EXPECT_ERR(xc_mem_alloc(comm, SIZE_MAX, &p), XC_ERR_INVALID_ARGUMENT);
  MP_ASSERT(p == (void *)1, "a failed xc_mem_alloc changed its output to %p", p);
  p = (void *)1;
  MP_CHECK(xc_mem_alloc(comm, 0, &p));
  MP_ASSERT(p == NULL, "0 bytes gave %p", p);
  MP_CHECK(xc_mem_free(comm, NULL));

  /* Pointers it did not return: refused, and nothing freed. */
  unsigned char *mine = malloc(64), *q = NULL;
  MP_ASSERT(mine, "malloc");
  memset(mine, 0x5a, 64);
  MP_EXPECT_ERR(xc_mem_free(comm, mine), XC_ERR_INVALID_ARGUMENT);
  for (int j = 0; j < 64; ++j) MP_ASSERT(mine[j] == 0x5a, "malloc'd byte %d changed", j);
  free(mine);
  MP_CHECK(xc_mem_alloc(comm, 3 * 4096, (void **)&q));
  MP_EXPECT_ERR(xc_mem_free(comm, q + 4096), XC_ERR_INVALID_ARGUMENT);
  q[3 * 4096 - 1] = 1; /* still mapped */
  MP_EXPECT_ERR(xc_mem_free((xc_comm_t)q, q), XC_ERR_INVALID_ARGUMENT); /* not a communicator */
  MP_CHECK(xc_mem_free(comm, q));
  MP_EXPECT_ERR(xc_mem_free(comm, q), XC_ERR_INVALID_ARGUMENT); /* twice */
}

int main(void) {
  xc_comm_t world, dup;
  int n;
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &mp_rank));
  MP_CHECK(xc_comm_size(world, &n));
  uint64_t seed = mp_seed();
  if (mp_rank == 0) printf("mem_alloc: %d ranks, seed 0x%llx (replay with XC_TEST_SEED)\n", n, (unsigned long long)seed);

  check_bad_input(world);
  check_sizes(world, seed);
  check_collectives(world, n, seed);

  /* Memory outlives the communicator it came from. */
  void *kept = NULL;
  MP_CHECK(xc_comm_dup(world, &dup));
  MP_CHECK(xc_mem_alloc(dup, 4096, &kept));
  MP_CHECK(xc_comm_free(dup));
  memset(kept, 1, 4096);
  MP_CHECK(xc_mem_free(NULL, kept));

  MP_CHECK(xc_comm_free(world));
  if (mp_rank == 0) printf("mem_alloc: ok\n");
  return 0;
}
