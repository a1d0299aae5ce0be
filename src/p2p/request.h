// The state of one point-to-point operation: the body behind xc_request_t and
// the unit the engine tracks. Collective algorithms use the same requests.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "transport/transport.h"

namespace xc {

constexpr uint32_t kRequestMagic = 0x52455131;  // "REQ1"
constexpr uint32_t kRequestFreed = 0xdeadbeef;

enum class RequestKind : uint8_t { kSend, kRecv };

struct Request {
  uint32_t magic = kRequestMagic;
  RequestKind kind = RequestKind::kSend;
  bool done = false;
  bool cancelled = false;
  bool collective = false;  // part of a collective: fails when any member crashes
  // The collective op's signature (coll/desc.h), 0 for none. It rides
  // in the frame header of the op's messages; a receive that meets a
  // message of the same op with another signature fails, as do all the op's
  // requests on every member (ranks disagree: mixing data would corrupt).
  uint32_t sig = 0;
  Status status;

  // Matching: fabric ranks; peer -1 = any source, tag -1 = any tag.
  uint64_t ctx = 0;
  int peer = -1;
  int tag = -1;
  // The communicator's members (fabric ranks) — for any-source failure
  // detection and for translating the source back to a communicator rank.
  std::shared_ptr<const std::vector<int>> members;

  // Buffer: send bytes / receive capacity.
  void *buf = nullptr;
  size_t bytes = 0;

  // Outcome (receives): who sent it, with which tag, how big it was.
  int source = -1;
  int source_tag = -1;
  size_t message_bytes = 0;

  // Rendezvous.
  uint64_t id = 0;         // ours, on the wire
  uint64_t remote_id = 0;  // the other side's
  size_t offset = 0;       // bytes streamed so far
  RemoteMem send_mem;  // single copy: the sender's buffer as its transport described it (both sides)
  bool granted = false;      // send, single-copy: GO is out, the receiver may be reading our buffer
};

// The communicator rank of fabric rank r in req's communicator, for
// messages; r itself when unknown.
inline int comm_rank_of(const Request *req, int r) {
  if (!req->members) return r;
  const auto &m = *req->members;
  auto it = std::find(m.begin(), m.end(), r);
  return it == m.end() ? r : static_cast<int>(it - m.begin());
}

}  // namespace xc
