/* The fault-tolerance tests' helpers (ft_util.h). */
#define _POSIX_C_SOURCE 200809L
#include "ft_util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void ft_die(void) {
  char name[64];
  snprintf(name, sizeof name, "killed%d.time", verdict_rank);
  verdict_write_file(name, "%lld\n", (long long)verdict_now_ns());
  kill(getpid(), SIGKILL);
  for (;;) pause();
}

int64_t ft_death_time(int r) {
  char path[4096];
  long long t = 0;
  FILE *f;
  snprintf(path, sizeof path, "%s/killed%d.time", verdict_dir, r);
  f = fopen(path, "r");
  if (!f) return 0;
  if (fscanf(f, "%lld", &t) != 1) t = 0;
  fclose(f);
  return t;
}

int ft_allreduce_ok(xc_comm_t comm, uint64_t salt) {
  int rank, n, i;
  int64_t v[5], want;
  if (xc_comm_rank(comm, &rank) != XC_SUCCESS || xc_comm_size(comm, &n) != XC_SUCCESS) return 0;
  for (i = 0; i < 5; ++i) v[i] = (int64_t)(salt * 1000 + (uint64_t)rank * 7 + (uint64_t)i);
  if (xc_allreduce(XC_IN_PLACE, v, 5, XC_INT64, XC_SUM, comm) != XC_SUCCESS) return 0;
  for (i = 0; i < 5; ++i) {
    want = (int64_t)(salt * 1000 * (uint64_t)n) + 7 * (int64_t)n * (n - 1) / 2 + (int64_t)i * n;
    if (v[i] != want) verdict_fail("allreduce on %d ranks: element %d is %lld, want %lld", n, i, (long long)v[i], (long long)want);
  }
  return 1;
}

xc_comm_t ft_recover(xc_comm_t comm, int *shrinks) {
  xc_comm_t cur = comm;
  uint64_t salt = 1;
  FT_CHECK(xc_comm_revoke(cur));
  for (;;) {
    xc_comm_t child = NULL;
    xc_result_t rc;
    int ok;
    FT_CHECK(xc_comm_shrink(cur, NULL, &child));
    ++*shrinks;
    /* Trust the child once an op in it worked on every survivor: a rank may
       have died after the survivors agreed on who is alive. */
    ok = ft_allreduce_ok(child, ++salt);
    rc = xc_comm_agree(child, &ok);
    FT_EXPECT(rc == XC_SUCCESS || rc == XC_ERR_PEER_FAILED, "xc_comm_agree on the child -> %s (%s)", xc_strerror(rc),
              xc_last_error());
    if (cur != comm) xc_comm_free(cur);
    if (rc == XC_SUCCESS && ok) return child;
    FT_CHECK(xc_comm_revoke(child));
    cur = child;
  }
}

void ft_members(xc_comm_t comm, int *world_ranks, int n) {
  int me = verdict_rank;
  (void)n;
  FT_CHECK(xc_allgather(&me, world_ranks, 1, XC_INT32, comm));
}

void ft_check_survivors(xc_comm_t comm, const int *dead, int world_size) {
  int n, i, k = 0, got[4096];
  char list[1024] = "";
  FT_CHECK(xc_comm_size(comm, &n));
  FT_EXPECT(n <= 4096, "communicator of %d ranks", n);
  ft_members(comm, got, n);
  for (i = 0; i < n; ++i) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", got[i]);
  for (i = 0; i < world_size; ++i) {
    if (dead[i]) continue;
    FT_EXPECT(k < n && got[k] == i, "the child holds world ranks [%s]: want every rank but the killed, in order", list);
    ++k;
  }
  FT_EXPECT(k == n, "the child holds world ranks [%s]: more than the survivors", list);
  verdict_report("survivors=%s", list);
}
