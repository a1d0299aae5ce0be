#include "transport/ucx/ucx_transport.h"

#include <poll.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/backoff.h"
#include "base/log.h"

namespace xc::ucx {

namespace {

constexpr unsigned kAmFrame = 1;    // a FrameHeader (in WireHeader) and its payload
constexpr unsigned kAmGoodbye = 2;  // the sender is leaving on purpose
constexpr unsigned kAmPull = 3;     // receiver → sender: send me a region you described
constexpr unsigned kAmPullData = 4; // sender → receiver: the region (AM data), or a refusal

// How long a departing process lets its goodbyes and closes drain.
constexpr int64_t kGoodbyeMs = 1000;

// A read's wait (wait_until): polls spun, then yielded, before each nap of
// at most a millisecond on the event fd.
constexpr int kWaitSpins = 200;
constexpr int kWaitYields = 200;

std::string to_hex(const void *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  const auto *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = digits[b[i] >> 4];
    s[2 * i + 1] = digits[b[i] & 15];
  }
  return s;
}

bool from_hex(const std::string &s, std::vector<char> *out) {
  if (s.size() % 2) return false;
  out->resize(s.size() / 2);
  for (size_t i = 0; i < out->size(); ++i) {
    auto nib = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
    int hi = nib(s[2 * i]), lo = nib(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<char>(hi << 4 | lo);
  }
  return true;
}

// What describe() puts in a RemoteMem: the region's id and length.
struct RegionRef {
  uint64_t id;
  uint64_t len;
};

}  // namespace

struct UcxTransport::WireHeader {
  FrameHeader h;
  uint64_t seq;
  int32_t sender;
  uint32_t reserved;
};

// A send in flight: UCX reads the header and payload until it completes.
struct UcxTransport::SendBuf {
  UcxTransport *owner;
  int peer;
  WireHeader wire;
  std::vector<char> payload;
};

// PULL asks for a region; PULL_DATA answers it (status 0: the data follows).
struct UcxTransport::PullHeader {
  int32_t sender;
  int32_t status;
  uint64_t region;
  uint64_t pull;
  uint64_t len;
};

// The answer to a pull while UCX sends it.
struct UcxTransport::PullReply {
  UcxTransport *owner;
  uint64_t region;
  PullHeader header;
};

// A rendezvous AM being received into its frame's payload.
struct RecvCtx {
  UcxTransport *owner;
  int peer;
  uint64_t seq;
};

Status UcxTransport::create(const UcxOptions &opts, bootstrap::StoreClient *store, std::unique_ptr<UcxTransport> *out) {
  const UcxApi *api = nullptr;
  XC_TRY(ucx_api(&api));
  std::unique_ptr<UcxTransport> t(new UcxTransport(opts, *api));
  XC_TRY(t->start());
  ucp_address_t *addr = nullptr;
  size_t addr_len = 0;
  ucs_status_t st = api->ucp_worker_get_address(t->worker_, &addr, &addr_len);
  if (st != UCS_OK) return ucx_error(*api, st, XC_ERR_INTERNAL, "UCX: cannot get this worker's address");
  std::string hex = to_hex(addr, addr_len);
  api->ucp_worker_release_address(t->worker_, addr);
  XC_TRY_CTX(store->set("ucx/" + std::to_string(opts.my_rank), hex), "publishing this rank's UCX address");
  *out = std::move(t);
  return Status::Ok();
}

Status UcxTransport::start() {
  peers_.resize(static_cast<size_t>(opts_.fabric_size));
  // UCX reads its own UCX_* variables here (UCX_TLS, UCX_NET_DEVICES, ...):
  // they pass through untouched.
  ucp_config_t *config = nullptr;
  ucs_status_t st = api_.ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK) return ucx_error(api_, st, XC_ERR_INVALID_ARGUMENT, "UCX rejected its configuration (UCX_* variables)");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  st = api_.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context_);
  api_.ucp_config_release(config);
  if (st != UCS_OK) return ucx_error(api_, st, XC_ERR_UNSUPPORTED, "UCX could not start (ucp_init)");

  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // The engine calls in under its lock (or from one thread): serialized.
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  st = api_.ucp_worker_create(context_, &wp, &worker_);
  if (st != UCS_OK) return ucx_error(api_, st, XC_ERR_UNSUPPORTED, "UCX could not make a worker");
  st = api_.ucp_worker_get_efd(worker_, &efd_);
  if (st != UCS_OK) return ucx_error(api_, st, XC_ERR_UNSUPPORTED, "UCX worker has no event fd");

  struct {
    unsigned id;
    ucp_am_recv_callback_t cb;
  } handlers[] = {{kAmFrame, on_frame_am},
                  {kAmGoodbye, on_goodbye_am},
                  {kAmPull, on_pull_am},
                  {kAmPullData, on_pull_data_am}};
  for (const auto &h : handlers) {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = h.id;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    hp.cb = h.cb;
    hp.arg = this;
    st = api_.ucp_worker_set_am_recv_handler(worker_, &hp);
    if (st != UCS_OK) return ucx_error(api_, st, XC_ERR_INTERNAL, "UCX: cannot set an active-message handler");
  }
  return Status::Ok();
}

Status UcxTransport::connect(bootstrap::StoreClient *store, Deadline deadline) {
  for (int r : opts_.peers) {
    std::string hex;
    XC_TRY_CTX(store->get("ucx/" + std::to_string(r), deadline, &hex), "waiting for rank " + std::to_string(r) + "'s UCX address");
    std::vector<char> addr;
    if (!from_hex(hex, &addr) || addr.empty())
      return Error(XC_ERR_INTERNAL, "rank %d published a malformed UCX address", r);
    Peer &p = peers_[static_cast<size_t>(r)];
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = reinterpret_cast<const ucp_address_t *>(addr.data());
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = on_ep_error;
    ep.err_handler.arg = this;  // (an endpoint's user_data would replace it: not set)
    ucs_status_t st = api_.ucp_ep_create(worker_, &ep, &p.ep);
    if (st != UCS_OK) return ucx_error(api_, st, XC_ERR_PEER_FAILED, "UCX cannot reach rank " + std::to_string(r));
  }
  return Status::Ok();
}

UcxTransport::~UcxTransport() {
  if (!worker_) {
    if (context_) api_.ucp_cleanup(context_);
    return;
  }
  Deadline until = Deadline::AfterMs(kGoodbyeMs);
  for (size_t r = 0; r < peers_.size(); ++r) {
    Peer &p = peers_[r];
    if (!p.ep) continue;
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    // A live peer's endpoint is flushed first (what we sent arrives); a dead
    // one's is dropped at once.
    prm.flags = p.dead ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    void *req = api_.ucp_ep_close_nbx(p.ep, &prm);
    if (UCS_PTR_IS_PTR(req)) {
      if (!drain(req, until)) {
        // A peer that does not answer the flush: drop the endpoint.
        prm.flags = UCP_EP_CLOSE_FLAG_FORCE;
        api_.ucp_request_free(req);
        void *force = api_.ucp_ep_close_nbx(p.ep, &prm);
        if (UCS_PTR_IS_PTR(force)) api_.ucp_request_free(force);
      } else {
        api_.ucp_request_free(req);
      }
    }
    p.ep = nullptr;
  }
  api_.ucp_worker_destroy(worker_);
  api_.ucp_cleanup(context_);
  for (SendBuf *b : spare_) delete b;
}

bool UcxTransport::try_send(int peer, const FrameHeader &h, const void *payload, size_t len) {
  Peer *p = peer_of(peer);
  if (!p || p->dead) return true;  // dropped: the engine fails what waits on a dead peer
  if (p->inflight > 0 && p->inflight + len > opts_.inflight_bytes) return false;
  SendBuf *b;
  if (spare_.empty()) {
    b = new SendBuf();
  } else {
    b = spare_.back();
    spare_.pop_back();
  }
  b->owner = this;
  b->peer = peer;
  b->wire = WireHeader{h, p->next_send_seq, opts_.my_rank, 0};
  b->payload.assign(static_cast<const char *>(payload), static_cast<const char *>(payload) + len);
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  prm.cb.send = on_sent;
  prm.user_data = b;
  ucs_status_ptr_t req = api_.ucp_am_send_nbx(p->ep, kAmFrame, &b->wire, sizeof b->wire, b->payload.data(), len, &prm);
  ++p->next_send_seq;
  if (req == nullptr) {
    spare_.push_back(b);
  } else if (UCS_PTR_IS_ERR(req)) {
    spare_.push_back(b);
    mark_dead(peer, UCS_PTR_STATUS(req));
  } else {
    p->inflight += len;
  }
  log_lanes_once(peer);
  return true;
}

void UcxTransport::on_sent(void *request, ucs_status_t status, void *user_data) {
  auto *b = static_cast<SendBuf *>(user_data);
  UcxTransport *t = b->owner;
  Peer &p = t->peers_[static_cast<size_t>(b->peer)];
  p.inflight -= b->payload.size();
  if (status != UCS_OK) t->mark_dead(b->peer, status);
  t->api_.ucp_request_free(request);
  t->spare_.push_back(b);
}

ucs_status_t UcxTransport::on_frame_am(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                       const ucp_am_recv_param_t *param) {
  auto *t = static_cast<UcxTransport *>(arg);
  WireHeader w;
  if (header_length != sizeof w) {
    XC_WARN("UCX: dropped a frame with a %zu-byte header (expected %zu)", header_length, sizeof w);
    return UCS_OK;
  }
  memcpy(&w, header, sizeof w);
  Peer *p = t->peer_of(w.sender);
  if (!p) {
    XC_WARN("UCX: dropped a frame from rank %d, which is not a peer over UCX", w.sender);
    return UCS_OK;
  }
  Frame f;
  f.h = w.h;
  if (!t->spare_bytes_.empty()) {
    f.payload = std::move(t->spare_bytes_.back());
    t->spare_bytes_.pop_back();
  }
  f.payload.resize(length);
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    if (length) memcpy(f.payload.data.get(), data, length);
    t->accept_frame(w.sender, w.seq, std::move(f));
    return UCS_OK;
  }
  // Rendezvous: the data comes later, into the frame's own buffer; the
  // frame waits in `early` (a map node does not move) until it has come.
  f.complete = false;
  auto slot = p->early.emplace(w.seq, std::move(f)).first;
  auto *ctx = new RecvCtx{t, w.sender, w.seq};
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  prm.cb.recv_am = [](void *request, ucs_status_t status, size_t /*length*/, void *user_data) {
    auto *c = static_cast<RecvCtx *>(user_data);
    UcxTransport *owner = c->owner;
    Peer &peer = owner->peers_[static_cast<size_t>(c->peer)];
    auto it = peer.early.find(c->seq);
    if (status != UCS_OK) {
      owner->mark_dead(c->peer, status);
    } else if (it != peer.early.end()) {
      it->second.complete = true;
      owner->release_in_order(peer, c->peer);
    }
    if (request) owner->api_.ucp_request_free(request);
    delete c;
  };
  prm.user_data = ctx;
  ucs_status_ptr_t req =
      t->api_.ucp_am_recv_data_nbx(t->worker_, data, slot->second.payload.data.get(), length, &prm);
  if (req == nullptr) {
    slot->second.complete = true;
    delete ctx;
    t->release_in_order(*p, w.sender);
  } else if (UCS_PTR_IS_ERR(req)) {
    delete ctx;
    t->mark_dead(w.sender, UCS_PTR_STATUS(req));
  }
  return UCS_OK;
}

ucs_status_t UcxTransport::on_goodbye_am(void *arg, const void *header, size_t header_length, void *data,
                                         size_t length, const ucp_am_recv_param_t *param) {
  auto *t = static_cast<UcxTransport *>(arg);
  int32_t sender = -1;
  if (header_length == sizeof sender) memcpy(&sender, header, sizeof sender);
  Peer *p = t->peer_of(sender);
  if (!p) return UCS_OK;
  p->departed = true;
  // The ranks it knew crashed: sent eager, so here whole.
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) return UCS_OK;
  for (size_t i = 0; i + sizeof(int32_t) <= length; i += sizeof(int32_t)) {
    int32_t rank = -1;
    memcpy(&rank, static_cast<const char *>(data) + i, sizeof rank);
    p->blames.push_back(rank);
  }
  return UCS_OK;
}

void UcxTransport::accept_frame(int peer, uint64_t seq, Frame frame) {
  Peer &p = peers_[static_cast<size_t>(peer)];
  if (seq == p.next_recv_seq && p.early.empty()) {
    ++p.next_recv_seq;
    ready_.emplace_back(peer, std::move(frame));
    return;
  }
  p.early.emplace(seq, std::move(frame));
  release_in_order(p, peer);
}

void UcxTransport::release_in_order(Peer &p, int peer) {
  for (auto it = p.early.begin(); it != p.early.end() && it->first == p.next_recv_seq && it->second.complete;
       it = p.early.erase(it)) {
    ++p.next_recv_seq;
    ready_.emplace_back(peer, std::move(it->second));
  }
}

void UcxTransport::on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
  auto *t = static_cast<UcxTransport *>(arg);
  for (size_t r = 0; r < t->peers_.size(); ++r)
    if (t->peers_[r].ep == ep) t->mark_dead(static_cast<int>(r), status);
}

void UcxTransport::mark_dead(int peer, ucs_status_t why) {
  Peer &p = peers_[static_cast<size_t>(peer)];
  if (p.dead) return;
  p.dead = true;
  if (!p.departed) XC_INFO("UCX: rank %d is unreachable: %s", peer, api_.ucs_status_string(why));
}

void UcxTransport::progress() {
  // Bounded: a peer that floods us must not keep the engine in here.
  for (int i = 0; i < 64 && api_.ucp_worker_progress(worker_) != 0; ++i) {
  }
  if (!asks_.empty()) serve_pulls();
}

size_t UcxTransport::poll(FrameSink &sink) {
  progress();
  size_t n = 0;
  while (!ready_.empty()) {
    auto [peer, frame] = std::move(ready_.front());
    ready_.pop_front();
    sink.on_frame(peer, frame.h, frame.payload.data.get(), frame.payload.size);
    if (frame.payload.capacity <= opts_.chunk_bytes && spare_bytes_.size() < 64)
      spare_bytes_.push_back(std::move(frame.payload));
    ++n;
  }
  return n;
}

bool UcxTransport::arm() {
  if (!ready_.empty() || !asks_.empty()) return false;
  return api_.ucp_worker_arm(worker_) == UCS_OK;  // BUSY: news is already there
}

bool UcxTransport::peer_alive(int peer) {
  Peer *p = peer_of(peer);
  return p && !p->dead;
}

bool UcxTransport::peer_departed(int peer) {
  Peer *p = peer_of(peer);
  return p && p->departed;
}

std::vector<int> UcxTransport::departure_blames(int peer) {
  Peer *p = peer_of(peer);
  return p && p->departed ? p->blames : std::vector<int>();
}

void UcxTransport::announce_departure(const std::vector<int> &crashed) {
  std::vector<void *> pending;
  goodbye_ = opts_.my_rank;
  goodbye_crashed_.assign(crashed.begin(), crashed.end());
  for (int r : opts_.peers) {
    Peer &p = peers_[static_cast<size_t>(r)];
    if (p.dead) continue;
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = UCP_AM_SEND_FLAG_EAGER;
    // goodbye_ and goodbye_crashed_ outlive the sends: they are waited for below.
    void *req = api_.ucp_am_send_nbx(p.ep, kAmGoodbye, &goodbye_, sizeof goodbye_, goodbye_crashed_.data(),
                                     goodbye_crashed_.size() * sizeof(int32_t), &prm);
    if (UCS_PTR_IS_PTR(req)) pending.push_back(req);
  }
  Deadline until = Deadline::AfterMs(kGoodbyeMs);
  for (void *req : pending) {
    drain(req, until);
    api_.ucp_request_free(req);
  }
}

Status UcxTransport::describe(int peer, const void *buf, size_t len, RemoteMem *out) {
  if (!peer_of(peer)) return Error(XC_ERR_INTERNAL, "UCX does not reach rank %d", peer);
  RegionRef ref{next_region_++, len};
  regions_[ref.id] = Region{peer, buf, len};
  out->bytes.resize(sizeof ref);
  memcpy(out->bytes.data(), &ref, sizeof ref);
  return Status::Ok();
}

void UcxTransport::release(int /*peer*/, const RemoteMem &mem) {
  if (mem.bytes.size() != sizeof(RegionRef)) return;
  RegionRef ref;
  memcpy(&ref, mem.bytes.data(), sizeof ref);
  regions_.erase(ref.id);
}

bool UcxTransport::revoke_access(int peer, const RemoteMem &mem) {
  if (mem.bytes.size() != sizeof(RegionRef)) return true;
  RegionRef ref;
  memcpy(&ref, mem.bytes.data(), sizeof ref);
  auto it = regions_.find(ref.id);
  if (it == regions_.end()) return true;
  bool in_flight = it->second.replies > 0;
  regions_.erase(it);  // later pulls of it are refused
  // An answer UCX is still sending from the buffer ends only with its
  // endpoint; the peer, silent this long, counts as gone.
  if (in_flight) close_by_force(peer);
  return true;
}

ucs_status_t UcxTransport::on_pull_am(void *arg, const void *header, size_t header_length, void * /*data*/,
                                      size_t /*length*/, const ucp_am_recv_param_t * /*param*/) {
  auto *t = static_cast<UcxTransport *>(arg);
  PullHeader ph;
  if (header_length != sizeof ph) return UCS_OK;
  memcpy(&ph, header, sizeof ph);
  if (t->peer_of(ph.sender)) t->asks_.push_back(PullAsk{ph.sender, ph.region, ph.pull, ph.len});
  return UCS_OK;
}

// Sends from here, never from inside a UCX callback.
void UcxTransport::serve_pulls() {
  std::vector<PullAsk> asks;
  asks.swap(asks_);
  for (const PullAsk &a : asks) {
    Peer *p = peer_of(a.peer);
    if (!p || p->dead) continue;
    auto it = regions_.find(a.region);
    // Only a region described for this peer, and no more of it.
    bool ok = it != regions_.end() && it->second.peer == a.peer && a.len <= it->second.len;
    auto *reply = new PullReply{this, a.region, PullHeader{opts_.my_rank, ok ? 0 : 1, a.region, a.pull, ok ? a.len : 0}};
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.send = [](void *request, ucs_status_t /*status*/, void *user_data) {
      auto *r = static_cast<PullReply *>(user_data);
      auto region = r->owner->regions_.find(r->region);
      if (region != r->owner->regions_.end()) --region->second.replies;
      r->owner->api_.ucp_request_free(request);
      delete r;
    };
    prm.user_data = reply;
    // The user's buffer itself: the engine keeps it until the reader's FIN,
    // which comes only after all of it arrived (or until revoke_access).
    void *req = api_.ucp_am_send_nbx(p->ep, kAmPullData, &reply->header, sizeof reply->header,
                                     ok ? it->second.buf : nullptr, ok ? a.len : 0, &prm);
    if (req == nullptr) {
      delete reply;
    } else if (UCS_PTR_IS_ERR(req)) {
      delete reply;
      mark_dead(a.peer, UCS_PTR_STATUS(req));
    } else if (ok) {
      ++it->second.replies;
    }
    if (!ok) XC_WARN("UCX: rank %d asked for memory it was not offered (region %llu); refused", a.peer,
                     static_cast<unsigned long long>(a.region));
  }
}

ucs_status_t UcxTransport::on_pull_data_am(void *arg, const void *header, size_t header_length, void *data,
                                           size_t length, const ucp_am_recv_param_t *param) {
  auto *t = static_cast<UcxTransport *>(arg);
  PullHeader ph;
  if (header_length != sizeof ph) return UCS_OK;
  memcpy(&ph, header, sizeof ph);
  auto it = t->inbound_.find(ph.pull);
  if (it == t->inbound_.end()) return UCS_OK;  // a read that gave up (its endpoint was closed)
  Inbound *in = it->second;
  if (ph.status != 0 || length != in->len) {
    in->status = UCS_ERR_INVALID_PARAM;
    in->done = true;
    return UCS_OK;
  }
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    if (length) memcpy(in->dst, data, length);
    in->done = true;
    return UCS_OK;
  }
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  prm.cb.recv_am = [](void *request, ucs_status_t status, size_t /*length*/, void *user_data) {
    auto *done = static_cast<Inbound *>(user_data);
    done->status = status;
    done->done = true;
    ucx_request_free(request);
  };
  prm.user_data = in;
  void *req = t->api_.ucp_am_recv_data_nbx(t->worker_, data, in->dst, length, &prm);
  if (req == nullptr) {
    in->done = true;
  } else if (UCS_PTR_IS_ERR(req)) {
    in->status = UCS_PTR_STATUS(req);
    in->done = true;
  }
  return UCS_OK;
}

Status UcxTransport::read_remote(int peer, const RemoteMem &mem, void *dst, size_t len) {
  Peer *p = peer_of(peer);
  if (!p || p->dead) return Error(XC_ERR_PEER_FAILED, "rank %d is unreachable over UCX", peer);
  RegionRef ref;
  if (mem.bytes.size() != sizeof ref) return Error(XC_ERR_INTERNAL, "rank %d sent a malformed memory description", peer);
  memcpy(&ref, mem.bytes.data(), sizeof ref);
  if (len > ref.len) return Error(XC_ERR_INTERNAL, "reading %zu bytes of a %llu-byte region of rank %d", len,
                                  static_cast<unsigned long long>(ref.len), peer);
  auto owned = std::make_unique<Inbound>(Inbound{dst, len});
  Inbound &in = *owned;
  uint64_t pull = next_pull_++;
  inbound_[pull] = &in;
  PullHeader ask{opts_.my_rank, 0, ref.id, pull, len};
  ucp_request_param_t prm{};
  void *req = api_.ucp_am_send_nbx(p->ep, kAmPull, &ask, sizeof ask, nullptr, 0, &prm);
  Deadline deadline = Deadline::AfterMs(opts_.timeout_ms);
  ucs_status_t st = UCS_PTR_IS_ERR(req) ? UCS_PTR_STATUS(req) : UCS_OK;
  if (UCS_PTR_IS_PTR(req)) {  // `ask` lives on our stack: wait for the send too
    st = wait_until([&] { return api_.ucp_request_check_status(req) != UCS_INPROGRESS; }, deadline, peer);
    if (st == UCS_OK) st = api_.ucp_request_check_status(req);
    api_.ucp_request_free(req);
  }
  if (st == UCS_OK) st = wait_until([&] { return in.done; }, deadline, peer);
  if (st == UCS_OK) st = in.status;
  inbound_.erase(pull);
  if (!in.done) abandoned_.push_back(std::move(owned));
  if (st == UCS_OK) return Status::Ok();
  if (st == UCS_ERR_TIMED_OUT)
    return Error(XC_ERR_TIMEOUT, "reading %zu bytes from rank %d over UCX timed out after %llu ms", len, peer,
                 static_cast<unsigned long long>(opts_.timeout_ms));
  if (st == UCS_ERR_INVALID_PARAM) return Error(XC_ERR_INTERNAL, "rank %d refused to send the memory it described", peer);
  mark_dead(peer, st);
  return ucx_error(api_, st, XC_ERR_PEER_FAILED, "reading from rank " + std::to_string(peer) + " over UCX");
}

template <typename Done>
ucs_status_t UcxTransport::wait_until(Done done, Deadline deadline, int peer) {
  // The peer that must answer may need this core (ranks outnumbering cores:
  // spinning here held it for a scheduler slice, ~25 ms per 512 KiB
  // alltoall at 4 ranks on 2 cores): spin, then yield, then nap on the event fd.
  Backoff backoff(kWaitSpins, kWaitYields);
  while (!done()) {
    bool moved = api_.ucp_worker_progress(worker_) != 0;
    if (!asks_.empty()) serve_pulls();  // a peer may be pulling from us meanwhile
    if (done()) break;
    // Checked on every pass: a failing endpoint can keep progress busy.
    if (!deadline.expired() && !peers_[static_cast<size_t>(peer)].dead) {
      if (moved) {
        backoff.reset();
        continue;
      }
      switch (backoff.next()) {
        case Backoff::Step::kSpin: cpu_relax(); break;
        case Backoff::Step::kYield: cpu_yield(); break;
        case Backoff::Step::kSleep:
          if (api_.ucp_worker_arm(worker_) == UCS_OK) {
            pollfd pfd{efd_, POLLIN, 0};
            ::poll(&pfd, 1, 1);
          }
          backoff.slept();
          break;
      }
      continue;
    }
    // What is in flight may still write into the caller's buffer: closing
    // the endpoint by force ends it before we return.
    close_by_force(peer);
    return deadline.expired() ? UCS_ERR_TIMED_OUT : UCS_ERR_CONNECTION_RESET;
  }
  return UCS_OK;
}

bool UcxTransport::drain(void *req, Deadline until) {
  while (api_.ucp_request_check_status(req) == UCS_INPROGRESS) {
    if (until.expired()) return false;
    api_.ucp_worker_progress(worker_);
  }
  return true;
}

void UcxTransport::close_by_force(int peer) {
  Peer &p = peers_[static_cast<size_t>(peer)];
  if (!p.ep) return;
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  prm.flags = UCP_EP_CLOSE_FLAG_FORCE;
  void *close = api_.ucp_ep_close_nbx(p.ep, &prm);
  if (UCS_PTR_IS_PTR(close)) {
    drain(close, Deadline::AfterMs(kGoodbyeMs));
    api_.ucp_request_free(close);
  }
  for (int i = 0; i < 16; ++i) api_.ucp_worker_progress(worker_);  // the cancelled requests' callbacks
  p.ep = nullptr;  // peer_of() no longer finds it: the engine sees it gone
  if (!p.dead) XC_INFO("UCX: gave up on rank %d; its endpoint is closed", peer);
  p.dead = true;
}

std::string UcxTransport::lanes(int peer) const {
  if (peer < 0 || peer >= opts_.fabric_size || !peers_[static_cast<size_t>(peer)].ep) return "";
  char *text = nullptr;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (!f) return "";
  api_.ucp_ep_print_info(peers_[static_cast<size_t>(peer)].ep, f);
  fclose(f);
  // Lines like "#   lane[0]:  3:tcp/eth0.0 md[1] ... am am_bw#0": keep tcp/eth0.
  std::string out;
  std::string all(text, size);
  free(text);
  size_t pos = 0;
  while ((pos = all.find("lane[", pos)) != std::string::npos) {
    size_t colon = all.find(':', all.find("]", pos) + 2);
    size_t start = colon == std::string::npos ? colon : colon + 1;
    size_t end = start == std::string::npos ? start : all.find_first_of(" \n", start);
    pos = all.find('\n', pos);
    if (end == std::string::npos || start >= end) continue;
    std::string lane = all.substr(start, end - start);
    size_t dot = lane.rfind('.');
    if (dot != std::string::npos && dot > lane.find('/')) lane.resize(dot);
    if (out.find(lane) == std::string::npos) out += (out.empty() ? "" : ",") + lane;
  }
  return out;
}

std::string UcxTransport::route_summary(int peer) const {
  std::string l = lanes(peer);
  return "ucx " + (l.empty() ? std::string("(not wired up yet)") : l);
}

void UcxTransport::log_lanes_once(int peer) {
  Peer &p = peers_[static_cast<size_t>(peer)];
  if (p.announced || static_cast<int>(log_level()) < static_cast<int>(LogLevel::kInfo)) return;
  p.announced = true;
  XC_INFO("UCX carries frames to rank %d over %s", peer, lanes(peer).c_str());
}

}  // namespace xc::ucx
