#include "device/custom_registry.h"

#include <utility>

#include "base/log.h"
#include "device/control.h"
#include "kernels/args.cuh"

namespace xc::device {

namespace {
constexpr size_t kTableBytes = CustomRegistry::kSlots * kernels::kCustomMaxRanks * sizeof(uint64_t);
}  // namespace

Status CustomRegistry::init() {
  XC_TRY(c_.dev->flags_alloc(kTableBytes, &table_));
  std::lock_guard<std::mutex> g(mu_);
  post_receives_locked();
  return Status::Ok();
}

CustomRegistry::~CustomRegistry() {
  Status gone = Error(XC_ERR_ABORTED, "the communicator's kernels are gone");
  for (auto *r : {&announce_in_, &ack_in_})
    if (*r && !(*r)->done) c_.engine->cancel(r->get(), gone);
  for (Outgoing &o : sends_)
    if (!o.req->done) c_.engine->cancel(o.req.get(), gone);
  if (table_.host) c_.dev->flags_free(&table_);
}

void CustomRegistry::post_receives_locked() {
  if (!announce_in_)
    announce_in_ = post_message(c_, false, kControlCtxOffset, -1, kRegistryAnnounceTag, &announce_buf_,
                                sizeof announce_buf_, false);
  if (!ack_in_)
    ack_in_ = post_message(c_, false, kControlCtxOffset, -1, kRegistryAckTag, &ack_buf_, sizeof ack_buf_, false);
}

// Take in what arrived: announcements (map, acknowledge) and acknowledgements.
void CustomRegistry::reap_locked() {
  if (!table_.host) return;
  while (announce_in_ && c_.engine->test(announce_in_.get())) {
    std::unique_ptr<Request> r = std::move(announce_in_);
    if (!r->status.ok()) return;  // cancelled or the peer failed: the kernels' checks say so
    int from = comm_rank_of(r.get(), r->source);
    Announce a = announce_buf_;
    auto ack = std::make_unique<Ack>(Ack{a.slot, 0});
    if (from < 0 || from >= c_.size || a.slot < 0 || a.slot >= kSlots) {
      post_receives_locked();
      continue;
    }
    void *at = nullptr;
    Status st = reached_.reach(c_.dev, a.start, &at);
    if (st.ok()) {
      auto *table = static_cast<uint64_t *>(table_.host);
      // Written before the acknowledgement: the owner reads in place only after it.
      __atomic_store_n(&table[a.slot * kernels::kCustomMaxRanks + from], reinterpret_cast<uintptr_t>(at),
                       __ATOMIC_RELEASE);
      ack->ok = 1;
    } else {
      XC_WARN("intra-node kernels: cannot map rank %d's registered buffer: %s (it stays staged)", from,
              st.message().c_str());
    }
    Ack *bytes = ack.get();
    sends_.push_back(Outgoing{post_message(c_, true, kControlCtxOffset, from, kRegistryAckTag, bytes, sizeof(Ack),
                                           false),
                              std::move(ack)});
    post_receives_locked();
  }
  while (ack_in_ && c_.engine->test(ack_in_.get())) {
    std::unique_ptr<Request> r = std::move(ack_in_);
    if (!r->status.ok()) return;
    for (Mine &m : mine_)
      if (m.announce.slot == ack_buf_.slot) {
        if (!ack_buf_.ok) m.refused = true;
        if (++m.acks == c_.size - 1 && !m.refused)
          XC_INFO("intra-node kernels on %s: every peer maps this rank's registered buffer %p (%zu B): read in place",
                  c_.name.c_str(), reinterpret_cast<void *>(m.start), m.bytes);
      }
    post_receives_locked();
  }
  // Sends that are done (the engine copied or delivered them) go.
  for (size_t i = 0; i < sends_.size();) {
    if (sends_[i].req->done || c_.engine->test(sends_[i].req.get())) {
      sends_[i] = std::move(sends_.back());
      sends_.pop_back();
    } else {
      ++i;
    }
  }
}

int CustomRegistry::in_place(const void *p, size_t bytes, uint64_t *offset) {
  uintptr_t start = 0;
  size_t length = 0;
  BufDesc desc;
  if (!table_.host || !find_registration(p, bytes, &start, &length, &desc)) return -1;
  std::lock_guard<std::mutex> g(mu_);
  reap_locked();
  for (Mine &m : mine_) {
    if (m.start != start || m.bytes != length || m.buffer_id != desc.handle.buffer_id) continue;
    if (m.refused || m.acks < c_.size - 1) return -1;
    *offset = reinterpret_cast<uintptr_t>(p) - start;
    return m.announce.slot;
  }
  if (mine_.size() >= static_cast<size_t>(kSlots)) return -1;  // every slot published: staged
  Mine m;
  m.start = start;
  m.bytes = length;
  m.buffer_id = desc.handle.buffer_id;
  m.announce = Announce{desc, length, static_cast<int32_t>(mine_.size()), 0};
  mine_.push_back(m);
  for (int j = 0; j < c_.size; ++j) {
    if (j == c_.rank) continue;
    sends_.push_back(Outgoing{post_message(c_, true, kControlCtxOffset, j, kRegistryAnnounceTag,
                                           &mine_.back().announce, sizeof(Announce), false),
                              nullptr});
  }
  return -1;
}

void CustomRegistry::serve() {
  std::lock_guard<std::mutex> g(mu_);
  reap_locked();
}

}  // namespace xc::device
