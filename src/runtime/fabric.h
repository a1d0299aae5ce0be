// A fabric is one job as this process sees it: its rank among all ranks, who
// runs where, the bootstrap store, the transports to every peer and the
// point-to-point engine over them. It is made once per xc_init or
// xc_comm_init_rank; every communicator split from it shares it, so splits
// and point-to-point never make new connections.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "bootstrap/store.h"
#include "p2p/engine.h"
#include "topo/topology.h"
#include "transport/registry.h"

namespace xc {

struct FabricSetup {
  int rank = 0;
  int size = 1;
  std::string store_host;  // empty with size 1
  uint16_t store_port = 0;
  int store_fd = -1;       // rank 0: serve on this inherited socket
  bool serve_store = false;  // rank 0 of xc_init serves; unique-id stores are served elsewhere
  std::string token;
  std::string job_id;
  uint64_t timeout_ms = 300000;
  bool thread_safe = true;
  int ranks_per_node = 0;  // the launcher's node layout, for start-up messages; 0 unknown
};

class Fabric {
 public:
  static Status create(const FabricSetup &setup, std::shared_ptr<Fabric> *out);
  ~Fabric();

  int rank() const { return rank_; }
  int size() const { return size_; }
  P2pEngine &engine() { return *engine_; }
  // Index of the host fabric rank r runs on (equal index = same host).
  int host_of(int r) const { return host_index_[static_cast<size_t>(r)]; }
  int host_count() const { return host_count_; }
  // The GPU interconnect class of host h and its GPU count, as that host's
  // leader probed it and every rank read it (so all ranks agree).
  topo::HostClass host_class(int h) const { return hosts_[static_cast<size_t>(h)].cls; }
  int host_gpus(int h) const { return hosts_[static_cast<size_t>(h)].gpus; }
  // The bootstrap store (nullptr in a job of one): the way to reach every
  // rank while no transport does.
  bootstrap::StoreClient *store() { return store_.get(); }
  // How frames reach fabric rank r ("shm", "ucx tcp/eth0"; "self", "none").
  std::string route_summary(int r) const {
    if (r == rank_) return "self";
    Transport *t = transports_.route[static_cast<size_t>(r)];
    return t ? t->route_summary(r) : "none";
  }
  // True when a transport reaches every one of these fabric ranks.
  bool reaches_all(const std::vector<int> &ranks) const {
    for (int r : ranks)
      if (!engine_->reaches(r)) return false;
    return true;
  }

  // Contexts of the live communicators made by xc_comm_create_group: two
  // live groups made from one parent with the same ranks and tag would get
  // the same context. claim_context is false when ctx is live already;
  // else *generation counts the earlier claims of ctx (the same on every
  // member: they create and free the group in one order), so what such a
  // group keys in the bootstrap store is never a dead namesake's key.
  bool claim_context(uint64_t ctx, uint32_t *generation) {
    std::lock_guard<std::mutex> lock(claimed_mu_);
    if (!claimed_.insert(ctx).second) return false;
    *generation = claims_[ctx]++;
    return true;
  }
  // rank 0's job id (names shared memory and trace files); may be empty.
  const std::string &job_id() const { return job_id_; }
  void release_context(uint64_t ctx) {
    std::lock_guard<std::mutex> lock(claimed_mu_);
    claimed_.erase(ctx);
  }

  // A communicator of this fabric was made / freed. Freeing the last one
  // announces this process's departure then, not when the fabric goes: a
  // request handle never waited for or freed keeps the fabric alive to the
  // exit, and its peers saw a crash ("failed: its process is gone").
  void comm_made() { comms_.fetch_add(1, std::memory_order_relaxed); }
  void comm_freed() {
    if (comms_.fetch_sub(1, std::memory_order_acq_rel) == 1) announce_departure();
  }

 private:
  Fabric() = default;
  Status bootstrap(const FabricSetup &setup);
  Status set_up_transports(const FabricSetup &setup);
  Status agree_on_topology(Deadline deadline);
  void announce_departure();  // once

  struct HostSummary {
    topo::HostClass cls = topo::HostClass::kNoGpu;
    int gpus = 0;
  };

  int rank_ = 0;
  int size_ = 1;
  std::string job_id_;  // rank 0's: names shared memory
  std::vector<int> host_index_;
  int host_count_ = 1;
  std::vector<HostSummary> hosts_;
  std::unique_ptr<bootstrap::StoreServer> server_;
  std::unique_ptr<bootstrap::StoreClient> store_;
  Transports transports_;
  std::unique_ptr<P2pEngine> engine_;  // uses transports_: goes first
  std::atomic<int> comms_{0};          // live communicators
  std::atomic<bool> departed_{false};  // departure announced
  std::mutex claimed_mu_;
  std::unordered_set<uint64_t> claimed_;
  std::unordered_map<uint64_t, uint32_t> claims_;  // every claim so far, by context
};

}  // namespace xc
