// The bootstrap store server: one background thread, one poll() over the
// listening socket, every client socket and a wake pipe. Sockets are
// non-blocking. Every recv() lands in one shared scratch buffer; a
// connection keeps bytes of its own only for a request split across reads
// (wire::RequestStream, store_frames.h), so an idle connection holds no
// buffer at all. Each connection has an output queue. Stored values are
// shared immutable strings, so answering the same key to thousands of ranks
// queues references, not copies. A GET for a key that does not exist yet is
// parked on the key and answered when a SET or ADD creates it. See
// store_wire.h for the protocol and StoreLimits (store.h) for what a peer
// can make the server hold.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "bootstrap/store.h"
#include "bootstrap/store_frames.h"
#include "bootstrap/store_wire.h"

namespace xc::bootstrap {

namespace {

using wire::UniqueFd;
using Bytes = std::shared_ptr<const std::string>;
using Clock = std::chrono::steady_clock;

constexpr int kBacklog = 4096;            // the kernel clamps it to somaxconn
constexpr size_t kReadChunk = 256 << 10;  // the shared scratch buffer: the most one recv() asks for
constexpr size_t kReadTurn = 16 << 20;    // bytes read from one connection per poll round
constexpr int kAcceptTurn = 256;          // connections accepted per poll round (the others get a turn)
constexpr int kAcceptPauseMs = 100;       // after EMFILE: let the others drain before accepting again
constexpr int kMaxIov = 64;
// A connection whose answers wait unsent beyond this is not read from until
// its peer takes them: a client that pipelines requests and never reads
// cannot make the output queue grow without bound. xcomm's client sends one
// request at a time, so it never meets this.
constexpr size_t kOutPause = 256 << 10;

struct Chunk {
  Bytes data;
  size_t off = 0;
};

struct Conn {
  Conn(wire::Budget *budget, size_t max_value, Clock::time_point t) : in(budget, max_value), accepted(t) {}
  UniqueFd fd;
  wire::RequestStream in;
  Clock::time_point accepted;
  bool authed = false;
  bool closing = false;  // flush `out`, then close (after REFUSED)
  bool dead = false;     // closed; removed from the table at the end of this round
  bool parked = false;   // a GET waits for parked_key
  std::string parked_key;
  std::deque<Chunk> out;
  size_t out_bytes = 0;  // not yet sent
};

bool set_nonblocking_cloexec(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return false;
  int fdfl = fcntl(fd, F_GETFD);
  return fdfl >= 0 && fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) >= 0;
}

// Strict decimal int64 (a counter made by ADD is stored as its text).
bool parse_counter(const std::string &s, int64_t *out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    int d = s[i] - '0';
    if (__builtin_mul_overflow(v, 10, &v)) return false;
    if (__builtin_add_overflow(v, neg ? -d : d, &v)) return false;
  }
  *out = v;
  return true;
}

// Constant-time comparison: the time taken does not depend on where the
// strings first differ.
bool token_equal(std::string_view a, std::string_view b) {
  size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

Bytes frame_bytes(std::string frame) {
  wire::finish_frame(&frame);
  return std::make_shared<const std::string>(std::move(frame));
}

const char *request_name(uint8_t type) {
  switch (type) {
    case wire::kSet: return "SET";
    case wire::kCheck: return "CHECK";
    default: return "request";
  }
}

// Binds and listens on host:port; empty host (or "*") = every address,
// dual-stack where the system has IPv6.
Status open_listener(const std::string &host, uint16_t port, UniqueFd *out) {
  std::string where = wire::format_addr(host.empty() ? "*" : host, port);
  std::vector<std::pair<sockaddr_storage, socklen_t>> addrs;
  bool any = host.empty() || host == "*";
  if (any) {
    sockaddr_in6 a6{};
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_any;
    a6.sin6_port = htons(port);
    sockaddr_in a4{};
    a4.sin_family = AF_INET;
    a4.sin_addr.s_addr = htonl(INADDR_ANY);
    a4.sin_port = htons(port);
    sockaddr_storage ss{};
    memcpy(&ss, &a6, sizeof a6);
    addrs.emplace_back(ss, static_cast<socklen_t>(sizeof a6));
    memcpy(&ss, &a4, sizeof a4);
    addrs.emplace_back(ss, static_cast<socklen_t>(sizeof a4));
  } else {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo *res = nullptr;
    std::string port_text = std::to_string(port);
    int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res);
    if (rc != 0)
      return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store cannot resolve '%s': %s", host.c_str(),
                   gai_strerror(rc));
    for (addrinfo *ai = res; ai; ai = ai->ai_next) {
      sockaddr_storage ss{};
      memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
      addrs.emplace_back(ss, ai->ai_addrlen);
    }
    freeaddrinfo(res);
  }

  int last_err = EADDRNOTAVAIL;
  for (auto &[ss, len] : addrs) {
    UniqueFd fd(socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) {
      last_err = errno;
      continue;
    }
    int one = 1, zero = 0;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6) {
      const auto *a6 = reinterpret_cast<const sockaddr_in6 *>(&ss);
      // The IPv6 wildcard also takes IPv4 connections.
      if (IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr))
        setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    }
    if (bind(fd.get(), reinterpret_cast<const sockaddr *>(&ss), len) < 0 || listen(fd.get(), kBacklog) < 0) {
      last_err = errno;
      continue;
    }
    *out = std::move(fd);
    return Status::Ok();
  }
  return SystemError(last_err, "bootstrap store cannot listen on %s", where.c_str());
}

// Takes an inherited socket (XC_STORE_FD) and makes sure it listens.
Status adopt_listener(int listen_fd, UniqueFd *out) {
  UniqueFd fd(listen_fd);
  int type = 0, accepting = 0;
  socklen_t len = sizeof type;
  if (getsockopt(fd.get(), SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store: fd %d (XC_STORE_FD) is not a stream socket", listen_fd);
  len = sizeof accepting;
  if (getsockopt(fd.get(), SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) < 0 || !accepting) {
    if (listen(fd.get(), kBacklog) < 0) return SystemError(errno, "bootstrap store: listen on fd %d", listen_fd);
  }
  if (!set_nonblocking_cloexec(fd.get())) return SystemError(errno, "bootstrap store: fcntl on fd %d", listen_fd);
  *out = std::move(fd);
  return Status::Ok();
}


}  // namespace

Status StoreLimits::from_env(StoreLimits *out) {
  StoreLimits l;
  int64_t v = 0;
  XC_TRY(env_int("XC_STORE_HANDSHAKE_MS", &v));
  l.handshake_ms = static_cast<int>(v);
  XC_TRY(env_int("XC_STORE_MAX_PENDING", &v));
  l.max_pending = static_cast<size_t>(v);
  XC_TRY(env_int("XC_STORE_MAX_VALUE", &v));
  l.max_value = static_cast<size_t>(v);
  XC_TRY(env_int("XC_STORE_MAX_INFLIGHT", &v));
  l.max_inflight = static_cast<size_t>(v);
  *out = l;
  return Status::Ok();
}

struct StoreServer::Impl {
  UniqueFd listen_fd;
  UniqueFd wake_r, wake_w;
  std::string token;
  uint16_t port = 0;
  StoreLimits limits;
  std::thread thread;

  // Owned by the server thread from start() on. The budget outlives the
  // connections whose streams are charged to it.
  wire::Budget budget;  // bytes of partial requests, all connections
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns;
  uint64_t next_id = 1;
  std::unordered_map<std::string, Bytes> kv;
  std::unordered_map<std::string, std::vector<uint64_t>> waiters;
  Clock::time_point accept_paused_until{};
  std::vector<uint64_t> to_flush;
  std::vector<char> scratch;       // every recv() lands here first
  std::deque<uint64_t> pending_q;  // connections without the token, oldest first (stale entries skipped)
  size_t pending = 0;              // how many of those are open
  uint64_t dropped_pending = 0;
  bool warned_pending = false;
  std::string key_buf;  // CHECK's lookups

  // Published at the start of every round for stats().
  mutable std::mutex stats_mu;
  StoreStats published;

  void run();
  void accept_all();
  void read_from(uint64_t id, Conn &c);
  void feed(uint64_t id, Conn &c, const char *p, size_t n);
  bool handle(uint64_t id, Conn &c, uint8_t type, const char *p, size_t n);
  void wake(const std::string &key);
  void flush(Conn &c);
  void drop(Conn &c);
  void sweep();
  Conn *oldest_pending();
  bool evict_oldest_pending(const char *why);
  int expire_handshakes();
  void publish_stats();

  void queue(Conn &c, Bytes b) {
    c.out_bytes += b->size();
    c.out.push_back(Chunk{std::move(b), 0});
  }
  void reply_empty(Conn &c, uint8_t type) { queue(c, frame_bytes(wire::begin_frame(type))); }
  void reply_value(Conn &c, const Bytes &value) {
    std::string head = wire::begin_frame(wire::kValue);
    wire::put_u32(&head, static_cast<uint32_t>(value->size()));
    uint32_t n = static_cast<uint32_t>(4 + value->size());
    for (int i = 0; i < 4; ++i) head[i] = static_cast<char>(n >> (8 * i));
    queue(c, std::make_shared<const std::string>(std::move(head)));
    if (!value->empty()) queue(c, value);
  }
  void reply_error(Conn &c, const std::string &msg) {
    std::string f = wire::begin_frame(wire::kError);
    wire::put_str(&f, msg.substr(0, wire::kMaxErrorBytes));
    queue(c, frame_bytes(std::move(f)));
  }
};

Status StoreServer::start(const std::string &host, uint16_t port, int listen_fd, const std::string &token,
                          std::unique_ptr<StoreServer> *out) {
  StoreLimits limits;
  Status s = StoreLimits::from_env(&limits);
  if (!s.ok()) {
    if (listen_fd >= 0) close(listen_fd);  // ours from here on, as documented
    return s;
  }
  return start(host, port, listen_fd, token, limits, out);
}

Status StoreServer::start(const std::string &host, uint16_t port, int listen_fd, const std::string &token,
                          const StoreLimits &limits, std::unique_ptr<StoreServer> *out) {
  auto impl = std::make_unique<Impl>();
  if (listen_fd >= 0) {
    XC_TRY(adopt_listener(listen_fd, &impl->listen_fd));
  } else {
    XC_TRY(open_listener(host, port, &impl->listen_fd));
  }
  if (token.empty() || token.size() > wire::kMaxTokenBytes)
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store token must have 1 to %zu bytes, not %zu",
                 wire::kMaxTokenBytes, token.size());
  if (limits.handshake_ms < 1 || limits.max_pending < 1 || limits.max_value > kMaxValueBytes)
    return Error(XC_ERR_INVALID_ARGUMENT,
                 "bootstrap store limits out of range: handshake %d ms (>= 1), %zu pending connections (>= 1), "
                 "values up to %zu bytes (<= %zu)",
                 limits.handshake_ms, limits.max_pending, limits.max_value, kMaxValueBytes);
  impl->token = token;
  impl->limits = limits;
  impl->budget.limit = limits.max_inflight;
  impl->scratch.resize(kReadChunk);

  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(impl->listen_fd.get(), reinterpret_cast<sockaddr *>(&ss), &len) < 0)
    return SystemError(errno, "bootstrap store: getsockname");
  if (ss.ss_family == AF_INET) impl->port = ntohs(reinterpret_cast<sockaddr_in *>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) impl->port = ntohs(reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port);

  int p[2];
  if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0) return SystemError(errno, "bootstrap store: pipe2");
  impl->wake_r.reset(p[0]);
  impl->wake_w.reset(p[1]);

  Impl *raw = impl.get();
  try {
    impl->thread = std::thread([raw] { raw->run(); });
  } catch (const std::system_error &e) {
    return Error(XC_ERR_SYSTEM, "bootstrap store: cannot start its thread: %s", e.what());
  }
  XC_INFO("bootstrap store serving on port %u (handshake %d ms, %zu pending connections, values up to %zu bytes, "
          "%zu bytes in flight)",
          impl->port, limits.handshake_ms, limits.max_pending, limits.max_value, limits.max_inflight);
  auto server = std::unique_ptr<StoreServer>(new StoreServer());
  server->impl_ = std::move(impl);
  *out = std::move(server);
  return Status::Ok();
}

StoreServer::~StoreServer() {
  if (!impl_) return;
  if (impl_->thread.joinable()) {
    char b = 1;
    ssize_t rc;
    do {
      rc = write(impl_->wake_w.get(), &b, 1);
    } while (rc < 0 && errno == EINTR);
    impl_->thread.join();
  }
  // Impl's members close the listening socket, the pipe and every connection.
}

uint16_t StoreServer::port() const { return impl_->port; }

StoreStats StoreServer::stats() const {
  std::lock_guard<std::mutex> lock(impl_->stats_mu);
  return impl_->published;
}

void StoreServer::Impl::publish_stats() {
  StoreStats s;
  s.connections = conns.size();
  s.pending = pending;
  s.buffered = budget.used;
  s.peak_buffered = budget.peak;
  s.dropped_pending = dropped_pending;
  std::lock_guard<std::mutex> lock(stats_mu);
  published = s;
}

void StoreServer::Impl::run() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;
  for (;;) {
    int timeout = expire_handshakes();
    sweep();
    publish_stats();
    fds.clear();
    ids.clear();
    fds.push_back({wake_r.get(), POLLIN, 0});
    bool listening = true;
    if (accept_paused_until != Clock::time_point{}) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(accept_paused_until - Clock::now()).count();
      if (left > 0) {
        listening = false;
        if (timeout < 0 || left < timeout) timeout = static_cast<int>(left);
      } else {
        accept_paused_until = Clock::time_point{};
      }
    }
    fds.push_back({listen_fd.get(), static_cast<short>(listening ? POLLIN : 0), 0});
    for (auto &[id, c] : conns) {
      short ev = (c->closing || c->out_bytes > kOutPause) ? 0 : POLLIN;
      if (!c->out.empty()) ev |= POLLOUT;
      fds.push_back({c->fd.get(), ev, 0});
      ids.push_back(id);
    }
    int n = poll(fds.data(), fds.size(), timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      XC_WARN("bootstrap store: poll failed (%s); the store stops serving", strerror(errno));
      break;
    }
    if (fds[0].revents) break;  // the destructor asks us to stop
    for (size_t i = 0; i < ids.size(); ++i) {
      short re = fds[i + 2].revents;
      if (!re) continue;
      auto it = conns.find(ids[i]);
      if (it == conns.end() || it->second->dead) continue;
      Conn &c = *it->second;
      bool reading = !c.closing && c.out_bytes <= kOutPause;
      if ((re & (POLLHUP | POLLERR)) && !reading) {
        drop(c);  // the peer is gone before it read what we queued
        continue;
      }
      if (re & (POLLIN | POLLHUP | POLLERR)) read_from(ids[i], c);
      if (!c.dead && (re & POLLOUT)) flush(c);
    }
    // After the connections polled: an accepted connection's fd may reuse
    // the number of one dropped in this round.
    if (fds[1].revents & (POLLIN | POLLERR | POLLHUP)) accept_all();
    for (uint64_t id : to_flush) {
      auto it = conns.find(id);
      if (it != conns.end() && !it->second->dead) flush(*it->second);
    }
    to_flush.clear();
  }
  conns.clear();
  waiters.clear();
}

// Drops the connections that did not present the token in time; returns the
// poll timeout until the next one is due (-1: none waits).
int StoreServer::Impl::expire_handshakes() {
  const auto limit = std::chrono::milliseconds(limits.handshake_ms);
  const auto now = Clock::now();
  while (Conn *c = oldest_pending()) {
    auto due = c->accepted + limit;
    if (due > now) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due - now).count() + 1;
      return static_cast<int>(std::min<int64_t>(left, INT_MAX));
    }
    XC_INFO("bootstrap store: dropping a connection that did not present the job's token within %d ms "
            "(XC_STORE_HANDSHAKE_MS)",
            limits.handshake_ms);
    pending_q.pop_front();
    drop(*c);
    ++dropped_pending;
  }
  return -1;
}

// The oldest open connection without the token (at the front of pending_q),
// or null; stale entries in front of it are removed.
Conn *StoreServer::Impl::oldest_pending() {
  while (!pending_q.empty()) {
    auto it = conns.find(pending_q.front());
    if (it != conns.end() && !it->second->dead && !it->second->authed) return it->second.get();
    pending_q.pop_front();
  }
  return nullptr;
}

// Drops the oldest connection without the token, after one last read in
// case its HELLO has just come. false when there is none.
bool StoreServer::Impl::evict_oldest_pending(const char *why) {
  while (Conn *c = oldest_pending()) {
    uint64_t id = pending_q.front();
    pending_q.pop_front();
    read_from(id, *c);
    if (c->dead || c->authed) return true;  // either way one pending connection fewer
    if (!warned_pending) {
      warned_pending = true;
      XC_WARN("bootstrap store on port %u: dropping the oldest connection that has not presented the job's token "
              "(%s); is something else connecting to this port?",
              port, why);
    } else {
      XC_INFO("bootstrap store: dropping the oldest connection without the token (%s)", why);
    }
    drop(*c);
    ++dropped_pending;
    return true;
  }
  return false;
}

void StoreServer::Impl::accept_all() {
  for (int turn = 0; turn < kAcceptTurn; ++turn) {
    int fd = accept4(listen_fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      // Out of descriptors: one held by a peer without the token goes first.
      if ((err == EMFILE || err == ENFILE) && evict_oldest_pending("out of file descriptors")) continue;
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        XC_WARN("bootstrap store cannot accept a connection (%s) with %zu open; raise the limit on open files "
                "(ulimit -n) for jobs this large",
                strerror(err), conns.size());
        accept_paused_until = Clock::now() + std::chrono::milliseconds(kAcceptPauseMs);
        return;
      }
      XC_WARN("bootstrap store: accept failed (%s)", strerror(err));
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // fails harmlessly on a Unix socket
    auto c = std::make_unique<Conn>(&budget, limits.max_value, Clock::now());
    c->fd.reset(fd);
    uint64_t id = next_id++;
    Conn &ref = *c;
    conns.emplace(id, std::move(c));
    pending_q.push_back(id);
    ++pending;
    // A rank sends its HELLO as soon as it is connected: usually it is here
    // already, and the connection never counts against max_pending.
    read_from(id, ref);
    while (pending > limits.max_pending && evict_oldest_pending("more than XC_STORE_MAX_PENDING")) {
    }
  }
}

void StoreServer::Impl::read_from(uint64_t id, Conn &c) {
  size_t turn = 0;
  while (!c.dead && !c.closing && turn < kReadTurn && c.out_bytes <= kOutPause) {
    // Before the token, never more than a HELLO: what follows stays in the kernel.
    size_t want = c.authed ? scratch.size() : wire::kMaxHelloFrame - c.in.partial();
    ssize_t r = recv(c.fd.get(), scratch.data(), want, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      drop(c);  // ECONNRESET and friends
      return;
    }
    if (r == 0) {
      drop(c);
      return;
    }
    turn += static_cast<size_t>(r);
    feed(id, c, scratch.data(), static_cast<size_t>(r));
  }
}

// Handles every request that the bytes p[0, n) complete.
void StoreServer::Impl::feed(uint64_t id, Conn &c, const char *p, size_t n) {
  while (!c.dead && !c.closing) {
    wire::RequestStream::Item item = c.in.next(&p, &n, c.authed);
    switch (item.event) {
      case wire::RequestStream::Event::kNeedMore:
        return;
      case wire::RequestStream::Event::kFrame:
        if (!handle(id, c, item.type, item.payload, item.len)) {
          XC_INFO("bootstrap store: dropping a connection that sent a malformed frame of type %u", item.type);
          drop(c);
          return;
        }
        break;
      case wire::RequestStream::Event::kNotHello:
        reply_empty(c, wire::kRefused);
        c.closing = true;
        to_flush.push_back(id);
        return;
      case wire::RequestStream::Event::kMalformed:
        XC_INFO("bootstrap store: dropping a connection that sent a frame of type %u and %u bytes", item.type,
                item.len);
        drop(c);
        return;
      case wire::RequestStream::Event::kTooLarge:
      case wire::RequestStream::Event::kOverBudget: {
        if (c.parked) {  // one request at a time
          drop(c);
          return;
        }
        char msg[512];
        if (item.event == wire::RequestStream::Event::kTooLarge)
          snprintf(msg, sizeof msg,
                   "bootstrap store refused a %s of %u bytes: it takes values of at most %zu bytes "
                   "(XC_STORE_MAX_VALUE where the store runs)",
                   request_name(item.type), item.len, limits.max_value);
        else
          snprintf(msg, sizeof msg,
                   "bootstrap store refused a %s of %u bytes: partly received requests already hold %zu of the "
                   "%zu bytes it buffers (XC_STORE_MAX_INFLIGHT where the store runs); try again later",
                   request_name(item.type), item.len, budget.used, budget.limit);
        XC_INFO("%s", msg);
        reply_error(c, msg);
        to_flush.push_back(id);
        break;
      }
    }
  }
}

// One complete request. Returns false when the connection must be dropped.
bool StoreServer::Impl::handle(uint64_t id, Conn &c, uint8_t type, const char *p, size_t n) {
  if (c.parked && type != wire::kCancel) return false;  // one request at a time
  wire::Request q;
  if (!wire::decode_request(type, p, n, &q)) return false;
  to_flush.push_back(id);
  switch (type) {
    case wire::kHello: {
      if (c.authed) return false;
      if (q.version != wire::kVersion) {
        reply_error(c, "bootstrap store protocol version " + std::to_string(q.version) + " is not the server's " +
                           std::to_string(wire::kVersion) + " (mixed xcomm versions in one job?)");
        c.closing = true;
        return true;
      }
      if (!token_equal(q.token, token)) {
        reply_empty(c, wire::kRefused);
        c.closing = true;
        return true;
      }
      c.authed = true;
      --pending;
      reply_empty(c, wire::kOk);
      return true;
    }
    case wire::kSet: {
      std::string key(q.key);
      if (q.value.size() > limits.max_value) {
        reply_error(c, "bootstrap store refused the value of " + std::to_string(q.value.size()) + " bytes for key " +
                           key + ": it takes values of at most " + std::to_string(limits.max_value) +
                           " bytes (XC_STORE_MAX_VALUE where the store runs)");
        return true;
      }
      kv[key] = std::make_shared<const std::string>(q.value);
      reply_empty(c, wire::kOk);
      wake(key);
      return true;
    }
    case wire::kGet: {
      std::string key(q.key);
      auto it = kv.find(key);
      if (it != kv.end()) {
        reply_value(c, it->second);
      } else {
        c.parked = true;
        waiters[key].push_back(id);
        c.parked_key = std::move(key);
      }
      return true;
    }
    case wire::kAdd: {
      std::string key(q.key);
      int64_t now = 0;
      auto it = kv.find(key);
      if (it != kv.end() && !parse_counter(*it->second, &now)) {
        reply_error(c, "bootstrap store: key " + key + " holds a value that is not a counter");
        return true;
      }
      if (__builtin_add_overflow(now, q.delta, &now)) {
        reply_error(c, "bootstrap store: counter " + key + " would overflow");
        return true;
      }
      kv[key] = std::make_shared<const std::string>(std::to_string(now));
      std::string f = wire::begin_frame(wire::kInt);
      wire::put_i64(&f, now);
      queue(c, frame_bytes(std::move(f)));
      wake(key);
      return true;
    }
    case wire::kCheck: {
      std::string f = wire::begin_frame(wire::kPresent);
      f.reserve(wire::kHeaderBytes + 4 + q.keys.size());
      wire::put_u32(&f, static_cast<uint32_t>(q.keys.size()));
      for (std::string_view k : q.keys) {
        key_buf.assign(k.data(), k.size());
        f.push_back(kv.count(key_buf) ? 1 : 0);
      }
      queue(c, frame_bytes(std::move(f)));
      return true;
    }
    case wire::kCancel: {
      if (c.parked) {
        auto it = waiters.find(c.parked_key);
        if (it != waiters.end()) {
          auto &v = it->second;
          v.erase(std::remove(v.begin(), v.end(), id), v.end());
          if (v.empty()) waiters.erase(it);
        }
        c.parked = false;
        c.parked_key.clear();
        reply_empty(c, wire::kCancelled);
      }
      return true;
    }
    default:
      return false;
  }
}

// Answers every GET parked on key.
void StoreServer::Impl::wake(const std::string &key) {
  auto it = waiters.find(key);
  if (it == waiters.end()) return;
  std::vector<uint64_t> ids = std::move(it->second);
  waiters.erase(it);
  const Bytes &value = kv[key];
  for (uint64_t wid : ids) {
    auto ct = conns.find(wid);
    if (ct == conns.end() || ct->second->dead) continue;
    Conn &w = *ct->second;
    if (!w.parked || w.parked_key != key) continue;
    w.parked = false;
    w.parked_key.clear();
    reply_value(w, value);
    to_flush.push_back(wid);
  }
}

void StoreServer::Impl::flush(Conn &c) {
  while (!c.out.empty()) {
    iovec iov[kMaxIov];
    int k = 0;
    for (auto it = c.out.begin(); it != c.out.end() && k < kMaxIov; ++it, ++k) {
      iov[k].iov_base = const_cast<char *>(it->data->data()) + it->off;
      iov[k].iov_len = it->data->size() - it->off;
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(k);
    ssize_t w = sendmsg(c.fd.get(), &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      drop(c);  // EPIPE, ECONNRESET: the peer is gone
      return;
    }
    size_t left = static_cast<size_t>(w);
    c.out_bytes -= left;
    while (left > 0) {
      Chunk &front = c.out.front();
      size_t avail = front.data->size() - front.off;
      if (left >= avail) {
        left -= avail;
        c.out.pop_front();
      } else {
        front.off += left;
        left = 0;
      }
    }
  }
  if (c.closing) drop(c);  // the refusal is out: close
}

// Closes the connection now (its descriptor and buffers are freed at once,
// so a burst of drops within one round holds nothing); sweep() removes it.
void StoreServer::Impl::drop(Conn &c) {
  if (c.dead) return;
  c.dead = true;
  if (!c.authed) --pending;
  c.fd.reset();
  c.in.release();
  c.out.clear();
  c.out_bytes = 0;
}

void StoreServer::Impl::sweep() {
  for (auto it = conns.begin(); it != conns.end();) {
    Conn &c = *it->second;
    if (!c.dead) {
      ++it;
      continue;
    }
    if (c.parked) {
      auto wt = waiters.find(c.parked_key);
      if (wt != waiters.end()) {
        auto &v = wt->second;
        v.erase(std::remove(v.begin(), v.end(), it->first), v.end());
        if (v.empty()) waiters.erase(wt);
      }
    }
    it = conns.erase(it);
  }
}

}  // namespace xc::bootstrap
