// The agreement (agree.h): coordinator-based two-phase commit with failover.
//
// The coordinator is the lowest member not known to have failed. Each
// member sends it a STATE (its flag, the members it knows failed, and the
// proposal it holds, if any, with the ballot = rank of the coordinator that
// proposed it). The coordinator waits for a STATE from every member it does
// not see fail, then proposes: the held proposal with the highest ballot if
// anyone holds one, else (AND of the flags, union of the failed sets). It
// sends PROPOSE to each, waits for each ACK (or death), and sends COMMIT.
// Whoever gets a COMMIT passes it on to every live member before returning,
// so a coordinator that dies half-way through its COMMITs still gets the
// decision to everyone; a member that sees its coordinator die turns to the
// next lowest live member, and sends it a STATE.
//
// Why it is uniform: a COMMIT of P is only sent once every live member
// holds P; a later coordinator hears from every live member (a member that
// returned passed the COMMIT on to it first), so it sees P as the held
// proposal of the highest ballot and proposes P again. Frames are FIFO per
// peer, and a peer's frames are delivered before its death is reported, so
// a member that turns to a new coordinator has seen everything the old one
// sent it.
#include "runtime/agree.h"

#include <chrono>
#include <cstring>
#include <deque>
#include <string>
#include <thread>

#include "base/backoff.h"

namespace xc {

namespace {

enum Kind : int { kState = 0, kPropose = 1, kAck = 2, kCommit = 3 };
constexpr int kRefreshEveryUs = 200;

struct Proposal {
  uint32_t flag = 0;
  std::vector<char> failed;
};

// Every message has the same layout (one receive size for all): this head,
// then the sender's failed set and the proposal's, n bits each.
struct WireHead {
  uint32_t flag;   // STATE: the sender's flag
  int32_t ballot;  // STATE: the held proposal's ballot, -1 none; PROPOSE, COMMIT: the proposer
  uint32_t pflag;  // the proposal's flag (held, proposed or committed)
  uint32_t n;
};

// A receive that is withdrawn when it goes out of scope unfinished.
struct Posted {
  Posted(P2pEngine &e, uint64_t ctx, int peer, int tag, size_t bytes) : engine(e), buf(bytes) {
    req.ctx = ctx;
    req.peer = peer;
    req.tag = tag;
    req.buf = buf.data();
    req.bytes = bytes;
    engine.post_recv(&req);
  }
  ~Posted() { engine.cancel(&req, Error(XC_ERR_ABORTED, "the agreement ended")); }
  Posted(const Posted &) = delete;
  Posted &operator=(const Posted &) = delete;
  P2pEngine &engine;
  std::vector<char> buf;
  Request req;
};

class Agreement {
 public:
  explicit Agreement(const AgreeInput &in)
      : e_(*in.engine),
        members_(in.members),
        n_(static_cast<int>(in.members->size())),
        me_(in.me),
        ctx_(in.ctx),
        tag_(in.tag_base),
        deadline_(in.deadline),
        flag_(in.flag),
        dead_(static_cast<size_t>(n_), 0),
        backoff_(200, 2000) {
    for (size_t i = 0; i < in.known_failed.size() && i < dead_.size(); ++i)
      if (in.known_failed[i]) dead_[i] = 1;
  }

  ~Agreement() {
    // Sends still queued (a full ring to a member that stopped polling) go.
    for (Request &r : sends_) e_.cancel(&r, Error(XC_ERR_ABORTED, "the agreement ended"));
  }

  Status run(AgreeResult *out) {
    commit_ = std::make_unique<Posted>(e_, ctx_, -1, tag_ + kCommit, wire_bytes());
    for (;;) {
      refresh_dead(true);
      int c = 0;
      while (c < n_ && dead_[static_cast<size_t>(c)]) ++c;
      bool decided = false;
      XC_TRY(c == me_ ? coordinate(&decided) : follow(c, &decided));
      if (decided) break;
    }
    // Pass the decision on before returning: see the top of the file.
    for (int j = 0; j < n_; ++j)
      if (j != me_ && !dead_[static_cast<size_t>(j)] && fabric(j) != decision_from_)
        send(j, kCommit, encode(decision_.flag, dead_, me_, &decision_));
    for (Request &r : sends_) (void)e_.wait(&r, deadline_);  // a dead receiver fails its send: nothing to do
    out->flag = decision_.flag;
    out->failed = decision_.failed;
    return Status::Ok();
  }

 private:
  int fabric(int j) const { return (*members_)[static_cast<size_t>(j)]; }
  size_t bitmap_bytes() const { return (static_cast<size_t>(n_) + 7) / 8; }
  size_t wire_bytes() const { return sizeof(WireHead) + 2 * bitmap_bytes(); }

  std::vector<char> encode(uint32_t flag, const std::vector<char> &failed, int ballot, const Proposal *p) const {
    std::vector<char> buf(wire_bytes(), 0);
    WireHead h{flag, p ? ballot : -1, p ? p->flag : 0, static_cast<uint32_t>(n_)};
    memcpy(buf.data(), &h, sizeof h);
    unsigned char *bits = reinterpret_cast<unsigned char *>(buf.data() + sizeof h);
    for (int j = 0; j < n_; ++j) {
      if (failed[static_cast<size_t>(j)]) bits[j / 8] |= static_cast<unsigned char>(1u << (j % 8));
      if (p && p->failed[static_cast<size_t>(j)])
        bits[bitmap_bytes() + static_cast<size_t>(j / 8)] |= static_cast<unsigned char>(1u << (j % 8));
    }
    return buf;
  }

  struct Decoded {
    uint32_t flag = 0;
    int ballot = -1;
    std::vector<char> failed;
    Proposal p;
  };

  Status decode(const Request &r, const std::vector<char> &buf, Decoded *d) const {
    WireHead h;
    if (r.message_bytes != wire_bytes()) return Error(XC_ERR_INTERNAL, "agreement: a malformed message");
    memcpy(&h, buf.data(), sizeof h);
    if (h.n != static_cast<uint32_t>(n_)) return Error(XC_ERR_INTERNAL, "agreement: a message for %u members", h.n);
    const unsigned char *bits = reinterpret_cast<const unsigned char *>(buf.data() + sizeof h);
    d->flag = h.flag;
    d->ballot = h.ballot;
    d->failed.assign(static_cast<size_t>(n_), 0);
    d->p.flag = h.pflag;
    d->p.failed.assign(static_cast<size_t>(n_), 0);
    for (int j = 0; j < n_; ++j) {
      d->failed[static_cast<size_t>(j)] = (bits[j / 8] >> (j % 8)) & 1;
      d->p.failed[static_cast<size_t>(j)] = (bits[bitmap_bytes() + static_cast<size_t>(j / 8)] >> (j % 8)) & 1;
    }
    return Status::Ok();
  }

  void send(int j, Kind kind, std::vector<char> payload) {
    send_bufs_.push_back(std::move(payload));
    sends_.emplace_back();
    Request &r = sends_.back();
    r.ctx = ctx_;
    r.peer = fabric(j);
    r.tag = tag_ + kind;
    r.buf = send_bufs_.back().data();
    r.bytes = send_bufs_.back().size();
    e_.post_send(&r);
  }

  // Asking the transports about every member costs a system call each:
  // not on every poll (refreshes spaced out only delay the news, and a
  // COMMIT that comes meanwhile waits in its receive).
  void refresh_dead(bool now = false) {
    auto t = Deadline::Clock::now();
    if (!now && t < next_refresh_) return;
    next_refresh_ = t + std::chrono::microseconds(kRefreshEveryUs);
    for (int j : e_.failed_among(*members_)) dead_[static_cast<size_t>(j)] = 1;
  }

  // A COMMIT arrived (from anyone): the decision. Checked after
  // refresh_dead, so whatever a member that is now dead sent is in.
  Status commit_arrived(bool *decided) {
    if (!e_.test(&commit_->req)) return Status::Ok();
    const Request &r = commit_->req;
    if (!r.status.ok()) return r.status;
    Decoded d;
    XC_TRY(decode(r, commit_->buf, &d));
    decision_ = d.p;
    decision_from_ = r.source;
    *decided = true;
    return Status::Ok();
  }

  // Spin, yield, then nap between polls; false once the deadline passed.
  bool pause(bool moved) {
    if (deadline_.expired()) return false;
    if (moved) backoff_.reset();
    switch (backoff_.next()) {
      case Backoff::Step::kSpin: cpu_relax(); break;
      case Backoff::Step::kYield: cpu_yield(); break;
      case Backoff::Step::kSleep:
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        backoff_.slept();
        break;
    }
    return true;
  }

  Status timed_out(const std::vector<int> &waiting, const char *what) const {
    std::string who;
    for (int j : waiting) who += (who.empty() ? "" : ", ") + std::to_string(j);
    return Error(XC_ERR_TIMEOUT, "the agreement timed out waiting for %s from rank(s) %s (did every live rank call it?)",
                 what, who.c_str());
  }

  Status follow(int c, bool *decided) {
    send(c, kState, encode(flag_, dead_, held_ballot_, held_ ? &held_p_ : nullptr));
    Posted prop(e_, ctx_, fabric(c), tag_ + kPropose, wire_bytes());
    bool proposed = false;
    for (;;) {
      refresh_dead();
      XC_TRY(commit_arrived(decided));
      if (*decided) return Status::Ok();
      bool moved = false;
      if (!proposed && e_.test(&prop.req)) {
        moved = proposed = true;
        if (prop.req.status.ok()) {
          Decoded d;
          XC_TRY(decode(prop.req, prop.buf, &d));
          held_ = true;
          held_ballot_ = c;
          held_p_ = d.p;
          send(c, kAck, encode(flag_, dead_, held_ballot_, &held_p_));
        } else {
          dead_[static_cast<size_t>(c)] = 1;  // its death ended our receive
        }
      }
      if (dead_[static_cast<size_t>(c)]) return Status::Ok();  // the next one coordinates
      if (!pause(moved)) return timed_out({c}, proposed ? "the decision" : "the proposal");
    }
  }

  // Wait for one message of kind from every member in `from` (others
  // count as failed once seen dead); got[j] their contents.
  Status gather(Kind kind, std::vector<char> *from, std::vector<Decoded> *got, bool *decided) {
    std::vector<std::unique_ptr<Posted>> recvs(static_cast<size_t>(n_));
    for (int j = 0; j < n_; ++j)
      if ((*from)[static_cast<size_t>(j)]) recvs[static_cast<size_t>(j)] =
          std::make_unique<Posted>(e_, ctx_, fabric(j), tag_ + kind, wire_bytes());
    for (;;) {
      refresh_dead();
      XC_TRY(commit_arrived(decided));
      if (*decided) return Status::Ok();
      bool moved = false;
      std::vector<int> waiting;
      for (int j = 0; j < n_; ++j) {
        auto &r = recvs[static_cast<size_t>(j)];
        if (!r) continue;
        if (e_.test(&r->req)) {
          moved = true;
          if (r->req.status.ok()) {
            XC_TRY(decode(r->req, r->buf, &(*got)[static_cast<size_t>(j)]));
            r.reset();
            continue;
          }
          dead_[static_cast<size_t>(j)] = 1;
        }
        if (dead_[static_cast<size_t>(j)]) {
          (*from)[static_cast<size_t>(j)] = 0;
          r.reset();
          continue;
        }
        waiting.push_back(j);
      }
      if (waiting.empty()) return Status::Ok();
      if (!pause(moved)) return timed_out(waiting, kind == kState ? "the state" : "the acknowledgement");
    }
  }

  Status coordinate(bool *decided) {
    std::vector<char> live(static_cast<size_t>(n_), 0);
    for (int j = 0; j < n_; ++j) live[static_cast<size_t>(j)] = j != me_ && !dead_[static_cast<size_t>(j)];
    std::vector<Decoded> got(static_cast<size_t>(n_));
    XC_TRY(gather(kState, &live, &got, decided));
    if (*decided) return Status::Ok();
    // A proposal some member holds may have been committed somewhere: the
    // one of the highest ballot wins. Else a fresh one.
    int best = held_ ? held_ballot_ : -1;
    Proposal p = held_p_;
    for (int j = 0; j < n_; ++j)
      if (live[static_cast<size_t>(j)] && got[static_cast<size_t>(j)].ballot > best) {
        best = got[static_cast<size_t>(j)].ballot;
        p = got[static_cast<size_t>(j)].p;
      }
    if (best < 0) {
      p.flag = flag_;
      p.failed = dead_;
      for (int j = 0; j < n_; ++j) {
        if (!live[static_cast<size_t>(j)]) continue;
        const Decoded &d = got[static_cast<size_t>(j)];
        p.flag &= d.flag;
        for (int k = 0; k < n_; ++k)
          if (d.failed[static_cast<size_t>(k)]) p.failed[static_cast<size_t>(k)] = 1;
      }
    }
    held_ = true;
    held_ballot_ = me_;
    held_p_ = p;
    for (int j = 0; j < n_; ++j)
      if (live[static_cast<size_t>(j)]) send(j, kPropose, encode(flag_, dead_, me_, &p));
    XC_TRY(gather(kAck, &live, &got, decided));
    if (*decided) return Status::Ok();
    decision_ = p;
    decision_from_ = -1;
    *decided = true;
    return Status::Ok();
  }

  P2pEngine &e_;
  std::shared_ptr<const std::vector<int>> members_;
  int n_, me_;
  uint64_t ctx_;
  int tag_;
  Deadline deadline_;
  uint32_t flag_;
  std::vector<char> dead_;  // members known failed, by index
  bool held_ = false;       // a proposal we acknowledged (or made)
  int held_ballot_ = -1;
  Proposal held_p_;
  Proposal decision_;
  int decision_from_ = -1;  // fabric rank whose COMMIT we took, -1: ours
  std::unique_ptr<Posted> commit_;
  // Never moved once posted (deque), with their buffers.
  std::deque<Request> sends_;
  std::deque<std::vector<char>> send_bufs_;
  Backoff backoff_;
  Deadline::Clock::time_point next_refresh_{};
};

}  // namespace

Status agree(const AgreeInput &in, AgreeResult *out) {
  const size_t n = in.members->size();
  if (n == 1) {
    out->flag = in.flag;
    out->failed.assign(1, 0);
    return Status::Ok();
  }
  Agreement a(in);
  return a.run(out);
}

}  // namespace xc
