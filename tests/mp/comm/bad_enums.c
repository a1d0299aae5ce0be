/* Out-of-range dtypes and ops from C on every entry point that takes one,
   against the api layer built with -fsanitize=enum -fno-sanitize-recover
   (src/meson.build): a C caller may pass any int, and the library must
   check it as an integer before it becomes a C++ enum, or the sanitizer
   stops the process here. Negative values lie outside the enums' range
   (0 .. 0x7FFFFFFF); 10 and 99 lie inside it but name nothing. Each call
   fails with XC_ERR_INVALID_ARGUMENT, and xc_dtype_size says 0. */
#include <limits.h>

#include "mp_test.h"

#define E_ARG(call) MP_EXPECT_ERR(call, XC_ERR_INVALID_ARGUMENT)

static const int kBad[] = {-1, INT_MIN, -100, 10, 99};

/* Every entry point with a dtype, given t (and a valid op). */
static void with_dtype(xc_comm_t w, xc_dtype_t t, int me) {
  int32_t a[8] = {0}, b[64] = {0};
  size_t counts[64], displs[64];
  xc_request_t req = NULL;
  for (int i = 0; i < 64; ++i) counts[i] = 1, displs[i] = (size_t)i;
  E_ARG(xc_send(a, 1, t, me, 0, w));
  E_ARG(xc_recv(b, 1, t, me, 0, w, NULL));
  E_ARG(xc_isend(a, 1, t, me, 0, w, &req));
  E_ARG(xc_irecv(b, 1, t, me, 0, w, &req));
  E_ARG(xc_sendrecv(a, 1, me, 0, b, 1, me, 0, t, w, NULL));
  E_ARG(xc_broadcast(a, 1, t, 0, w));
  E_ARG(xc_ibroadcast(a, 1, t, 0, w, &req));
  E_ARG(xc_reduce(a, b, 1, t, XC_SUM, 0, w));
  E_ARG(xc_allreduce(a, b, 1, t, XC_SUM, w));
  E_ARG(xc_iallreduce(a, b, 1, t, XC_SUM, w, &req));
  E_ARG(xc_scan(a, b, 1, t, XC_SUM, w));
  E_ARG(xc_exscan(a, b, 1, t, XC_SUM, w));
  E_ARG(xc_allgather(a, b, 1, t, w));
  E_ARG(xc_allgatherv(a, 1, b, counts, displs, t, w));
  E_ARG(xc_gather(a, b, 1, t, 0, w));
  E_ARG(xc_gatherv(a, 1, b, counts, displs, t, 0, w));
  E_ARG(xc_scatter(b, a, 1, t, 0, w));
  E_ARG(xc_scatterv(b, counts, displs, a, 1, t, 0, w));
  E_ARG(xc_reduce_scatter(b, a, 1, t, XC_SUM, w));
  E_ARG(xc_reduce_scatterv(b, a, counts, t, XC_SUM, w));
  E_ARG(xc_alltoall(b, b + 32, 1, t, w));
  E_ARG(xc_alltoallv(b, counts, displs, b + 32, counts, displs, t, w));
  E_ARG(xc_ialltoallv(b, counts, displs, b + 32, counts, displs, t, w, &req));
  MP_ASSERT(req == NULL, "a failed call wrote its request");
  MP_ASSERT(xc_dtype_size(t) == 0, "xc_dtype_size(%d) = %zu", (int)t, xc_dtype_size(t));
}

/* Every reduction, given op on a valid dtype. */
static void with_op(xc_comm_t w, xc_op_t op) {
  int32_t a[8] = {0}, b[64] = {0};
  size_t counts[64];
  xc_request_t req = NULL;
  for (int i = 0; i < 64; ++i) counts[i] = 1;
  E_ARG(xc_reduce(a, b, 1, XC_INT32, op, 0, w));
  E_ARG(xc_ireduce(a, b, 1, XC_INT32, op, 0, w, &req));
  E_ARG(xc_allreduce(a, b, 1, XC_INT32, op, w));
  E_ARG(xc_allreduce(XC_IN_PLACE, b, 1, XC_FLOAT32, op, w));
  E_ARG(xc_scan(a, b, 1, XC_INT32, op, w));
  E_ARG(xc_iexscan(a, b, 1, XC_INT32, op, w, &req));
  E_ARG(xc_reduce_scatter(b, a, 1, XC_INT32, op, w));
  E_ARG(xc_ireduce_scatterv(b, a, counts, XC_INT32, op, w, &req));
  MP_ASSERT(req == NULL, "a failed call wrote its request");
}

int main(void) {
  xc_comm_t w = NULL;
  int me = 0, n = 0;
  MP_CHECK(xc_init(NULL, &w));
  MP_CHECK(xc_comm_rank(w, &me));
  MP_CHECK(xc_comm_size(w, &n));
  mp_rank = me;
  MP_ASSERT(n <= 32, "at most 32 ranks (%d)", n);
  for (size_t i = 0; i < sizeof kBad / sizeof kBad[0]; ++i) {
    xc_dtype_t t;
    xc_op_t op;
    memcpy(&t, &kBad[i], sizeof t); /* any int, as a C caller may pass it */
    memcpy(&op, &kBad[i], sizeof op);
    with_dtype(w, t, me);
    with_op(w, op);
    if (me == 0 && i == 0) printf("  xc_allreduce(op -1) -> \"%s\"\n", xc_last_error());
  }
  /* the world still works */
  int64_t x = me + 1, sum = 0;
  MP_CHECK(xc_allreduce(&x, &sum, 1, XC_INT64, XC_SUM, w));
  MP_ASSERT(sum == (int64_t)n * (n + 1) / 2, "allreduce sum %lld", (long long)sum);
  MP_CHECK(xc_comm_free(w));
  if (me == 0) printf("bad_enums: OK\n");
  return 0;
}
