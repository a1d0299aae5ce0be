// Two-shot: reductions staged through the segment in pipeline steps, no
// CMA needed. In step k every rank copies piece j of chunk k of each block
// j != its own into its staging buffer (k's parity), rank j reduces piece j
// across all ranks in rank order (its own input read in place) into its
// buffer and its output, and the owners' results are copied out. Large
// out-of-place outputs are written with streaming stores. A buffer is
// refilled only when every peer has finished the step two back, which last
// read it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/shm/backend.h"
#include "coll/shm/reduce.h"
#include "coll/shm/state.h"
#include "coll/shm/steps.h"
#include "base/dtype.h"
#include "cpu/copy.h"

namespace xc::coll {

Status shm_twoshot(CollContext &c, const CollDesc &d, bool may_single_copy) {
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
  thread_local std::vector<size_t> boff, blen;  // ShmState::scratch says why per thread
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
  // Outputs stream when large and out of place; in place their lines are in
  // cache already (read when staged), where streaming stores are slow.
  size_t stream_total = d.in_place ? 0 : first * es;

  uint64_t s;
  bool single_copy = false;
  XC_TRY(shm_pipeline_start(c, d, st, may_single_copy, &s, &single_copy));
  if (single_copy) return shm_single_copy_arrived(c, d, st, s);

  bool copy_out = d.kind == CollKind::kAllreduce || (d.kind == CollKind::kReduce && r == d.root);
  int avg_n = d.op == XC_AVG ? n : 0;
  auto piece_len = [&](int j, uint64_t k) { return shm_steps_chunk(blen[static_cast<size_t>(j)], piece, k); };
  const char *srcs_small[64];
  std::vector<const char *> srcs_many;
  const char **srcs = srcs_small;
  if (n > 64) {
    srcs_many.resize(static_cast<size_t>(n));
    srcs = srcs_many.data();
  }
  for (uint64_t k = 0; k < steps; ++k) {
    uint64_t g = st.steps + k;
    if (g >= 2) XC_TRY(st.wait_steps(c, &ShmCtrl::step_out, g - 1, "a peer to free a staging buffer"));
    char *mine = st.stage(r, g);
    for (int j = 0; j < n; ++j) {
      if (j == r) continue;  // our own piece is read where it is
      size_t len = piece_len(j, k);
      if (len) memcpy(mine + static_cast<size_t>(j) * piece * es, in + (boff[static_cast<size_t>(j)] + k * piece) * es, len * es);
    }
    st.publish_step(&ShmCtrl::step_in, g + 1);
    XC_TRY(st.wait_steps(c, &ShmCtrl::step_in, g + 1, "a peer to stage its input"));
    size_t my_len = piece_len(r, k);
    size_t at = static_cast<size_t>(r) * piece * es;
    const char *own = in + (boff[static_cast<size_t>(r)] + k * piece) * es;
    for (int j = 0; j < n; ++j) srcs[j] = j == r ? own : st.stage(j, g) + at;
    // The owner's result goes to its stage for the peers and to its output.
    char *target = scatter ? out + k * piece * es : mine + at;
    if (my_len) {
      shm_reduce_ptrs(st, target, my_len, d.dtype, d.op, n, avg_n, srcs, 0);
      if (copy_out) cpu::copy_part(out + (own - in), target, my_len * es, stream_total);
    }
    st.publish_step(&ShmCtrl::step_red, g + 1);
    if (copy_out) {
      XC_TRY(st.wait_steps(c, &ShmCtrl::step_red, g + 1, "a peer's reduced piece"));
      for (int j = 0; j < n; ++j) {
        size_t len = piece_len(j, k);
        if (len && j != r)
          cpu::copy_part(out + (boff[static_cast<size_t>(j)] + k * piece) * es,
                         st.stage(j, g) + static_cast<size_t>(j) * piece * es, len * es, stream_total);
      }
    }
    st.publish_step(&ShmCtrl::step_out, g + 1);
  }
  st.steps += steps;
  return Status::Ok();
}

}  // namespace xc::coll
