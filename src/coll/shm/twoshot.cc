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

#include "base/dtype.h"
#include "coll/shm/backend.h"
#include "coll/shm/reduce.h"
#include "coll/shm/state.h"
#include "coll/shm/steps.h"
#include "cpu/copy.h"

namespace xc::coll {

Status shm_twoshot(CollContext &c, const CollDesc &d, bool may_single_copy) {
  bool scatter = d.kind == CollKind::kReduceScatter || d.kind == CollKind::kReduceScatterv;
  if (d.kind != CollKind::kAllreduce && d.kind != CollKind::kReduce && !scatter)
    return Error(XC_ERR_UNSUPPORTED, "shm two-shot does not run %s", coll_kind_name(d.kind));
  XC_TRY(shm_of(c)->ensure(c));
  ShmState &st = *shm_of(c)->state();
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

  bool copy_out = d.kind == CollKind::kAllreduce || (d.kind == CollKind::kReduce && r == d.root);
  int avg_n = d.op == XC_AVG ? n : 0;
  auto piece_len = [&](int j, uint64_t k) { return shm_steps_chunk(blen[static_cast<size_t>(j)], piece, k); };
  // Where block j's piece of step k starts in the input and output (bytes).
  auto piece_at = [&](int j, uint64_t k) { return (boff[static_cast<size_t>(j)] + k * piece) * es; };
  ShmSources srcs(n);
  return shm_run_pipeline(
      c, d, st, may_single_copy, steps,
      [&](uint64_t k, char *mine) {
        for (int j = 0; j < n; ++j) {
          if (j == r) continue;  // our own piece is read where it is
          if (size_t len = piece_len(j, k))
            memcpy(mine + static_cast<size_t>(j) * piece * es, in + piece_at(j, k), len * es);
        }
      },
      [](uint64_t, const char *) {},
      [&](uint64_t k, int j, const char *theirs) {  // owner j's result
        if (size_t len = piece_len(j, k))
          cpu::copy_part(out + piece_at(j, k), theirs + static_cast<size_t>(j) * piece * es, len * es, stream_total);
      },
      shm_reduce_phase(
          [&](uint64_t k, char *mine, auto staged) {
            size_t my_len = piece_len(r, k);
            if (my_len == 0) return;
            size_t at = static_cast<size_t>(r) * piece * es;
            const char *own = in + piece_at(r, k);
            for (int j = 0; j < n; ++j) srcs[j] = j == r ? own : staged(j) + at;
            // The owner's result goes to its stage for the peers and to its output.
            char *target = scatter ? out + k * piece * es : mine + at;
            shm_reduce_ptrs(st, target, my_len, d.dtype, d.op, n, avg_n, srcs.data(), 0);
            if (copy_out) cpu::copy_part(out + (own - in), target, my_len * es, stream_total);
          },
          copy_out));
}

}  // namespace xc::coll
