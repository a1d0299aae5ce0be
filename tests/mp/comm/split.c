/* xc_comm_split and xc_comm_dup: many color/key shapes on the world (parity
   with ascending and descending keys, pairs, one color, one color per rank,
   XC_UNDEFINED ranks, ties and extreme keys), nested splits down to a
   great-grandchild, a child that outlives its parent, dups of the world and
   of children and their isolation from the original. Every child is checked
   against the membership computed locally from the colors and keys: size,
   rank, local rank/size, an allgather of parent and world ranks in child-rank
   order, P2P rings, allreduce, broadcast and barrier. */
#include <limits.h>

#include "comm_util.h"

enum { NSHAPES = 11 };
static const char *const shape_names[NSHAPES] = {
    "color=r%2 key=r",        "color=r%2 key=-r",          "color=r/2 key=r",
    "one color key=0",        "own color key=0",           "r%3==1 undefined, key=-r",
    "all XC_UNDEFINED",       "one color key=r%2 (ties)",  "extreme colors and keys",
    "rank 0 undefined",       "color=r%3 key=(r*7)%5",
};

static void shape(int s, int p, int n, int *color, int *key) {
  switch (s) {
    case 0: *color = p % 2; *key = p; break;
    case 1: *color = p % 2; *key = -p; break;
    case 2: *color = p / 2; *key = p; break;
    case 3: *color = 3; *key = 0; break;
    case 4: *color = 7 * p; *key = 0; break;
    case 5: *color = p % 3 == 1 ? XC_UNDEFINED : p % 3; *key = -p; break;
    case 6: *color = XC_UNDEFINED; *key = p; break;
    case 7: *color = 0; *key = p % 2; break;
    case 8: *color = p % 2 ? INT_MAX : 0; *key = p % 3 == 0 ? INT_MAX : (p % 3 == 1 ? INT_MIN : 0); break;
    case 9: *color = p == 0 ? XC_UNDEFINED : 5; *key = n - p; break;
    default: *color = p % 3; *key = (p * 7) % 5; break;
  }
}

/* Colors and keys of a shape for every rank of a parent of size n. */
static void shape_all(int s, int n, int *colors, int *keys) {
  for (int p = 0; p < n; ++p) shape(s, p, n, &colors[p], &keys[p]);
}

int main(void) {
  cu_view_t w;
  cu_init("split", &w);
  const int n = w.size;
  int colors[CU_MAXR], keys[CU_MAXR];
  char what[160];
  int salt = 1;

  cu_check(&w, salt++, "world");

  /* every shape on the world, with no config, a config from the macro, and
     one from xc_config_init carrying a name */
  for (int s = 0; s < NSHAPES; ++s) {
    shape_all(s, n, colors, keys);
    cu_view_t child;
    snprintf(what, sizeof what, "split(world, %s)", shape_names[s]);
    cu_split(&w, colors, keys, NULL, &child, salt++, what);
    cu_free(&child);

    xc_config_t cfg = XC_CONFIG_INIT;
    snprintf(what, sizeof what, "split(world, %s, XC_CONFIG_INIT)", shape_names[s]);
    cu_split(&w, colors, keys, &cfg, &child, salt++, what);
    cu_free(&child);

    MP_CHECK(xc_config_init(&cfg, sizeof cfg));
    cfg.name = "split-child";
    snprintf(what, sizeof what, "split(world, %s, named config)", shape_names[s]);
    cu_split(&w, colors, keys, &cfg, &child, salt++, what);
    cu_free(&child);
  }

  /* two splits alive at once over the same shape, then over different
     shapes: no interference, and the world still works meanwhile */
  {
    cu_view_t a, b, c;
    shape_all(0, n, colors, keys);
    cu_split(&w, colors, keys, NULL, &a, salt++, "concurrent split A (r%2)");
    cu_split(&w, colors, keys, NULL, &b, salt++, "concurrent split B (r%2)");
    shape_all(1, n, colors, keys);
    cu_split(&w, colors, keys, NULL, &c, salt++, "concurrent split C (r%2, key -r)");
    cu_isolation(&a, a.comm, b.comm, 11, "sibling splits A/B");
    cu_isolation(&a, b.comm, a.comm, 11, "sibling splits B/A");
    cu_check(&w, salt++, "world while splits are alive");
    cu_check(&a, salt++, "split A again");
    cu_check(&c, salt++, "split C again");
    cu_free(&b);
    cu_check(&a, salt++, "split A after freeing B");
    cu_free(&c);
    cu_free(&a);
  }

  /* nesting: A = split(world, r%2, -r); B = split(A, a/2, a);
     C = split(B, 0, -b); D = split(C, even c undefined, c) */
  {
    cu_view_t a, b, c, d;
    shape_all(1, n, colors, keys);
    cu_split(&w, colors, keys, NULL, &a, salt++, "nested A = split(world, r%2, -r)");
    shape_all(2, a.size, colors, keys);
    cu_split(&a, colors, keys, NULL, &b, salt++, "nested B = split(A, a/2, a)");
    for (int p = 0; p < b.size; ++p) {
      colors[p] = 0;
      keys[p] = -p;
    }
    cu_split(&b, colors, keys, NULL, &c, salt++, "nested C = split(B, 0, -b)");
    for (int p = 0; p < c.size; ++p) {
      colors[p] = p % 2 == 0 ? XC_UNDEFINED : 1;
      keys[p] = p;
    }
    cu_split(&c, colors, keys, NULL, &d, salt++, "nested D = split(C, odd c only)");
    /* the parents still work after making children */
    cu_check(&a, salt++, "nested A after its descendants");
    cu_check(&b, salt++, "nested B after its descendants");
    /* a child outlives its parent and grandparent */
    cu_free(&a);
    cu_free(&b);
    cu_check(&c, salt++, "nested C after freeing A and B");
    /* D exists on some ranks only: a fixed salt keeps the others' in step */
    if (d.comm) cu_check(&d, 999, "nested D after freeing A and B");
    /* split a child of a child again with every shape */
    for (int s = 0; s < NSHAPES; ++s) {
      cu_view_t e;
      shape_all(s, c.size, colors, keys);
      snprintf(what, sizeof what, "split(C, %s)", shape_names[s]);
      cu_split(&c, colors, keys, NULL, &e, 1000 + s, what);
      cu_free(&e);
    }
    cu_free(&d);
    cu_free(&c);
  }

  /* dup: of the world and of a child; same tag on the original and the dup,
     received in the opposite order; splits and dups of dups */
  {
    cu_view_t d = w, d2, child, cd, sc;
    MP_CHECK(xc_comm_dup(w.comm, &d.comm));
    MP_ASSERT(d.comm != NULL && d.comm != w.comm, "dup returned %p for world %p", (void *)d.comm, (void *)w.comm);
    cu_check(&d, salt++, "dup(world)");
    cu_isolation(&w, w.comm, d.comm, 5, "world/dup(world)");
    cu_isolation(&w, d.comm, w.comm, 5, "dup(world)/world");
    d2 = d;
    MP_CHECK(xc_comm_dup(d.comm, &d2.comm));
    cu_check(&d2, salt++, "dup(dup(world))");
    cu_isolation(&w, d.comm, d2.comm, 5, "dup/dup(dup)");

    shape_all(1, n, colors, keys);
    cu_split(&d, colors, keys, NULL, &child, salt++, "split(dup(world), r%2, -r)");
    cd = child;
    MP_CHECK(xc_comm_dup(child.comm, &cd.comm));
    for (int i = 0; i < cd.size; ++i) cd.parent[i] = i; /* the dup's parent is the child */
    cu_check(&cd, salt++, "dup(child)");
    cu_isolation(&cd, child.comm, cd.comm, 0, "child/dup(child)");
    /* split of a dup of a child: reverse it */
    for (int p = 0; p < cd.size; ++p) {
      colors[p] = 4;
      keys[p] = -p;
    }
    cu_split(&cd, colors, keys, NULL, &sc, salt++, "split(dup(child), 4, -r)");
    /* freeing the dup leaves the original intact, and vice versa */
    cu_free(&cd);
    cu_check(&child, salt++, "child after freeing its dup");
    cu_check(&sc, salt++, "split of a freed dup");
    cu_free(&d);
    cu_check(&d2, salt++, "dup(dup(world)) after freeing dup(world)");
    cu_check(&child, salt++, "child after freeing its parent dup");
    cu_free(&sc);
    cu_free(&child);
    cu_free(&d2);
  }

  /* NULL is a no-op success and clears the last error */
  MP_CHECK(xc_comm_free(NULL));
  MP_ASSERT(xc_last_error()[0] == '\0', "xc_comm_free(NULL) left '%s'", xc_last_error());

  cu_check(&w, salt++, "world at the end");
  MP_CHECK(xc_comm_free(w.comm));
  if (mp_rank == 0) printf("split: OK\n");
  return 0;
}
