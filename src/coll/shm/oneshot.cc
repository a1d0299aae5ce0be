// One-shot: each rank copies its input into its slot of this op (inline in
// the arrival record, a small slot or a large one) and publishes its arrival;
// readers take what they need straight from the
// slots. One copy in, one copy (or reduction) out, and a barrier made of the
// arrival flags alone.
#include <cstring>
#include <numeric>

#include "base/dtype.h"
#include "coll/shm/backend.h"
#include "coll/shm/reduce.h"
#include "coll/shm/state.h"
#include "cpu/reduce.h"

namespace xc::coll {

namespace {

struct OneShot {
  CollContext &c;
  const CollDesc &d;
  ShmState &st;
  uint64_t s;
  int n, r;
  size_t es;
  bool inl;    // staged in the arrival record itself (<= kShmInlineBytes)
  bool small;  // staged in the ring of small slots (<= kShmSmallSlotBytes)

  const char *input() const {
    return d.in_place ? static_cast<const char *>(d.recvbuf) : static_cast<const char *>(d.sendbuf);
  }
  char *out() const { return static_cast<char *>(d.recvbuf); }
  char *slot(int j) const { return inl ? st.inline_data(j, s) : small ? st.small_slot(j, s) : st.slot(j, s); }
  char *my_slot() const { return slot(r); }
  void stage(const void *src, size_t bytes) {
    if (bytes) memcpy(my_slot(), src, bytes);
    if (small && !inl) st.prefetch_small_slot(s, bytes);
  }
  void arrive() {
    if (inl)
      st.arrive_inline(c, s);
    else
      st.arrive(c, s, nullptr, nullptr);
  }
  int avg(int m) const { return d.op == XC_AVG ? m : 0; }
  // Wait for rank j's staging, of which we read [off, off + len).
  Status wait_staged(int j, size_t off, size_t len) {
    bool in_small = small && !inl;
    return st.wait_arrived_ahead(c, j, s, in_small ? off : 0, in_small ? len : 0);
  }

  // out = slot(0..m) reduced, at byte offset off of each slot; own, if
  // given, stands in for this rank's slot: its input, laid out as staged.
  // Reading our slot back after the peers read it misses (design.md).
  void reduce_slots(void *dst, size_t count, int m, size_t off, const char *own = nullptr) {
    ShmSources srcs(m);
    for (int j = 0; j < m; ++j) srcs[j] = own && j == r ? own : slot(j);
    shm_reduce_ptrs(st, dst, count, d.dtype, d.op, m, avg(m), srcs.data(), off);
  }

  // Ranks outnumber cores: small scan/exscan pass the prefix along
  // (relay_prefix). Only in the 64-deep ring of small slots (with the pair
  // of large ones a rank runs at most one op ahead, and the chain's latency
  // shows: 8 KiB on 4 ranks 4.2-4.8 -> 8.4-8.9 us). Not for 16-bit floats
  // or XC_AVG, whose direct reduction accumulates in float32 or divides
  // once: a relayed prefix would round at every rank.
  bool relays_prefix() const {
    return st.oversubscribed && (inl || small) && !dtype_is_half(d.dtype) && d.op != XC_AVG;
  }
  Status relay_prefix();
  Status run();
};

// Rank r reduces rank r-1's inclusive prefix (its record) with its own input
// and publishes the result for rank r+1: one peer's record read per op, not
// r of them. Ranks sharing a core run ahead of each other on the arrival
// ring, so the chain's latency hides; the bits are those of the left-to-right
// reduction.
Status OneShot::relay_prefix() {
  size_t bytes = d.count * es;
  bool ex = d.kind == CollKind::kExscan;
  if (r == 0) {
    if (n > 1) stage(input(), bytes);
    arrive();
    if (!ex && !d.in_place && bytes) memcpy(out(), input(), bytes);
    return Status::Ok();
  }
  XC_TRY(st.give_up_if(s, wait_staged(r - 1, 0, bytes)));  // rank r+1 waits for our prefix: tell it
  const char *prefix = slot(r - 1);
  if (bytes == 0) {
    arrive();
    return Status::Ok();
  }
  if (ex) {  // the inclusive prefix first: in place, out() is the input
    if (r < n - 1) cpu::reduce3(my_slot(), prefix, input(), d.count, d.dtype, d.op);
    memcpy(out(), prefix, bytes);
    if (r < n - 1 && small && !inl) st.prefetch_small_slot(s, bytes);
  } else {
    cpu::reduce3(out(), prefix, input(), d.count, d.dtype, d.op);
    if (r < n - 1) stage(out(), bytes);
  }
  arrive();
  return Status::Ok();
}

Status OneShot::run() {
  size_t bytes = d.count * es;
  switch (d.kind) {
    case CollKind::kBarrier:
      arrive();
      return st.wait_all_arrived(c, s);

    case CollKind::kBroadcast:
      if (r == d.root) stage(d.recvbuf, bytes);
      arrive();
      if (r == d.root) return Status::Ok();
      XC_TRY(wait_staged(d.root, 0, bytes));
      if (bytes) memcpy(out(), slot(d.root), bytes);
      return Status::Ok();

    case CollKind::kReduce:
      // Only the root reads the slots: it reduces its own input in place of
      // its slot. (Staging in pieces behind a counter, so the root reduces
      // piece k while the others copy piece k + 1, measured no better: 32 KiB
      // on 2 ranks 2.97 against 3.1-3.4 us with 8 KiB pieces.)
      if (r != d.root) stage(input(), bytes);
      arrive();
      if (r != d.root) return Status::Ok();
      for (int j = 0; j < n; ++j) XC_TRY(wait_staged(j, 0, bytes));
      reduce_slots(out(), d.count, n, 0, input());
      return Status::Ok();

    case CollKind::kAllreduce:
      stage(input(), bytes);
      arrive();
      XC_TRY(st.wait_all_arrived(c, s));
      reduce_slots(out(), d.count, n, 0, input());
      return Status::Ok();

    case CollKind::kScan:
    case CollKind::kExscan: {
      if (relays_prefix()) return relay_prefix();
      stage(input(), bytes);
      arrive();
      int m = d.kind == CollKind::kScan ? r + 1 : r;
      if (m == 0) return Status::Ok();  // exscan: rank 0's recvbuf stays untouched
      for (int j = 0; j < m; ++j) XC_TRY(wait_staged(j, 0, bytes));
      reduce_slots(out(), d.count, m, 0, input());
      return Status::Ok();
    }

    case CollKind::kAllgather:
    case CollKind::kAllgatherv: {
      auto off = [&](int j) { return recv_block_displ(d, j) * es; };
      auto len = [&](int j) { return recv_block_count(d, j) * es; };
      stage(d.in_place ? out() + off(r) : input(), bytes);
      arrive();
      if (!d.in_place && bytes) memcpy(out() + off(r), d.sendbuf, bytes);
      for (int j = 0; j < n; ++j) {
        if (j == r) continue;
        XC_TRY(st.wait_arrived(c, j, s));
        if (len(j)) memcpy(out() + off(j), slot(j), len(j));
      }
      return Status::Ok();
    }

    case CollKind::kGather:
      if (r != d.root) stage(d.sendbuf, bytes);
      arrive();
      if (r != d.root) return Status::Ok();
      if (!d.in_place && bytes) memcpy(out() + static_cast<size_t>(r) * bytes, d.sendbuf, bytes);
      for (int j = 0; j < n; ++j) {
        if (j == r) continue;
        XC_TRY(wait_staged(j, 0, bytes));
        if (bytes) memcpy(out() + static_cast<size_t>(j) * bytes, slot(j), bytes);
      }
      return Status::Ok();

    case CollKind::kScatter:
      if (r == d.root) stage(d.sendbuf, static_cast<size_t>(n) * bytes);
      arrive();
      if (r == d.root) {
        if (!d.in_place && bytes) memcpy(out(), static_cast<const char *>(d.sendbuf) + static_cast<size_t>(r) * bytes, bytes);
        return Status::Ok();
      }
      XC_TRY(wait_staged(d.root, static_cast<size_t>(r) * bytes, bytes));
      if (bytes) memcpy(out(), slot(d.root) + static_cast<size_t>(r) * bytes, bytes);
      return Status::Ok();

    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv: {
      bool v = d.kind == CollKind::kReduceScatterv;
      size_t total = v ? d.recvcounts.total() : static_cast<size_t>(n) * d.count;
      size_t first = v ? std::accumulate(d.recvcounts.begin(), d.recvcounts.begin() + r, size_t{0}) : static_cast<size_t>(r) * d.count;
      stage(input(), total * es);
      arrive();
      XC_TRY(st.wait_all_arrived(c, s));
      // Our input stands in for our slot unless, in place, it overlaps the output only in part.
      bool own_ok = !d.in_place || first == 0 || first >= d.count;
      reduce_slots(out(), d.count, n, first * es, own_ok ? input() : nullptr);
      return Status::Ok();
    }

    case CollKind::kAlltoall:
      stage(input(), static_cast<size_t>(n) * bytes);
      arrive();
      for (int j = 0; j < n; ++j) {
        XC_TRY(st.wait_arrived(c, j, s));
        if (bytes) memcpy(out() + static_cast<size_t>(j) * bytes, slot(j) + static_cast<size_t>(r) * bytes, bytes);
      }
      return Status::Ok();

    case CollKind::kGatherv:
    case CollKind::kScatterv:
    case CollKind::kAlltoallv: break;
  }
  return Error(XC_ERR_UNSUPPORTED, "shm one-shot does not run %s", coll_kind_name(d.kind));
}

}  // namespace

Status shm_oneshot(CollContext &c, const CollDesc &d) {
  // No rank knows every size here: each rank decides for its own part.
  if (d.kind == CollKind::kGatherv || d.kind == CollKind::kScatterv || d.kind == CollKind::kAlltoallv)
    return shm_oneshot_v(c, d);
  size_t need = shm_oneshot_bytes(d, c.size());
  if (need > kShmOneShotMaxBytes)
    return Error(XC_ERR_UNSUPPORTED, "shm one-shot cannot stage %s of %zu bytes per rank (limit %zu)",
                 coll_kind_name(d.kind), need, kShmOneShotMaxBytes);
  if (!shm_of(c)->state()) XC_TRY(shm_of(c)->ensure(c));  // normally done by run_collective already
  ShmState &st = *shm_of(c)->state();
  // need is alike on every rank (allgatherv: the largest block), so all
  // ranks agree whether the payload travels inline.
  OneShot o{c, d, st, 0, c.size(), c.rank(), dtype_size(d.dtype), need <= kShmInlineBytes, need <= kShmSmallSlotBytes};
  // How far a fast rank may run ahead depends on the ring its staging uses.
  uint64_t depth = o.inl ? kShmArrivalDepth : o.small ? kShmSmallSlotDepth : kShmSlotDepth;
  XC_TRY(st.enter(c, depth, &o.s));
  return o.run();
}

}  // namespace xc::coll
