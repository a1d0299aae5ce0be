#include "transport/ucx/entry.h"

#include "base/env.h"
#include "transport/ucx/ucx_transport.h"

namespace xc::ucx {

namespace {

// Every rank on another host (those on ours share memory, earlier in the table).
bool can_connect(const TransportSetup &setup, int peer) {
  return setup.host_of[static_cast<size_t>(peer)] != setup.host_of[static_cast<size_t>(setup.rank)];
}

class Connector final : public TransportConnector {
 public:
  Connector(std::unique_ptr<UcxTransport> t, bootstrap::StoreClient *store, Deadline deadline)
      : t_(std::move(t)), store_(store), deadline_(deadline) {}
  Status connect() override { return t_->connect(store_, deadline_); }
  std::unique_ptr<Transport> finish() override { return std::move(t_); }

 private:
  std::unique_ptr<UcxTransport> t_;
  bootstrap::StoreClient *store_;
  Deadline deadline_;
};

Status create(const TransportSetup &setup, const std::vector<int> &peers, std::unique_ptr<TransportConnector> *out) {
  UcxOptions uo;
  uo.my_rank = setup.rank;
  uo.fabric_size = setup.size;
  uo.peers = peers;
  uo.timeout_ms = setup.timeout_ms;
  int64_t eager = 0, chunk = 0;
  XC_TRY(env_int("XC_UCX_EAGER_BYTES", &eager));
  XC_TRY(env_int("XC_UCX_CHUNK_BYTES", &chunk));
  uo.eager_bytes = static_cast<size_t>(eager);
  uo.chunk_bytes = static_cast<size_t>(chunk);
  uo.inflight_bytes = 8 * uo.chunk_bytes;
  std::string large;
  XC_TRY(env_choice("XC_UCX_LARGE", &large));
  uo.single_copy = large == "get";
  std::unique_ptr<UcxTransport> t;
  XC_TRY(UcxTransport::create(uo, setup.store, &t));
  *out = std::make_unique<Connector>(std::move(t), setup.store, setup.deadline);
  return Status::Ok();
}

}  // namespace

const TransportEntry kEntry = {"ucx", can_connect, create};

}  // namespace xc::ucx
