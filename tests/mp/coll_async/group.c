/* Groups: a batch of large sends and receives that deadlocks without a group
   (every rank sends 4 MiB to every other rank before receiving) completes
   inside one; collectives and point-to-point mixed in one group, listed in a
   different order on different ranks; nesting; waiting inside a group and
   ending a group never started are usage errors; a failing op is named by
   xc_group_end. */
#include <stdlib.h>

#include "async_util.h"

static const size_t kBig = (size_t)4 << 20; /* bytes, far above the eager limit */

static void fill_msg(unsigned char *p, size_t n, int from, int to) { mp_fill(p, n, mp_seed(), (uint64_t)from, (uint64_t)to); }

static void all_to_all_sends_first(xc_comm_t world) {
  int n = a_size;
  unsigned char *out = malloc(kBig * (size_t)n), *in = malloc(kBig * (size_t)n);
  xc_status_t *st = calloc((size_t)n, sizeof(xc_status_t));
  for (int p = 0; p < n; ++p) fill_msg(out + kBig * (size_t)p, kBig, a_rank, p);
  memset(in, 0, kBig * (size_t)n);
  MP_CHECK(xc_group_start());
  for (int k = 1; k < n; ++k) {
    int p = (a_rank + k) % n;
    MP_CHECK(xc_send(out + kBig * (size_t)p, kBig, XC_UINT8, p, 5, world));
  }
  for (int k = 1; k < n; ++k) {
    int p = (a_rank - k + n) % n;
    MP_CHECK(xc_recv(in + kBig * (size_t)p, kBig, XC_UINT8, p, 5, world, &st[p]));
  }
  MP_CHECK(xc_group_end());
  unsigned char *want = malloc(kBig);
  for (int p = 0; p < n; ++p) {
    if (p == a_rank) continue;
    MP_ASSERT(st[p].source == p && st[p].tag == 5 && st[p].error == 0 && st[p].bytes == kBig,
              "status of the receive from %d: {%d, %d, %d, %zu}", p, st[p].source, st[p].tag, st[p].error, st[p].bytes);
    fill_msg(want, kBig, p, a_rank);
    MP_ASSERT(memcmp(in + kBig * (size_t)p, want, kBig) == 0, "4 MiB message from rank %d differs", p);
  }
  free(want);
  free(st);
  free(in);
  free(out);
}

/* The same exchange with xc_sendrecv and non-blocking calls, receives listed first on odd ranks. */
static void mixed_p2p_forms(xc_comm_t world) {
  int n = a_size, right = (a_rank + 1) % n, left = (a_rank - 1 + n) % n;
  size_t bytes = kBig / 2;
  unsigned char *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *d = malloc(bytes), *w = malloc(bytes);
  fill_msg(a, bytes, a_rank, 1000 + right);
  fill_msg(c, bytes, a_rank, 2000 + left);
  xc_request_t req[2];
  xc_status_t st;
  MP_CHECK(xc_group_start());
  if (a_rank % 2) MP_CHECK(xc_irecv(d, bytes, XC_UINT8, right, 8, world, &req[1]));
  MP_CHECK(xc_sendrecv(a, bytes, right, 7, b, bytes, left, 7, XC_UINT8, world, &st));
  MP_CHECK(xc_isend(c, bytes, XC_UINT8, left, 8, world, &req[0]));
  if (a_rank % 2 == 0) MP_CHECK(xc_irecv(d, bytes, XC_UINT8, right, 8, world, &req[1]));
  MP_CHECK(xc_group_end());
  MP_CHECK(xc_waitall(2, req, NULL)); /* already complete: just freed */
  MP_ASSERT(st.source == left && st.bytes == bytes, "sendrecv status {%d, %zu}", st.source, st.bytes);
  fill_msg(w, bytes, left, 1000 + a_rank);
  MP_ASSERT(memcmp(b, w, bytes) == 0, "sendrecv data from %d differs", left);
  fill_msg(w, bytes, right, 2000 + a_rank);
  MP_ASSERT(memcmp(d, w, bytes) == 0, "irecv data from %d differs", right);
  free(a);
  free(b);
  free(c);
  free(d);
  free(w);
}

/* Collectives (blocking and not) and large messages in one group. Each
   communicator's collectives are listed in the same order everywhere; the
   point-to-point calls move around them by rank. */
static void collectives_and_p2p(xc_comm_t world, xc_comm_t dup, int t) {
  int n = a_size, right = (a_rank + 1) % n, left = (a_rank - 1 + n) % n;
  size_t count = 50000;
  int32_t *sum = malloc(count * sizeof(int32_t)), *bc = malloc(count * sizeof(int32_t));
  size_t bytes = kBig;
  unsigned char *out = malloc(bytes), *in = malloc(bytes), *want = malloc(bytes);
  for (size_t i = 0; i < count; ++i) {
    sum[i] = aval(t, a_rank, i);
    bc[i] = a_rank == 0 ? aval(t + 1, 0, i) : 0;
  }
  fill_msg(out, bytes, a_rank, 3000 + t);
  xc_request_t breq;
  MP_CHECK(xc_group_start());
  if (a_rank % 2 == 0) MP_CHECK(xc_send(out, bytes, XC_UINT8, right, 9, world));
  if (a_rank % 3 == 0) MP_CHECK(xc_recv(in, bytes, XC_UINT8, left, 9, world, NULL));
  MP_CHECK(xc_allreduce(XC_IN_PLACE, sum, count, XC_INT32, XC_SUM, world));
  MP_CHECK(xc_group_start()); /* nested: only the outermost end waits */
  MP_CHECK(xc_ibroadcast(bc, count, XC_INT32, 0, dup, &breq));
  if (a_rank % 2 == 1) MP_CHECK(xc_send(out, bytes, XC_UINT8, right, 9, world));
  MP_CHECK(xc_group_end());
  MP_CHECK(xc_barrier(world));
  if (a_rank % 3 != 0) MP_CHECK(xc_recv(in, bytes, XC_UINT8, left, 9, world, NULL));
  MP_CHECK(xc_group_end());
  int done = 0;
  MP_CHECK(xc_test(&breq, &done, NULL));
  MP_ASSERT(done == 1, "the group's broadcast is not complete after xc_group_end");
  for (size_t i = 0; i < count; ++i) {
    int32_t s = 0;
    for (int r = 0; r < n; ++r) s += aval(t, r, i);
    MP_ASSERT(sum[i] == s, "grouped allreduce[%zu] = %d, want %d", i, sum[i], s);
    MP_ASSERT(bc[i] == aval(t + 1, 0, i), "grouped broadcast[%zu] = %d", i, bc[i]);
  }
  fill_msg(want, bytes, left, 3000 + t);
  MP_ASSERT(memcmp(in, want, bytes) == 0, "grouped message from %d differs", left);
  free(sum);
  free(bc);
  free(out);
  free(in);
  free(want);
}

static void usage_errors(xc_comm_t world) {
  MP_EXPECT_ERR(xc_group_end(), XC_ERR_INVALID_USAGE);
  char src[100], dst[10];
  xc_request_t req;
  int done = 0;
  memset(src, 7, sizeof src);
  MP_CHECK(xc_group_start());
  MP_CHECK(xc_irecv(dst, 1, XC_UINT8, a_rank, 3, world, &req));
  MP_EXPECT_ERR(xc_wait(&req, NULL), XC_ERR_INVALID_USAGE);
  MP_EXPECT_ERR(xc_test(&req, &done, NULL), XC_ERR_INVALID_USAGE);
  MP_EXPECT_ERR(xc_waitall(1, &req, NULL), XC_ERR_INVALID_USAGE);
  MP_ASSERT(req != NULL, "a refused wait freed the request");
  MP_CHECK(xc_send(src, 1, XC_UINT8, a_rank, 3, world));
  MP_CHECK(xc_group_end());
  MP_CHECK(xc_wait(&req, NULL));
  /* A failing op in a batch: xc_group_end returns its error and names it. */
  MP_CHECK(xc_group_start());
  MP_CHECK(xc_send(src, sizeof src, XC_UINT8, a_rank, 4, world));
  MP_CHECK(xc_recv(dst, sizeof dst, XC_UINT8, a_rank, 4, world, NULL));
  MP_EXPECT_ERR(xc_group_end(), XC_ERR_TRUNCATED);
  MP_ASSERT(strstr(xc_last_error(), "xc_recv") != NULL, "the group's error does not name the op: %s", xc_last_error());
  MP_EXPECT_ERR(xc_group_end(), XC_ERR_INVALID_USAGE); /* the group is closed */
}

int main(int argc, char **argv) {
  xc_comm_t world, dup;
  a_init(argc, argv, &world);
  MP_CHECK(xc_comm_dup(world, &dup));
  all_to_all_sends_first(world);
  mixed_p2p_forms(world);
  for (int t = 0; t < 3; ++t) collectives_and_p2p(world, dup, t * 10);
  usage_errors(world);
  MP_CHECK(xc_comm_free(dup));
  MP_CHECK(xc_comm_free(world));
  if (a_rank == 0) printf("coll_async group: %d ranks ok\n", a_size);
  return 0;
}
