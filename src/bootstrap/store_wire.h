// Wire format of the bootstrap store, shared by the server, the client and the
// unit tests (which speak it over a raw socket to check the bounds).
//
// Every message, in both directions, is one frame:
//
//   u32 payload_length (little-endian) | u8 type | payload_length bytes
//
// Inside a payload a string is `u32 length | bytes` and an integer is a
// little-endian i64. The first frame of a connection must be HELLO with the
// job token; anything else, or a wrong token, gets REFUSED and the connection
// is closed. A frame whose length is above the bound of its type, an unknown
// type, or a payload that does not parse exactly drops the connection: the
// server never buffers more than one bounded frame per connection, and an
// unauthenticated peer can make it buffer only a HELLO.
//
// Requests and their answers (one answer per request, in order):
//   HELLO  u32 version, str token      → OK | REFUSED
//   SET    str key, str value          → OK
//   GET    str key                     → VALUE str value (parked until the key is set)
//                                        | CANCELLED (after a CANCEL)
//   ADD    str key, i64 delta          → INT i64 new_value | ERROR str message
//   CHECK  u32 n, n × str key          → PRESENT n × u8 (0 or 1)
//   CANCEL (empty)                     → nothing of its own: a parked GET is
//                                        answered CANCELLED, otherwise ignored
// CANCEL lets a client whose GET deadline passed give up without losing the
// connection: the server handles frames in order, so the GET gets exactly one
// answer (VALUE if the key came first, CANCELLED otherwise).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "bootstrap/store.h"

namespace xc::bootstrap::wire {

constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 5;
// Longest token a HELLO may carry (make_token() gives kTokenBytes).
constexpr size_t kMaxTokenBytes = 256;
// Longest error text in an ERROR answer.
constexpr size_t kMaxErrorBytes = 4096;
// A CHECK names at most this many keys (and its frame is bounded below).
constexpr size_t kMaxCheckKeys = 1u << 20;

enum Type : uint8_t {
  kHello = 1,
  kSet = 2,
  kGet = 3,
  kAdd = 4,
  kCheck = 5,
  kCancel = 6,

  kOk = 64,
  kRefused = 65,
  kValue = 66,
  kInt = 67,
  kPresent = 68,
  kCancelled = 69,
  kError = 70,
};

// Largest payload a frame of this type may announce; 0 for an unknown type
// (CANCEL, whose payload is empty, is handled by its caller).
inline size_t max_payload(uint8_t type) {
  switch (type) {
    case kHello: return 4 + 4 + kMaxTokenBytes;
    case kSet: return 4 + kMaxKeyBytes + 4 + kMaxValueBytes;
    case kGet: return 4 + kMaxKeyBytes;
    case kAdd: return 4 + kMaxKeyBytes + 8;
    case kCheck: return 4 + kMaxValueBytes;
    case kCancel: return 0;
    case kOk: return 0;
    case kRefused: return 0;
    case kValue: return 4 + kMaxValueBytes;
    case kInt: return 8;
    case kPresent: return 4 + kMaxCheckKeys;
    case kCancelled: return 0;
    case kError: return 4 + kMaxErrorBytes;
    default: return 0;
  }
}

inline bool known_type(uint8_t type) {
  return (type >= kHello && type <= kCancel) || (type >= kOk && type <= kError);
}

inline void put_u32(std::string *out, uint32_t v) {
  char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
               static_cast<char>(v >> 24)};
  out->append(b, 4);
}
inline void put_i64(std::string *out, int64_t value) {
  uint64_t v = static_cast<uint64_t>(value);
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 8);
}
inline void put_str(std::string *out, const std::string &s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out->append(s);
}
inline uint32_t get_u32(const char *p) {
  const unsigned char *u = reinterpret_cast<const unsigned char *>(p);
  return static_cast<uint32_t>(u[0]) | static_cast<uint32_t>(u[1]) << 8 | static_cast<uint32_t>(u[2]) << 16 |
         static_cast<uint32_t>(u[3]) << 24;
}

// Starts a frame of `type`; finish_frame() fills in the length.
inline std::string begin_frame(uint8_t type) {
  std::string f(kHeaderBytes, '\0');
  f[4] = static_cast<char>(type);
  return f;
}
inline void finish_frame(std::string *frame) {
  uint32_t n = static_cast<uint32_t>(frame->size() - kHeaderBytes);
  for (int i = 0; i < 4; ++i) (*frame)[i] = static_cast<char>(n >> (8 * i));
}

// Reads fields out of one payload; every read is bounds-checked and a
// failure sticks (ok() turns false).
class Reader {
 public:
  Reader(const char *data, size_t size) : p_(data), left_(size) {}
  bool u32(uint32_t *v) {
    if (!ok_ || left_ < 4) return ok_ = false;
    *v = get_u32(p_);
    p_ += 4;
    left_ -= 4;
    return true;
  }
  bool i64(int64_t *v) {
    if (!ok_ || left_ < 8) return ok_ = false;
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(static_cast<unsigned char>(p_[i])) << (8 * i);
    *v = static_cast<int64_t>(u);
    p_ += 8;
    left_ -= 8;
    return true;
  }
  // A string of at most `limit` bytes.
  bool str(size_t limit, std::string *s) {
    uint32_t n = 0;
    if (!u32(&n)) return false;
    if (n > limit || n > left_) return ok_ = false;
    s->assign(p_, n);
    p_ += n;
    left_ -= n;
    return true;
  }
  // The same without a copy: *s points into the payload.
  bool view(size_t limit, std::string_view *s) {
    uint32_t n = 0;
    if (!u32(&n)) return false;
    if (n > limit || n > left_) return ok_ = false;
    *s = std::string_view(p_, n);
    p_ += n;
    left_ -= n;
    return true;
  }
  size_t left() const { return left_; }
  bool bytes(size_t n, const char **out) {
    if (!ok_ || n > left_) return ok_ = false;
    *out = p_;
    p_ += n;
    left_ -= n;
    return true;
  }
  bool ok() const { return ok_; }
  // Everything read and nothing left over.
  bool done() const { return ok_ && left_ == 0; }

 private:
  const char *p_;
  size_t left_;
  bool ok_ = true;
};

// Owns one file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd &&o) noexcept : fd_(o.release()) {}
  UniqueFd &operator=(UniqueFd &&o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd &) = delete;
  UniqueFd &operator=(const UniqueFd &) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);  // never retried on EINTR: the fd is gone either way on Linux
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// "host:port", with an IPv6 address in brackets.
inline std::string format_addr(const std::string &host, uint16_t port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

}  // namespace xc::bootstrap::wire
