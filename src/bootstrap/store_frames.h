// The bootstrap store's request parser: pure functions over bytes, and the
// incremental assembler each server connection feeds what recv() gives it.
// Nothing here touches a socket, so the fuzz target (tests/fuzz) drives it
// directly with random and mutated frames cut at random points.
//
// What a connection may make the server hold is decided here:
// - before the token: at most one HELLO frame (kMaxHelloFrame bytes);
// - after it: one partial frame, and a frame whose payload is above the
//   server's limit (max_value) is refused before its body is buffered (the
//   stream then skips the body, so the connection stays in step);
// - all connections together: the bytes of partial frames are charged to one
//   Budget, and a large frame that would pass it is refused the same way.
//   Frames up to kSmallFrame (every request xcomm makes but an allgather's
//   packed value) are never refused for the budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bootstrap/store_wire.h"

namespace xc::bootstrap::wire {

// Header plus the largest HELLO payload: all an unauthenticated peer can make
// the server buffer.
constexpr size_t kMaxHelloFrame = kHeaderBytes + 4 + 4 + kMaxTokenBytes;
// A frame of at most this many bytes is never refused for the budget.
constexpr size_t kSmallFrame = 64 << 10;

// The largest payload of a request of `type` the server takes when its values
// are limited to max_value (<= kMaxValueBytes); max_payload(type) for the
// small types.
inline size_t request_limit(uint8_t type, size_t max_value) {
  switch (type) {
    case kSet: return 4 + kMaxKeyBytes + 4 + max_value;
    case kCheck: return 4 + max_value;
    default: return max_payload(type);
  }
}

// What the first bytes of a request stream say.
enum class Head {
  kNeedMore,   // fewer bytes than a header
  kFrame,      // an acceptable header: *type and *len are set (the payload may still be coming)
  kNotHello,   // unauthenticated and not a HELLO: answer REFUSED, then close
  kMalformed,  // an unknown or answer type, or longer than the protocol allows: drop
  kTooLarge,   // allowed by the protocol, over this server's limit: answer ERROR, skip the payload
};

// Reads only p[0, min(n, kHeaderBytes)).
Head scan_head(const char *p, size_t n, bool authed, size_t max_value, uint8_t *type, uint32_t *len);

// One request, decoded. The views point into the payload it was decoded from.
struct Request {
  uint8_t type = 0;
  uint32_t version = 0;                // HELLO
  std::string_view token;              // HELLO
  std::string_view key;                // SET, GET, ADD
  std::string_view value;              // SET
  int64_t delta = 0;                   // ADD
  std::vector<std::string_view> keys;  // CHECK
};

// Decodes a whole payload of a request type. false when it does not parse
// exactly within the protocol's bounds (the server drops the connection).
bool decode_request(uint8_t type, const char *p, size_t n, Request *out);

// The frame of r, header included: what decode_request reads back. Fields
// are not checked against the bounds (the fuzz target makes oversized ones).
std::string encode_request(const Request &r);

// Bytes held for partly received requests, over every connection of one
// server (single-threaded: the server's thread owns it).
struct Budget {
  size_t limit = SIZE_MAX;
  size_t used = 0;
  size_t peak = 0;
};

// One connection's input: turns the bytes recv() returns into requests.
class RequestStream {
 public:
  enum class Event {
    kNeedMore,    // the window is used up
    kFrame,       // a whole request
    kNotHello,    // see Head; the stream is finished
    kMalformed,   // see Head; the stream is finished
    kTooLarge,    // see Head; the stream skips the payload by itself
    kOverBudget,  // the budget cannot hold this large frame: answer ERROR; the rest is skipped
  };
  struct Item {
    Event event = Event::kNeedMore;
    uint8_t type = 0;
    uint32_t len = 0;                // the payload length the header announced
    const char *payload = nullptr;   // kFrame: len bytes, valid until the next call
  };

  RequestStream(Budget *budget, size_t max_value) : budget_(budget), max_value_(max_value) {}
  ~RequestStream() { release(); }
  RequestStream(const RequestStream &) = delete;
  RequestStream &operator=(const RequestStream &) = delete;

  // Takes bytes from the window [*p, *p + *n), advancing it, up to the next
  // event. A frame that lies whole in the window is not copied.
  Item next(const char **p, size_t *n, bool authed);

  // Bytes of memory held (charged to the budget).
  size_t held() const { return charged_; }
  // Bytes of a partial frame received so far (0 between frames).
  size_t partial() const { return buf_.size(); }
  // Payload bytes of a refused frame still to be discarded.
  size_t skipping() const { return skip_; }
  // Frees the partial frame (the connection is being dropped).
  void release();

 private:
  // Makes room for `want` bytes of a frame of `total` bytes, growing by at
  // most doubling (memory follows what has arrived, never what a header
  // announces). false when the budget refuses.
  bool reserve(size_t want, size_t total);
  void append(const char *p, size_t n) { buf_.insert(buf_.end(), p, p + n); }

  Budget *budget_;
  size_t max_value_;
  std::vector<char> buf_;  // a partial frame, header first
  size_t charged_ = 0;     // buf_.capacity() as charged to the budget
  size_t skip_ = 0;
  uint8_t type_ = 0;       // the header in buf_, once it is whole
  uint32_t len_ = 0;
  bool delivered_ = false;  // buf_ holds a frame handed out by the last call
};

}  // namespace xc::bootstrap::wire
