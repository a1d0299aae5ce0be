#include "transport/shm/entry.h"

#include <algorithm>

#include "base/env.h"
#include "transport/shm/shm_transport.h"

namespace xc::shm {

namespace {

// Ranks with equal host ids share memory.
bool can_connect(const TransportSetup &setup, int peer) {
  return setup.host_of[static_cast<size_t>(peer)] == setup.host_of[static_cast<size_t>(setup.rank)];
}

class Connector final : public TransportConnector {
 public:
  explicit Connector(std::unique_ptr<ShmTransport> t) : t_(std::move(t)) {}
  Status connect() override { return t_->connect(); }
  std::unique_ptr<Transport> finish() override {
    t_->unlink_own();  // every peer has mapped it: nothing is left in /dev/shm, even after kill -9
    return std::move(t_);
  }

 private:
  std::unique_ptr<ShmTransport> t_;
};

Status create(const TransportSetup &setup, const std::vector<int> &peers, std::unique_ptr<TransportConnector> *out) {
  ShmOptions so;
  so.name_prefix = "/xcomm-" + setup.job_id + "-" + setup.token.substr(0, 8) + "-";
  so.my_rank = setup.rank;
  so.fabric_size = setup.size;
  so.local_ranks = peers;
  so.local_ranks.insert(std::upper_bound(so.local_ranks.begin(), so.local_ranks.end(), setup.rank), setup.rank);
  int64_t ring = 0, eager = 0, chunk = 0;
  XC_TRY(env_int("XC_SHM_RING_BYTES", &ring));
  XC_TRY(env_int("XC_SHM_EAGER_BYTES", &eager));
  XC_TRY(env_int("XC_SHM_CHUNK_BYTES", &chunk));
  so.ring_bytes = static_cast<size_t>(ring);
  so.eager_bytes = static_cast<size_t>(eager);
  so.chunk_bytes = static_cast<size_t>(chunk);
  std::string large;
  XC_TRY(env_choice("XC_SHM_LARGE", &large));
  so.single_copy = large == "cma";
  std::unique_ptr<ShmTransport> t;
  XC_TRY(ShmTransport::create(so, &t));
  *out = std::make_unique<Connector>(std::move(t));
  return Status::Ok();
}

}  // namespace

const TransportEntry kEntry = {"shm", can_connect, create};

}  // namespace xc::shm
