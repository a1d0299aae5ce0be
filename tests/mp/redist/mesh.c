/* Every pair of placements from {R, S(0), S(1), S(2), P(sum)} on the
   meshes this rank count allows (1-D of every size; 2x2 at 4 ranks, 2x3 at
   6) for 3-D arrays whose dimensions the meshes do not divide: the result
   is checked element by element against the seeded global array, the
   bytes received against the lower bound computed here, and the
   collectives the plan uses against the ones the transform is. Each
   non-partial pair on a 1-D mesh runs again point-to-point only
   (XC_REDIST_P2P_ONLY). */
#include "redist_util.h"

static const char *pname[] = {"R", "S0", "S1", "S2", "P"};

/* Linear index of rank's coordinates over the mesh dimensions in mask. */
static int combo(const int *mesh, int mnd, int rank, unsigned mask, int *count) {
  int q = 0, n = 1;
  for (int k = 0; k < mnd; ++k)
    if (mask & (1u << k)) q = q * mesh[k] + coord(mesh, mnd, rank, k), n *= mesh[k];
  if (count) *count = n;
  return q;
}

static uint64_t g_case;

/* What partial copy q (of Q) holds of element i: shares that sum to the value. */
static double share(size_t i, int q, int Q) {
  if (q > 0) return kval(g_case, i, q);
  double v = gval(g_case, i);
  for (int j = 1; j < Q; ++j) v -= kval(g_case, i, j);
  return v;
}

static void one_pair(const size_t *shape, int ndim, const int *mesh, int mnd, const int *spl, const int *dpl,
                     int p2p_only) {
  unsigned smask = 0, dmask = 0;
  for (int k = 0; k < mnd; ++k) smask |= (spl[k] == P) << k, dmask |= (dpl[k] == P) << k;
  if (p2p_only && smask) return;
  xc_layout_t src = make_placed(shape, ndim, mesh, mnd, spl), dst = make_placed(shape, ndim, mesh, mnd, dpl);
  box_t sb = mbox(shape, ndim, mesh, mnd, spl, r_rank), db = mbox(shape, ndim, mesh, mnd, dpl, r_rank);
  size_t scount = 0, dcount = 0;
  MP_CHECK(xc_layout_local_count(src, &scount));
  MP_CHECK(xc_layout_local_count(dst, &dcount));
  MP_ASSERT(scount == box_volume(&sb) && dcount == box_volume(&db), "local counts %zu %zu, expected %zu %zu", scount,
            dcount, box_volume(&sb), box_volume(&db));
  double *in = malloc((scount + 1) * sizeof *in), *out = malloc((dcount + 1) * sizeof *out);
  int Q = 1, q = combo(mesh, mnd, r_rank, smask, &Q);
  FOR_BOX(sb, shape, gi, k, in[k] = share(gi, q, Q));
  for (size_t i = 0; i < dcount; ++i) out[i] = -12345.0;
  xc_redist_config_t cfg = XC_REDIST_CONFIG_INIT;
  if (p2p_only) cfg.flags = XC_REDIST_P2P_ONLY;
  xc_plan_t plan;
  MP_CHECK(xc_redistribute_plan(src, dst, XC_FLOAT64, &cfg, &plan));
  MP_CHECK(xc_redistribute(plan, in, out));
  /* Expected: partial dimensions dst keeps keep their shares; those it
     adds hold the value at coordinate 0 and 0 elsewhere. */
  unsigned keep = smask & dmask, add = dmask & ~smask;
  int zero = 0;
  for (int k = 0; k < mnd; ++k)
    if ((add & (1u << k)) && coord(mesh, mnd, r_rank, k) != 0) zero = 1;
  FOR_BOX(db, shape, gi, k, {
    double want = 0;
    if (!zero)
      for (int s = 0; s < Q; ++s) {
        int same = 1, c = s;  /* s's coordinates on smask dimensions, last first */
        for (int j = mnd - 1; j >= 0; --j) {
          if (!(smask & (1u << j))) continue;
          int cj = c % mesh[j];
          c /= mesh[j];
          if ((keep & (1u << j)) && cj != coord(mesh, mnd, r_rank, j)) same = 0;
        }
        if (same) want += share(gi, s, Q);
      }
    MP_ASSERT(out[k] == want, "case %llu: element %zu (local %zu) is %g, expected %g", (unsigned long long)g_case, gi,
              k, out[k], want);
  });
  xc_plan_info_t info;
  info.size = sizeof info;
  MP_CHECK(xc_plan_info(plan, &info));
  if (!smask) {
    /* The lower bound: what this rank needs and does not hold. */
    box_t both = box_meet(&sb, &db);
    uint64_t lb = zero ? 0 : (box_volume(&db) - box_volume(&both)) * sizeof(double);
    MP_ASSERT(info.bytes_received == lb && info.lower_bound_bytes == lb,
              "case %llu: received %llu bytes, lower bound %llu (plan says %llu)", (unsigned long long)g_case,
              (unsigned long long)info.bytes_received, (unsigned long long)lb,
              (unsigned long long)info.lower_bound_bytes);
  }
  MP_ASSERT(info.bytes_received == info.lower_bound_bytes, "received %llu, lower bound %llu",
            (unsigned long long)info.bytes_received, (unsigned long long)info.lower_bound_bytes);
  if (mnd == 1 && mesh[0] > 1 && !p2p_only) {
    uint32_t want = 0;
    int a = spl[0], b = dpl[0];
    if (a == P && b == R) want = XC_REDIST_STEP_ALLREDUCE;
    if (a == P && b >= S0 && b <= S2) want = XC_REDIST_STEP_REDUCE_SCATTER;
    if (a >= S0 && a <= S2 && b == R) want = XC_REDIST_STEP_ALLGATHER;
    if (a >= S0 && a <= S2 && b >= S0 && b <= S2 && a != b) want = XC_REDIST_STEP_ALLTOALL;
    MP_ASSERT(!want || (info.step_kinds & want), "%s -> %s: steps 0x%x lack the collective 0x%x", pname[a], pname[b],
              info.step_kinds, want);
    MP_ASSERT(!want || !(info.step_kinds & XC_REDIST_STEP_P2P), "%s -> %s: steps 0x%x use point-to-point", pname[a],
              pname[b], info.step_kinds);
  }
  if (p2p_only) MP_ASSERT(info.collective_steps == 0, "p2p only, yet %u collective steps", info.collective_steps);
  MP_CHECK(xc_plan_free(plan));
  MP_CHECK(xc_layout_free(src));
  MP_CHECK(xc_layout_free(dst));
  free(in);
  free(out);
  ++g_case;
}

static void all_pairs(const size_t *shape, const int *mesh, int mnd) {
  int npairs = 1;
  for (int k = 0; k < 2 * mnd; ++k) npairs *= NPL;
  for (int x = 0; x < npairs; ++x) {
    int spl[4], dpl[4], v = x;
    for (int k = 0; k < mnd; ++k) spl[k] = v % NPL, v /= NPL;
    for (int k = 0; k < mnd; ++k) dpl[k] = v % NPL, v /= NPL;
    one_pair(shape, 3, mesh, mnd, spl, dpl, 0);
    if (mnd == 1) one_pair(shape, 3, mesh, mnd, spl, dpl, 1);  /* 2-D: the 1-D runs cover the path, keep it short */
  }
}

int main(void) {
  r_init();
  size_t a[3] = {5, 7, 3}, b[3] = {7, 2, 9};
  int line[1] = {r_size};
  all_pairs(a, line, 1);
  all_pairs(b, line, 1);
  if (r_size == 4) {
    int sq[2] = {2, 2};
    all_pairs(a, sq, 2);
  }
  if (r_size == 6) {
    int rect[2] = {2, 3};
    all_pairs(a, rect, 2);
  }
  r_finish("redist_mesh");
  return 0;
}
