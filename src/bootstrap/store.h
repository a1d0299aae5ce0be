// The bootstrap key-value store: how ranks find each other before any
// transport exists. Rank 0 (or the process that made a unique id) serves it
// over TCP on a background thread; every rank is a client. Each connection
// must first present the job's token or it is dropped. Messages are bounded
// (kMaxValueBytes) and every blocking call has a deadline.
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

class StoreServer {
 public:
  // Serve on listen_fd when >= 0 (an inherited listening socket; the server
  // takes ownership), else bind host:port (port 0 = any free port).
  static Status start(const std::string &host, uint16_t port, int listen_fd, const std::string &token,
                      std::unique_ptr<StoreServer> *out);
  ~StoreServer();  // stops the thread, closes every socket
  uint16_t port() const;

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

// Every rank publishes `mine` under prefix/<rank> and reads everyone's, in
// rank order. On timeout the error names the ranks that never arrived.
Status store_allgather(StoreClient &store, const std::string &prefix, int rank, int nranks,
                       const std::string &mine, Deadline deadline, std::vector<std::string> *all);

// All nranks reach this point (a counter under key). The error on timeout says
// how many arrived.
Status store_barrier(StoreClient &store, const std::string &key, int nranks, Deadline deadline);

}  // namespace xc::bootstrap
