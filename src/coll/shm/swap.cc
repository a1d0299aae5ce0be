#include "coll/shm/swap.h"

#include <vector>

#include "coll/shm/scan.h"
#include "coll/shm/steps.h"
#include "cpu/copy.h"

namespace xc::coll {

int shm_swap_rounds(int n) { return n % 2 ? n : n - 1; }

// n odd: n rounds, rank r sits out when the partner is itself; n even: n-1
// rounds of the odd schedule of n-1 ranks, rank n-1 taking the place of the
// one that would sit out.
int shm_swap_partner(int n, int r, int t) {
  int m = n % 2 ? n : n - 1;  // ranks in the odd schedule
  auto mod = [m](int x) { return ((x % m) + m) % m; };
  if (r == m) return mod(t * ((m + 1) / 2));  // r with 2r = t (mod m)
  int p = mod(t - r);
  return p == r && m != n ? m : p;
}

namespace {

Status trade(CollContext &c, ShmState &st, const ShmSwap &w) {
  constexpr size_t kChunk = kShmSwapChunkBytes;
  thread_local std::vector<char> bounces;  // ShmState::scratch says why per thread
  if (bounces.size() < 2 * kChunk) bounces.resize(2 * kChunk);
  char *bounce[2] = {bounces.data(), bounces.data() + kChunk};
  uint64_t base = static_cast<uint64_t>(w.round + 1) << 32;
  size_t chunks = (w.len + kChunk - 1) / kChunk;
  auto piece = [&](size_t k) { return shm_steps_chunk(w.len, kChunk, k); };
  // Read one chunk ahead: the partner overwrites its chunk k+1 only after
  // our counter passes k+1, so reading it early is safe and hides the wait.
  XC_TRY(st.cma_read(c, w.partner, w.theirs, bounce[0], piece(0)));
  shm_publish_word(st, w.my_counter, base + 1);
  for (size_t k = 0; k < chunks; ++k) {
    if (k + 1 < chunks) {
      XC_TRY(st.cma_read(c, w.partner, w.theirs + (k + 1) * kChunk, bounce[(k + 1) % 2], piece(k + 1)));
      shm_publish_word(st, w.my_counter, base + k + 2);
    }
    XC_TRY(shm_wait_word(c, st, w.partner, w.op, w.their_counter, base + k + 1,
                         "the partner to read its part of an in-place alltoall"));
    cpu::copy_part(w.mine + k * kChunk, bounce[k % 2], piece(k), w.extent);
  }
  return Status::Ok();
}

}  // namespace

Status shm_swap_block(CollContext &c, ShmState &st, const ShmSwap &w) {
  if (w.len == 0) return Status::Ok();
  return st.give_up_if(w.op, trade(c, st, w));
}

}  // namespace xc::coll
