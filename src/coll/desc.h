// One collective call, described: what the API layer validated and hands
// down, what the selector decides on and what an algorithm executes. Counts
// are elements of dtype. The v-op arrays view the caller's while a blocking
// call runs; an op that outlives its call copies them (own_arrays), so the
// user's arrays need only live for the duration of the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xcomm.h"

namespace xc {

enum class CollKind : uint8_t {
  kBarrier,
  kBroadcast,
  kReduce,
  kAllreduce,
  kAllgather,
  kAllgatherv,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kReduceScatter,
  kReduceScatterv,
  kAlltoall,
  kAlltoallv,
  kScan,
  kExscan,
};
constexpr int kCollKindCount = 16;

// "allreduce", ... (the API name without xc_). Inline: the flight recorder
// names every op it records.
inline const char *coll_kind_name(CollKind kind) {
  switch (kind) {
    case CollKind::kBarrier: return "barrier";
    case CollKind::kBroadcast: return "broadcast";
    case CollKind::kReduce: return "reduce";
    case CollKind::kAllreduce: return "allreduce";
    case CollKind::kAllgather: return "allgather";
    case CollKind::kAllgatherv: return "allgatherv";
    case CollKind::kGather: return "gather";
    case CollKind::kGatherv: return "gatherv";
    case CollKind::kScatter: return "scatter";
    case CollKind::kScatterv: return "scatterv";
    case CollKind::kReduceScatter: return "reduce_scatter";
    case CollKind::kReduceScatterv: return "reduce_scatterv";
    case CollKind::kAlltoall: return "alltoall";
    case CollKind::kAlltoallv: return "alltoallv";
    case CollKind::kScan: return "scan";
    case CollKind::kExscan: return "exscan";
  }
  return "?";
}

// True for the ops that take a reduction op.
bool coll_kind_reduces(CollKind kind);
// gatherv, scatterv, alltoallv: not every rank knows the sizes (only the
// root, or each rank its own), so no size-based choice is alike everywhere.
inline bool sizes_rank_local(CollKind kind) {
  return kind == CollKind::kGatherv || kind == CollKind::kScatterv || kind == CollKind::kAlltoallv;
}

// A per-rank count or displacement array: a view of the caller's array, or
// (after own(), or when filled here) its own copy. Copies of a view view the
// same array; copies of an owner own a copy.
class CountArray {
 public:
  CountArray() = default;
  CountArray(const std::vector<size_t> &v) : own_(v), p_(own_.data()), n_(own_.size()) {}  // NOLINT: like a vector
  CountArray(const CountArray &o) { *this = o; }
  CountArray(CountArray &&o) noexcept = default;  // a moved vector keeps its buffer, so p_ stays valid
  CountArray &operator=(const CountArray &o) {
    if (this == &o) return *this;
    if (o.owns()) {
      own_ = o.own_;
      p_ = own_.data();
    } else {
      own_.clear();
      p_ = o.p_;
    }
    n_ = o.n_;
    return *this;
  }
  CountArray &operator=(CountArray &&o) noexcept = default;

  void view(const size_t *p, size_t n) {
    own_.clear();
    p_ = p;
    n_ = n;
  }
  // Copy what is viewed (nothing to do when already owned).
  void own() {
    if (owns() || n_ == 0) return;
    own_.assign(p_, p_ + n_);
    p_ = own_.data();
  }
  bool owns() const { return !own_.empty() && p_ == own_.data(); }

  // Filling one here (tests, internal ops): always owned.
  void assign(size_t n, size_t v) {
    own_.assign(n, v);
    sync();
  }
  void push_back(size_t v) {
    own();
    own_.push_back(v);
    sync();
  }
  void clear() { view(nullptr, 0); }

  size_t operator[](size_t i) const { return p_[i]; }
  const size_t *data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const size_t *begin() const { return p_; }
  const size_t *end() const { return p_ + n_; }
  size_t total() const {
    size_t s = 0;
    for (size_t x : *this) s += x;
    return s;
  }
  size_t largest() const {
    size_t m = 0;
    for (size_t x : *this) m = x > m ? x : m;
    return m;
  }

 private:
  void sync() {
    p_ = own_.data();
    n_ = own_.size();
  }
  std::vector<size_t> own_;
  const size_t *p_ = nullptr;
  size_t n_ = 0;
};

// Where an op's buffers live. The selector and the algorithm table weigh it
// (algo/table.h: which algorithms move which kind); every op is host memory
// until the API recognises device pointers.
enum class MemKind : uint8_t { kHost, kDevice };
constexpr int kMemKindCount = 2;
const char *mem_kind_name(MemKind kind);  // "host", "device"

struct CollDesc {
  CollKind kind = CollKind::kBarrier;
  MemKind memory = MemKind::kHost;
  // sendbuf is never XC_IN_PLACE here: in_place says so and sendbuf is then
  // nullptr (the input lives in recvbuf, as the header describes per op).
  const void *sendbuf = nullptr;
  void *recvbuf = nullptr;
  bool in_place = false;
  // broadcast/reduce/allreduce/scan/exscan: elements per rank;
  // allgather/gather: sendcount; scatter/reduce_scatter: recvcount;
  // alltoall: count per peer; allgatherv/gatherv: this rank's sendcount;
  // scatterv: this rank's recvcount.
  size_t count = 0;
  // v-ops, one entry per rank (empty where the op or this rank has none):
  // gatherv/allgatherv: recvcounts + rdispls; scatterv: sendcounts + sdispls;
  // reduce_scatterv: recvcounts; alltoallv: all four.
  CountArray sendcounts, sdispls, recvcounts, rdispls;
  xc_dtype_t dtype = XC_UINT8;
  xc_op_t op = XC_SUM;
  int root = 0;

  // Before the op outlives its call (non-blocking, grouped): copy the arrays.
  void own_arrays() {
    sendcounts.own();
    sdispls.own();
    recvcounts.own();
    rdispls.own();
  }
};

// The bytes the selector decides on, equal on every rank of the op: what one
// rank contributes (broadcast/reduce/allreduce/scan: the vector; allgather/
// gather: one block; scatter/reduce_scatter/alltoall: all n blocks;
// allgatherv: the largest block; reduce_scatterv: the whole input), which is
// also what one-shot stages. 0 for gatherv, scatterv and alltoallv, whose
// sizes only some ranks know: they are chosen by size-free rules (under
// one-shot each rank stages or publishes its own part).
size_t selection_bytes(const CollDesc &d, int nranks);

// Rank j's block of what this rank receives in allgather(v), gather(v) and
// alltoall(v), in elements: the v-ops read rdispls and recvcounts, the
// others have blocks of count at j * count.
inline bool recv_blocks_vary(CollKind k) {
  return k == CollKind::kAllgatherv || k == CollKind::kGatherv || k == CollKind::kAlltoallv;
}
inline size_t recv_block_displ(const CollDesc &d, int j) {
  return recv_blocks_vary(d.kind) ? d.rdispls[static_cast<size_t>(j)] : static_cast<size_t>(j) * d.count;
}
inline size_t recv_block_count(const CollDesc &d, int j) {
  return recv_blocks_vary(d.kind) ? d.recvcounts[static_cast<size_t>(j)] : d.count;
}

// What every rank of one collective must agree on, packed in 32 bits so it
// can ride along with the op's messages and shared-memory flags: kind (4
// bits), dtype (4), op (3), root mod 512 (9), count mod 4096 (12; 0 for the
// v-ops, whose counts differ by rank). Never 0, so 0 means "none". Ops with
// no root whose placement every rank must share (placement_agrees) carry
// XC_IN_PLACE in the root's lowest bit instead: their algorithm depends on it.
uint32_t coll_signature(const CollDesc &d);
// A signature no op has (dtype bits 15: no such dtype). A shared-memory rank
// that gave up an op publishes it in its arrival record, so the ranks that
// wait for its part fail at once instead of at the deadline.
constexpr uint32_t kSigGaveUp = (1u << 31) | (0xfu << 4);
// xc_comm_free's closing barrier and the exchange of xc_comm_split, _dup
// and _split_groups: more signatures no op has, so a rank that frees or
// splits the communicator while a peer runs an op (or a barrier) is told
// apart at once.
constexpr uint32_t kSigCommFree = (1u << 30) | (0xfu << 4);
constexpr uint32_t kSigCommSplit = (1u << 29) | (0xfu << 4);
constexpr uint32_t kSigCommGrow = (1u << 28) | (0xfu << 4);  // xc_comm_grow's exchange of the id
// allreduce, allgather(v), alltoall(v): XC_IN_PLACE at every rank or at
// none, as MPI asks (the selector weighs it for the first three, and
// in-place alltoall(v) trades blocks in pairs, so a mix would not match).
bool placement_agrees(CollKind kind);
// For mismatch messages. "allreduce float32 sum out of place": what a
// signature says for certain (it keeps only part of the count and root, so
// it names neither).
std::string describe_signature(uint32_t sig);
// What sets another rank's call apart from this rank's, in words: "counts
// differ", "datatypes differ and counts differ", "different collectives".
std::string describe_signature_difference(uint32_t mine, uint32_t theirs);
// This rank's own call in full: "allreduce float32 sum out of place with
// count 100", "bcast uint8 with count 4, root 1".
std::string describe_call(const CollDesc &d);

}  // namespace xc
