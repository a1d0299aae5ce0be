// The point-to-point engine's protocol: the kinds of frames engines exchange
// and what the fields of a FrameHeader (transport/transport.h) mean in each.
// A transport carries headers without reading them; only p2p/ speaks this.
//
//   field   EAGER, RTS          CTS                  DATA        GO, NACK, FIN           MISMATCH
//   flags   op's signature      FrameFlags           -           -                       sender's signature
//   bytes   message size        -                    piece size  -                       the other signature
//   id      RTS: sender's id    sender's id          recv's id   GO, NACK: recv's id;    the other rank
//                                                                FIN: sender's id
//   arg     -                   receiver's id        offset      GO: sender's id         reporter + 1 (0: src)
//
// REVOKE: ctx is the communicator's first context, arg the fabric rank that
// called xc_comm_revoke; the payload lists the members' fabric ranks (int32),
// so a receiver can pass the news on without knowing the communicator.
//
// Payloads: EAGER carries the message, DATA its piece. An RTS carries the
// sender's buffer as the sender's transport described it (Transport::
// describe, at most RemoteMem::kMaxBytes) when its route offers single copy;
// then the receiver may ask to read it itself (CTS with kCtsSingleCopy). An
// RTS without payload is always streamed.
//
// Collective signatures: what a signature means is the collective layer's
// business (coll/desc.h; named through EngineOptions::name_signature). The
// engine only compares them: two signatures of one op (ctx, tag) that differ
// prove the ranks are in different collectives.
#pragma once

#include <cstdint>

namespace xc {

enum FrameKind : uint32_t {
  kFrameEager = 1,  // header + the whole message
  kFrameRts = 2,    // ready to send: a large message waits for its receiver
  kFrameCts = 3,    // clear to send (receiver → sender), or discard
  kFrameData = 4,   // a piece of a large message after CTS
  kFrameFin = 5,    // receiver read the message itself (single-copy); sender is done
  kFrameGo = 6,     // sender → receiver: read my memory now (single-copy), I keep it until FIN
  kFrameNack = 7,   // sender → receiver: the message was withdrawn (send cancelled); fail the receive
  kFrameMismatch = 8,  // to every member: ranks are in different ops at (ctx, tag); fail all of that op
  kFrameRevoke = 9,    // to every member: the communicator of ctx is revoked (p2p/revoke.cc)
};

enum FrameFlags : uint32_t {
  kCtsDiscard = 1,   // receive was truncated: send no data, complete
  kCtsSingleCopy = 2 // receiver asks to read the sender's memory itself (GO, then FIN)
};

// Two signatures of one op that prove the ranks disagree (0 means "none").
inline bool signatures_conflict(uint32_t a, uint32_t b) { return a != 0 && b != 0 && a != b; }

}  // namespace xc
