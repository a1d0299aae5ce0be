/* Ranks that outnumber the cores, all started on one cpu: the shared-memory
   collectives move some of them elsewhere (ShmState::balance_cpus) without
   binding anyone, so every rank's cpu mask is the same after the ops as
   before, and the ops' results stay right. balance.sh reads the moves from
   the XC_DEBUG=INFO log. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

#include "mp_test.h"

enum { kOps = 3000 };

int main(void) {
  xc_comm_t world;
  int n;
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &mp_rank));
  MP_CHECK(xc_comm_size(world, &n));

  /* The first op sets up the shared segment (its waits may sleep, and a
     woken rank lands wherever the kernel puts it): before the move. */
  MP_CHECK(xc_barrier(world));
  cpu_set_t before, after, one;
  MP_ASSERT(sched_getaffinity(0, sizeof before, &before) == 0, "sched_getaffinity");
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &before)) ++first;
  MP_ASSERT(first < CPU_SETSIZE, "no allowed cpu");
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  /* Everyone onto the first allowed cpu, unbound again at once. */
  MP_ASSERT(sched_setaffinity(0, sizeof one, &one) == 0, "sched_setaffinity");
  MP_ASSERT(sched_setaffinity(0, sizeof before, &before) == 0, "sched_setaffinity");

  uint64_t seed = mp_seed();
  for (int i = 0; i < kOps; ++i) {
    int64_t mine = (int64_t)(seed % 1000003) * (mp_rank + 1) + i, sum = 0, want = 0;
    MP_CHECK(xc_allreduce(&mine, &sum, 1, XC_INT64, XC_SUM, world));
    for (int r = 0; r < n; ++r) want += (int64_t)(seed % 1000003) * (r + 1) + i;
    MP_ASSERT(sum == want, "op %d: sum %lld, want %lld", i, (long long)sum, (long long)want);
  }
  MP_ASSERT(sched_getaffinity(0, sizeof after, &after) == 0, "sched_getaffinity");
  MP_ASSERT(CPU_EQUAL(&before, &after), "the cpu mask changed (%d cpus before, %d after)", CPU_COUNT(&before),
            CPU_COUNT(&after));
  printf("rank %d: %d allreduces right, mask unchanged, now on cpu %d\n", mp_rank, kOps, sched_getcpu());
  MP_CHECK(xc_comm_free(world));
  return 0;
}
