// Revoking a communicator (xc_comm_revoke): its pending and later requests
// fail with XC_ERR_REVOKED on every member, whatever op each is in. The
// revoker sends REVOKE to every live member, and each member passes it on
// once to all the others when it first hears of it (ULFM's flooding), so the
// news reaches every live member even if the revoker dies right after its
// first frame. n members cost n * (n - 1) small frames, once per revoke.
#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "p2p/engine.h"

namespace xc {

void P2pEngine::revoke(uint64_t ctx, const std::vector<int> &members, int origin) {
  auto guard = lock();
  revoke_locked(ctx, std::vector<int32_t>(members.begin(), members.end()), origin, -1);
}

void P2pEngine::revoke_locked(uint64_t ctx, std::vector<int32_t> members, int origin, int from) {
  if (revoked_.count(ctx)) return;  // heard before: passed on then
  auto at = std::find(members.begin(), members.end(), origin);
  int origin_rank = at == members.end() ? origin : static_cast<int>(at - members.begin());
  Status why = Error(XC_ERR_REVOKED, "the communicator was revoked (rank %d called xc_comm_revoke)", origin_rank);
  Revoked &r = revoked_[ctx];
  r.members = std::move(members);
  r.why = why;
  revoked_count_.fetch_add(1, std::memory_order_relaxed);
  XC_INFO("communicator %016llx revoked by rank %d%s", static_cast<unsigned long long>(ctx), origin_rank,
          from < 0 ? " (here)" : "");
  // Pass it on first. The payload lives in revoked_ (node-based: it stays put
  // while frames wait in an outbox). A list too long for one frame goes
  // without it: the receiver is revoked but cannot pass the news on.
  size_t bytes = r.members.size() * sizeof(int32_t);
  for (int32_t m : r.members) {
    if (m == opts_.my_rank || m == from || m < 0 || m >= opts_.fabric_size) continue;
    Transport *t = route_[static_cast<size_t>(m)];
    if (!t || dead_[static_cast<size_t>(m)]) continue;
    FrameHeader h{};
    h.kind = kFrameRevoke;
    h.src = opts_.my_rank;
    h.ctx = ctx;
    h.arg = static_cast<uint64_t>(origin);
    bool fits = bytes <= t->max_payload();
    send_frame(m, h, fits ? r.members.data() : nullptr, fits ? bytes : 0, nullptr);
  }
  // Then its four contexts (point-to-point, collectives, device ops): after
  // the news went out, so a NACK for a send withdrawn here reaches its
  // receiver behind the REVOKE (else it saw XC_ERR_ABORTED, "withdrawn":
  // 1 of 100 chaos trials).
  for (uint64_t c = ctx; c <= ctx + 3; ++c) {
    aborted_.emplace_back(c, why);
    cancel_context_locked(c, why);
  }
  wake_waiters_locked();  // a waiter in a shared-memory op reads the news at its next check
}

bool P2pEngine::revoked(uint64_t ctx, Status *why) {
  if (!any_revoked()) return false;
  auto guard = lock();
  auto it = revoked_.find(ctx);
  if (it == revoked_.end()) return false;
  if (why) *why = it->second.why;
  return true;
}

void P2pEngine::discard_unexpected(uint64_t ctx, int below) {
  auto guard = lock();
  unexpected_.remove_if([&](const Unexpected &u) { return u.ctx == ctx && u.tag >= 0 && u.tag < below && !u.rts; });
}

}  // namespace xc
