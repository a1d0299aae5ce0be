/* Limits on what the library reads or writes for the caller, each checked
   with the caller's object placed right before an inaccessible page, so
   one byte too many is a crash, not a lucky read:
   - config.size: at most 4096 (xcomm.h); SIZE_MAX once scanned past the
     caller's struct, and 4097 with a zero tail was accepted; xc_config_init
     with SIZE_MAX zeroed that much.
   - byte counts above PTRDIFF_MAX (no buffer holds them): alltoallv with
     counts of SIZE_MAX / 8 float64 (2^64 - 8 bytes, no overflow) reached
     memcpy; the same for the other ops and point-to-point, and for n
     blocks that each fit but together do not (in-place alltoall).
   - xc_waitall(n) with n beyond any array walked off the caller's array.
   - xc_comm_split_groups with ngroups above max(size, 1024) read the sizes
     array to its end and beyond (zero sizes never fail the sum check).
   Each fails with XC_ERR_INVALID_ARGUMENT and a message; the world works
   after. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <limits.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mp_test.h"

#define E_ARG(call) MP_EXPECT_ERR(call, XC_ERR_INVALID_ARGUMENT)

static int me, n;

static void show(const char *what) {
  if (me == 0) printf("  %-44s -> \"%s\"\n", what, xc_last_error());
}

/* bytes of zeroed memory that an inaccessible page follows. */
static void *before_guard(size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), span = (bytes + page - 1) / page * page;
  char *p = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  MP_ASSERT(p != MAP_FAILED, "mmap failed");
  MP_ASSERT(mprotect(p + span, page, PROT_NONE) == 0, "mprotect failed");
  /* aligned down to 8 (a config is 8-aligned: ASan's UBSan flags a
     misaligned one), so up to 7 bytes may lie between its end and the guard */
  return (void *)((uintptr_t)(p + span - bytes) & ~(uintptr_t)7);
}

static void config_size(xc_comm_t w) {
  xc_comm_t out = (xc_comm_t)(uintptr_t)0x5a5a;
  xc_config_t *cfg = before_guard(sizeof(xc_config_t));
  MP_CHECK(xc_config_init(cfg, sizeof *cfg));
  cfg->size = SIZE_MAX;
  E_ARG(xc_comm_split(w, 0, me, cfg, &out));
  show("split, config.size = SIZE_MAX");
  cfg->size = 4097;
  E_ARG(xc_comm_split(w, 0, me, cfg, &out));
  MP_ASSERT(out == (xc_comm_t)(uintptr_t)0x5a5a, "out written on failure");

  /* 4096 bytes with a zero tail is a newer caller's struct: accepted */
  xc_config_t *big = before_guard(4097);
  MP_CHECK(xc_config_init(big, 4096));
  MP_ASSERT(big->size == 4096, "xc_config_init set size %zu", big->size);
  xc_comm_t ok = NULL;
  MP_CHECK(xc_comm_split(w, 0, me, big, &ok));
  MP_CHECK(xc_barrier(ok));
  MP_CHECK(xc_comm_free(ok));
  big->size = 4097;
  E_ARG(xc_comm_split(w, 0, me, big, &out));
  show("split, config.size = 4097 (zero tail)");
  E_ARG(xc_config_init(big, 4097));
  E_ARG(xc_config_init(cfg, SIZE_MAX));
  show("xc_config_init(cfg, SIZE_MAX)");
  MP_ASSERT(out == (xc_comm_t)(uintptr_t)0x5a5a, "out written on failure");
}

static void byte_counts(xc_comm_t w) {
  static double a[64], b[64];
  size_t huge[64], zero[64];
  const size_t over = (size_t)PTRDIFF_MAX / 8 + 1; /* 2^63 bytes of float64 */
  for (int i = 0; i < 64; ++i) huge[i] = SIZE_MAX / 8, zero[i] = 0;
  E_ARG(xc_alltoallv(a, huge, zero, b, huge, zero, XC_FLOAT64, w));
  show("alltoallv, counts SIZE_MAX / 8 float64");
  E_ARG(xc_alltoallv(XC_IN_PLACE, NULL, NULL, b, huge, zero, XC_FLOAT64, w));
  for (int i = 0; i < 64; ++i) huge[i] = over;
  E_ARG(xc_alltoallv(a, huge, zero, b, huge, zero, XC_FLOAT64, w));
  E_ARG(xc_allgatherv(a, over, b, huge, zero, XC_FLOAT64, w));
  E_ARG(xc_reduce_scatterv(a, b, huge, XC_FLOAT64, XC_SUM, w));
  E_ARG(xc_allreduce(a, b, SIZE_MAX / 8, XC_FLOAT64, XC_SUM, w));
  show("allreduce, count SIZE_MAX / 8 float64");
  E_ARG(xc_allreduce(XC_IN_PLACE, b, over, XC_FLOAT64, XC_SUM, w));
  E_ARG(xc_broadcast(b, over, XC_FLOAT64, 0, w));
  E_ARG(xc_allgather(a, b, over, XC_FLOAT64, w));
  /* each block fits, all do not (in place: no overlap check to stop it) */
  E_ARG(xc_alltoall(XC_IN_PLACE, b, (size_t)PTRDIFF_MAX / (size_t)n + 1, XC_UINT8, w));
  show("alltoall in place, n blocks over PTRDIFF_MAX bytes");
  E_ARG(xc_allgather(XC_IN_PLACE, b, (size_t)PTRDIFF_MAX / (size_t)n + 1, XC_UINT8, w));
  E_ARG(xc_send(a, over, XC_FLOAT64, me, 0, w));
  E_ARG(xc_recv(b, SIZE_MAX / 8, XC_FLOAT64, me, 0, w, NULL));
}

static void waitall_n(void) {
  xc_request_t *reqs = before_guard(2 * sizeof(xc_request_t));
  reqs[0] = reqs[1] = NULL;
  E_ARG(xc_waitall(SIZE_MAX, reqs, NULL));
  show("xc_waitall(SIZE_MAX, ...)");
  E_ARG(xc_waitall(SIZE_MAX / sizeof(xc_request_t) + 1, reqs, NULL));
  E_ARG(xc_waitall((size_t)PTRDIFF_MAX / sizeof(xc_request_t) + 1, reqs, NULL));
  xc_status_t st[2];
  E_ARG(xc_waitall((size_t)PTRDIFF_MAX / sizeof(xc_status_t) + 1, reqs, st));
  MP_CHECK(xc_waitall(2, reqs, st)); /* the true n is fine */
}

static void split_groups_n(xc_comm_t w) {
  xc_comm_t out = (xc_comm_t)(uintptr_t)0x5a5a;
  int ranks[64];
  for (int r = 0; r < n; ++r) ranks[r] = r;
  int *sizes = before_guard(sizeof(int));
  sizes[0] = n;
  E_ARG(xc_comm_split_groups(w, INT_MAX, sizes, ranks, NULL, &out));
  show("split_groups, ngroups = INT_MAX");
  int most = n > 1024 ? n : 1024;
  E_ARG(xc_comm_split_groups(w, most + 1, sizes, ranks, NULL, &out));
  /* within the bound, a sum above the parent's size stops the reading */
  int *two = before_guard(2 * sizeof(int));
  two[0] = n;
  two[1] = 1;
  E_ARG(xc_comm_split_groups(w, 1000, two, ranks, NULL, &out));
  MP_ASSERT(out == (xc_comm_t)(uintptr_t)0x5a5a, "out written on failure");
  xc_comm_t all = NULL;
  MP_CHECK(xc_comm_split_groups(w, 1, sizes, ranks, NULL, &all));
  MP_CHECK(xc_barrier(all));
  MP_CHECK(xc_comm_free(all));
}

int main(void) {
  xc_comm_t w = NULL;
  MP_CHECK(xc_init(NULL, &w));
  MP_CHECK(xc_comm_rank(w, &me));
  MP_CHECK(xc_comm_size(w, &n));
  mp_rank = me;
  MP_ASSERT(n <= 64, "at most 64 ranks (%d)", n);
  config_size(w);
  byte_counts(w);
  waitall_n();
  split_groups_n(w);
  int64_t x = me + 1, sum = 0;
  MP_CHECK(xc_allreduce(&x, &sum, 1, XC_INT64, XC_SUM, w));
  MP_ASSERT(sum == (int64_t)n * (n + 1) / 2, "allreduce sum %lld", (long long)sum);
  MP_CHECK(xc_comm_free(w));
  if (me == 0) printf("bad_limits: OK\n");
  return 0;
}
