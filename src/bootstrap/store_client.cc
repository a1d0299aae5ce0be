// The bootstrap store client: one TCP connection, one request at a time
// (a mutex makes it safe to share between threads). The socket is
// non-blocking and every wait is a poll() bounded by a deadline. See
// store_wire.h for the protocol.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "bootstrap/store.h"
#include "bootstrap/store_frames.h"
#include "bootstrap/store_wire.h"

namespace xc::bootstrap {

namespace {

using wire::UniqueFd;

// How long a client whose GET deadline passed waits for the server to
// confirm the cancellation before it gives the connection up.
constexpr int kCancelGraceMs = 5000;
constexpr int kMinBackoffMs = 5;
constexpr int kMaxBackoffMs = 250;

// Milliseconds between now and the deadline, rounded (for messages).
int total_ms(const Deadline &d) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(d.at() - Deadline::Clock::now()).count();
  if (us < 0) return 0;
  return static_cast<int>(std::min<int64_t>((us + 500) / 1000, 1 << 30));
}

const char *type_name(uint8_t type) {
  switch (type) {
    case wire::kHello: return "HELLO";
    case wire::kSet: return "SET";
    case wire::kGet: return "GET";
    case wire::kAdd: return "ADD";
    case wire::kCheck: return "CHECK";
    default: return "request";
  }
}

bool retriable_connect_error(int err) {
  switch (err) {
    case ECONNREFUSED:  // rank 0 is not serving yet
    case ECONNRESET:
    case ECONNABORTED:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EAGAIN:
    case EADDRNOTAVAIL:  // out of ephemeral ports for a moment
    case EINTR:
      return true;
    default:
      return false;
  }
}

// Connects fd to addr, waiting at most timeout_ms. Returns 0 or an errno.
int connect_one(int fd, const sockaddr *addr, socklen_t len, int timeout_ms) {
  if (connect(fd, addr, len) == 0) return 0;
  if (errno != EINPROGRESS && errno != EINTR) return errno;
  pollfd p{fd, POLLOUT, 0};
  auto until = Deadline::Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int left = static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(until - Deadline::Clock::now()).count()));
    int rc = poll(&p, 1, left);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return errno;
    if (rc == 0) return ETIMEDOUT;
    int err = 0;
    socklen_t elen = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0) return errno;
    return err;
  }
}

}  // namespace

struct StoreClient::Impl {
  std::mutex mu;
  UniqueFd fd;
  std::string where;  // host:port, for messages
  int op_timeout_ms = 300000;
  Status broken;  // not ok once the connection is unusable
  bool peer_closed = false;  // the last error was the server closing the connection

  Status closed_error() {
    peer_closed = true;
    return Error(XC_ERR_PEER_FAILED, "bootstrap store at %s closed the connection", where.c_str());
  }
  // Gives the connection up: every later call fails with (a note on) s.
  Status fail(Status s) {
    fd.reset();
    broken = s;
    return s;
  }
  Status usable() {
    if (broken.ok()) return Status::Ok();
    return Status(broken.code(), "bootstrap store connection to " + where +
                                     " is unusable after an earlier error: " + broken.message());
  }

  // Waits until fd is readable (POLLIN) or writable (POLLOUT). false on timeout.
  Status wait(short events, const Deadline &d, bool *ready) {
    pollfd p{fd.get(), events, 0};
    for (;;) {
      int rc = poll(&p, 1, d.remaining_ms());
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) return SystemError(errno, "bootstrap store: poll");
      *ready = rc > 0;
      return Status::Ok();
    }
  }

  // Sends all of data; a timeout or error leaves the stream out of step, so
  // the caller gives the connection up.
  Status send_all(const std::string &data, const Deadline &d, const char *what) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t w = send(fd.get(), data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (w >= 0) {
        done += static_cast<size_t>(w);
        continue;
      }
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) return closed_error();
      if (errno != EAGAIN && errno != EWOULDBLOCK) return SystemError(errno, "bootstrap store %s: send", what);
      bool ready = false;
      XC_TRY(wait(POLLOUT, d, &ready));
      if (!ready)
        return Error(XC_ERR_TIMEOUT, "bootstrap store at %s did not take a %s within its deadline", where.c_str(),
                     what);
    }
    return Status::Ok();
  }

  Status recv_exact(char *p, size_t n, const Deadline &d, const char *what) {
    size_t done = 0;
    while (done < n) {
      ssize_t r = recv(fd.get(), p + done, n - done, 0);
      if (r > 0) {
        done += static_cast<size_t>(r);
        continue;
      }
      if (r == 0) return closed_error();
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) return closed_error();
      if (errno != EAGAIN && errno != EWOULDBLOCK) return SystemError(errno, "bootstrap store %s: recv", what);
      bool ready = false;
      XC_TRY(wait(POLLIN, d, &ready));
      if (!ready)
        return Error(XC_ERR_TIMEOUT, "bootstrap store at %s did not answer a %s within its deadline", where.c_str(),
                     what);
    }
    return Status::Ok();
  }

  // Reads one answer frame. Any failure leaves the stream out of step.
  Status read_frame(const Deadline &d, const char *what, uint8_t *type, std::string *payload) {
    char h[wire::kHeaderBytes];
    XC_TRY(recv_exact(h, sizeof h, d, what));
    uint32_t len = wire::get_u32(h);
    *type = static_cast<uint8_t>(h[4]);
    if (*type < wire::kOk || *type > wire::kError || len > wire::max_payload(*type))
      return Error(XC_ERR_PEER_FAILED, "bootstrap store at %s sent a malformed answer (type %u, %u bytes)",
                   where.c_str(), *type, len);
    payload->resize(len);
    if (len) XC_TRY(recv_exact(&(*payload)[0], len, d, what));
    return Status::Ok();
  }

  // Presents the token on a fresh connection. *again: the server closed the
  // connection before it answered, and the deadline leaves time to try a
  // new one.
  Status hello(const std::string &token, const Deadline &deadline, bool *again) {
    *again = false;
    int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    wire::Request q;
    q.type = wire::kHello;
    q.version = wire::kVersion;
    q.token = token;
    // The handshake gets at least a moment even when connecting used the
    // whole deadline up.
    Deadline hd = deadline.remaining_ms() >= 1000 ? deadline : Deadline::AfterMs(1000);
    peer_closed = false;
    uint8_t type = 0;
    std::string payload;
    Status s = send_all(wire::encode_request(q), hd, "HELLO");
    if (s.ok()) s = read_frame(hd, "HELLO", &type, &payload);
    if (!s.ok()) {
      if (peer_closed && !deadline.expired()) {
        *again = true;
        return Status::Ok();
      }
      return s;
    }
    if (type == wire::kRefused)
      return Error(XC_ERR_INVALID_USAGE,
                   "bootstrap store at %s: store refused the token (every rank must use the same unique id or "
                   "XC_STORE_TOKEN)",
                   where.c_str());
    if (type == wire::kError) {
      wire::Reader r(payload.data(), payload.size());
      std::string msg;
      if (r.str(wire::kMaxErrorBytes, &msg) && r.done()) return Status(XC_ERR_INVALID_USAGE, msg);
    }
    if (type != wire::kOk) return protocol_error(type, "HELLO");
    return Status::Ok();
  }

  Status protocol_error(uint8_t type, const char *what) {
    return Error(XC_ERR_PEER_FAILED, "bootstrap store at %s sent an unexpected answer (type %u) to a %s",
                 where.c_str(), type, what);
  }

  // Sends one request and reads its answer, both within the usual deadline.
  // An ERROR answer becomes a status; the connection stays usable then.
  Status call(const std::string &frame, uint8_t type, uint8_t want, std::string *payload) {
    const char *what = type_name(type);
    Deadline d = Deadline::AfterMs(static_cast<uint64_t>(op_timeout_ms));
    Status s = send_all(frame, d, what);
    if (!s.ok()) return fail(s);
    uint8_t got = 0;
    s = read_frame(d, what, &got, payload);
    if (!s.ok()) return fail(s);
    if (got == want) return Status::Ok();
    if (got == wire::kError) {
      wire::Reader r(payload->data(), payload->size());
      std::string msg;
      if (!r.str(wire::kMaxErrorBytes, &msg) || !r.done()) return fail(protocol_error(got, what));
      return Status(XC_ERR_INVALID_USAGE, msg);
    }
    return fail(protocol_error(got, what));
  }
};

Status StoreClient::connect(const std::string &host, uint16_t port, const std::string &token, Deadline deadline,
                            std::unique_ptr<StoreClient> *out) {
  if (host.empty() || port == 0)
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store address '%s' has no host or port",
                 wire::format_addr(host, port).c_str());
  if (token.empty() || token.size() > wire::kMaxTokenBytes)
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store token must have 1 to %zu bytes, not %zu",
                 wire::kMaxTokenBytes, token.size());
  auto impl = std::make_unique<Impl>();
  impl->where = wire::format_addr(host, port);
  int64_t t = 0;
  XC_TRY(env_int("XC_TIMEOUT", &t));
  impl->op_timeout_ms = static_cast<int>(std::min<int64_t>(t, 1 << 30));
  const int waited_ms = total_ms(deadline);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  std::string port_text = std::to_string(port);

  std::minstd_rand rng(static_cast<unsigned>(getpid()) ^
                       static_cast<unsigned>(Deadline::Clock::now().time_since_epoch().count()));
  int backoff = kMinBackoffMs;
  int last_err = 0;
  std::string last_what;
  for (;;) {
    addrinfo *res = nullptr;
    int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res);
    if (rc == 0) {
      int naddr = 0;
      for (addrinfo *ai = res; ai; ai = ai->ai_next) ++naddr;
      for (addrinfo *ai = res; ai; ai = ai->ai_next) {
        UniqueFd fd(socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (fd.get() < 0) {
          last_err = errno;
          last_what = strerror(last_err);
          continue;
        }
        // With several addresses, one that drops our SYNs must not eat the
        // whole deadline.
        int attempt_ms = deadline.remaining_ms();
        if (naddr > 1) attempt_ms = std::min(attempt_ms, 2000);
        int err = connect_one(fd.get(), ai->ai_addr, ai->ai_addrlen, attempt_ms);
        if (err == 0) {
          impl->fd = std::move(fd);
          break;
        }
        last_err = err;
        last_what = strerror(err);
      }
      freeaddrinfo(res);
      if (impl->fd.get() >= 0) {
        bool again = false;
        XC_TRY(impl->hello(token, deadline, &again));
        if (!again) break;
        // Closed before it answered: a server flooded with connections that
        // never present the token drops its oldest ones, and this was one.
        impl->fd.reset();
        last_err = ECONNRESET;
        last_what = "the store closed the connection during the handshake";
      }
      if (!retriable_connect_error(last_err))
        return SystemError(last_err, "cannot connect to the bootstrap store at %s", impl->where.c_str());
    } else if (rc == EAI_AGAIN) {
      last_err = EAGAIN;
      last_what = gai_strerror(rc);
    } else {
      return Error(XC_ERR_INVALID_ARGUMENT, "cannot resolve the bootstrap store host '%s': %s", host.c_str(),
                   rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    }
    if (deadline.expired())
      return Error(XC_ERR_TIMEOUT,
                   "could not connect to the bootstrap store at %s within %d ms (last error: %s); is rank 0 "
                   "running and reachable?",
                   impl->where.c_str(), waited_ms, last_what.c_str());
    // Back off with jitter so thousands of ranks do not knock in step.
    int sleep_ms = std::min(deadline.remaining_ms(), backoff / 2 + static_cast<int>(rng() % (backoff / 2 + 1)));
    if (sleep_ms > 0) poll(nullptr, 0, sleep_ms);
    backoff = std::min(backoff * 2, kMaxBackoffMs);
  }

  auto client = std::unique_ptr<StoreClient>(new StoreClient());
  client->impl_ = std::move(impl);
  *out = std::move(client);
  return Status::Ok();
}

StoreClient::~StoreClient() = default;

static Status check_key(const std::string &key) {
  if (key.size() > kMaxKeyBytes)
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store key of %zu bytes is longer than the limit of %zu",
                 key.size(), kMaxKeyBytes);
  return Status::Ok();
}

Status StoreClient::set(const std::string &key, const std::string &value) {
  XC_TRY(check_key(key));
  if (value.size() > kMaxValueBytes)
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store value of %zu bytes for key %s is larger than the limit of %zu",
                 value.size(), key.c_str(), kMaxValueBytes);
  std::lock_guard<std::mutex> lock(impl_->mu);
  XC_TRY(impl_->usable());
  std::string f = wire::begin_frame(wire::kSet);
  f.reserve(wire::kHeaderBytes + 8 + key.size() + value.size());
  wire::put_str(&f, key);
  wire::put_str(&f, value);
  wire::finish_frame(&f);
  std::string payload;
  Status s = impl_->call(f, wire::kSet, wire::kOk, &payload);
  // The server refused it (over its limits, which it names); the
  // connection stays usable.
  if (s.code() == XC_ERR_INVALID_USAGE) s.with_context("bootstrap store SET of key " + key);
  return s;
}

Status StoreClient::get(const std::string &key, Deadline deadline, std::string *value) {
  XC_TRY(check_key(key));
  if (!value) return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store get: value is NULL");
  std::lock_guard<std::mutex> lock(impl_->mu);
  XC_TRY(impl_->usable());
  Impl &m = *impl_;
  const int waited_ms = total_ms(deadline);
  std::string f = wire::begin_frame(wire::kGet);
  wire::put_str(&f, key);
  wire::finish_frame(&f);
  Deadline op = Deadline::AfterMs(static_cast<uint64_t>(m.op_timeout_ms));
  Status s = m.send_all(f, op, "GET");
  if (!s.ok()) return m.fail(s);

  // Wait for the answer to start within the caller's deadline; once it has,
  // read the rest under the usual one (a large value takes a moment).
  bool ready = false;
  s = m.wait(POLLIN, deadline, &ready);
  if (!s.ok()) return m.fail(s);
  bool cancelled = false;
  if (!ready) {
    // Too late: ask the server to drop the parked GET. It answers the GET
    // exactly once, with CANCELLED or with the value if it came first.
    std::string c = wire::begin_frame(wire::kCancel);
    wire::finish_frame(&c);
    Deadline grace = Deadline::AfterMs(kCancelGraceMs);
    s = m.send_all(c, grace, "GET");
    if (!s.ok()) return m.fail(s);
    op = grace;
    cancelled = true;
  }
  uint8_t type = 0;
  std::string payload;
  s = m.read_frame(op, "GET", &type, &payload);
  if (!s.ok()) {
    if (cancelled && s.code() == XC_ERR_TIMEOUT)
      return m.fail(Error(XC_ERR_TIMEOUT, "timed out after %d ms waiting for key %s (bootstrap store at %s)",
                          waited_ms, key.c_str(), m.where.c_str()));
    return m.fail(s);
  }
  if (type == wire::kCancelled && cancelled)
    return Error(XC_ERR_TIMEOUT, "timed out after %d ms waiting for key %s (bootstrap store at %s)", waited_ms,
                 key.c_str(), m.where.c_str());
  if (type != wire::kValue) return m.fail(m.protocol_error(type, "GET"));
  wire::Reader r(payload.data(), payload.size());
  std::string v;
  if (!r.str(kMaxValueBytes, &v) || !r.done()) return m.fail(m.protocol_error(type, "GET"));
  *value = std::move(v);
  return Status::Ok();
}

Status StoreClient::add(const std::string &key, int64_t delta, int64_t *result) {
  XC_TRY(check_key(key));
  std::lock_guard<std::mutex> lock(impl_->mu);
  XC_TRY(impl_->usable());
  std::string f = wire::begin_frame(wire::kAdd);
  wire::put_str(&f, key);
  wire::put_i64(&f, delta);
  wire::finish_frame(&f);
  std::string payload;
  XC_TRY(impl_->call(f, wire::kAdd, wire::kInt, &payload));
  wire::Reader r(payload.data(), payload.size());
  int64_t v = 0;
  if (!r.i64(&v) || !r.done()) return impl_->fail(impl_->protocol_error(wire::kInt, "ADD"));
  if (result) *result = v;
  return Status::Ok();
}

Status StoreClient::check(const std::vector<std::string> &keys, std::vector<bool> *present) {
  if (!present) return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store check: present is NULL");
  if (keys.size() > wire::kMaxCheckKeys)
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store check of %zu keys is more than the limit of %zu",
                 keys.size(), wire::kMaxCheckKeys);
  size_t bytes = 4;
  for (const std::string &k : keys) {
    XC_TRY(check_key(k));
    bytes += 4 + k.size();
  }
  if (bytes > wire::max_payload(wire::kCheck))
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap store check of %zu bytes of keys is more than the limit",
                 bytes);
  std::lock_guard<std::mutex> lock(impl_->mu);
  XC_TRY(impl_->usable());
  std::string f = wire::begin_frame(wire::kCheck);
  f.reserve(wire::kHeaderBytes + bytes);
  wire::put_u32(&f, static_cast<uint32_t>(keys.size()));
  for (const std::string &k : keys) wire::put_str(&f, k);
  wire::finish_frame(&f);
  std::string payload;
  XC_TRY(impl_->call(f, wire::kCheck, wire::kPresent, &payload));
  wire::Reader r(payload.data(), payload.size());
  uint32_t n = 0;
  const char *bits = nullptr;
  if (!r.u32(&n) || n != keys.size() || !r.bytes(n, &bits) || !r.done())
    return impl_->fail(impl_->protocol_error(wire::kPresent, "CHECK"));
  present->assign(n, false);
  for (uint32_t i = 0; i < n; ++i) (*present)[i] = bits[i] != 0;
  return Status::Ok();
}

}  // namespace xc::bootstrap
