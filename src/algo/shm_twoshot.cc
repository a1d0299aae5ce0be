// Two-shot: reductions staged through the segment in pipeline steps, no
// CMA needed. In step k every rank copies piece j of chunk k of each block j
// into its staging buffer (k's parity), rank j reduces piece j across all
// ranks in rank order into its own buffer, and the owners' results are
// copied out. A buffer is refilled only when every peer has finished the
// step two back, which last read it.
#include <algorithm>
#include <cstring>

#include "algo/shm_coll.h"
#include "algo/shm_reduce.h"
#include "algo/shm_state.h"
#include "core/dtype.h"

namespace xc::algo {

namespace {

Status wait_steps(ShmState &st, CollContext &c, std::atomic<uint64_t> ShmCtrl::*flag, uint64_t at_least,
                  const char *what) {
  for (int j = 0; j < st.nranks; ++j) {
    if (j == st.rank) continue;
    std::atomic<uint64_t> &f = st.ctrl[j].*flag;
    XC_TRY(st.wait(c, what, [&] { return f.load(std::memory_order_acquire) >= at_least; }));
  }
  return Status::Ok();
}

void publish(ShmState &st, std::atomic<uint64_t> ShmCtrl::*flag, uint64_t value) {
  (st.ctrl[st.rank].*flag).store(value, std::memory_order_release);
  st.notify();
}

}  // namespace

Status shm_twoshot(CollContext &c, const CollDesc &d) {
  bool scatter = d.kind == CollKind::kReduceScatter || d.kind == CollKind::kReduceScatterv;
  if (d.kind != CollKind::kAllreduce && d.kind != CollKind::kReduce && !scatter)
    return Error(XC_ERR_UNSUPPORTED, "shm two-shot does not run %s", coll_kind_name(d.kind));
  XC_TRY(c.shm()->ensure(c));
  ShmState &st = *c.shm()->state();
  int n = c.size(), r = c.rank();
  size_t es = dtype_size(d.dtype);
  const char *in = d.in_place ? static_cast<const char *>(d.recvbuf) : static_cast<const char *>(d.sendbuf);
  char *out = static_cast<char *>(d.recvbuf);

  // Block j (owned by rank j): elements [boff[j], boff[j] + blen[j]) of the input.
  std::vector<size_t> &boff = st.block_off, &blen = st.block_len;
  boff.assign(static_cast<size_t>(n), 0);
  blen.assign(static_cast<size_t>(n), 0);
  size_t first = 0;
  for (int j = 0; j < n; ++j) {
    size_t len = d.kind == CollKind::kReduceScatterv ? d.recvcounts[static_cast<size_t>(j)]
                 : scatter                           ? d.count
                                                     : d.count * static_cast<size_t>(j + 1) / static_cast<size_t>(n) - first;
    boff[static_cast<size_t>(j)] = first;
    blen[static_cast<size_t>(j)] = len;
    first += len;
  }
  size_t piece = kShmTwoShotSlotBytes / (static_cast<size_t>(n) * es);
  if (piece == 0) return Error(XC_ERR_UNSUPPORTED, "shm two-shot: %d ranks do not fit its staging", n);
  size_t longest = *std::max_element(blen.begin(), blen.end());
  uint64_t steps = (longest + piece - 1) / piece;

  uint64_t s;
  XC_TRY(st.enter(c, kShmArrivalDepth, &s));  // staging is guarded by the step counters
  st.arrive(c, s, nullptr, nullptr);
  XC_TRY(st.wait_all_arrived(c, s));  // same op everywhere, so the same step count

  bool copy_out = d.kind == CollKind::kAllreduce || (d.kind == CollKind::kReduce && r == d.root);
  int avg_n = d.op == XC_AVG ? n : 0;
  auto piece_len = [&](int j, uint64_t k) {
    size_t b = static_cast<size_t>(k) * piece, len = blen[static_cast<size_t>(j)];
    return b >= len ? size_t{0} : std::min(piece, len - b);
  };
  const char *srcs_small[64];
  std::vector<const char *> srcs_many;
  const char **srcs = srcs_small;
  if (n > 64) {
    srcs_many.resize(static_cast<size_t>(n));
    srcs = srcs_many.data();
  }
  for (uint64_t k = 0; k < steps; ++k) {
    uint64_t g = st.steps + k;
    if (g >= 2) XC_TRY(wait_steps(st, c, &ShmCtrl::step_out, g - 1, "a peer to free a staging buffer"));
    char *mine = st.stage(r, g);
    for (int j = 0; j < n; ++j) {
      size_t len = piece_len(j, k);
      if (len) memcpy(mine + static_cast<size_t>(j) * piece * es, in + (boff[static_cast<size_t>(j)] + k * piece) * es, len * es);
    }
    publish(st, &ShmCtrl::step_in, g + 1);
    XC_TRY(wait_steps(st, c, &ShmCtrl::step_in, g + 1, "a peer to stage its input"));
    size_t my_len = piece_len(r, k);
    for (int j = 0; j < n; ++j) srcs[j] = st.stage(j, g);
    size_t at = static_cast<size_t>(r) * piece * es;
    char *target = scatter ? out + k * piece * es : mine + at;
    if (my_len) shm_reduce_ptrs(st, target, my_len, d.dtype, d.op, n, avg_n, srcs, at);
    publish(st, &ShmCtrl::step_red, g + 1);
    if (copy_out) {
      XC_TRY(wait_steps(st, c, &ShmCtrl::step_red, g + 1, "a peer's reduced piece"));
      for (int j = 0; j < n; ++j) {
        size_t len = piece_len(j, k);
        if (len)
          memcpy(out + (boff[static_cast<size_t>(j)] + k * piece) * es,
                 st.stage(j, g) + static_cast<size_t>(j) * piece * es, len * es);
      }
    }
    publish(st, &ShmCtrl::step_out, g + 1);
  }
  st.steps += steps;
  return Status::Ok();
}

}  // namespace xc::algo
