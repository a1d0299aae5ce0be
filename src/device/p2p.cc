#include "device/p2p.h"

#include <atomic>
#include <string>

#include "device/control.h"
#include "device/ipc.h"

namespace xc::device {
namespace {

struct Description {
  BufDesc buf;
  uint64_t bytes;
  uint32_t ack_id;
  uint32_t reserved;
};

struct Ack {
  int32_t code;  // XC_SUCCESS, or why the receiver read nothing
  int32_t reserved;
};

std::atomic<uint32_t> g_next_ack{1};

int ack_tag(uint32_t id) { return kAckTagBit | static_cast<int>(id % kAckIds); }

// A deadline that passed, said the way the user sees it.
Status unmatched(const CommView &c, const P2pOp &op) {
  std::string peer = op.peer < 0 ? "any rank" : "rank " + std::to_string(op.peer);
  std::string tag = op.tag < 0 ? "any tag" : "tag " + std::to_string(op.tag);
  return Error(XC_ERR_TIMEOUT,
               "device %s %s (%s): no matching device %s within %llu ms on communicator %s (device messages match "
               "device messages only; ranks that send to each other before receiving need xc_group_start/end)",
               op.send ? "send to" : "receive from", peer.c_str(), tag.c_str(), op.send ? "receive" : "send",
               static_cast<unsigned long long>(c.timeout_ms), c.name.c_str());
}

}  // namespace

Status run_p2p(const CommView &c, std::vector<P2pOp> &ops, JobEnv &env) {
  size_t n = ops.size();
  std::vector<Description> desc(n);
  std::vector<Ack> acks(n);
  std::vector<Request *> pending(n, nullptr);
  std::vector<Status> result(n);
  Messages msgs(c);
  Reached reached;
  Status first;
  auto fail = [&](size_t i, Status st) {
    if (first.ok()) first = st;
    result[i] = std::move(st);
  };

  // Every send's description goes out before any receive waits.
  for (size_t i = 0; i < n; ++i) {
    P2pOp &op = ops[i];
    if (!op.send) continue;
    Status st = describe(env.dev(), op.bytes ? op.buf : nullptr, &desc[i].buf);
    if (!st.ok()) {
      fail(i, std::move(st.with_context("describing the send buffer")));
      continue;
    }
    desc[i].bytes = op.bytes;
    desc[i].ack_id = g_next_ack.fetch_add(1);
    pending[i] = msgs.recv(kControlCtxOffset, op.peer, ack_tag(desc[i].ack_id), &acks[i], sizeof(Ack), false);
    msgs.send(kP2pCtxOffset, op.peer, op.tag, &desc[i], sizeof(Description), false);
  }
  for (size_t i = 0; i < n; ++i)
    if (!ops[i].send) pending[i] = msgs.recv(kP2pCtxOffset, ops[i].peer, ops[i].tag, &desc[i], sizeof(Description), false);

  // Receives, in order: map the sender's buffer and copy.
  std::vector<int> sources(n, -1);
  for (size_t i = 0; i < n; ++i) {
    P2pOp &op = ops[i];
    if (op.send) continue;
    Status st = msgs.wait(pending[i], env.deadline(), "device receive");
    if (!st.ok()) {
      fail(i, st.code() == XC_ERR_TIMEOUT ? unmatched(c, op) : std::move(st));
      continue;
    }
    sources[i] = msgs.source_rank(pending[i]);
    if (pending[i]->message_bytes != sizeof(Description)) {
      fail(i, Error(XC_ERR_INTERNAL, "device receive: a malformed description (%zu bytes) from rank %d",
                    pending[i]->message_bytes, sources[i]));
      continue;
    }
    Ack &ack = acks[i];
    ack.code = XC_SUCCESS;
    if (desc[i].bytes > op.bytes) {
      ack.code = XC_ERR_TRUNCATED;
      fail(i, Error(XC_ERR_TRUNCATED, "device receive: the message of %llu bytes from rank %d does not fit %zu bytes",
                    static_cast<unsigned long long>(desc[i].bytes), sources[i], op.bytes));
    } else if (desc[i].bytes) {
      void *src = nullptr;
      st = reached.reach(env.dev(), desc[i].buf, &src);
      if (st.ok()) st = env.dev()->copy_async(op.buf, src, desc[i].bytes, env.work());
      if (!st.ok()) {
        ack.code = st.code();
        fail(i, std::move(st.with_context("device receive from rank " + std::to_string(sources[i]))));
      }
    }
  }
  // Copies done, then the senders hear that their buffers are free.
  Status copied = env.finish_work();
  for (size_t i = 0; i < n; ++i) {
    if (ops[i].send || sources[i] < 0) continue;
    if (!copied.ok() && acks[i].code == XC_SUCCESS) {
      acks[i].code = copied.code();
      fail(i, copied);
    }
    msgs.send(kControlCtxOffset, sources[i], ack_tag(desc[i].ack_id), &acks[i], sizeof(Ack), false);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!ops[i].send || !pending[i] || !result[i].ok()) continue;
    Status st = msgs.wait(pending[i], env.deadline(), "device send");
    if (st.code() == XC_ERR_TIMEOUT) st = unmatched(c, ops[i]);
    if (st.ok() && acks[i].code != XC_SUCCESS && acks[i].code != XC_ERR_TRUNCATED)
      st = Error(static_cast<xc_result_t>(acks[i].code), "device send: the receiver (rank %d) could not read the buffer",
                 ops[i].peer);
    if (!st.ok()) fail(i, std::move(st));
  }
  Status sent = msgs.wait_all(env.deadline(), "device point-to-point");
  if (first.ok() && !sent.ok()) first = sent;
  for (size_t i = 0; i < n; ++i) {
    if (!ops[i].outcome) continue;
    if (ops[i].send)
      ops[i].outcome->finish(result[i], ops[i].peer, ops[i].tag, ops[i].bytes);
    else
      ops[i].outcome->finish(result[i], sources[i], pending[i] && pending[i]->done ? pending[i]->source_tag : -1,
                             static_cast<size_t>(desc[i].bytes));
  }
  return first;
}

}  // namespace xc::device
