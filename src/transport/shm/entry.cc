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
  so.ring_bytes = static_cast<size_t>(env_get_int("XC_SHM_RING_BYTES"));
  so.eager_bytes = static_cast<size_t>(env_get_int("XC_SHM_EAGER_BYTES"));
  so.chunk_bytes = static_cast<size_t>(std::max<int64_t>(4096, env_get_int("XC_SHM_CHUNK_BYTES")));
  std::string large = env_get("XC_SHM_LARGE");
  if (large != "copy" && large != "cma")
    return Error(XC_ERR_INVALID_ARGUMENT, "XC_SHM_LARGE=%s: expected copy or cma", large.c_str());
  so.single_copy = large == "cma";
  std::unique_ptr<ShmTransport> t;
  XC_TRY(ShmTransport::create(so, &t));
  *out = std::make_unique<Connector>(std::move(t));
  return Status::Ok();
}

}  // namespace

const TransportEntry kEntry = {"shm", can_connect, create};

}  // namespace xc::shm
