#include "runtime/comm.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "algo/algorithms.h"
#include "algo/backends.h"
#include "base/env.h"
#include "base/host_id.h"
#include "base/log.h"
#include "bootstrap/launcher.h"
#include "bootstrap/unique_id.h"
#include "runtime/device_ops.h"
#include "coll/desc.h"

namespace xc {

namespace {

// Stores served for unique ids live as long as the process: the ranks that
// use one may outlive any communicator of ours.
std::mutex g_servers_mu;
std::vector<std::unique_ptr<bootstrap::StoreServer>> g_servers;

Status make_comm(std::shared_ptr<Fabric> fabric, std::vector<int> members, int my_index, uint64_t ctx,
                 const xc_config_t &cfg, const std::string &name, xc_comm_s **out) {
  auto comm = std::make_unique<xc_comm_s>();
  auto rank_of = std::make_shared<std::vector<int>>(static_cast<size_t>(fabric->size()), -1);
  int my_host = fabric->host_of(fabric->rank());
  int local_rank = 0, local_size = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    (*rank_of)[static_cast<size_t>(members[i])] = static_cast<int>(i);
    if (fabric->host_of(members[i]) != my_host) continue;
    if (static_cast<int>(i) < my_index) ++local_rank;
    ++local_size;
  }
  comm->size = static_cast<int>(members.size());
  comm->rank = my_index;
  comm->local_rank = local_rank;
  comm->local_size = local_size;
  comm->members = std::make_shared<const std::vector<int>>(std::move(members));
  comm->rank_of_fabric = std::move(rank_of);
  comm->fabric = std::move(fabric);
  comm->ctx = ctx;
  comm->timeout_ms = cfg.timeout_ms;
  comm->device_ordinal = cfg.device;
  comm->name = cfg.name ? cfg.name : name;
  comm->host_class = comm->fabric->host_class(my_host);
  algo::Team team;
  team.size = comm->size;
  team.one_host = comm->local_size == comm->size;
  algo::add_backends(team, &comm->backends);  // each set up by the first op that uses it
  xc_comm_s *raw = comm.get();
  comm->executor = comm->fabric->engine().thread_safe() ? make_worker_executor(raw) : make_inline_executor(raw);
  *out = comm.release();
  return Status::Ok();
}

void apply_process_settings(const xc_config_t &cfg) {
  switch (cfg.debug_level) {
    case XC_DEBUG_NONE: set_log_level(LogLevel::kNone); break;
    case XC_DEBUG_WARN: set_log_level(LogLevel::kWarn); break;
    case XC_DEBUG_INFO: set_log_level(LogLevel::kInfo); break;
    case XC_DEBUG_TRACE: set_log_level(LogLevel::kTrace); break;
    default: break;
  }
}

// A child's config: the user's, or the parent's timeout and name.
Status child_config(const xc_comm_s *parent, const xc_config_t *cfg, xc_comm_s **out, xc_config_t *child,
                    std::string *name) {
  if (!out) return Error(XC_ERR_INVALID_ARGUMENT, "out is NULL");
  XC_TRY(read_config(cfg, child));
  if (!cfg) child->timeout_ms = parent->timeout_ms;
  *name = parent->name;  // a config's own name, if any, wins in make_comm
  return Status::Ok();
}

// What each rank contributes to a split.
struct SplitRecord {
  int32_t color;
  int32_t key;
  uint32_t valid;
  uint32_t reserved;
  uint64_t digest;  // split_groups: the lists this rank was given
};

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A child's context id, derived from what every member already agrees on:
// the parent's id, the sequence number of the split on the parent, and the
// group. No counter is shared, so splits of different parents may run on
// different threads at once. Ids are 64-bit hashes (a collision among the
// communicators of one job is ~n²/2^62 unlikely); a multiple of 4, so
// ctx + 1 .. ctx + 3 are free for the collectives and the device ops.
uint64_t child_ctx(uint64_t parent_ctx, int split_seq, size_t group) {
  uint64_t h = mix64(parent_ctx ^ 0x9e3779b97f4a7c15ULL);
  h = mix64(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(split_seq)) << 20) ^ (group + 1));
  return h & ~uint64_t{3};
}

uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

// The store key of a communicator's op that must go through the bootstrap
// store because no transport reaches some member (ranks on other hosts).
std::string store_key(const xc_comm_s *comm, const char *what, int seq) {
  char key[96];
  snprintf(key, sizeof key, "%s/%016llx/%d", what, static_cast<unsigned long long>(comm->ctx), seq);
  return key;
}

// Allgather every rank's record; *seq is the split's sequence number on parent.
Status exchange_split_records(xc_comm_s *parent, const SplitRecord &mine, std::vector<SplitRecord> *all, int *seq) {
  all->assign(static_cast<size_t>(parent->size), SplitRecord{});
  (*all)[static_cast<size_t>(parent->rank)] = mine;
  parent->executor->drain();  // collectives started earlier run first, in order
  coll::CollContext c = make_coll_context(parent);
  c.set_signature(kSigCommSplit);
  *seq = c.seq();
  if (parent->fabric->reaches_all(*parent->members)) return algo::allgather_ring(c, all->data(), sizeof(SplitRecord));
  // Some members sit on hosts no transport reaches: the store reaches everyone.
  std::vector<std::string> values;
  std::string me(reinterpret_cast<const char *>(&mine), sizeof mine);
  XC_TRY(bootstrap::store_allgather(*parent->fabric->store(), store_key(parent, "split", *seq), parent->rank,
                                    parent->size, me, op_deadline(parent), &values));
  for (size_t r = 0; r < values.size(); ++r) {
    if (values[r].size() != sizeof(SplitRecord))
      return Error(XC_ERR_INTERNAL, "rank %zu sent a malformed split record", r);
    memcpy(&(*all)[r], values[r].data(), sizeof(SplitRecord));
  }
  return Status::Ok();
}

}  // namespace

coll::CollContext make_coll_context(xc_comm_s *comm) {
  // XC_THREAD_MULTIPLE lets two threads start collectives on one comm at
  // once (xcomm.h), so the number is taken with a locked add; serialized, no
  // second thread can be here and a plain increment does (a locked
  // instruction would also wait for the previous op's stores to shared lines).
  uint64_t seq = comm->coll_seq.load(std::memory_order_relaxed);
  if (comm->fabric->engine().thread_safe())
    seq = comm->coll_seq.fetch_add(1);
  else
    comm->coll_seq.store(seq + 1, std::memory_order_relaxed);
  int tag = static_cast<int>(seq & 0x7fffffff);
  // The deadline clock starts at the op's first blocking wait (CollContext).
  coll::CollContext c(comm->fabric->engine(), &comm->members, comm->rank, comm->ctx + 1, tag,
                      comm->timeout_ms);  // borrows comm->members: comm outlives its ops
  c.set_backends(&comm->backends);
  c.set_host_class(comm->host_class);
  return c;
}

Status check_comm(const xc_comm_s *comm) {
  if (!comm) return Error(XC_ERR_INVALID_ARGUMENT, "the communicator is NULL");
  if (comm->magic == kCommFreed) return Error(XC_ERR_INVALID_USAGE, "the communicator was already freed");
  if (comm->magic != kCommMagic) return Error(XC_ERR_INVALID_ARGUMENT, "not a communicator handle");
  return Status::Ok();
}

Status usable_error(const xc_comm_s *comm) {
  XC_TRY(check_comm(comm));
  if (comm->aborted.load()) return Error(XC_ERR_ABORTED, "the communicator was aborted");
  return Status::Ok();
}

Status read_config(const xc_config_t *user, xc_config_t *out) {
  xc_config_t cfg = XC_CONFIG_INIT;
  if (user) {
    if (user->size < offsetof(xc_config_t, device))
      return Error(XC_ERR_INVALID_ARGUMENT, "config.size %zu is too small: start from XC_CONFIG_INIT", user->size);
    if (user->size > kMaxConfigSize)
      return Error(XC_ERR_INVALID_ARGUMENT,
                   "config.size %zu is larger than any config can be (%zu bytes at most): start from XC_CONFIG_INIT",
                   user->size, kMaxConfigSize);
    if (user->version == 0 || user->version > XC_CONFIG_VERSION)
      return Error(XC_ERR_INVALID_ARGUMENT, "config.version %u is not one this library knows (it knows up to %u)",
                   user->version, XC_CONFIG_VERSION);
    size_t n = std::min(user->size, sizeof cfg);
    memcpy(&cfg, user, n);
    // A newer caller's fields we do not know must be zero (= default).
    const unsigned char *tail = reinterpret_cast<const unsigned char *>(user) + n;
    for (size_t i = 0; n + i < user->size; ++i)
      if (tail[i]) return Error(XC_ERR_UNSUPPORTED, "config sets a field this library version does not know (byte %zu)", n + i);
    cfg.size = sizeof cfg;
  }
  if (cfg.device < XC_DEVICE_NONE) return Error(XC_ERR_INVALID_ARGUMENT, "config.device %d is not valid", cfg.device);
  if (cfg.thread_mode < XC_THREAD_DEFAULT || cfg.thread_mode > XC_THREAD_MULTIPLE)
    return Error(XC_ERR_INVALID_ARGUMENT, "config.thread_mode %d is not valid", cfg.thread_mode);
  if (cfg.debug_level < XC_DEBUG_DEFAULT || cfg.debug_level > XC_DEBUG_TRACE)
    return Error(XC_ERR_INVALID_ARGUMENT, "config.debug_level %d is not valid", cfg.debug_level);
  if (!cfg.timeout_ms) {  // 0: XC_TIMEOUT, else its default
    int64_t ms = 0;
    XC_TRY(env_int("XC_TIMEOUT", &ms));
    cfg.timeout_ms = static_cast<uint64_t>(ms);
  }
  *out = cfg;
  return Status::Ok();
}

Status comm_init_world(const xc_config_t *user_cfg, xc_comm_s **out) {
  // The launcher's rendezvous serves one world per job: a second xc_init
  // would join it twice. Refused at once on every rank, so none waits.
  static std::atomic<bool> started{false};
  XC_TRY(env_check_all());  // every rank fails alike on a bad XC_* value, before anyone waits
  xc_config_t cfg;
  XC_TRY(read_config(user_cfg, &cfg));
  if (started.exchange(true))
    return Error(XC_ERR_INVALID_USAGE,
                 "xc_init was already called in this process; split or dup the world, or start another job with "
                 "xc_get_unique_id and xc_comm_init_rank");
  apply_process_settings(cfg);
  bootstrap::LaunchInfo li;
  XC_TRY(bootstrap::detect_launch(&li));
  FabricSetup setup;
  setup.rank = li.rank;
  setup.size = li.size;
  setup.store_host = li.store_host;
  setup.store_port = li.store_port;
  setup.store_fd = li.rank == 0 ? li.store_fd : -1;
  setup.serve_store = li.rank == 0;
  setup.token = li.token;
  setup.job_id = li.job_id;
  setup.timeout_ms = cfg.timeout_ms;
  setup.thread_safe = cfg.thread_mode != XC_THREAD_SERIALIZED;
  std::shared_ptr<Fabric> fabric;
  XC_TRY(Fabric::create(setup, &fabric));
  std::vector<int> members(static_cast<size_t>(li.size));
  for (int r = 0; r < li.size; ++r) members[static_cast<size_t>(r)] = r;
  XC_INFO("world of %d ranks started by %s", li.size, li.launcher.c_str());
  return make_comm(std::move(fabric), std::move(members), li.rank, 0, cfg, "world", out);
}

Status comm_get_unique_id(xc_unique_id_t *id) {
  bootstrap::UniqueId uid;
  uid.token = bootstrap::make_token();
  std::unique_ptr<bootstrap::StoreServer> server;
  XC_TRY(bootstrap::StoreServer::start("0.0.0.0", 0, -1, uid.token, &server));
  uid.host = host_name();
  uid.port = server->port();
  XC_TRY(bootstrap::encode_unique_id(uid, id));
  std::lock_guard<std::mutex> lock(g_servers_mu);
  g_servers.push_back(std::move(server));
  return Status::Ok();
}

Status comm_init_rank(int nranks, const xc_unique_id_t *id, int rank, const xc_config_t *user_cfg, xc_comm_s **out) {
  if (nranks < 1) return Error(XC_ERR_INVALID_ARGUMENT, "nranks %d must be at least 1", nranks);
  if (rank < 0 || rank >= nranks) return Error(XC_ERR_INVALID_ARGUMENT, "rank %d is out of range [0, %d)", rank, nranks);
  if (!id) return Error(XC_ERR_INVALID_ARGUMENT, "the unique id is NULL");
  XC_TRY(env_check_all());
  xc_config_t cfg;
  XC_TRY(read_config(user_cfg, &cfg));
  apply_process_settings(cfg);
  bootstrap::UniqueId uid;
  XC_TRY(bootstrap::decode_unique_id(*id, &uid));
  FabricSetup setup;
  setup.rank = rank;
  setup.size = nranks;
  setup.store_host = uid.host;
  setup.store_port = uid.port;
  setup.token = uid.token;
  std::string job = env_get("XC_JOB_ID");
  setup.job_id = job.empty() ? "u" + uid.token.substr(0, 8) : job;
  setup.timeout_ms = cfg.timeout_ms;
  setup.thread_safe = cfg.thread_mode != XC_THREAD_SERIALIZED;
  std::shared_ptr<Fabric> fabric;
  XC_TRY(Fabric::create(setup, &fabric));
  std::vector<int> members(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) members[static_cast<size_t>(r)] = r;
  return make_comm(std::move(fabric), std::move(members), rank, 0, cfg, "comm", out);
}

Status comm_split(xc_comm_s *parent, int color, int key, const xc_config_t *cfg, xc_comm_s **out) {
  xc_config_t child_cfg;
  std::string name;
  Status local = child_config(parent, cfg, out, &child_cfg, &name);
  if (local.ok() && color < 0 && color != XC_UNDEFINED)
    local = Error(XC_ERR_INVALID_ARGUMENT, "color %d must be >= 0 or XC_UNDEFINED", color);
  // Exchange first, so a rank's bad argument fails every rank instead of hanging them.
  SplitRecord mine{color, key, local.ok() ? 1u : 0u, 0, 0};
  std::vector<SplitRecord> all;
  int seq = 0;
  XC_TRY(exchange_split_records(parent, mine, &all, &seq));
  if (!local.ok()) return local;
  for (int r = 0; r < parent->size; ++r)
    if (!all[static_cast<size_t>(r)].valid)
      return Error(XC_ERR_INVALID_ARGUMENT, "rank %d passed an invalid color or config to the same split", r);

  std::vector<int32_t> colors;
  for (const SplitRecord &r : all)
    if (r.color != XC_UNDEFINED) colors.push_back(r.color);
  std::sort(colors.begin(), colors.end());
  colors.erase(std::unique(colors.begin(), colors.end()), colors.end());
  if (color == XC_UNDEFINED) {
    *out = nullptr;
    return Status::Ok();
  }
  std::vector<int> order;  // parent ranks in my group, by (key, parent rank)
  for (int r = 0; r < parent->size; ++r)
    if (all[static_cast<size_t>(r)].color == color) order.push_back(r);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return all[static_cast<size_t>(a)].key < all[static_cast<size_t>(b)].key; });
  std::vector<int> members;
  int my_index = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == parent->rank) my_index = static_cast<int>(i);
    members.push_back((*parent->members)[static_cast<size_t>(order[i])]);
  }
  size_t group = static_cast<size_t>(std::lower_bound(colors.begin(), colors.end(), color) - colors.begin());
  return make_comm(parent->fabric, std::move(members), my_index, child_ctx(parent->ctx, seq, group), child_cfg, name,
                   out);
}

Status comm_split_groups(xc_comm_s *parent, int ngroups, const int *group_sizes, const int *ranks,
                         const xc_config_t *cfg, xc_comm_s **out) {
  xc_config_t child_cfg;
  std::string name;
  Status local = child_config(parent, cfg, out, &child_cfg, &name);
  // Validate the lists locally; the exchange below makes every rank agree.
  int total = 0;
  std::vector<int> where(static_cast<size_t>(parent->size), -1);  // group of each parent rank
  if (local.ok() && ngroups < 0) local = Error(XC_ERR_INVALID_ARGUMENT, "ngroups %d is negative", ngroups);
  // Nothing else bounds what is read: the sizes are checked as they are
  // read, but zero sizes never fail, so ngroups = INT_MAX read past the
  // caller's array (xcomm.h: groups beyond the ranks can only be empty).
  int most = std::max(parent->size, kGroupsAlwaysAllowed);
  if (local.ok() && ngroups > most)
    local = Error(XC_ERR_INVALID_ARGUMENT, "ngroups %d is more than a parent of %d ranks is split into (%d at most)",
                  ngroups, parent->size, most);
  if (local.ok() && ngroups > 0 && !group_sizes) local = Error(XC_ERR_INVALID_ARGUMENT, "group_sizes is NULL");
  for (int g = 0; local.ok() && g < ngroups; ++g) {
    if (group_sizes[g] < 0 || group_sizes[g] > parent->size - total)
      local = Error(XC_ERR_INVALID_ARGUMENT, "group %d has size %d; the groups together may hold at most %d ranks", g,
                    group_sizes[g], parent->size);
    else
      total += group_sizes[g];
  }
  if (local.ok() && total > 0 && !ranks) local = Error(XC_ERR_INVALID_ARGUMENT, "ranks is NULL");
  for (int g = 0, off = 0; local.ok() && g < ngroups; off += group_sizes[g], ++g) {
    for (int i = 0; local.ok() && i < group_sizes[g]; ++i) {
      int r = ranks[off + i];
      if (r < 0 || r >= parent->size)
        local = Error(XC_ERR_INVALID_ARGUMENT, "group %d lists rank %d, outside the parent's [0, %d)", g, r, parent->size);
      else if (where[static_cast<size_t>(r)] >= 0)
        local = Error(XC_ERR_INVALID_ARGUMENT, "rank %d is listed in group %d and in group %d: groups must not overlap", r,
                      where[static_cast<size_t>(r)], g);
      else
        where[static_cast<size_t>(r)] = g;
    }
  }
  uint64_t digest = 0xcbf29ce484222325ULL;
  if (local.ok()) {
    digest = fnv1a(digest, &ngroups, sizeof ngroups);
    if (ngroups > 0) digest = fnv1a(digest, group_sizes, sizeof(int) * static_cast<size_t>(ngroups));
    if (total > 0) digest = fnv1a(digest, ranks, sizeof(int) * static_cast<size_t>(total));
  }
  SplitRecord mine{0, 0, local.ok() ? 1u : 0u, 0, digest};
  std::vector<SplitRecord> all;
  int seq = 0;
  XC_TRY(exchange_split_records(parent, mine, &all, &seq));
  if (!local.ok()) return local;
  for (int r = 0; r < parent->size; ++r) {
    if (!all[static_cast<size_t>(r)].valid)
      return Error(XC_ERR_INVALID_ARGUMENT, "rank %d passed invalid group lists to the same split_groups", r);
  }
  for (int r = 1; r < parent->size; ++r)
    if (all[static_cast<size_t>(r)].digest != all[0].digest)
      return Error(XC_ERR_INVALID_USAGE,
                   "rank %d passed different group lists than rank 0: every rank must pass the same lists", r);
  int g = where[static_cast<size_t>(parent->rank)];
  if (g < 0) {
    *out = nullptr;
    return Status::Ok();
  }
  int off = 0;
  for (int i = 0; i < g; ++i) off += group_sizes[i];
  std::vector<int> members;
  int my_index = 0;
  for (int i = 0; i < group_sizes[g]; ++i) {
    if (ranks[off + i] == parent->rank) my_index = i;
    members.push_back((*parent->members)[static_cast<size_t>(ranks[off + i])]);
  }
  return make_comm(parent->fabric, std::move(members), my_index, child_ctx(parent->ctx, seq, static_cast<size_t>(g)),
                   child_cfg, name, out);
}

Status comm_dup(xc_comm_s *comm, xc_comm_s **out) { return comm_split(comm, 0, comm->rank, nullptr, out); }

Status comm_free(xc_comm_s *comm) {
  comm->executor->shutdown();  // started collectives finish (or time out) first; a worker is joined
  device_ops_finish(comm);     // and the device ops it enqueued
  // Synchronise so no rank tears down while a peer still needs its messages;
  // skipped after an abort or a failure, where it could only time out.
  // Its failure is returned (a peer that never frees, or died meanwhile,
  // is the caller's to know); the handle is released all the same.
  Status closing;
  if (!comm->aborted.load() && !comm->broken.load() && comm->fabric->engine().first_failed(*comm->members) < 0) {
    coll::CollContext c = make_coll_context(comm);
    c.set_signature(kSigCommFree);
    Status st = comm->fabric->reaches_all(*comm->members)
                    ? algo::barrier_dissemination(c)
                    : bootstrap::store_barrier(*comm->fabric->store(), store_key(comm, "free", c.seq()), comm->size,
                                               op_deadline(comm));
    if (!st.ok()) {
      XC_WARN("xc_comm_free: closing barrier failed: %s", st.message().c_str());
      closing = Error(st.code(), "the closing barrier failed (the communicator is freed anyway): %s",
                      st.message().c_str());
    }
  }
  Status why = Error(XC_ERR_ABORTED, "the communicator was freed");
  comm->fabric->engine().cancel_context(comm->ctx, why);
  for (uint64_t c = comm->ctx + 1; c <= comm->ctx + 3; ++c) comm->fabric->engine().cancel_context(c, why);
  comm->magic = kCommFreed;
  comm->backends.clear();  // segments and scratch go now; only the shell stays
  comm->executor.reset();  // shut down above
  comm->members.reset();
  comm->rank_of_fabric.reset();
  comm->fabric.reset();  // the last communicator of a fabric tears it down
  // The rest of the shell's heap: the executor (shut down above) and its
  // queue were ~850 of the ~1.2 KB a freed communicator kept.
  comm->executor.reset();
  comm->device_error.reset();
  std::string().swap(comm->name);
  return closing;
}

void comm_abort(xc_comm_s *comm) {
  comm->aborted.store(true);
  Status why = Error(XC_ERR_ABORTED, "the communicator was aborted");
  comm->executor->abort(why);  // queued collectives fail; the running one fails with its context below
  comm->fabric->engine().abort_context(comm->ctx, why);
  for (uint64_t c = comm->ctx + 1; c <= comm->ctx + 3; ++c) comm->fabric->engine().abort_context(c, why);
}

xc_result_t comm_async_error(xc_comm_s *comm) {
  if (comm->aborted.load()) return XC_ERR_ABORTED;
  if (int dev = comm->device_error->load()) return static_cast<xc_result_t>(dev);
  if (comm->fabric->engine().first_failed(*comm->members) >= 0) return XC_ERR_PEER_FAILED;
  return XC_SUCCESS;
}

}  // namespace xc
