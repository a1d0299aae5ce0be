/* xc_comm_split_groups: halves, groups listing ranks out of order (new rank =
   index in the list), one group of every rank reversed, ranks in no group,
   one group per rank, zero groups, empty groups among others; applied to the
   world, to a child made by xc_comm_split, and to a child of a child made by
   split_groups itself; consecutive calls with the same lists give
   communicators that never match each other's messages; dups and splits of
   group communicators. Every group is checked against the membership read
   off the lists: size, rank, local rank/size, an allgather of parent and
   world ranks in group-rank order, P2P rings, allreduce, broadcast, barrier. */
#include "comm_util.h"

enum { NSHAPES = 10 };
static const char *const shape_names[NSHAPES] = {
    "halves",
    "evens descending + odds rotated",
    "one group, all reversed",
    "only r%3==0, descending",
    "one group per rank, reversed",
    "zero groups, NULL lists",
    "zero groups, non-NULL lists",
    "sizes {1,0,n-1,0}",
    "three empty groups, NULL ranks",
    "first half rotated, rest in none",
};

typedef struct shape {
  int ngroups;
  int sizes[CU_MAXR + 4];
  int ranks[CU_MAXR + 4];
  int null_lists; /* pass NULL for both lists */
  int null_ranks; /* pass NULL for ranks (every group is empty) */
} shape_t;

/* Build shape s for a parent of n ranks. */
static void make_shape(int s, int n, shape_t *sh) {
  memset(sh, 0, sizeof *sh);
  int k = 0;
  switch (s) {
    case 0:
      sh->ngroups = 2;
      sh->sizes[0] = n / 2;
      sh->sizes[1] = n - n / 2;
      for (int r = 0; r < n; ++r) sh->ranks[k++] = r;
      break;
    case 1: {
      sh->ngroups = 2;
      for (int r = (n - 1) / 2 * 2; r >= 0; r -= 2) sh->ranks[k++] = r;
      sh->sizes[0] = k;
      int odds[CU_MAXR], m = 0;
      for (int r = 1; r < n; r += 2) odds[m++] = r;
      for (int i = 0; i < m; ++i) sh->ranks[k++] = odds[(i + 1) % m];
      sh->sizes[1] = m;
      break;
    }
    case 2:
      sh->ngroups = 1;
      sh->sizes[0] = n;
      for (int r = n - 1; r >= 0; --r) sh->ranks[k++] = r;
      break;
    case 3:
      sh->ngroups = 1;
      for (int r = n - 1; r >= 0; --r)
        if (r % 3 == 0) sh->ranks[k++] = r;
      sh->sizes[0] = k;
      break;
    case 4:
      sh->ngroups = n;
      for (int g = 0; g < n; ++g) {
        sh->sizes[g] = 1;
        sh->ranks[k++] = n - 1 - g;
      }
      break;
    case 5:
      sh->ngroups = 0;
      sh->null_lists = 1;
      break;
    case 6:
      sh->ngroups = 0;
      sh->sizes[0] = n;
      for (int r = 0; r < n; ++r) sh->ranks[k++] = r;
      break;
    case 7:
      sh->ngroups = 4;
      sh->sizes[0] = 1;
      sh->sizes[1] = 0;
      sh->sizes[2] = n - 1;
      sh->sizes[3] = 0;
      sh->ranks[k++] = n - 1;
      for (int r = 0; r < n - 1; ++r) sh->ranks[k++] = r;
      break;
    case 8:
      sh->ngroups = 3;
      sh->null_ranks = 1;
      break;
    default: {
      int h = (n + 1) / 2;
      sh->ngroups = 1;
      sh->sizes[0] = h;
      for (int i = 0; i < h; ++i) sh->ranks[k++] = (i + 1) % h;
      break;
    }
  }
}

static void groups(const cu_view_t *parent, const shape_t *sh, const xc_config_t *cfg, cu_view_t *out, int salt,
                   const char *what) {
  cu_groups(parent, sh->ngroups, sh->null_lists ? NULL : sh->sizes,
            sh->null_lists || sh->null_ranks ? NULL : sh->ranks, cfg, out, salt, what);
}

/* Every shape on parent (named pname); salts start at base. */
static void all_shapes(const cu_view_t *parent, const char *pname, int base) {
  char what[160];
  for (int s = 0; s < NSHAPES; ++s) {
    shape_t sh;
    cu_view_t child;
    make_shape(s, parent->size, &sh);
    snprintf(what, sizeof what, "split_groups(%s, %s)", pname, shape_names[s]);
    groups(parent, &sh, NULL, &child, base + 2 * s, what);
    cu_free(&child);
    xc_config_t cfg = XC_CONFIG_INIT;
    cfg.name = "groups-child";
    snprintf(what, sizeof what, "split_groups(%s, %s, named config)", pname, shape_names[s]);
    groups(parent, &sh, &cfg, &child, base + 2 * s + 1, what);
    cu_free(&child);
  }
}

int main(void) {
  cu_view_t w;
  cu_init("split_groups", &w);
  const int n = w.size;
  int colors[CU_MAXR], keys[CU_MAXR];

  all_shapes(&w, "world", 100);

  /* from a child made by xc_comm_split: the world reversed */
  {
    cu_view_t rev;
    for (int p = 0; p < n; ++p) {
      colors[p] = 0;
      keys[p] = -p;
    }
    cu_split(&w, colors, keys, NULL, &rev, 1, "split(world, 0, -r)");
    all_shapes(&rev, "reversed world", 200);
    /* and from a child of it that leaves ranks out */
    cu_view_t odd;
    for (int p = 0; p < rev.size; ++p) {
      colors[p] = p % 2;
      keys[p] = p;
    }
    cu_split(&rev, colors, keys, NULL, &odd, 2, "split(reversed world, r%2, r)");
    all_shapes(&odd, "parity child of reversed world", 300);
    cu_free(&odd);
    cu_free(&rev);
  }

  /* a child of a child, both by split_groups: G = evens-desc/odds-rotated,
     H = G reversed; then every shape on H, and splits and dups of H */
  {
    shape_t sh;
    cu_view_t g, h;
    make_shape(1, n, &sh);
    groups(&w, &sh, NULL, &g, 3, "G = split_groups(world, evens descending + odds rotated)");
    make_shape(2, g.size, &sh);
    groups(&g, &sh, NULL, &h, 4, "H = split_groups(G, reversed)");
    all_shapes(&h, "H", 400);
    cu_view_t hs, hd = h;
    for (int p = 0; p < h.size; ++p) {
      colors[p] = p % 2;
      keys[p] = -p;
    }
    cu_split(&h, colors, keys, NULL, &hs, 5, "split(H, r%2, -r)");
    MP_CHECK(xc_comm_dup(h.comm, &hd.comm));
    for (int i = 0; i < hd.size; ++i) hd.parent[i] = i;
    cu_check(&hd, 6, "dup(H)");
    cu_isolation(&h, h.comm, hd.comm, 7, "H/dup(H)");
    cu_free(&g); /* H and its offspring outlive G */
    cu_check(&h, 8, "H after freeing G");
    cu_check(&hs, 9, "split(H) after freeing G");
    cu_free(&hs);
    cu_free(&hd);
    cu_free(&h);
  }

  /* consecutive calls with the same lists: siblings over the same ranks in
     the same order must not match each other's messages */
  {
    shape_t sh;
    cu_view_t a, b, c, id, d;
    make_shape(2, n, &sh);
    groups(&w, &sh, NULL, &a, 10, "A = split_groups(world, reversed)");
    groups(&w, &sh, NULL, &b, 11, "B = split_groups(world, reversed)");
    make_shape(1, n, &sh);
    groups(&w, &sh, NULL, &c, 12, "C = split_groups(world, evens descending + odds rotated)");
    cu_isolation(&a, a.comm, b.comm, 3, "siblings A/B");
    cu_isolation(&a, b.comm, a.comm, 3, "siblings B/A");
    /* the identity group against the world and a dup of the world */
    sh.ngroups = 1;
    sh.sizes[0] = n;
    for (int r = 0; r < n; ++r) sh.ranks[r] = r;
    groups(&w, &sh, NULL, &id, 13, "split_groups(world, identity)");
    d = w;
    MP_CHECK(xc_comm_dup(w.comm, &d.comm));
    cu_isolation(&w, w.comm, id.comm, 3, "world/identity group");
    cu_isolation(&w, id.comm, d.comm, 3, "identity group/dup(world)");
    cu_isolation(&w, d.comm, w.comm, 3, "dup(world)/world");
    cu_check(&a, 14, "A after its siblings");
    cu_check(&c, 15, "C after its siblings");
    cu_free(&a);
    cu_check(&b, 16, "B after freeing A");
    cu_free(&d);
    cu_free(&id);
    cu_free(&c);
    cu_free(&b);
  }

  cu_check(&w, 17, "world at the end");
  MP_CHECK(xc_comm_free(w.comm));
  if (mp_rank == 0) printf("split_groups: OK\n");
  return 0;
}
