// The bootstrap key-value store: how ranks find each other before any
// transport exists. Rank 0 (or the process that made a unique id) serves it
// over TCP on a background thread; every rank is a client. Each connection
// must first present the job's token or it is dropped. Messages are bounded
// (kMaxValueBytes) and every blocking call has a deadline. What a peer can
// make the server hold is bounded too (StoreLimits): the port is reachable
// by anyone on the network, and the store must not be held hostage by
// connections that never present the token, nor by one that does and then
// stalls in the middle of a large request.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/status.h"

namespace xc::bootstrap {

constexpr size_t kMaxKeyBytes = 1024;
constexpr size_t kMaxValueBytes = 64u << 20;
constexpr size_t kTokenBytes = 32;  // hex characters

// A fresh random token (kTokenBytes hex characters) from getrandom().
std::string make_token();

// What the server lets its peers make it hold. The defaults come from the
// XC_STORE_* variables (base/env.cc says why each is what it is).
struct StoreLimits {
  // A connection that has not presented the token this long after it was
  // accepted is dropped (a rank sends its token right after connecting).
  int handshake_ms = 5000;
  // At most this many connections without the token at once; one more and
  // the oldest is dropped, so the server never runs out of file
  // descriptors because of them and a rank that connects still gets in.
  size_t max_pending = 64;
  // Largest value a SET may carry (and key list a CHECK), at most
  // kMaxValueBytes. A larger one is answered with an error; the connection
  // stays usable.
  size_t max_value = kMaxValueBytes;
  // Bytes of partly received requests held over all connections. A request
  // larger than wire::kSmallFrame that would pass it is answered with an
  // error (smaller ones are never refused).
  size_t max_inflight = size_t{128} << 20;

  // The limits XC_STORE_HANDSHAKE_MS, XC_STORE_MAX_PENDING,
  // XC_STORE_MAX_VALUE and XC_STORE_MAX_INFLIGHT give.
  static Status from_env(StoreLimits *out);
};

// What a server holds now (for tests and logs).
struct StoreStats {
  size_t connections = 0;    // open, with or without the token
  size_t pending = 0;        // open, without the token yet
  size_t buffered = 0;       // bytes of partly received requests
  size_t peak_buffered = 0;  // the most `buffered` has been
  uint64_t dropped_pending = 0;  // connections dropped for the handshake deadline or max_pending
};

class StoreServer {
 public:
  // Serve on listen_fd when >= 0 (an inherited listening socket, TCP or
  // Unix; the server takes ownership), else bind host:port (port 0 = any
  // free port). The first form takes its limits from the environment.
  static Status start(const std::string &host, uint16_t port, int listen_fd, const std::string &token,
                      std::unique_ptr<StoreServer> *out);
  static Status start(const std::string &host, uint16_t port, int listen_fd, const std::string &token,
                      const StoreLimits &limits, std::unique_ptr<StoreServer> *out);
  ~StoreServer();  // stops the thread, closes every socket
  uint16_t port() const;
  // Thread safety: may be called from any thread; the numbers are those of
  // the end of the server's last round (at most a poll() ago).
  StoreStats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

class StoreClient {
 public:
  // Connect (retrying until the deadline while the server is not up yet) and
  // present the token.
  static Status connect(const std::string &host, uint16_t port, const std::string &token, Deadline deadline,
                        std::unique_ptr<StoreClient> *out);
  ~StoreClient();

  Status set(const std::string &key, const std::string &value);
  // Block until key exists (or the deadline passes: XC_ERR_TIMEOUT).
  Status get(const std::string &key, Deadline deadline, std::string *value);
  // Atomically add delta to the integer stored at key (absent = 0); *result is the new value.
  Status add(const std::string &key, int64_t delta, int64_t *result);
  // Which of keys exist now (does not block).
  Status check(const std::vector<std::string> &keys, std::vector<bool> *present);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The largest value a store takes by this process's XC_STORE_MAX_VALUE
// (kMaxValueBytes when it is unset or bad).
size_t store_max_value();

// Every rank publishes `mine` under prefix/<rank> and reads everyone's, in
// rank order. On timeout the error names the ranks that never arrived, and
// with ranks_per_node > 0 (node k holds ranks k*n .. k*n+n-1) their nodes.
Status store_allgather(StoreClient &store, const std::string &prefix, int rank, int nranks,
                       const std::string &mine, Deadline deadline, std::vector<std::string> *all,
                       int ranks_per_node = 0);

// All nranks reach this point (a counter under key). The error on timeout says
// how many arrived.
Status store_barrier(StoreClient &store, const std::string &key, int nranks, Deadline deadline);

}  // namespace xc::bootstrap
