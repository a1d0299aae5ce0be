// Point-to-point on device memory between ranks of one host. The sender
// describes its buffer (device/ipc.h) in a message matched like any other
// (communicator, source, tag — any-source too, in send order) on the
// device context; the receiver maps the sender's allocation, copies on its
// stream, and acknowledges, which completes the send (the sender's buffer
// is free again). The ops of one batch (a group) progress together: every
// description goes out first, so ranks that send to each other do not wait
// on each other.
#pragma once

#include <memory>
#include <vector>

#include "device/comm_view.h"
#include "device/stream.h"

namespace xc::device {

struct P2pOp {
  bool send = false;
  void *buf = nullptr;
  size_t bytes = 0;  // send: message size; receive: capacity
  int peer = -1;     // communicator rank; receive: -1 for any
  int tag = -1;      // receive: -1 for any
  std::shared_ptr<OpOutcome> outcome;  // receives: source, tag, size; may be null
};

// Runs on the stream's thread; every op's outcome is finished on return.
Status run_p2p(const CommView &c, std::vector<P2pOp> &ops, JobEnv &env);

}  // namespace xc::device
