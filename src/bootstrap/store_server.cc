// The bootstrap store server: one background thread, one poll() over the
// listening socket, every client socket and a wake pipe. Sockets are
// non-blocking; each connection keeps an input buffer (at most one bounded
// frame plus one read's worth) and an output queue. Stored values are shared
// immutable strings, so answering the same key to thousands of ranks queues
// references, not copies. A GET for a key that does not exist yet is parked
// on the key and answered when a SET or ADD creates it. See store_wire.h for
// the protocol.
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
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/log.h"
#include "bootstrap/store.h"
#include "bootstrap/store_wire.h"

namespace xc::bootstrap {

namespace {

using wire::UniqueFd;
using Bytes = std::shared_ptr<const std::string>;
using Clock = std::chrono::steady_clock;

constexpr int kBacklog = 4096;          // the kernel clamps it to somaxconn
constexpr size_t kReadChunk = 64 << 10;  // bytes asked of one recv() at least
constexpr size_t kReadTurn = 16 << 20;   // bytes read from one connection per poll round
constexpr int kAcceptPauseMs = 100;      // after EMFILE: let the others drain before accepting again
constexpr int kMaxIov = 64;

struct Chunk {
  Bytes data;
  size_t off = 0;
};

struct Conn {
  UniqueFd fd;
  bool authed = false;
  bool closing = false;  // flush `out`, then close (after REFUSED)
  bool dead = false;     // to be removed at the end of this round
  bool parked = false;   // a GET waits for parked_key
  std::string parked_key;
  std::string in;    // in[0, in_len) holds received bytes not yet handled
  size_t in_len = 0;
  std::deque<Chunk> out;
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
bool token_equal(const std::string &a, const std::string &b) {
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

struct StoreServer::Impl {
  UniqueFd listen_fd;
  UniqueFd wake_r, wake_w;
  std::string token;
  uint16_t port = 0;
  std::thread thread;

  // Owned by the server thread from start() on.
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns;
  uint64_t next_id = 1;
  std::unordered_map<std::string, Bytes> kv;
  std::unordered_map<std::string, std::vector<uint64_t>> waiters;
  Clock::time_point accept_paused_until{};
  std::vector<uint64_t> to_flush;

  void run();
  void accept_all();
  void read_from(uint64_t id, Conn &c);
  void process(uint64_t id, Conn &c);
  bool handle(uint64_t id, Conn &c, uint8_t type, const char *p, size_t n);
  void wake(const std::string &key);
  void flush(Conn &c);
  void drop(uint64_t id, Conn &c);
  void sweep();

  void queue(Conn &c, Bytes b) { c.out.push_back(Chunk{std::move(b), 0}); }
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
  auto impl = std::make_unique<Impl>();
  if (listen_fd >= 0) {
    XC_TRY(adopt_listener(listen_fd, &impl->listen_fd));
  } else {
    XC_TRY(open_listener(host, port, &impl->listen_fd));
  }
  if (token.empty() || token.size() > wire::kMaxTokenBytes)
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store token must have 1 to %zu bytes, not %zu",
                 wire::kMaxTokenBytes, token.size());
  impl->token = token;

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
  XC_INFO("bootstrap store serving on port %u", impl->port);
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

void StoreServer::Impl::run() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;
  for (;;) {
    fds.clear();
    ids.clear();
    fds.push_back({wake_r.get(), POLLIN, 0});
    int timeout = -1;
    bool listening = true;
    if (accept_paused_until != Clock::time_point{}) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(accept_paused_until - Clock::now()).count();
      if (left > 0) {
        listening = false;
        timeout = static_cast<int>(left);
      } else {
        accept_paused_until = Clock::time_point{};
      }
    }
    fds.push_back({listen_fd.get(), static_cast<short>(listening ? POLLIN : 0), 0});
    for (auto &[id, c] : conns) {
      short ev = c->closing ? 0 : POLLIN;
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
    if (fds[1].revents & (POLLIN | POLLERR | POLLHUP)) accept_all();
    for (size_t i = 0; i < ids.size(); ++i) {
      short re = fds[i + 2].revents;
      if (!re) continue;
      auto it = conns.find(ids[i]);
      if (it == conns.end() || it->second->dead) continue;
      Conn &c = *it->second;
      if (re & (POLLIN | POLLHUP | POLLERR)) {
        if (c.closing) {
          drop(ids[i], c);  // the peer hung up before reading our refusal
          continue;
        }
        read_from(ids[i], c);
      }
      if (!c.dead && (re & POLLOUT)) flush(c);
    }
    for (uint64_t id : to_flush) {
      auto it = conns.find(id);
      if (it != conns.end() && !it->second->dead) flush(*it->second);
    }
    to_flush.clear();
    sweep();
  }
  conns.clear();
  waiters.clear();
}

void StoreServer::Impl::accept_all() {
  for (;;) {
    int fd = accept4(listen_fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
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
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->fd.reset(fd);
    conns.emplace(next_id++, std::move(c));
  }
}

void StoreServer::Impl::read_from(uint64_t id, Conn &c) {
  size_t turn = 0;
  while (!c.dead && !c.closing && turn < kReadTurn) {
    // Ask for the rest of the frame being received when it is large, so a
    // big SET arrives in few calls; never buffer past one frame plus a chunk.
    size_t want = kReadChunk;
    if (c.in_len >= wire::kHeaderBytes) {
      size_t frame = wire::kHeaderBytes + wire::get_u32(c.in.data());
      if (frame > c.in_len) want = std::max(want, frame - c.in_len);
    }
    // The buffer only grows here (zero-filling once); in_len says what is used.
    if (c.in.size() < c.in_len + want) c.in.resize(c.in_len + want);
    ssize_t r = recv(c.fd.get(), &c.in[c.in_len], c.in.size() - c.in_len, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      drop(id, c);  // ECONNRESET and friends
      return;
    }
    if (r == 0) {
      drop(id, c);
      return;
    }
    c.in_len += static_cast<size_t>(r);
    turn += static_cast<size_t>(r);
    process(id, c);
  }
}

// Handles every complete frame in c.in; checks a header as soon as it has
// arrived, so an oversized frame is refused before its body is buffered.
void StoreServer::Impl::process(uint64_t id, Conn &c) {
  size_t off = 0;
  while (!c.dead && !c.closing && c.in_len - off >= wire::kHeaderBytes) {
    const char *h = c.in.data() + off;
    uint32_t len = wire::get_u32(h);
    uint8_t type = static_cast<uint8_t>(h[4]);
    if (!c.authed && type != wire::kHello) {
      reply_empty(c, wire::kRefused);
      c.closing = true;
      to_flush.push_back(id);
      break;
    }
    if (type < wire::kHello || type > wire::kCancel || len > wire::max_payload(type)) {
      XC_INFO("bootstrap store: dropping a connection that sent a frame of type %u and %u bytes", type, len);
      drop(id, c);
      return;
    }
    if (c.in_len - off < wire::kHeaderBytes + len) break;
    if (!handle(id, c, type, h + wire::kHeaderBytes, len)) {
      XC_INFO("bootstrap store: dropping a connection that sent a malformed frame of type %u", type);
      drop(id, c);
      return;
    }
    off += wire::kHeaderBytes + len;
  }
  if (off == 0) return;
  if (off < c.in_len) memmove(&c.in[0], c.in.data() + off, c.in_len - off);
  c.in_len -= off;
  if (c.in_len == 0 && c.in.size() > (1u << 20)) std::string().swap(c.in);  // after a large SET
}

// One complete request. Returns false when the connection must be dropped.
bool StoreServer::Impl::handle(uint64_t id, Conn &c, uint8_t type, const char *p, size_t n) {
  wire::Reader r(p, n);
  if (c.parked && type != wire::kCancel) return false;  // one request at a time
  to_flush.push_back(id);
  switch (type) {
    case wire::kHello: {
      uint32_t version = 0;
      std::string tok;
      if (c.authed || !r.u32(&version) || !r.str(wire::kMaxTokenBytes, &tok) || !r.done()) return false;
      if (version != wire::kVersion) {
        reply_error(c, "bootstrap store protocol version " + std::to_string(version) + " is not the server's " +
                           std::to_string(wire::kVersion) + " (mixed xcomm versions in one job?)");
        c.closing = true;
        return true;
      }
      if (!token_equal(tok, token)) {
        reply_empty(c, wire::kRefused);
        c.closing = true;
        return true;
      }
      c.authed = true;
      reply_empty(c, wire::kOk);
      return true;
    }
    case wire::kSet: {
      std::string key;
      auto value = std::make_shared<std::string>();
      if (!r.str(kMaxKeyBytes, &key) || !r.str(kMaxValueBytes, value.get()) || !r.done()) return false;
      kv[key] = std::move(value);
      reply_empty(c, wire::kOk);
      wake(key);
      return true;
    }
    case wire::kGet: {
      std::string key;
      if (!r.str(kMaxKeyBytes, &key) || !r.done()) return false;
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
      std::string key;
      int64_t delta = 0;
      if (!r.str(kMaxKeyBytes, &key) || !r.i64(&delta) || !r.done()) return false;
      int64_t now = 0;
      auto it = kv.find(key);
      if (it != kv.end() && !parse_counter(*it->second, &now)) {
        reply_error(c, "bootstrap store: key " + key + " holds a value that is not a counter");
        return true;
      }
      if (__builtin_add_overflow(now, delta, &now)) {
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
      uint32_t count = 0;
      if (!r.u32(&count) || count > wire::kMaxCheckKeys) return false;
      std::string f = wire::begin_frame(wire::kPresent);
      wire::put_u32(&f, count);
      std::string key;
      for (uint32_t i = 0; i < count; ++i) {
        if (!r.str(kMaxKeyBytes, &key)) return false;
        f.push_back(kv.count(key) ? 1 : 0);
      }
      if (!r.done()) return false;
      queue(c, frame_bytes(std::move(f)));
      return true;
    }
    case wire::kCancel: {
      if (n != 0) return false;
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
      c.out.clear();
      c.closing = false;
      c.dead = true;  // EPIPE, ECONNRESET: the peer is gone
      return;
    }
    size_t left = static_cast<size_t>(w);
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
  if (c.closing) c.dead = true;  // the refusal is out: close
}

void StoreServer::Impl::drop(uint64_t, Conn &c) { c.dead = true; }

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
    it = conns.erase(it);  // closes the socket
  }
}

}  // namespace xc::bootstrap
