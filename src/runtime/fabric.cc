#include "runtime/fabric.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "base/env.h"
#include "base/host_id.h"
#include "base/log.h"
#include "coll/desc.h"
#include "topo/cores.h"

namespace xc {

namespace {

// What each rank tells the others at start-up. The job id (no newline in
// it: [A-Za-z0-9_-]) is rank 0's for everyone: processes that join by a
// unique id may come from another launch with another XC_JOB_ID
// (xc_comm_grow), and shared-memory names must match.
struct RankCard {
  std::string job;
  std::string host;
  pid_t pid = 0;

  std::string encode() const { return job + "\n" + host + "\n" + std::to_string(pid); }
  static Status decode(const std::string &text, int rank, RankCard *out) {
    size_t first = text.find('\n'), nl = text.rfind('\n');
    if (first == std::string::npos || nl == first)
      return Error(XC_ERR_INTERNAL, "rank %d sent a malformed start-up card", rank);
    out->job = text.substr(0, first);
    out->host = text.substr(first + 1, nl - first - 1);
    out->pid = static_cast<pid_t>(std::stol(text.substr(nl + 1)));
    return Status::Ok();
  }
};

Status spin_polls(size_t local_ranks, int *spin) {
  int64_t polls = 0;
  if (env_is_set("XC_SPIN")) {
    XC_TRY(env_int("XC_SPIN", &polls));
  } else {
    // More ranks than cores: a spinning rank steals the core its peer needs,
    // so it soon turns to sched_yield polling (P2pEngine::wait).
    polls = topo::oversubscribed(static_cast<int>(local_ranks)) ? 20 : 2000;
  }
  *spin = static_cast<int>(polls);
  return Status::Ok();
}

}  // namespace

Status Fabric::create(const FabricSetup &setup, std::shared_ptr<Fabric> *out) {
  std::shared_ptr<Fabric> f(new Fabric());
  XC_TRY(f->bootstrap(setup));
  *out = std::move(f);
  return Status::Ok();
}

Fabric::~Fabric() {
  announce_departure();  // a fabric whose communicators never came (failed start-up)
  engine_.reset();
  transports_ = Transports();
  store_.reset();
  server_.reset();
}

void Fabric::announce_departure() {
  if (engine_ && !departed_.exchange(true)) engine_->announce_departure();
}

Status Fabric::bootstrap(const FabricSetup &setup) {
  rank_ = setup.rank;
  size_ = setup.size;
  set_log_rank(rank_);
  Deadline deadline = Deadline::AfterMs(setup.timeout_ms);

  std::vector<RankCard> cards(static_cast<size_t>(size_));
  cards[static_cast<size_t>(rank_)] = RankCard{setup.job_id, host_id(), getpid()};
  if (size_ > 1) {
    if (setup.serve_store)
      XC_TRY_CTX(bootstrap::StoreServer::start(setup.store_host, setup.store_port, setup.store_fd, setup.token, &server_),
                 "cannot serve the bootstrap store");
    XC_TRY(bootstrap::StoreClient::connect(setup.store_host, setup.store_port, setup.token, deadline, &store_));
    std::vector<std::string> all;
    XC_TRY(bootstrap::store_allgather(*store_, "init", rank_, size_, cards[static_cast<size_t>(rank_)].encode(),
                                      deadline, &all, setup.ranks_per_node));
    for (int r = 0; r < size_; ++r) XC_TRY(RankCard::decode(all[static_cast<size_t>(r)], r, &cards[static_cast<size_t>(r)]));
  }

  job_id_ = cards[0].job;
  // Hosts are numbered in order of their lowest rank.
  std::map<std::string, int> host_numbers;
  host_index_.resize(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    auto it = host_numbers.emplace(cards[static_cast<size_t>(r)].host, static_cast<int>(host_numbers.size())).first;
    host_index_[static_cast<size_t>(r)] = it->second;
  }
  host_count_ = static_cast<int>(host_numbers.size());

  std::vector<int> local_ranks;
  for (int r = 0; r < size_; ++r)
    if (host_index_[static_cast<size_t>(r)] == host_index_[static_cast<size_t>(rank_)]) local_ranks.push_back(r);

  EngineOptions eo;
  eo.my_rank = rank_;
  eo.fabric_size = size_;
  XC_TRY(spin_polls(local_ranks.size(), &eo.spin));
  eo.thread_safe = setup.thread_safe;
  eo.name_signature = describe_signature;
  eo.describe_difference = describe_signature_difference;
  engine_ = std::make_unique<P2pEngine>(eo);

  XC_TRY(set_up_transports(setup));
  XC_TRY(agree_on_topology(deadline));
  XC_INFO("fabric of %d ranks on %d hosts ready; %zu ranks on this host", size_, host_count_, local_ranks.size());
  return Status::Ok();
}

// The lowest rank of each host probes it (NVML only: no CUDA is initialised
// in a user's process at start-up) and publishes a summary; every rank reads every
// host's, so all ranks decide from the same facts. A probe that fails counts
// as a host without GPUs, logged, rather than failing start-up.
Status Fabric::agree_on_topology(Deadline deadline) {
  auto summarize = [](HostSummary *s) {
    topo::Topology t;
    Status st = topo::probe(&t, topo::GpuProbe::kNvmlOnly);
    if (!st.ok()) {
      XC_WARN("topology probe failed, taken as a host without GPUs: %s", st.message().c_str());
      return;
    }
    s->cls = t.classify();
    s->gpus = static_cast<int>(t.gpus.size());
  };
  hosts_.assign(static_cast<size_t>(host_count_), HostSummary{});
  if (size_ == 1) {
    summarize(&hosts_[0]);
    return Status::Ok();
  }
  std::vector<int> leader(static_cast<size_t>(host_count_), -1);
  for (int r = size_ - 1; r >= 0; --r) leader[static_cast<size_t>(host_of(r))] = r;
  int my_host = host_of(rank_);
  if (leader[static_cast<size_t>(my_host)] == rank_) {
    HostSummary mine;
    summarize(&mine);
    XC_TRY(store_->set("topo/" + std::to_string(my_host),
                       std::to_string(static_cast<int>(mine.cls)) + " " + std::to_string(mine.gpus)));
  }
  for (int h = 0; h < host_count_; ++h) {
    std::string value;
    XC_TRY_CTX(store_->get("topo/" + std::to_string(h), deadline, &value),
               "waiting for host " + std::to_string(h) + "'s topology (rank " + std::to_string(leader[static_cast<size_t>(h)]) + ")");
    int cls = 0, gpus = 0;
    if (sscanf(value.c_str(), "%d %d", &cls, &gpus) != 2)
      return Error(XC_ERR_INTERNAL, "host %d published a malformed topology summary '%s'", h, value.c_str());
    hosts_[static_cast<size_t>(h)] = HostSummary{static_cast<topo::HostClass>(cls), gpus};
  }
  XC_INFO("host topology: %s with %d GPUs", topo::host_class_name(hosts_[static_cast<size_t>(my_host)].cls),
          hosts_[static_cast<size_t>(my_host)].gpus);
  return Status::Ok();
}

// Every rank sets up the transports the table gives it (all of them take
// part in the set-up's barriers, even one that reaches nobody) and routes
// each peer through its own.
Status Fabric::set_up_transports(const FabricSetup &setup) {
  TransportSetup ts;
  ts.rank = rank_;
  ts.size = size_;
  ts.host_of = host_index_;
  ts.job_id = job_id_;
  ts.token = setup.token;
  ts.store = store_.get();
  ts.deadline = Deadline::AfterMs(setup.timeout_ms);
  ts.timeout_ms = setup.timeout_ms;
  ts.thread_safe = setup.thread_safe;
  XC_TRY(connect_transports(ts, transport_table(), &transports_));
  return engine_->set_routes(transports_.route);
}

}  // namespace xc
