/* Ranks blocked on peers of both kinds (one on this host, over shared
 * memory, and one on another host, over UCX) cost no core while they wait:
 * the engine sleeps on the shm doorbell with UCX's event fd relayed to it.
 * Ranks 1 .. n-1 each post a receive from rank 0, tell rank 0, and block
 * while rank 0 does nothing for IDLE_MS; then rank 0 sends to all, and
 * each checks its data and the CPU time it used while blocked. Run on 2
 * hosts (on_hosts.sh). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "xcomm.h"

#define IDLE_MS 1500
#define MAX_CPU_SHARE 0.2

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec * 1e-6;
}

#define CHECK(call)                                                                 \
  do {                                                                              \
    xc_result_t rc_ = (call);                                                       \
    if (rc_ != XC_SUCCESS) {                                                        \
      fprintf(stderr, "rank %d: %s failed: %s\n", rank, #call, xc_last_error());    \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

int main(void) {
  int rank = -1, size = 0;
  xc_comm_t world = NULL;
  if (xc_init(NULL, &world) != XC_SUCCESS) {
    fprintf(stderr, "xc_init failed: %s\n", xc_last_error());
    return 1;
  }
  xc_comm_rank(world, &rank);
  xc_comm_size(world, &size);
  if (size < 3) {
    fprintf(stderr, "ucx_idle needs 3 or more ranks (a peer on this host and one on another)\n");
    return 1;
  }
  CHECK(xc_barrier(world));
  int failed = 0;
  if (rank == 0) {
    /* Every other rank says when its receive is posted; the sleep is not
       synchronisation but the time they then spend blocked. */
    for (int r = 1; r < size; ++r) {
      int ready = 0;
      CHECK(xc_recv(&ready, 1, XC_INT32, r, 6, world, NULL));
    }
    struct timespec idle = {IDLE_MS / 1000, (IDLE_MS % 1000) * 1000000L};
    nanosleep(&idle, NULL);
    for (int r = 1; r < size; ++r) {
      unsigned long long token = 0x51eeb0000ULL + (unsigned long long)r;
      CHECK(xc_send(&token, 1, XC_UINT64, r, 7, world));
    }
  } else {
    unsigned long long token = 0;
    int ready = 1;
    xc_request_t req;
    CHECK(xc_irecv(&token, 1, XC_UINT64, 0, 7, world, &req));
    CHECK(xc_send(&ready, 1, XC_INT32, 0, 6, world));
    double t0 = now_s(), c0 = cpu_s();
    CHECK(xc_wait(&req, NULL));
    double wall = now_s() - t0, cpu = cpu_s() - c0;
    if (token != 0x51eeb0000ULL + (unsigned long long)rank) {
      fprintf(stderr, "rank %d: received %#llx, expected %#llx\n", rank, token, 0x51eeb0000ULL + (unsigned long long)rank);
      failed = 1;
    }
    printf("rank %d: blocked %.0f ms, used %.0f ms of CPU (%.1f%%)\n", rank, wall * 1e3, cpu * 1e3, 100.0 * cpu / wall);
    if (wall < 0.5 * IDLE_MS / 1e3) {
      fprintf(stderr, "rank %d: blocked only %.0f ms: the check measured nothing\n", rank, wall * 1e3);
      failed = 1;
    } else if (cpu > MAX_CPU_SHARE * wall) {
      fprintf(stderr, "rank %d: used %.0f%% of a core while blocked (limit %.0f%%)\n", rank, 100.0 * cpu / wall,
              100.0 * MAX_CPU_SHARE);
      failed = 1;
    }
  }
  int all_failed = 0;
  CHECK(xc_allreduce(&failed, &all_failed, 1, XC_INT32, XC_MAX, world));
  xc_comm_free(world);
  return all_failed;
}
