/* xc_comm_create_group: groups made by their members alone. Shapes on the
   world and on a child of it (every rank in order and reversed, halves made
   at once by disjoint halves with one tag, evens descending, odds rotated,
   one group per rank, a group that leaves ranks out while those go on with
   their own traffic); overlapping groups created one after the other and
   all alive at once, each checked (size, rank, allgather of identities, P2P
   rings, allreduce, broadcast, barrier); groups over the same ranks with
   different tags never match each other's messages; the same ranks and tag
   while the first group lives: XC_ERR_INVALID_USAGE on every member, then
   fine once it is freed. Errors: bad lists and tags (local), a NULL output
   on one member (every member fails), members that pass different lists
   (XC_ERR_INVALID_USAGE, also on the member the odd list leaves out), and
   a member that never comes (XC_ERR_TIMEOUT at the parent's deadline). */
#include <time.h>

#include "comm_util.h"

/* The view of the group listing `list` (parent ranks) as seen from parent,
   or 0 when this rank is not in it. */
static int expect_group(const cu_view_t *parent, int n, const int *list, cu_view_t *out) {
  memset(out, 0, sizeof *out);
  int in = 0;
  for (int i = 0; i < n; ++i) {
    out->parent[i] = list[i];
    out->world[i] = parent->world[list[i]];
    if (list[i] == parent->rank) {
      out->rank = i;
      in = 1;
    }
  }
  out->size = n;
  return in;
}

/* Members make the group and check it; the others return 0 at once. */
static int group(const cu_view_t *parent, int n, const int *list, int tag, const xc_config_t *cfg, cu_view_t *out,
                 int salt, const char *what) {
  if (!expect_group(parent, n, list, out)) {
    out->comm = NULL;
    return 0;
  }
  xc_comm_t child = (xc_comm_t)(uintptr_t)1;
  MP_CHECK(xc_comm_create_group(parent->comm, n, list, tag, cfg, &child));
  MP_ASSERT(xc_last_error()[0] == '\0', "%s: last error not cleared: '%s'", what, xc_last_error());
  MP_ASSERT(child != NULL && child != (xc_comm_t)(uintptr_t)1, "%s: no communicator returned", what);
  out->comm = child;
  cu_check(out, salt, what);
  return 1;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { NSHAPES = 7 };

/* Every shape on parent; tags start at tag0 (each shape its own). */
static void all_shapes(const cu_view_t *parent, const char *pname, int tag0, int salt0) {
  const int n = parent->size, me = parent->rank;
  char what[160];
  int list[CU_MAXR];
  for (int s = 0; s < NSHAPES; ++s) {
    cu_view_t g;
    int k = 0, tag = tag0 + s;
    const char *name = "";
    switch (s) {
      case 0:
        name = "all, in order";
        for (int r = 0; r < n; ++r) list[k++] = r;
        break;
      case 1:
        name = "all, reversed";
        for (int r = n - 1; r >= 0; --r) list[k++] = r;
        break;
      case 2: /* my half: both halves are made at once, with one tag */
        name = "my half (both at once, one tag)";
        if (me < n / 2)
          for (int r = 0; r < n / 2; ++r) list[k++] = r;
        else
          for (int r = n / 2; r < n; ++r) list[k++] = r;
        break;
      case 3:
        name = "evens descending";
        for (int r = (n - 1) / 2 * 2; r >= 0; r -= 2) list[k++] = r;
        break;
      case 4: { /* odds rotated by one; the evens go on with their own ring */
        name = "odds rotated";
        int odds[CU_MAXR], m = 0;
        for (int r = 1; r < n; r += 2) odds[m++] = r;
        for (int i = 0; i < m; ++i) list[k++] = odds[(i + 1) % m];
        break;
      }
      case 5:
        name = "just me";
        list[k++] = me;
        break;
      default:
        name = "the first n-1 (the last rank is left out)";
        for (int r = 0; r < (n > 1 ? n - 1 : 1); ++r) list[k++] = r;
        break;
    }
    if (k == 0) continue; /* no odd ranks */
    snprintf(what, sizeof what, "create_group(%s, %s)", pname, name);
    int in = group(parent, k, list, tag, NULL, &g, salt0 + s, what);
    if (in) {
      cu_free(&g);
    } else if (s == 4 || s == 6) {
      /* the ranks left out go on: a ring of their own on the parent */
      int others[CU_MAXR] = {0}, m = 0, pos = 0;
      for (int r = 0; r < n; ++r) {
        int listed = 0;
        for (int i = 0; i < k; ++i) listed |= list[i] == r;
        if (!listed) {
          if (r == me) pos = m;
          others[m++] = r;
        }
      }
      int64_t out = others[pos], got = -1;
      MP_CHECK(xc_sendrecv(&out, 1, others[(pos + 1) % m], 900 + s, &got, 1, others[(pos + m - 1) % m], 900 + s,
                           XC_INT64, parent->comm, NULL));
      MP_ASSERT(got == others[(pos + m - 1) % m], "%s: left-out ring got %lld", what, (long long)got);
    }
    MP_CHECK(xc_barrier(parent->comm));
  }
}

/* Overlapping groups created one after the other and alive together. */
static void overlapping(const cu_view_t *w) {
  const int n = w->size;
  if (n < 2) return;
  int first[CU_MAXR], last[CU_MAXR], ends[2] = {n - 1, 0};
  for (int i = 0; i < n - 1; ++i) {
    first[i] = i;        /* 0 .. n-2 */
    last[i] = n - 1 - i; /* n-1 .. 1 */
  }
  cu_view_t a, b, c, d, e;
  int in_a = group(w, n - 1, first, 40, NULL, &a, 40, "overlap A = 0..n-2");
  int in_b = group(w, n - 1, last, 41, NULL, &b, 41, "overlap B = n-1..1");
  int in_c = group(w, 2, ends, 42, NULL, &c, 42, "overlap C = {n-1, 0}");
  /* the same ranks as A with another tag: its messages never meet A's */
  int in_d = group(w, n - 1, first, 43, NULL, &d, 43, "overlap D = A's ranks, another tag");
  if (in_a) cu_check(&a, 44, "A with B, C and D alive");
  if (in_b) cu_check(&b, 45, "B with A, C and D alive");
  if (in_c) cu_check(&c, 46, "C with A, B and D alive");
  if (in_a) cu_isolation(&a, a.comm, d.comm, 7, "A/D (same ranks, tags 40 and 43)");
  /* the same ranks and tag as A while A lives: refused on every member */
  if (in_a) {
    xc_comm_t dup = (xc_comm_t)(uintptr_t)1;
    MP_EXPECT_ERR(xc_comm_create_group(w->comm, n - 1, first, 40, NULL, &dup), XC_ERR_INVALID_USAGE);
    MP_ASSERT(dup == (xc_comm_t)(uintptr_t)1, "a refused create_group wrote *out");
    MP_ASSERT(strstr(xc_last_error(), "tag 40") != NULL, "message: %s", xc_last_error());
  }
  if (in_a) cu_free(&a);
  /* freed, its tag is free again */
  int in_e = group(w, n - 1, first, 40, NULL, &e, 47, "A's ranks and tag again after freeing A");
  if (in_e) cu_isolation(&e, e.comm, d.comm, 8, "A again/D");
  if (in_b) cu_free(&b);
  if (in_c) cu_free(&c);
  if (in_d) cu_free(&d);
  if (in_e) cu_free(&e);
  MP_CHECK(xc_barrier(w->comm));
}

static void errors(const cu_view_t *w) {
  const int n = w->size, me = w->rank;
  xc_comm_t out = (xc_comm_t)(uintptr_t)1;
  int all[CU_MAXR];
  for (int r = 0; r < n; ++r) all[r] = r;
  /* bad lists and tags: refused locally, nothing waits */
  MP_EXPECT_ERR(xc_comm_create_group(NULL, n, all, 0, NULL, &out), XC_ERR_INVALID_ARGUMENT);
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, 0, all, 60, NULL, &out), XC_ERR_INVALID_ARGUMENT);
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, n + 1, all, 60, NULL, &out), XC_ERR_INVALID_ARGUMENT);
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, n, NULL, 60, NULL, &out), XC_ERR_INVALID_ARGUMENT);
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, n, all, -1, NULL, &out), XC_ERR_INVALID_ARGUMENT);
  int bad[2] = {me, n};
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, 2, bad, 60, NULL, &out), XC_ERR_INVALID_ARGUMENT);
  bad[1] = -1;
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, 2, bad, 60, NULL, &out), XC_ERR_INVALID_ARGUMENT);
  bad[1] = me;
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, 2, bad, 60, NULL, &out), XC_ERR_INVALID_ARGUMENT);
  if (n > 1) MP_ASSERT(strstr(xc_last_error(), "twice") != NULL, "duplicate rank: %s", xc_last_error());
  if (n > 1) {
    int other = (me + 1) % n;
    MP_EXPECT_ERR(xc_comm_create_group(w->comm, 1, &other, 60, NULL, &out), XC_ERR_INVALID_ARGUMENT);
    MP_ASSERT(strstr(xc_last_error(), "not in ranks") != NULL, "caller not listed: %s", xc_last_error());
  }
  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.version = 99;
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, 1, &me, 61, &cfg, &out), XC_ERR_INVALID_ARGUMENT);
  MP_ASSERT(out == (xc_comm_t)(uintptr_t)1, "a failed create_group wrote *out");
  MP_CHECK(xc_barrier(w->comm));
  if (n < 2) return;

  /* rank 0 passes a NULL output: every member fails, none waits */
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, n, all, 62, NULL, me == 0 ? NULL : &out), XC_ERR_INVALID_ARGUMENT);
  if (me != 0) MP_ASSERT(strstr(xc_last_error(), "rank 0") != NULL, "NULL out on rank 0: %s", xc_last_error());
  MP_CHECK(xc_barrier(w->comm));

  /* the last rank lists the ranks in another order: every member sees a
     record unlike its own */
  int list[CU_MAXR];
  for (int r = 0; r < n; ++r) list[r] = me == n - 1 ? n - 1 - r : r;
  double t0 = now_s();
  MP_EXPECT_ERR(xc_comm_create_group(w->comm, n, list, 63, NULL, &out), XC_ERR_INVALID_USAGE);
  MP_ASSERT(strstr(xc_last_error(), "list") != NULL, "different orders: %s", xc_last_error());
  MP_CHECK(xc_barrier(w->comm));

  if (n >= 3) {
    /* rank 1 lists only {0, 1}, the others every rank: ranks 0 and 1 see
       each other's lists differ; rank 2 and up, whom rank 1's list leaves
       out, are told so by rank 0 instead of waiting for rank 1 */
    int m = me == 1 ? 2 : n;
    MP_EXPECT_ERR(xc_comm_create_group(w->comm, m, all, 64, NULL, &out), XC_ERR_INVALID_USAGE);
    MP_CHECK(xc_barrier(w->comm));
  }
  double took = now_s() - t0;
  MP_ASSERT(took < 10.0, "mismatched lists took %.1f s to fail: they should fail at once", took);

  /* a member that never comes: the parent's deadline (0.5 s here) */
  xc_comm_t quick;
  xc_config_t qcfg = XC_CONFIG_INIT;
  qcfg.timeout_ms = 500;
  MP_CHECK(xc_comm_split(w->comm, 0, me, &qcfg, &quick));
  if (me < 2) {
    int pair[2] = {0, 1};
    if (me == 0) {
      t0 = now_s();
      MP_EXPECT_ERR(xc_comm_create_group(quick, 2, pair, 65, NULL, &out), XC_ERR_TIMEOUT);
      took = now_s() - t0;
      MP_ASSERT(took >= 0.4 && took < 10.0, "timed out after %.2f s, expected 0.5", took);
      MP_ASSERT(strstr(xc_last_error(), "rank(s) 1") != NULL, "timeout names the absent rank: %s", xc_last_error());
    }
  }
  MP_CHECK(xc_barrier(w->comm)); /* so no rank frees `quick` (0.5 s deadline) long before rank 0 */
  MP_CHECK(xc_comm_free(quick));
}

int main(void) {
  cu_view_t w;
  cu_init("create_group", &w);
  const int n = w.size;

  all_shapes(&w, "world", 100, 100);
  /* from a child: the world reversed by split, so parent and world ranks differ */
  {
    cu_view_t rev;
    int colors[CU_MAXR], keys[CU_MAXR];
    for (int p = 0; p < n; ++p) {
      colors[p] = 0;
      keys[p] = -p;
    }
    cu_split(&w, colors, keys, NULL, &rev, 1, "split(world, 0, -r)");
    all_shapes(&rev, "reversed world", 100, 200); /* the same tags on another parent */
    /* a group of a group */
    cu_view_t g, gg;
    int list[CU_MAXR], k = 0;
    for (int r = 0; r < rev.size; ++r) list[k++] = (r + 1) % rev.size;
    group(&rev, k, list, 7, NULL, &g, 3, "G = create_group(reversed world, rotated)");
    int inner[CU_MAXR], m = 0;
    for (int r = g.size - 1; r >= 0; r -= 2) inner[m++] = r;
    if (group(&g, m, inner, 7, NULL, &gg, 4, "create_group(G, every other rank from the last)")) cu_free(&gg);
    cu_free(&g);
    cu_free(&rev);
  }
  {
    /* a named config */
    xc_config_t cfg = XC_CONFIG_INIT;
    cfg.name = "created-group";
    int all[CU_MAXR];
    for (int r = 0; r < n; ++r) all[r] = r;
    cu_view_t g;
    group(&w, n, all, 8, &cfg, &g, 5, "create_group(world, all, named config)");
    cu_free(&g);
  }
  overlapping(&w);
  errors(&w);

  cu_check(&w, 17, "world at the end");
  MP_CHECK(xc_comm_free(w.comm));
  if (mp_rank == 0) printf("create_group: OK\n");
  return 0;
}
