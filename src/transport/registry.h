// The transports a fabric can use, as a table (NCCL's src/transport.cc):
// each transport folder exports one TransportEntry; registry.cc lists them
// in order of preference, and for every peer the first entry that can reach
// it carries its frames. The fabric only calls connect_transports, so a new
// transport (UCX, CUDA IPC, NCCL) is one folder and one line in registry.cc.
//
// Set-up runs in three phases on every rank of the fabric, with a store
// barrier between them, so one transport's ranks can attach to what the
// others made: create (each entry that won a peer makes what its peers will
// attach to, and may publish addresses in the store), connect (attach to
// the peers'), finish (drop what only set-up needed). A rank whose peers no
// entry reaches, or that reaches none at all, still joins both barriers, so
// nobody waits for it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"
#include "bootstrap/store.h"
#include "transport/transport.h"

namespace xc {

// What a transport may know while it sets up. Its own knobs it reads from
// the XC_* registry (base/env.h) itself.
struct TransportSetup {
  int rank = 0;                  // this process's fabric rank
  int size = 1;                  // ranks in the fabric
  std::vector<int> host_of;      // host index of every rank: equal on one host
  std::string job_id;            // with the token, names this job's shared resources
  std::string token;             // the job's secret (random under xcrun)
  bootstrap::StoreClient *store = nullptr;  // to publish and fetch addresses
  Deadline deadline;             // for everything set-up waits on
  uint64_t timeout_ms = 300000;  // the job's XC_TIMEOUT: bounds a transport's own waits later
  bool thread_safe = true;       // several threads may drive the engine (XC_THREAD_MULTIPLE)
};

// One transport between the phases of its set-up.
class TransportConnector {
 public:
  virtual ~TransportConnector() = default;
  // Phase 2, once every rank has created: attach to the peers (shm: map
  // their segments; UCX: endpoints to their published addresses).
  virtual Status connect() = 0;
  // Phase 3, once every rank has connected: drop what only set-up needed
  // (shm: the segment's name) and hand the transport over.
  virtual std::unique_ptr<Transport> finish() = 0;
};

struct TransportEntry {
  const char *name;
  // Whether this transport can carry frames between setup.rank and peer.
  // Both ends of a pair must get the same answer from every entry before
  // it, so they pick the same one; and the peers an entry reaches must be
  // reached by each other (an equivalence, like "same host"), since they
  // set up together.
  bool (*can_connect)(const TransportSetup &setup, int peer);
  // Phase 1, for the peers this entry won (ascending, never empty): make
  // what they will attach to.
  Status (*create)(const TransportSetup &setup, const std::vector<int> &peers,
                   std::unique_ptr<TransportConnector> *out);
};

// The transports of this process and the one that reaches each rank.
struct Transports {
  std::vector<std::unique_ptr<Transport>> owned;
  std::vector<Transport *> route;  // [fabric rank]; nullptr for ourselves and for ranks none reaches
};

// Every transport this build has, in order of preference.
const std::vector<const TransportEntry *> &transport_table();

// Set up the transports of `table` this rank needs. Every rank of the
// fabric calls it at start-up with the same table (set-up has barriers);
// with size 1 it sets up nothing.
Status connect_transports(const TransportSetup &setup, const std::vector<const TransportEntry *> &table,
                          Transports *out);

}  // namespace xc
