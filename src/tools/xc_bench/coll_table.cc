// xc-bench collectives: the table (coll_spec.h). Sizes and bus bandwidths
// are nccl-tests' (all_reduce_perf, all_gather_perf, ...): the size of a row
// is the largest buffer one rank holds, and busbw = algbw times
//   allreduce                          2(n-1)/n
//   allgather, reduce_scatter, alltoall, gather, scatter (and their v forms)  (n-1)/n
//   broadcast, reduce, scan, exscan    1
// The v-ops run with equal counts (the same data as their plain twins, so
// the two rows compare the cost of the general form).
#include <algorithm>

#include "coll_spec.h"

namespace xcb {

namespace {

xc_dtype_t dt(const CollArgs &a) { return a.dtype->dtype; }
xc_op_t redop(const CollArgs &a) { return static_cast<xc_op_t>(a.op); }
size_t n_of(const CollArgs &a) { return static_cast<size_t>(a.nranks); }

// ---- sizes --------------------------------------------------------------------------
void counts_same(size_t count, int, size_t *s, size_t *r) { *s = *r = count; }
// One block per rank gathered (at least one element, so the smallest rows still
// move data): the receive side holds n blocks.
void counts_gather(size_t count, int n, size_t *s, size_t *r) {
  *s = std::max<size_t>(1, count / static_cast<size_t>(n));
  *r = *s * static_cast<size_t>(n);
}
// The mirror image: the send side holds n blocks (scatter, reduce_scatter).
void counts_scatter(size_t count, int n, size_t *s, size_t *r) { counts_gather(count, n, r, s); }
// n blocks each way (alltoall).
void counts_alltoall(size_t count, int n, size_t *s, size_t *r) {
  *s = *r = std::max<size_t>(1, count / static_cast<size_t>(n)) * static_cast<size_t>(n);
}
void counts_none(size_t, int, size_t *s, size_t *r) { *s = *r = 0; }

double bus_allreduce(int n) { return 2.0 * (n - 1) / n; }
double bus_n1_n(int n) { return static_cast<double>(n - 1) / n; }
double bus_one(int) { return 1.0; }
double bus_none(int) { return 0.0; }

// ---- who has input, where it lives in place, what is checked ------------------------
bool root_only(const CollArgs &a) { return a.rank == a.root; }
size_t own_block(const CollArgs &a) { return static_cast<size_t>(a.rank) * a.send_count; }
size_t all_at_root(const CollArgs &a) { return a.rank == a.root ? a.recv_count : 0; }
// Scatter in place: the root's own block stays in sendbuf; nothing arrives.
size_t scatter_checked(const CollArgs &a) { return a.in_place && a.rank == a.root ? 0 : a.recv_count; }
size_t exscan_checked(const CollArgs &a) { return a.rank == 0 ? 0 : a.recv_count; }  // rank 0 untouched

// ---- where result element i comes from ------------------------------------------------
Source from_all_ranks(const CollArgs &a, size_t i) { return {0, a.nranks, i}; }
Source from_root(const CollArgs &a, size_t i) { return {a.root, a.root + 1, i}; }
Source from_block_owner(const CollArgs &a, size_t i) {
  int owner = static_cast<int>(i / a.send_count);
  return {owner, owner + 1, i % a.send_count};
}
Source from_root_my_block(const CollArgs &a, size_t i) {
  return {a.root, a.root + 1, static_cast<size_t>(a.rank) * a.recv_count + i};
}
Source reduced_my_block(const CollArgs &a, size_t i) {
  return {0, a.nranks, static_cast<size_t>(a.rank) * a.recv_count + i};
}
Source from_peer_block(const CollArgs &a, size_t i) {
  size_t per_peer = a.recv_count / n_of(a);
  int peer = static_cast<int>(i / per_peer);
  return {peer, peer + 1, static_cast<size_t>(a.rank) * per_peer + i % per_peer};
}
Source prefix_inclusive(const CollArgs &a, size_t i) { return {0, a.rank + 1, i}; }
Source prefix_exclusive(const CollArgs &a, size_t i) { return {0, a.rank, i}; }

// ---- the calls -----------------------------------------------------------------------
const size_t *cnt(const CollArgs &a) { return a.counts.data(); }
const size_t *dsp(const CollArgs &a) { return a.displs.data(); }
void *scatter_recv(const CollArgs &a, void *recv) { return a.in_place ? const_cast<void *>(XC_IN_PLACE) : recv; }

xc_result_t call_barrier(const CollArgs &a, const void *, void *) { return xc_barrier(a.comm); }
xc_result_t call_broadcast(const CollArgs &a, const void *, void *recv) {
  return xc_broadcast(recv, a.recv_count, dt(a), a.root, a.comm);
}
xc_result_t call_reduce(const CollArgs &a, const void *send, void *recv) {
  return xc_reduce(send, recv, a.recv_count, dt(a), redop(a), a.root, a.comm);
}
xc_result_t call_allreduce(const CollArgs &a, const void *send, void *recv) {
  return xc_allreduce(send, recv, a.recv_count, dt(a), redop(a), a.comm);
}
xc_result_t call_allgather(const CollArgs &a, const void *send, void *recv) {
  return xc_allgather(send, recv, a.send_count, dt(a), a.comm);
}
xc_result_t call_allgatherv(const CollArgs &a, const void *send, void *recv) {
  return xc_allgatherv(send, a.send_count, recv, cnt(a), dsp(a), dt(a), a.comm);
}
xc_result_t call_gather(const CollArgs &a, const void *send, void *recv) {
  return xc_gather(send, recv, a.send_count, dt(a), a.root, a.comm);
}
xc_result_t call_gatherv(const CollArgs &a, const void *send, void *recv) {
  return xc_gatherv(send, a.send_count, recv, cnt(a), dsp(a), dt(a), a.root, a.comm);
}
xc_result_t call_scatter(const CollArgs &a, const void *send, void *recv) {
  return xc_scatter(send, scatter_recv(a, recv), a.recv_count, dt(a), a.root, a.comm);
}
xc_result_t call_scatterv(const CollArgs &a, const void *send, void *recv) {
  return xc_scatterv(send, cnt(a), dsp(a), scatter_recv(a, recv), a.recv_count, dt(a), a.root, a.comm);
}
xc_result_t call_reduce_scatter(const CollArgs &a, const void *send, void *recv) {
  return xc_reduce_scatter(send, recv, a.recv_count, dt(a), redop(a), a.comm);
}
xc_result_t call_reduce_scatterv(const CollArgs &a, const void *send, void *recv) {
  return xc_reduce_scatterv(send, recv, cnt(a), dt(a), redop(a), a.comm);
}
xc_result_t call_alltoall(const CollArgs &a, const void *send, void *recv) {
  return xc_alltoall(send, recv, a.recv_count / n_of(a), dt(a), a.comm);
}
xc_result_t call_alltoallv(const CollArgs &a, const void *send, void *recv) {
  return xc_alltoallv(send, cnt(a), dsp(a), recv, cnt(a), dsp(a), dt(a), a.comm);
}
xc_result_t call_scan(const CollArgs &a, const void *send, void *recv) {
  return xc_scan(send, recv, a.recv_count, dt(a), redop(a), a.comm);
}
xc_result_t call_exscan(const CollArgs &a, const void *send, void *recv) {
  return xc_exscan(send, recv, a.recv_count, dt(a), redop(a), a.comm);
}

constexpr unsigned kBoth = kOutOfPlace | kInPlace;
constexpr unsigned kReduction = kData | kRedop | kBoth;

}  // namespace

const CollSpec kColls[] = {
    {"allreduce", "nccl-tests-style sweep of xc_allreduce (busbw = algbw * 2(n-1)/n)", kReduction, counts_same,
     bus_allreduce, nullptr, nullptr, nullptr, from_all_ranks, call_allreduce},
    {"broadcast", "xc_broadcast (one buffer: in-place columns; busbw = algbw)", kData | kRoot | kInPlace,
     counts_same, bus_one, root_only, nullptr, nullptr, from_root, call_broadcast},
    {"reduce", "xc_reduce (in place at the root; busbw = algbw)", kReduction | kRoot | kInPlaceAtRoot, counts_same,
     bus_one, nullptr, nullptr, all_at_root, from_all_ranks, call_reduce},
    {"allgather", "xc_allgather (size = bytes received; busbw = algbw * (n-1)/n)", kData | kBoth, counts_gather,
     bus_n1_n, nullptr, own_block, nullptr, from_block_owner, call_allgather},
    {"allgatherv", "xc_allgatherv, equal counts (as allgather)", kData | kBoth | kVector, counts_gather, bus_n1_n,
     nullptr, own_block, nullptr, from_block_owner, call_allgatherv},
    {"gather", "xc_gather (size = bytes at the root; busbw = algbw * (n-1)/n)",
     kData | kRoot | kBoth | kInPlaceAtRoot, counts_gather, bus_n1_n, nullptr, own_block, all_at_root,
     from_block_owner, call_gather},
    {"gatherv", "xc_gatherv, equal counts (as gather)", kData | kRoot | kBoth | kInPlaceAtRoot | kVector,
     counts_gather, bus_n1_n, nullptr, own_block, all_at_root, from_block_owner, call_gatherv},
    {"scatter", "xc_scatter (size = bytes sent by the root; busbw = algbw * (n-1)/n)",
     kData | kRoot | kBoth | kInPlaceAtRoot | kInPlaceInSend, counts_scatter, bus_n1_n, root_only, nullptr,
     scatter_checked, from_root_my_block, call_scatter},
    {"scatterv", "xc_scatterv, equal counts (as scatter)",
     kData | kRoot | kBoth | kInPlaceAtRoot | kInPlaceInSend | kVector, counts_scatter, bus_n1_n, root_only,
     nullptr, scatter_checked, from_root_my_block, call_scatterv},
    {"reduce_scatter", "xc_reduce_scatter (size = input bytes; busbw = algbw * (n-1)/n)", kReduction,
     counts_scatter, bus_n1_n, nullptr, nullptr, nullptr, reduced_my_block, call_reduce_scatter},
    {"reduce_scatterv", "xc_reduce_scatterv, equal counts (as reduce_scatter)", kReduction | kVector,
     counts_scatter, bus_n1_n, nullptr, nullptr, nullptr, reduced_my_block, call_reduce_scatterv},
    {"alltoall", "xc_alltoall (size = bytes sent by a rank; busbw = algbw * (n-1)/n)", kData | kBoth,
     counts_alltoall, bus_n1_n, nullptr, nullptr, nullptr, from_peer_block, call_alltoall},
    {"alltoallv", "xc_alltoallv, equal counts (as alltoall)", kData | kBoth | kVector, counts_alltoall, bus_n1_n,
     nullptr, nullptr, nullptr, from_peer_block, call_alltoallv},
    {"scan", "xc_scan, inclusive prefix (busbw = algbw)", kReduction, counts_same, bus_one, nullptr, nullptr,
     nullptr, prefix_inclusive, call_scan},
    {"exscan", "xc_exscan, exclusive prefix (busbw = algbw)", kReduction, counts_same, bus_one, nullptr, nullptr,
     exscan_checked, prefix_exclusive, call_exscan},
    {"barrier", "time of xc_barrier (one row, time only)", kOutOfPlace, counts_none, bus_none, nullptr, nullptr,
     nullptr, nullptr, call_barrier},
};
const size_t kNumColls = sizeof(kColls) / sizeof(kColls[0]);

}  // namespace xcb
