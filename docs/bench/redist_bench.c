/*
 * redist_bench.c — measures xcomm's redistribution (xc_redistribute_plan):
 *
 *   cc -O2 -Iinclude -o redist_bench docs/bench/redist_bench.c -Lbuild/src -lxcomm -Wl,-rpath,$PWD/build/src
 *   build/src/tools/xcrun -n 4 ./redist_bench bc 8192 8192 2 2 64 1 4 128 [iters]
 *   build/src/tools/xcrun -n 4 ./redist_bench mesh 8 1024 1024 [iters]
 *
 * bc: an M x N float64 matrix from a P1 x Q1 grid with NB1 x NB1 blocks to a
 *     P2 x Q2 grid with NB2 x NB2 blocks (ScaLAPACK descriptors, column-major
 *     local storage, row-major grids, source process 0): the twin of
 *     pdgemr2d_bench.c. Prints the plan time, the time per redistribution
 *     and the most bytes any rank receives; checks every element once.
 * mesh: every pair of placements from {R, S0, S1, S2, P} on a 2x2 mesh for
 *     a D0 x D1 x D2 float32 array, three ways: the planner (default), the
 *     planner with XC_REDIST_P2P_ONLY, and the rule-based chain DTensor uses
 *     (one mesh dimension at a time, each step its own plan, so each is the
 *     single collective that dimension's change is: allgather, alltoall,
 *     allreduce, reduce_scatter, or a local slice). One line per pair:
 *     times (ms) and the most bytes any rank receives, for each way.
 *     Optional SRC DST after iters (e.g. S0,S2 S0,S0) run one pair only.
 * Times are the fastest of iters runs (each the slowest rank's), after a
 * warm-up run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xcomm.h"

static int rank, size;
static xc_comm_t world;

#define CHECK(call)                                                                          \
  do {                                                                                       \
    xc_result_t rc_ = (call);                                                                \
    if (rc_ != XC_SUCCESS) {                                                                 \
      fprintf(stderr, "[%d] %s:%d %s: %s (%s)\n", rank, __FILE__, __LINE__, #call,          \
              xc_strerror(rc_), xc_last_error());                                            \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double max_over_ranks(double v) {
  double r;
  CHECK(xc_allreduce(&v, &r, 1, XC_FLOAT64, XC_MAX, world));
  return r;
}

static unsigned long long max_bytes(xc_plan_t plan) {
  xc_plan_info_t i;
  i.size = sizeof i;
  CHECK(xc_plan_info(plan, &i));
  unsigned long long v = i.bytes_received, r;
  CHECK(xc_allreduce(&v, &r, 1, XC_UINT64, XC_MAX, world));
  return r;
}

/* Seconds of one run (the slowest rank's), the fastest of iters runs after
   one warm-up run: the minimum, because the machine is shared and other
   work only ever adds time. */
static double time_steps(xc_plan_t *plans, int nplans, const void *in, void *out, void *mid0, void *mid1,
                         int iters) {
  double best = 1e30;
  for (int it = -1; it < iters; ++it) {
    CHECK(xc_barrier(world));
    double t = now();
    const void *from = in;
    for (int s = 0; s < nplans; ++s) {
      void *to = s == nplans - 1 ? out : (s % 2 ? mid1 : mid0);
      CHECK(xc_redistribute(plans[s], from, to));
      from = to;
    }
    double dt = max_over_ranks(now() - t);
    if (it >= 0 && dt < best) best = dt;
  }
  return best;
}

static double time_plan(xc_plan_t plan, const void *in, void *out, int iters) {
  return time_steps(&plan, 1, in, out, NULL, NULL, iters);
}

static size_t numroc(size_t n, size_t nb, int p, int np) {
  size_t nblocks = n / nb, count = (nblocks / (size_t)np) * nb, extra = nblocks % (size_t)np;
  if ((size_t)p < extra) count += nb;
  else if ((size_t)p == extra) count += n % nb;
  return count;
}

/* The value of global element (i, j). */
static double bc_val(size_t i, size_t j) { return (double)(i * 1000003 + j); }

static int bench_bc(int argc, char **argv) {
  if (argc < 10) return fprintf(stderr, "bc M N P1 Q1 NB1 P2 Q2 NB2 [iters]\n"), 2;
  size_t m = strtoull(argv[2], 0, 10), n = strtoull(argv[3], 0, 10);
  int p1 = atoi(argv[4]), q1 = atoi(argv[5]), p2 = atoi(argv[7]), q2 = atoi(argv[8]);
  size_t nb1 = strtoull(argv[6], 0, 10), nb2 = strtoull(argv[9], 0, 10);
  int iters = argc > 10 ? atoi(argv[10]) : 5;
  xc_layout_t src, dst;
  CHECK(xc_layout_block_cyclic(world, m, n, nb1, nb1, p1, q1, 0, 0, XC_ORDER_ROW_MAJOR, XC_ORDER_COL_MAJOR, &src));
  CHECK(xc_layout_block_cyclic(world, m, n, nb2, nb2, p2, q2, 0, 0, XC_ORDER_ROW_MAJOR, XC_ORDER_COL_MAJOR, &dst));
  int pr1 = rank / q1, pc1 = rank % q1, pr2 = rank / q2, pc2 = rank % q2;
  size_t lr1 = rank < p1 * q1 ? numroc(m, nb1, pr1, p1) : 0, lc1 = rank < p1 * q1 ? numroc(n, nb1, pc1, q1) : 0;
  size_t lr2 = rank < p2 * q2 ? numroc(m, nb2, pr2, p2) : 0, lc2 = rank < p2 * q2 ? numroc(n, nb2, pc2, q2) : 0;
  double *a = malloc((lr1 * lc1 + 1) * sizeof(double)), *b = malloc((lr2 * lc2 + 1) * sizeof(double));
  for (size_t lj = 0; lj < lc1; ++lj)
    for (size_t li = 0; li < lr1; ++li) {
      size_t i = (li / nb1 * (size_t)p1 + (size_t)pr1) * nb1 + li % nb1;
      size_t j = (lj / nb1 * (size_t)q1 + (size_t)pc1) * nb1 + lj % nb1;
      a[li + lj * lr1] = bc_val(i, j);
    }
  double t = now();
  xc_plan_t plan;
  CHECK(xc_redistribute_plan(src, dst, XC_FLOAT64, NULL, &plan));
  double plan_s = max_over_ranks(now() - t);
  double run_s = time_plan(plan, a, b, iters);
  long wrong = 0;
  for (size_t lj = 0; lj < lc2; ++lj)
    for (size_t li = 0; li < lr2; ++li) {
      size_t i = (li / nb2 * (size_t)p2 + (size_t)pr2) * nb2 + li % nb2;
      size_t j = (lj / nb2 * (size_t)q2 + (size_t)pc2) * nb2 + lj % nb2;
      wrong += b[li + lj * lr2] != bc_val(i, j);
    }
  long all_wrong;
  CHECK(xc_allreduce(&wrong, &all_wrong, 1, XC_INT64, XC_SUM, world));
  unsigned long long bytes = max_bytes(plan);
  if (rank == 0)
    printf("xcomm bc %zux%zu %dx%d nb=%zu -> %dx%d nb=%zu: plan %.1f ms, run %.2f ms, max bytes received %.1f MiB, "
           "wrong %ld\n",
           m, n, p1, q1, nb1, p2, q2, nb2, plan_s * 1e3, run_s * 1e3, bytes / 1048576.0, all_wrong);
  CHECK(xc_plan_free(plan));
  CHECK(xc_layout_free(src));
  CHECK(xc_layout_free(dst));
  free(a);
  free(b);
  return all_wrong != 0;
}

enum { R, S0, S1, S2, P, NPL };
static const char *pname[] = {"R", "S0", "S1", "S2", "P"};

static xc_layout_t mesh_layout(const size_t *shape, const int *pl) {
  int mesh[2] = {2, 2};
  xc_placement_t p[2];
  for (int k = 0; k < 2; ++k) {
    memset(&p[k], 0, sizeof p[k]);
    p[k].kind = pl[k] == R ? XC_PLACEMENT_REPLICATE : pl[k] == P ? XC_PLACEMENT_PARTIAL : XC_PLACEMENT_SHARD;
    p[k].dim = pl[k] - S0;
    p[k].op = XC_SUM;
  }
  xc_layout_t l;
  CHECK(xc_layout_mesh(world, 3, shape, 2, mesh, p, &l));
  return l;
}

static int bench_mesh(int argc, char **argv) {
  if (size != 4) return fprintf(stderr, "mesh needs 4 ranks (a 2x2 mesh)\n"), 2;
  size_t shape[3] = {argc > 2 ? strtoull(argv[2], 0, 10) : 8, argc > 3 ? strtoull(argv[3], 0, 10) : 1024,
                     argc > 4 ? strtoull(argv[4], 0, 10) : 1024};
  int iters = argc > 5 ? atoi(argv[5]) : 3;
  const char *only_src = argc > 7 ? argv[6] : NULL, *only_dst = argc > 7 ? argv[7] : NULL;
  size_t total = shape[0] * shape[1] * shape[2];
  float *in = malloc(total * sizeof(float)), *out = malloc(total * sizeof(float));
  float *mid = malloc(total * sizeof(float)), *mid2 = malloc(total * sizeof(float));
  for (size_t i = 0; i < total; ++i) in[i] = (float)(i % 977);
  xc_redist_config_t p2p = XC_REDIST_CONFIG_INIT;
  p2p.flags = XC_REDIST_P2P_ONLY;
  if (rank == 0)
    printf("%-8s %-8s %9s %9s %9s %11s %11s %11s\n", "src", "dst", "plan_ms", "p2p_ms", "chain_ms", "plan_MiB",
           "p2p_MiB", "chain_MiB");
  for (int x = 0; x < NPL * NPL * NPL * NPL; ++x) {
    int sp[2] = {x % NPL, x / NPL % NPL}, dp[2] = {x / 25 % NPL, x / 125};
    if (sp[0] == dp[0] && sp[1] == dp[1]) continue;
    if (only_src) {
      char a[16], b[16];
      snprintf(a, sizeof a, "%s,%s", pname[sp[0]], pname[sp[1]]);
      snprintf(b, sizeof b, "%s,%s", pname[dp[0]], pname[dp[1]]);
      if (strcmp(a, only_src) || strcmp(b, only_dst)) continue;
    }
    xc_layout_t src = mesh_layout(shape, sp), dst = mesh_layout(shape, dp);
    xc_plan_t plan, pp;
    CHECK(xc_redistribute_plan(src, dst, XC_FLOAT32, NULL, &plan));
    CHECK(xc_redistribute_plan(src, dst, XC_FLOAT32, &p2p, &pp));
    double t_plan = 0, t_p2p = 0, t_chain = 0;
    unsigned long long b_plan = max_bytes(plan), b_p2p = max_bytes(pp);
    /* The rule-based chain: one mesh dimension at a time, each step a plan
       of its own (the single collective or local slice that step is). */
    xc_plan_t steps[4];
    int nsteps = 0;
    int cur[2] = {sp[0], sp[1]};
    xc_layout_t lays[5];
    lays[0] = mesh_layout(shape, cur);
    for (int k = 0; k < 2; ++k) {
      if (cur[k] == dp[k]) continue;
      int via[2] = {cur[0], cur[1]};
      if (cur[k] >= S0 && cur[k] <= S2 && dp[k] == P) { /* Shard -> Partial: through Replicate */
        via[k] = R;
        lays[nsteps + 1] = mesh_layout(shape, via);
        CHECK(xc_redistribute_plan(lays[nsteps], lays[nsteps + 1], XC_FLOAT32, NULL, &steps[nsteps]));
        ++nsteps;
      }
      cur[k] = dp[k];
      lays[nsteps + 1] = mesh_layout(shape, cur);
      CHECK(xc_redistribute_plan(lays[nsteps], lays[nsteps + 1], XC_FLOAT32, NULL, &steps[nsteps]));
      ++nsteps;
    }
    unsigned long long b_chain = 0;
    for (int s = 0; s < nsteps; ++s) {
      xc_plan_info_t i;
      i.size = sizeof i;
      CHECK(xc_plan_info(steps[s], &i));
      unsigned long long v = i.bytes_received, r;
      CHECK(xc_allreduce(&v, &r, 1, XC_UINT64, XC_MAX, world));
      b_chain += r; /* an upper bound of the max over ranks of the sum; equal when ranks are symmetric */
    }
    /* The three ways in an order that rotates from pair to pair, so that
       none is always the first measured. */
    for (int w = 0; w < 3; ++w) {
      int way = (w + x) % 3;
      if (way == 0) t_plan = time_plan(plan, in, out, iters);
      if (way == 1) t_p2p = time_plan(pp, in, out, iters);
      if (way == 2) t_chain = time_steps(steps, nsteps, in, out, mid, mid2, iters);
    }
    if (rank == 0) {
      char a[16], b[16];
      snprintf(a, sizeof a, "[%s,%s]", pname[sp[0]], pname[sp[1]]);
      snprintf(b, sizeof b, "[%s,%s]", pname[dp[0]], pname[dp[1]]);
      printf("%-8s %-8s %9.2f %9.2f %9.2f %11.2f %11.2f %11.2f\n", a, b, t_plan * 1e3, t_p2p * 1e3, t_chain * 1e3,
             b_plan / 1048576.0, b_p2p / 1048576.0, b_chain / 1048576.0);
      fflush(stdout);
    }
    for (int s = 0; s < nsteps; ++s) CHECK(xc_plan_free(steps[s]));
    for (int s = 0; s <= nsteps; ++s) CHECK(xc_layout_free(lays[s]));
    CHECK(xc_plan_free(plan));
    CHECK(xc_plan_free(pp));
    CHECK(xc_layout_free(src));
    CHECK(xc_layout_free(dst));
  }
  free(in), free(out), free(mid), free(mid2);
  return 0;
}

int main(int argc, char **argv) {
  CHECK(xc_init(NULL, &world));
  CHECK(xc_comm_rank(world, &rank));
  CHECK(xc_comm_size(world, &size));
  int rc = 2;
  if (argc > 1 && !strcmp(argv[1], "bc")) rc = bench_bc(argc, argv);
  else if (argc > 1 && !strcmp(argv[1], "mesh")) rc = bench_mesh(argc, argv);
  else if (rank == 0) fprintf(stderr, "usage: redist_bench bc|mesh ...\n");
  CHECK(xc_comm_free(world));
  return rc;
}
