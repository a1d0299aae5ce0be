// Staged allgather(v): blocks move through the segment in pipeline steps,
// with no CMA. In step k every rank copies chunk k of its block into its
// staging buffer (k's parity) and, out of place, from there into its own
// output block; then it copies chunk k of every peer's block out of the
// peer's buffer. Large copies into the output stream (non-temporal stores),
// so each output byte is written once and never read, and the staging stays
// in cache. Measured against single copy (process_vm_readv, whose kernel
// copy reads every output line before writing it): docs/design.md.
// A buffer is refilled only when every peer has finished the step two back,
// which last read it.
#include <algorithm>
#include <cstring>

#include "algo/shm_coll.h"
#include "algo/shm_state.h"
#include "core/dtype.h"
#include "cpu/copy.h"

namespace xc::algo {

Status shm_staged(CollContext &c, const CollDesc &d) {
  bool v = d.kind == CollKind::kAllgatherv;
  if (d.kind != CollKind::kAllgather && !v)
    return Error(XC_ERR_UNSUPPORTED, "shm staged does not run %s", coll_kind_name(d.kind));
  XC_TRY(c.shm()->ensure(c));
  ShmState &st = *c.shm()->state();
  int n = c.size(), r = c.rank();
  size_t es = dtype_size(d.dtype);
  auto off = [&](int j) { return (v ? d.rdispls[static_cast<size_t>(j)] : static_cast<size_t>(j) * d.count) * es; };
  auto len = [&](int j) { return (v ? d.recvcounts[static_cast<size_t>(j)] : d.count) * es; };
  char *out = static_cast<char *>(d.recvbuf);
  const char *in = d.in_place ? out + off(r) : static_cast<const char *>(d.sendbuf);
  size_t longest = 0, total = 0;
  for (int j = 0; j < n; ++j) {
    longest = std::max(longest, len(j));
    total += len(j);
  }
  const size_t piece = kShmTwoShotSlotBytes;
  uint64_t steps = (longest + piece - 1) / piece;
  auto chunk = [&](int j, uint64_t k) {
    size_t at = static_cast<size_t>(k) * piece;
    return at >= len(j) ? size_t{0} : std::min(piece, len(j) - at);
  };

  uint64_t s;
  XC_TRY(st.enter(c, kShmArrivalDepth, &s));  // staging is guarded by the step counters
  st.arrive(c, s, nullptr, nullptr);
  XC_TRY(st.wait_all_arrived(c, s));  // same op everywhere, so the same step count
  for (uint64_t k = 0; k < steps; ++k) {
    uint64_t g = st.steps + k;
    size_t at = static_cast<size_t>(k) * piece;
    if (g >= 2) XC_TRY(st.wait_steps(c, &ShmCtrl::step_out, g - 1, "a peer to free a staging buffer"));
    char *mine = st.stage(r, g);
    size_t my_len = chunk(r, k);
    if (my_len) memcpy(mine, in + at, my_len);
    st.publish_step(&ShmCtrl::step_in, g + 1);
    if (my_len && !d.in_place) cpu::copy_part(out + off(r) + at, mine, my_len, total);
    XC_TRY(st.wait_steps(c, &ShmCtrl::step_in, g + 1, "a peer to stage its block"));
    for (int i = 1; i < n; ++i) {
      int j = (r + i) % n;  // start at different peers: spread the load
      size_t l = chunk(j, k);
      if (l) cpu::copy_part(out + off(j) + at, st.stage(j, g), l, total);
    }
    st.publish_step(&ShmCtrl::step_out, g + 1);
  }
  st.steps += steps;
  return Status::Ok();
}

}  // namespace xc::algo
