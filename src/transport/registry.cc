#include "transport/registry.h"

#include "base/log.h"
#include "transport/shm/entry.h"
#include "xcomm_build_config.h"
#if XC_HAVE_UCX
#include "transport/ucx/entry.h"
#endif

namespace xc {

const std::vector<const TransportEntry *> &transport_table() {
  // In order of preference: the first that can reach a peer carries its frames.
  static const std::vector<const TransportEntry *> table = {
      &shm::kEntry,
#if XC_HAVE_UCX
      &ucx::kEntry,
#endif
  };
  return table;
}

Status connect_transports(const TransportSetup &setup, const std::vector<const TransportEntry *> &table,
                          Transports *out) {
  Transports ts;
  ts.route.assign(static_cast<size_t>(setup.size), nullptr);
  if (setup.size == 1) {
    *out = std::move(ts);
    return Status::Ok();
  }
  std::vector<std::vector<int>> won(table.size());  // the peers each entry carries
  for (int r = 0; r < setup.size; ++r) {
    if (r == setup.rank) continue;
    for (size_t e = 0; e < table.size(); ++e) {
      if (!table[e]->can_connect(setup, r)) continue;
      won[e].push_back(r);
      break;
    }
  }
  std::vector<std::unique_ptr<TransportConnector>> pending(table.size());
  for (size_t e = 0; e < table.size(); ++e)
    if (!won[e].empty()) XC_TRY_CTX(table[e]->create(setup, won[e], &pending[e]), std::string(table[e]->name) + " set-up");
  XC_TRY_CTX(bootstrap::store_barrier(*setup.store, "transports-created", setup.size, setup.deadline),
             "transport set-up");
  for (size_t e = 0; e < table.size(); ++e)
    if (pending[e]) XC_TRY_CTX(pending[e]->connect(), std::string(table[e]->name) + " set-up");
  XC_TRY_CTX(bootstrap::store_barrier(*setup.store, "transports-connected", setup.size, setup.deadline),
             "transport set-up");
  for (size_t e = 0; e < table.size(); ++e) {
    if (!pending[e]) continue;
    ts.owned.push_back(pending[e]->finish());
    for (int r : won[e]) ts.route[static_cast<size_t>(r)] = ts.owned.back().get();
    XC_INFO("%s carries frames to %zu of %d peers", table[e]->name, won[e].size(), setup.size - 1);
  }
  *out = std::move(ts);
  return Status::Ok();
}

}  // namespace xc
