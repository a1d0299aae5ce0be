/* Helpers shared by the communicator tests: a "view" of a communicator (what
   every member should see: its size, this rank's rank, and for each rank the
   parent rank and the world rank it came from), the expected views of
   xc_comm_split / xc_comm_split_groups computed locally from the arguments
   every rank knows, and a check that a communicator matches its view and
   works (queries, allgather of identities, P2P rings, allreduce). */
#ifndef XCOMM_MP_COMM_UTIL_H
#define XCOMM_MP_COMM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_test.h"

#define CU_MAXR 64 /* more ranks than any test runs */

typedef struct cu_view {
  xc_comm_t comm;          /* NULL when this rank is in no group */
  int size;                /* expected size */
  int rank;                /* expected rank of this process */
  int parent[CU_MAXR];     /* parent rank of each rank */
  int world[CU_MAXR];      /* world rank of each rank */
} cu_view_t;

static uint64_t cu_seed;
static int cu_world_size = 1;

/* Common start: xc_init, the world view, the seed printed by rank 0. */
static inline void cu_init(const char *prog, cu_view_t *w) {
  MP_CHECK(xc_init(NULL, &w->comm));
  MP_CHECK(xc_comm_rank(w->comm, &mp_rank));
  MP_CHECK(xc_comm_size(w->comm, &cu_world_size));
  MP_ASSERT(cu_world_size >= 1 && cu_world_size <= CU_MAXR, "world size %d", cu_world_size);
  w->size = cu_world_size;
  w->rank = mp_rank;
  for (int i = 0; i < w->size; ++i) w->parent[i] = w->world[i] = i;
  cu_seed = mp_seed();
  if (mp_rank == 0)
    printf("%s: %d ranks, seed 0x%llx (replay with XC_TEST_SEED)\n", prog, cu_world_size,
           (unsigned long long)cu_seed);
  fflush(stdout);
}

/* The view of the child containing this rank after xc_comm_split(parent,
   colors[me], keys[me]): ranks of my color ordered by key, then parent rank.
   Returns 0 (and size 0) when my color is XC_UNDEFINED. */
static inline int cu_expect_split(const cu_view_t *parent, const int *colors, const int *keys, cu_view_t *out) {
  memset(out, 0, sizeof *out);
  int mine = colors[parent->rank];
  if (mine == XC_UNDEFINED) return 0;
  int n = 0;
  for (int p = 0; p < parent->size; ++p) {
    if (colors[p] != mine) continue;
    /* insertion keeps ties in parent-rank order (p increases) */
    int i = n;
    while (i > 0 && keys[out->parent[i - 1]] > keys[p]) {
      out->parent[i] = out->parent[i - 1];
      --i;
    }
    out->parent[i] = p;
    ++n;
  }
  out->size = n;
  for (int i = 0; i < n; ++i) {
    out->world[i] = parent->world[out->parent[i]];
    if (out->parent[i] == parent->rank) out->rank = i;
  }
  return 1;
}

/* The view of my group after xc_comm_split_groups(parent, ngroups, sizes,
   ranks): the group listing my parent rank, new rank = index in the list. */
static inline int cu_expect_groups(const cu_view_t *parent, int ngroups, const int *sizes, const int *ranks,
                            cu_view_t *out) {
  memset(out, 0, sizeof *out);
  for (int g = 0, off = 0; g < ngroups; off += sizes[g], ++g) {
    for (int i = 0; i < sizes[g]; ++i) {
      if (ranks[off + i] != parent->rank) continue;
      out->size = sizes[g];
      out->rank = i;
      for (int j = 0; j < sizes[g]; ++j) {
        out->parent[j] = ranks[off + j];
        out->world[j] = parent->world[ranks[off + j]];
      }
      return 1;
    }
  }
  return 0;
}

/* Bytes of the ring messages: small (eager) and one past the eager threshold. */
#define CU_SMALL 61u
#define CU_LARGE 20011u

/* The host of a world rank: 0 on one node; under xcrun --nnodes, node k
   holds world ranks k*XC_LOCAL_SIZE .. (k+1)*XC_LOCAL_SIZE-1. */
static inline int cu_host_of(int world_rank) {
  const char *nodes = getenv("XC_NNODES"), *per = getenv("XC_LOCAL_SIZE");
  if (!nodes || !per || atoi(per) < 1) return 0;
  return world_rank / atoi(per);
}

/* Check that v->comm matches the view and works. salt makes the messages of
   each check distinct; tags derive from it. */
static inline void cu_check(const cu_view_t *v, int salt, const char *what) {
  MP_ASSERT(v->comm != NULL, "%s: communicator is NULL", what);
  xc_comm_t c = v->comm;
  int r = -1, s = -1, lr = -1, ls = -1;
  MP_CHECK(xc_comm_size(c, &s));
  MP_CHECK(xc_comm_rank(c, &r));
  MP_CHECK(xc_comm_local_rank(c, &lr));
  MP_CHECK(xc_comm_local_size(c, &ls));
  MP_ASSERT(xc_last_error()[0] == '\0', "%s: last error not cleared: '%s'", what, xc_last_error());
  MP_ASSERT(s == v->size, "%s: size %d, expected %d", what, s, v->size);
  MP_ASSERT(r == v->rank, "%s: rank %d, expected %d", what, r, v->rank);
  /* the members on my host: all of them, unless xcrun --nnodes spread the
     world over nodes of XC_LOCAL_SIZE ranks (tests/multihost) */
  int want_ls = 0, want_lr = 0;
  for (int i = 0; i < v->size; ++i) {
    if (cu_host_of(v->world[i]) != cu_host_of(v->world[v->rank])) continue;
    if (i < v->rank) ++want_lr;
    ++want_ls;
  }
  MP_ASSERT(ls == want_ls, "%s: local_size %d, expected %d", what, ls, want_ls);
  MP_ASSERT(lr == want_lr, "%s: local_rank %d, expected %d", what, lr, want_lr);
  xc_result_t async = XC_ERR_INTERNAL;
  MP_CHECK(xc_comm_get_async_error(c, &async));
  MP_ASSERT(async == XC_SUCCESS, "%s: async error %d", what, (int)async);

  /* identities, gathered: [parent rank, world rank] per rank, in rank order */
  int32_t mine[2] = {v->parent[v->rank], v->world[v->rank]};
  int32_t all[2 * CU_MAXR];
  memset(all, 0xff, sizeof all);
  MP_CHECK(xc_allgather(mine, all, 2, XC_INT32, c));
  for (int i = 0; i < v->size; ++i)
    MP_ASSERT(all[2 * i] == v->parent[i] && all[2 * i + 1] == v->world[i],
              "%s: allgather slot %d holds parent %d world %d, expected parent %d world %d", what, i,
              (int)all[2 * i], (int)all[2 * i + 1], v->parent[i], v->world[i]);
  /* the same, in place, as int64 world ranks */
  int64_t w64[CU_MAXR];
  for (int i = 0; i < v->size; ++i) w64[i] = -1;
  w64[v->rank] = v->world[v->rank];
  MP_CHECK(xc_allgather(XC_IN_PLACE, w64, 1, XC_INT64, c));
  for (int i = 0; i < v->size; ++i)
    MP_ASSERT(w64[i] == v->world[i], "%s: in-place allgather slot %d holds %lld, expected %d", what, i,
              (long long)w64[i], v->world[i]);

  /* a P2P ring to the right with sendrecv (small and large), then to the
     left with isend/irecv + waitall; payloads keyed by (world sender, salt) */
  int right = (v->rank + 1) % v->size, left = (v->rank + v->size - 1) % v->size;
  static unsigned char sbuf[CU_LARGE], rbuf[CU_LARGE + 8], ebuf[CU_LARGE];
  const size_t lens[2] = {CU_SMALL, CU_LARGE};
  for (int k = 0; k < 2; ++k) {
    size_t n = lens[k];
    int tag = salt * 4 + k;
    mp_fill(sbuf, n, cu_seed, (uint64_t)v->world[v->rank], (uint64_t)tag);
    mp_fill(ebuf, n, cu_seed, (uint64_t)v->world[left], (uint64_t)tag);
    memset(rbuf, 0, sizeof rbuf);
    xc_status_t st;
    memset(&st, 0, sizeof st);
    MP_CHECK(xc_sendrecv(sbuf, n, right, tag, rbuf, n + 8, left, tag, XC_UINT8, c, &st));
    MP_ASSERT(st.source == left && st.tag == tag && st.bytes == n && st.error == XC_SUCCESS,
              "%s: sendrecv status source %d tag %d bytes %zu error %d, expected %d %d %zu 0", what, st.source,
              st.tag, st.bytes, st.error, left, tag, n);
    MP_ASSERT(memcmp(rbuf, ebuf, n) == 0, "%s: sendrecv of %zu bytes from rank %d: wrong data", what, n, left);
  }
  {
    int tag = salt * 4 + 2;
    size_t n = CU_SMALL + 3;
    mp_fill(sbuf, n, cu_seed, (uint64_t)v->world[v->rank], (uint64_t)tag);
    mp_fill(ebuf, n, cu_seed, (uint64_t)v->world[right], (uint64_t)tag);
    memset(rbuf, 0, sizeof rbuf);
    xc_request_t reqs[2] = {NULL, NULL};
    xc_status_t sts[2];
    MP_CHECK(xc_irecv(rbuf, n, XC_UINT8, XC_ANY_SOURCE, tag, c, &reqs[0]));
    MP_CHECK(xc_isend(sbuf, n, XC_UINT8, left, tag, c, &reqs[1]));
    MP_CHECK(xc_waitall(2, reqs, sts));
    MP_ASSERT(reqs[0] == NULL && reqs[1] == NULL, "%s: waitall left requests", what);
    MP_ASSERT(sts[0].source == right && sts[0].tag == tag && sts[0].bytes == n,
              "%s: irecv status source %d tag %d bytes %zu, expected %d %d %zu", what, sts[0].source, sts[0].tag,
              sts[0].bytes, right, tag, n);
    MP_ASSERT(memcmp(rbuf, ebuf, n) == 0, "%s: isend/irecv from rank %d: wrong data", what, right);
  }

  /* allreduce of world ranks: sum and max */
  int64_t red[2] = {v->world[v->rank], v->world[v->rank]}, esum = 0, emax = -1;
  for (int i = 0; i < v->size; ++i) {
    esum += v->world[i];
    if (v->world[i] > emax) emax = v->world[i];
  }
  int64_t out = 0;
  MP_CHECK(xc_allreduce(&red[0], &out, 1, XC_INT64, XC_SUM, c));
  MP_ASSERT(out == esum, "%s: allreduce sum %lld, expected %lld", what, (long long)out, (long long)esum);
  MP_CHECK(xc_allreduce(XC_IN_PLACE, &red[1], 1, XC_INT64, XC_MAX, c));
  MP_ASSERT(red[1] == emax, "%s: allreduce max %lld, expected %lld", what, (long long)red[1], (long long)emax);
  /* broadcast from the last rank */
  int32_t b = v->rank == v->size - 1 ? 1000 + v->world[v->rank] : -1;
  MP_CHECK(xc_broadcast(&b, 1, XC_INT32, v->size - 1, c));
  MP_ASSERT(b == 1000 + v->world[v->size - 1], "%s: broadcast got %d", what, (int)b);
  MP_CHECK(xc_barrier(c));
}

/* Split parent by colors/keys (indexed by parent rank), check the result
   against the expectation (NULL exactly when my color is XC_UNDEFINED) and
   check the child. */
static inline void cu_split(const cu_view_t *parent, const int *colors, const int *keys, const xc_config_t *cfg,
                     cu_view_t *out, int salt, const char *what) {
  int expect = cu_expect_split(parent, colors, keys, out);
  xc_comm_t child = (xc_comm_t)(uintptr_t)1; /* must be overwritten */
  MP_CHECK(xc_comm_split(parent->comm, colors[parent->rank], keys[parent->rank], cfg, &child));
  MP_ASSERT(xc_last_error()[0] == '\0', "%s: last error not cleared: '%s'", what, xc_last_error());
  if (!expect) {
    MP_ASSERT(child == NULL, "%s: color XC_UNDEFINED but *out = %p", what, (void *)child);
    out->comm = NULL;
    return;
  }
  MP_ASSERT(child != NULL && child != (xc_comm_t)(uintptr_t)1, "%s: no communicator returned", what);
  out->comm = child;
  cu_check(out, salt, what);
}

/* The same for xc_comm_split_groups. */
static inline void cu_groups(const cu_view_t *parent, int ngroups, const int *sizes, const int *ranks,
                      const xc_config_t *cfg, cu_view_t *out, int salt, const char *what) {
  int expect = cu_expect_groups(parent, ngroups, sizes, ranks, out);
  xc_comm_t child = (xc_comm_t)(uintptr_t)1;
  MP_CHECK(xc_comm_split_groups(parent->comm, ngroups, sizes, ranks, cfg, &child));
  MP_ASSERT(xc_last_error()[0] == '\0', "%s: last error not cleared: '%s'", what, xc_last_error());
  if (!expect) {
    MP_ASSERT(child == NULL, "%s: rank in no group but *out = %p", what, (void *)child);
    out->comm = NULL;
    return;
  }
  MP_ASSERT(child != NULL && child != (xc_comm_t)(uintptr_t)1, "%s: no communicator returned", what);
  out->comm = child;
  cu_check(out, salt, what);
}

/* Two communicators over the same ranks in the same order (e.g. a comm and
   its dup) must not match each other's messages: every rank sends the same
   tag to its right neighbour on a then on b, and receives from its left on b
   first, then on a. */
static inline void cu_isolation(const cu_view_t *v, xc_comm_t a, xc_comm_t b, int tag, const char *what) {
  int right = (v->rank + 1) % v->size, left = (v->rank + v->size - 1) % v->size;
  int64_t sa[3], sb[3], ra[3], rb[3];
  for (int i = 0; i < 3; ++i) {
    sa[i] = 1000000LL * v->world[v->rank] + 10 * i + 1;
    sb[i] = 1000000LL * v->world[v->rank] + 10 * i + 2;
    ra[i] = rb[i] = -1;
  }
  xc_request_t reqs[2] = {NULL, NULL};
  MP_CHECK(xc_isend(sa, 3, XC_INT64, right, tag, a, &reqs[0]));
  MP_CHECK(xc_isend(sb, 3, XC_INT64, right, tag, b, &reqs[1]));
  xc_status_t st;
  MP_CHECK(xc_recv(rb, 3, XC_INT64, left, tag, b, &st));
  MP_CHECK(xc_recv(ra, 3, XC_INT64, XC_ANY_SOURCE, XC_ANY_TAG, a, &st));
  MP_ASSERT(st.source == left && st.tag == tag, "%s: status source %d tag %d", what, st.source, st.tag);
  MP_CHECK(xc_waitall(2, reqs, NULL));
  for (int i = 0; i < 3; ++i) {
    MP_ASSERT(rb[i] == 1000000LL * v->world[left] + 10 * i + 2, "%s: second comm received %lld at %d", what,
              (long long)rb[i], i);
    MP_ASSERT(ra[i] == 1000000LL * v->world[left] + 10 * i + 1, "%s: first comm received %lld at %d", what,
              (long long)ra[i], i);
  }
}

/* Free a communicator (NULL allowed) and clear the view. */
static inline void cu_free(cu_view_t *v) {
  MP_CHECK(xc_comm_free(v->comm));
  v->comm = NULL;
}

#endif
