/* Ranks that disagree about a collective (op, dtype, reduction, count, root,
   XC_IN_PLACE where every rank must share it)
   at the same step fail with XC_ERR_INVALID_USAGE instead of mixing data or
   waiting for the timeout. Run with a short XC_TIMEOUT, so a mismatch that
   goes unnoticed shows up quickly as XC_ERR_TIMEOUT. Each case runs on its
   own duplicate of the world, aborted and freed afterwards (its ranks are out
   of step). A rank that frees the communicator while its peers are still in
   an op counts as disagreeing too (its closing barrier meets their op). */
#include <stdlib.h>

#include "async_util.h"

enum Case {
  kDtype,
  kCount,
  kReduction,
  kPlacement,
  kPlacementAlltoall,
  kKind,
  kKindBig,
  kKindNonblocking,
  kAlltoallvCounts,
  kScattervCounts,
  kGathervCounts,
  kAlltoallvInPlace,
  kAlltoallvInPlaceMixed,
  kScanChain,
  kScanChainBig,
  kRoot,
  kFreeEarly,
  kFreeVsBarrier,
  kDupVsAllreduce,
  kCases
};
static const char *case_name[] = {"dtype",
                                  "count",
                                  "reduction",
                                  "allreduce in place on some ranks only",
                                  "alltoall in place on some ranks only",
                                  "allreduce vs allgather",
                                  "allreduce vs allgather (large)",
                                  "non-blocking allreduce vs broadcast",
                                  "alltoallv: the last rank sends rank 0 more than it expects (large)",
                                  "scatterv: the root (in place) sends the last rank more than it expects (large)",
                                  "gatherv: the last rank sends the root (in place) more than it expects (large)",
                                  "in-place alltoallv: the last rank's length for its pair with rank 0 is longer (large)",
                                  "in-place alltoallv: rank 0 stages its small blocks, its peers step; the last one's length for their pair is longer",
                                  "exscan at rank 1, scan elsewhere",
                                  "exscan at rank 1, scan elsewhere (large)",
                                  "root",
                                  "the last rank frees the communicator while the others run an allreduce (large)",
                                  "the last rank frees the communicator while the others run a barrier",
                                  "the last rank duplicates the communicator while the others run an allreduce"};

/* v-ops whose counts disagree between sender and receiver, large enough that
   the receiver reads the sender's buffer in place: the receiver must notice
   (it has the sender's count beside the displacement). */
enum { kBig = 100000, kChainBig = 300000 };
static size_t v_counts[64], v_displs[64], v_recv[64], v_rdispls[64];

static xc_result_t v_case(int c, xc_comm_t comm, void *buf, void *out) {
  int last = a_size - 1;
  size_t at = 0;
  for (int i = 0; i < a_size; ++i) {
    v_counts[i] = kBig + (c == kAlltoallvCounts && a_rank == last && i == 0);
    v_displs[i] = at, at += v_counts[i];
    v_recv[i] = kBig, v_rdispls[i] = (size_t)i * kBig;
  }
  if (c == kAlltoallvCounts) return xc_alltoallv(buf, v_counts, v_displs, out, v_recv, v_rdispls, XC_INT32, comm);
  if (c == kGathervCounts) { /* the sender pushes part of its block: it must check too */
    int32_t *end = (int32_t *)out + (size_t)a_size * kBig, was = *end = 0x5a5a5a5a;
    xc_result_t rc = xc_gatherv(a_rank == 0 ? XC_IN_PLACE : buf, kBig + (a_rank == last), out, v_recv, v_rdispls,
                                XC_INT32, 0, comm);
    MP_ASSERT(*end == was, "gatherv: the root's buffer was written past its end");
    return rc;
  }
  for (int i = 0; i < a_size; ++i) v_counts[i] = kBig + (i == last), v_displs[i] = (size_t)i * (kBig + 1);
  /* The root in place: it writes part of each large block into its receiver,
     but not into the one that disagrees (main checks its buffer once the
     root is done). */
  for (size_t k = 0; k < kBig; ++k) ((int32_t *)out)[k] = (int32_t)k;
  return xc_scatterv(buf, v_counts, v_displs, a_rank == 0 ? (void *)XC_IN_PLACE : out, kBig, XC_INT32, 0, comm);
}

/* In-place alltoallv: pairs trade their blocks, so a pair must agree on its
   length. Blocks of kBig elements go through the staged steps under
   one-shot-v (beyond what it stages; single copy swaps every pair): both
   ends of the pair that disagrees (the last rank's length for its pair with
   rank 0 is one longer) report it, the other pairs still trade, and the
   disagreeing blocks stay as they were. mixed: the blocks of rank 0's pairs
   are small, so rank 0 stages all it sends under one-shot-v while its peers
   step (from 3 ranks). Block p of rank r holds aval(p, r, .) before the op
   and aval(r, p, .) after it. */
static xc_result_t pair_case(xc_comm_t comm, int32_t *buf, int mixed) {
  int last = a_size - 1;
  size_t at = 0;
  for (int p = 0; p < a_size; ++p) {
    v_recv[p] = (mixed && (a_rank == 0 || p == 0) ? 100 : kBig) + (a_rank == last && p == 0);
    v_rdispls[p] = at, at += v_recv[p];
    for (size_t k = 0; k < v_recv[p]; ++k) buf[v_rdispls[p] + k] = aval(p, a_rank, k);
  }
  xc_result_t rc = xc_alltoallv(XC_IN_PLACE, NULL, NULL, buf, v_recv, v_rdispls, XC_INT32, comm);
  for (int p = 0; p < a_size; ++p) {
    int kept = (a_rank == 0 && p == last) || (a_rank == last && p == 0);
    for (size_t k = 0; k < v_recv[p]; ++k) {
      int32_t want = kept ? aval(p, a_rank, k) : aval(a_rank, p, k);
      MP_ASSERT(buf[v_rdispls[p] + k] == want, "in-place alltoallv: block %d element %zu is %d, expected %d (%s)", p,
                k, (int)buf[v_rdispls[p] + k], (int)want, kept ? "left as it was" : "from the peer");
    }
  }
  return rc;
}

static int is_pair_case(int c) { return c == kAlltoallvInPlace || c == kAlltoallvInPlaceMixed; }

static xc_result_t run_case(int c, xc_comm_t comm, void *buf, void *out) {
  int odd = a_rank == a_size - 1; /* the rank that disagrees */
  size_t n = 64;
  switch (c) {
    case kDtype: return xc_allreduce(XC_IN_PLACE, buf, n, odd ? XC_FLOAT32 : XC_INT32, XC_SUM, comm);
    case kCount: return xc_allreduce(XC_IN_PLACE, buf, odd ? n + 1 : n, XC_INT32, XC_SUM, comm);
    case kReduction: return xc_allreduce(XC_IN_PLACE, buf, n, XC_INT32, odd ? XC_MAX : XC_SUM, comm);
    case kPlacement: return xc_allreduce(odd ? buf : XC_IN_PLACE, odd ? out : buf, n, XC_INT32, XC_SUM, comm);
    case kPlacementAlltoall: return xc_alltoall(odd ? buf : XC_IN_PLACE, odd ? out : buf, n, XC_INT32, comm);
    case kKind:
      return odd ? xc_allgather(buf, out, n, XC_INT32, comm) : xc_allreduce(XC_IN_PLACE, buf, n, XC_INT32, XC_SUM, comm);
    case kKindBig: /* rendezvous messages */
      n = 100000;
      return odd ? xc_allgather(buf, out, n, XC_INT32, comm) : xc_allreduce(XC_IN_PLACE, buf, n, XC_INT32, XC_SUM, comm);
    case kKindNonblocking: {
      xc_request_t req;
      xc_result_t rc = a_rank == 0 ? xc_ibroadcast(buf, n, XC_INT32, 0, comm, &req)
                                   : xc_iallreduce(XC_IN_PLACE, buf, n, XC_INT32, XC_SUM, comm, &req);
      if (rc != XC_SUCCESS) return rc;
      return xc_wait(&req, NULL);
    }
    case kAlltoallvCounts:
    case kGathervCounts:
    case kScattervCounts: return v_case(c, comm, buf, out);
    case kAlltoallvInPlace:
    case kAlltoallvInPlaceMixed: return pair_case(comm, buf, c == kAlltoallvInPlaceMixed);
    case kScanChain:
    case kScanChainBig: /* ranks after rank 1 wait for its prefix (a chain), or read its record */
      if (c == kScanChainBig) n = kChainBig;
      return a_rank == 1 ? xc_exscan(buf, out, n, XC_INT32, XC_SUM, comm)
                         : xc_scan(buf, out, n, XC_INT32, XC_SUM, comm);
    case kFreeEarly: /* its closing barrier meets their op #1 */
      if (odd) return xc_comm_free(comm);
      return xc_allreduce(XC_IN_PLACE, buf, kBig, XC_INT32, XC_SUM, comm);
    case kFreeVsBarrier:
      return odd ? xc_comm_free(comm) : xc_barrier(comm);
    case kDupVsAllreduce: {
      xc_comm_t dup = NULL;
      if (!odd) return xc_allreduce(XC_IN_PLACE, buf, n, XC_INT32, XC_SUM, comm);
      xc_result_t rc = xc_comm_dup(comm, &dup);
      if (dup) xc_comm_free(dup); /* not expected: the dup failed */
      return rc;
    }
    default: /* the last rank names itself root, the others rank 0 */
      return xc_broadcast(buf, n, XC_INT32, odd ? a_rank : 0, comm);
  }
}

/* Ranks that only send in their own view of the op (a broadcast root) have
   nothing to compare against and may finish; so may a broadcast rank whose
   data came from the root it expected (it got what it asked for). */
static int frees_early(int c) { return (c == kFreeEarly || c == kFreeVsBarrier) && a_rank == a_size - 1; }

static int may_succeed(int c) {
  if (c == kRoot) return 1;
  if (frees_early(c)) return 1; /* xc_comm_free only warns when its closing barrier fails */
  if (c == kAlltoallvCounts) return a_rank != 0; /* only rank 0 reads the odd block */
  if (c == kScattervCounts) return a_rank != a_size - 1;
  if (c == kGathervCounts) return a_rank != 0 && a_rank != a_size - 1;
  if (is_pair_case(c)) return a_rank != 0 && a_rank != a_size - 1; /* the pairs that agree */
  if (c == kKindNonblocking) return a_rank == 0;
  if (c == kScanChain || c == kScanChainBig) return a_rank == 0; /* reads no one's prefix */
  return 0;
}

int main(int argc, char **argv) {
  xc_comm_t world;
  a_init(argc, argv, &world);
  size_t blocks = (kBig + 1) * (size_t)a_size + 1, max = blocks > kChainBig ? blocks : kChainBig;
  int32_t *buf = calloc(max, sizeof(int32_t)), *out = calloc(max, sizeof(int32_t));
  for (int c = 0; c < kCases; ++c) {
    if (a_size < 2 || (c == kRoot && a_size < 3)) break; /* no one to disagree with (root: see may_succeed) */
    xc_comm_t comm;
    MP_CHECK(xc_comm_dup(world, &comm));
    MP_CHECK(xc_barrier(comm)); /* a matched op first: the mismatch is at op #1 */
    xc_result_t rc = run_case(c, comm, buf, out);
    if (!(rc == XC_SUCCESS && may_succeed(c))) {
      MP_ASSERT(rc == XC_ERR_INVALID_USAGE, "case '%s': got %d (%s), expected XC_ERR_INVALID_USAGE", case_name[c],
                (int)rc, xc_last_error());
      MP_ASSERT(strstr(xc_last_error(), "op #1") != NULL, "case '%s': message does not name the op: %s",
                case_name[c], xc_last_error());
      /* In words: never the signature's internals (count%4096=, root%512=). */
      MP_ASSERT(strchr(xc_last_error(), '%') == NULL, "case '%s': message shows the signature's internals: %s",
                case_name[c], xc_last_error());
      /* Where a rank says what differs, it is what this case changed. */
      const char *said = strstr(xc_last_error(), "s differ");
      const char *want = c == kDtype ? "datatypes differ" : c == kCount ? "counts differ"
                         : c == kReduction ? "reductions differ" : c == kRoot ? "roots differ" : NULL;
      if (said && want)
        MP_ASSERT(strstr(xc_last_error(), want) != NULL, "case '%s': message does not say '%s': %s", case_name[c],
                  want, xc_last_error());
    }
    if (is_pair_case(c) && may_succeed(c)) /* its pairs agree */
      MP_ASSERT(rc == XC_SUCCESS, "case '%s': got %d (%s)", case_name[c], (int)rc, xc_last_error());
    if (a_rank == 0 && rc != XC_SUCCESS) printf("case '%s': %s\n", case_name[c], xc_last_error());
    if (!frees_early(c)) {
      MP_CHECK(xc_comm_abort(comm));
      MP_CHECK(xc_comm_free(comm));
    }
    if (c == kScattervCounts) { /* every rank, the root too, has left the op */
      MP_CHECK(xc_barrier(world));
      for (size_t k = 0; k < kBig && a_rank == a_size - 1; ++k)
        MP_ASSERT(out[k] == (int32_t)k, "scatterv: element %zu of the disagreeing receiver's buffer was written", k);
    }
  }
  free(buf);
  free(out);
  MP_CHECK(xc_comm_free(world));
  if (a_rank == 0) printf("coll_async mismatch: %d ranks ok\n", a_size);
  return 0;
}
