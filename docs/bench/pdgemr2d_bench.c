/*
 * pdgemr2d_bench.c — ScaLAPACK's pdgemr2d on the cases of redist_bench.c's
 * bc subcommand (same matrix, grids, blocks, values, timing and check):
 *
 *   mpicc -O2 -o pdgemr2d_bench docs/bench/pdgemr2d_bench.c -lscalapack-openmpi
 *   mpirun -np 4 ./pdgemr2d_bench 8192 8192 2 2 64 1 4 128 [iters]
 *
 * Both grids are row-major BLACS grids over ranks 0 .. P*Q-1; the copy
 * runs in a 1 x nprocs context spanning both (pdgemr2d's ictxt). Time: one
 * warm-up call, then the fastest of iters calls, each the slowest rank's.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgemr2d_(const int *m, const int *n, const double *a, const int *ia, const int *ja, const int *desca, double *b,
               const int *ib, const int *jb, const int *descb, const int *ictxt);

static double bc_val(size_t i, size_t j) { return (double)(i * 1000003 + j); }

/* A grid context over ranks 0 .. p*q-1 (row-major), or -1 elsewhere. */
static int grid(int p, int q) {
  int ctxt;
  Cblacs_get(0, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", p, q);
  return ctxt;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 9) {
    if (!rank) fprintf(stderr, "pdgemr2d_bench M N P1 Q1 NB1 P2 Q2 NB2 [iters]\n");
    MPI_Finalize();
    return 2;
  }
  int m = atoi(argv[1]), n = atoi(argv[2]), p1 = atoi(argv[3]), q1 = atoi(argv[4]), nb1 = atoi(argv[5]);
  int p2 = atoi(argv[6]), q2 = atoi(argv[7]), nb2 = atoi(argv[8]), iters = argc > 9 ? atoi(argv[9]) : 5;
  int ctxa = grid(p1, q1), ctxb = grid(p2, q2), ctxall = grid(1, size), zero = 0, one = 1, info;
  int desca[9] = {0}, descb[9] = {0};
  desca[1] = descb[1] = -1;  /* ranks outside a grid: context -1 */
  int r1, c1, r2, c2, pp, qq;
  double *a = NULL, *b = NULL;
  int lr1 = 0, lc1 = 0, lr2 = 0, lc2 = 0;
  if (ctxa >= 0) {
    Cblacs_gridinfo(ctxa, &pp, &qq, &r1, &c1);
    if (r1 >= 0) {
      lr1 = numroc_(&m, &nb1, &r1, &zero, &p1);
      lc1 = numroc_(&n, &nb1, &c1, &zero, &q1);
      int lld = lr1 > 1 ? lr1 : 1;
      descinit_(desca, &m, &n, &nb1, &nb1, &zero, &zero, &ctxa, &lld, &info);
    }
  }
  if (ctxb >= 0) {
    Cblacs_gridinfo(ctxb, &pp, &qq, &r2, &c2);
    if (r2 >= 0) {
      lr2 = numroc_(&m, &nb2, &r2, &zero, &p2);
      lc2 = numroc_(&n, &nb2, &c2, &zero, &q2);
      int lld = lr2 > 1 ? lr2 : 1;
      descinit_(descb, &m, &n, &nb2, &nb2, &zero, &zero, &ctxb, &lld, &info);
    }
  }
  a = malloc(((size_t)lr1 * lc1 + 1) * sizeof(double));
  b = malloc(((size_t)lr2 * lc2 + 1) * sizeof(double));
  for (size_t lj = 0; lj < (size_t)lc1; ++lj)
    for (size_t li = 0; li < (size_t)lr1; ++li) {
      size_t i = (li / nb1 * p1 + r1) * nb1 + li % nb1, j = (lj / nb1 * q1 + c1) * nb1 + lj % nb1;
      a[li + lj * lr1] = bc_val(i, j);
    }
  /* One warm-up call, then the fastest of iters calls (each the slowest
     rank's time): the machine is shared and other work only adds time. */
  double slowest = 1e30;
  for (int it = -1; it < iters; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    pdgemr2d_(&m, &n, a, &one, &one, desca, b, &one, &one, descb, &ctxall);
    double mine = MPI_Wtime() - t, worst;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= 0 && worst < slowest) slowest = worst;
  }
  long wrong = 0, all;
  for (size_t lj = 0; lj < (size_t)lc2; ++lj)
    for (size_t li = 0; li < (size_t)lr2; ++li) {
      size_t i = (li / nb2 * p2 + r2) * nb2 + li % nb2, j = (lj / nb2 * q2 + c2) * nb2 + lj % nb2;
      wrong += b[li + lj * lr2] != bc_val(i, j);
    }
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (!rank)
    printf("pdgemr2d bc %dx%d %dx%d nb=%d -> %dx%d nb=%d: run %.2f ms, wrong %ld\n", m, n, p1, q1, nb1, p2, q2, nb2,
           slowest * 1e3, all);
  free(a);
  free(b);
  MPI_Finalize();
  return all != 0;
}
