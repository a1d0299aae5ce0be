#include "runtime/comm.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "algo/algorithms.h"
#include "algo/backends.h"
#include "base/backoff.h"
#include "base/env.h"
#include "base/host_id.h"
#include "base/log.h"
#include "bootstrap/launcher.h"
#include "bootstrap/unique_id.h"
#include "runtime/device_ops.h"
#include "runtime/nccl_ops.h"
#include "runtime/trace_dump.h"
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
  team.rank = comm->rank;
  team.one_host = comm->local_size == comm->size;
  if (!team.one_host)
    for (int m : *comm->members) team.hosts.push_back(comm->fabric->host_of(m));
  algo::add_backends(team, &comm->backends);  // each set up by the first op that uses it
  XC_TRY(trace_make_recorder(&comm->recorder));
  xc_comm_s *raw = comm.get();
  comm->executor = comm->fabric->engine().thread_safe() ? make_worker_executor(raw) : make_inline_executor(raw);
  trace_register(raw);  // SIGUSR2 dumps it
  comm->fabric->comm_made();
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
  if (!cfg) child->nccl_lazy = parent->nccl_lazy ? 1 : 0;
  *name = parent->name;  // a config's own name, if any, wins in make_comm
  return Status::Ok();
}

// What each rank contributes to a split.
struct SplitRecord {
  int32_t color;
  int32_t key;
  uint32_t valid;
  uint32_t flags;   // kSplitNcclLazy: this rank's config asks for lazy NCCL creation
  uint64_t digest;  // split_groups: the lists this rank was given
};
constexpr uint32_t kSplitNcclLazy = 1;

// A split is lazy about NCCL only when every rank asks (ncclCommSplit is
// collective over the parent: all call it or none).
bool all_lazy(const std::vector<SplitRecord> &all) {
  for (const SplitRecord &r : all)
    if (!(r.flags & kSplitNcclLazy)) return false;
  return true;
}

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

// What a child's context derives from: the parent's, and for a group that
// had namesakes (xc_comm_create_group, created again after a free) its
// generation, so the children of the two never share a context either.
uint64_t lineage(const xc_comm_s *parent) {
  return parent->ctx_generation ? parent->ctx ^ mix64(parent->ctx_generation) : parent->ctx;
}

// The store key of a communicator's op that must go through the bootstrap
// store because no transport reaches some member (ranks on other hosts).
std::string store_key(const xc_comm_s *comm, const char *what, int seq) {
  char key[96];
  snprintf(key, sizeof key, "%s/%016llx.%u/%d", what, static_cast<unsigned long long>(comm->ctx), comm->ctx_generation,
           seq);
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

// ---- xc_comm_create_group -------------------------------------------------
//
// Only the listed ranks take part, so nothing of the parent's is shared by
// all of them (no collective sequence number): the child's context comes
// from the parent's, the list and the tag, and the members check the list
// among themselves. Each sends every other member of its own list a record
// of that list and receives one from each; a record that differs from ours
// fails the call (XC_ERR_INVALID_USAGE), and its finder tells the rest of
// its list (a "disagree" note), so members whose list leaves the odd one
// out fail as well instead of waiting for a record that never comes.
// Messages go on a context derived from the parent's and the tag only (not
// the list), so two members with different lists still meet there.

struct GroupRecord {
  uint64_t digest;  // of n and the list
  int32_t n;
  uint32_t valid;  // 0: this member's own other arguments (cfg, out) were bad
};

constexpr int kGroupRecordTag = 0;
constexpr int kGroupDisagreeTag = 1;

uint64_t group_exchange_ctx(uint64_t parent_ctx, int tag) {
  uint64_t h = mix64(parent_ctx ^ 0x6a09e667f3bcc909ULL);
  h = mix64(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(tag)) << 16) ^ 0x2545f4914f6cdd1dULL);
  return h & ~uint64_t{3};
}

uint64_t group_child_ctx(uint64_t parent_ctx, int tag, uint64_t digest) {
  uint64_t h = mix64(parent_ctx ^ 0xbb67ae8584caa73bULL);
  h = mix64(h ^ static_cast<uint64_t>(static_cast<uint32_t>(tag)));
  h = mix64(h ^ digest);
  return h & ~uint64_t{3};
}

// The exchange through the engine. list: parent ranks; me: my index in it.
Status group_exchange_p2p(xc_comm_s *parent, const std::vector<int> &list, int me, int tag, const GroupRecord &mine) {
  P2pEngine &engine = parent->fabric->engine();
  const size_t n = list.size();
  auto fabric_ranks = std::make_shared<std::vector<int>>(n);
  for (size_t i = 0; i < n; ++i) (*fabric_ranks)[i] = (*parent->members)[static_cast<size_t>(list[i])];
  std::shared_ptr<const std::vector<int>> members = fabric_ranks;
  const uint64_t xctx = group_exchange_ctx(parent->ctx, tag);
  Deadline deadline = op_deadline(parent);

  std::vector<GroupRecord> got(n);
  std::vector<uint32_t> notes(n), note_out(n, 1);
  // Per member: its record, its disagree note, our record to it, our note
  // to it. Never resized: the engine holds pointers.
  std::vector<Request> recs(n), heard(n), sends(n), tells(n);
  auto prepare = [&](Request &r, size_t i, int etag, void *buf, size_t bytes) {
    r.ctx = xctx;
    r.peer = (*members)[i];
    r.tag = etag;
    r.members = members;
    r.collective = true;  // fails at once when a member dies
    r.buf = buf;
    r.bytes = bytes;
  };
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == me) continue;
    prepare(recs[i], i, kGroupRecordTag, &got[i], sizeof(GroupRecord));
    engine.post_recv(&recs[i]);
    prepare(heard[i], i, kGroupDisagreeTag, &notes[i], sizeof(uint32_t));
    engine.post_recv(&heard[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == me) continue;
    prepare(sends[i], i, kGroupRecordTag, const_cast<GroupRecord *>(&mine), sizeof mine);
    engine.post_send(&sends[i]);
  }

  Status result;
  bool disagree = false;  // we found a record unlike ours, or were told of one: tell our list
  std::vector<char> have(n, 0), heard_done(n, 0);
  size_t missing = n - 1;
  Backoff backoff(200, 2000);
  while (result.ok() && missing > 0) {
    bool moved = false;
    for (size_t i = 0; i < n && result.ok(); ++i) {
      if (static_cast<int>(i) == me || have[i] || !engine.test(&recs[i])) continue;
      have[i] = 1;
      --missing;
      moved = true;
      const Status &st = recs[i].status;
      if (!st.ok())
        result = Error(st.code(), "receiving the list of rank %d: %s", list[i], st.message().c_str());
      else if (recs[i].message_bytes != sizeof(GroupRecord))
        result = Error(XC_ERR_INTERNAL, "rank %d sent a malformed group record", list[i]);
      else if (!got[i].valid)
        result =
            Error(XC_ERR_INVALID_ARGUMENT, "rank %d passed an invalid config or output to the same group", list[i]);
      else if (got[i].n != static_cast<int32_t>(n) || got[i].digest != mine.digest) {
        disagree = true;
        result = Error(XC_ERR_INVALID_USAGE,
                       "rank %d passed another list of ranks (%d of them, here %zu) with tag %d: every member must "
                       "pass the same ranks in the same order",
                       list[i], static_cast<int>(got[i].n), n, tag);
      }
    }
    for (size_t i = 0; i < n && result.ok(); ++i) {
      if (static_cast<int>(i) == me || heard_done[i] || !engine.test(&heard[i])) continue;
      heard_done[i] = 1;
      moved = true;
      if (heard[i].status.ok()) {
        // Pass it on: the teller told only its own list, and members of
        // ours outside it would wait for a record that never comes.
        disagree = true;
        result = Error(XC_ERR_INVALID_USAGE,
                       "rank %d found that the members passed different lists of ranks with tag %d", list[i], tag);
      }
    }
    if (!result.ok() || missing == 0) break;
    if (deadline.expired()) {
      std::string who;
      for (size_t i = 0; i < n; ++i)
        if (static_cast<int>(i) != me && !have[i]) who += (who.empty() ? "" : ", ") + std::to_string(list[i]);
      result = Error(XC_ERR_TIMEOUT,
                     "timed out waiting for rank(s) %s to join the group with tag %d (did every listed rank call "
                     "xc_comm_create_group with the same ranks and tag?)",
                     who.c_str(), tag);
      break;
    }
    if (moved) backoff.reset();
    switch (backoff.next()) {
      case Backoff::Step::kSpin:
        cpu_relax();
        break;
      case Backoff::Step::kYield:
        cpu_yield();
        break;
      case Backoff::Step::kSleep:
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        backoff.slept();
        break;
    }
  }
  if (disagree) {
    for (size_t i = 0; i < n; ++i) {
      if (static_cast<int>(i) == me) continue;
      prepare(tells[i], i, kGroupDisagreeTag, &note_out[i], sizeof(uint32_t));
      tells[i].collective = false;  // a note to a dead member just fails
      engine.post_send(&tells[i]);
    }
  }
  // Nothing may stay posted on our buffers: withdraw what was not received,
  // and let what we sent go out (small messages: at once; a dead member
  // fails them).
  Status cancelled = Error(XC_ERR_ABORTED, "the group exchange ended");
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == me) continue;
    engine.cancel(&recs[i], cancelled);  // nothing to do when done
    engine.cancel(&heard[i], cancelled);
  }
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == me) continue;
    for (Request *r : {&recs[i], &heard[i], &sends[i]}) {
      Status st = engine.wait(r, deadline);
      if (r == &sends[i] && !st.ok() && result.ok())
        result = Error(st.code(), "sending the list to rank %d: %s", list[i], st.message().c_str());
    }
    if (disagree) (void)engine.wait(&tells[i], deadline);
  }
  return result;
}

// The same through the bootstrap store, for members no transport reaches.
// Keys hold the list's digest and how many groups with this tag and list
// this process made from parent before (the members of one list agree on
// that count), so an earlier call never answers a later one; members whose
// lists differ therefore never meet here and time out.
Status group_exchange_store(xc_comm_s *parent, const std::vector<int> &list, int me, int tag, const GroupRecord &mine) {
  uint32_t count;
  {
    std::lock_guard<std::mutex> lock(parent->group_mu);
    count = parent->group_calls[mix64(mine.digest ^ static_cast<uint32_t>(tag))]++;
  }
  char prefix[128];
  snprintf(prefix, sizeof prefix, "group/%016llx/%d/%016llx/%u/", static_cast<unsigned long long>(parent->ctx), tag,
           static_cast<unsigned long long>(mine.digest), count);
  bootstrap::StoreClient &store = *parent->fabric->store();
  XC_TRY(store.set(prefix + std::to_string(list[static_cast<size_t>(me)]),
                   std::string(reinterpret_cast<const char *>(&mine), sizeof mine)));
  Deadline deadline = op_deadline(parent);
  for (size_t i = 0; i < list.size(); ++i) {
    if (static_cast<int>(i) == me) continue;
    std::string value;
    Status st = store.get(prefix + std::to_string(list[i]), deadline, &value);
    if (st.code() == XC_ERR_TIMEOUT)
      return Error(XC_ERR_TIMEOUT,
                   "timed out waiting for rank %d to join the group with tag %d (did every listed rank call "
                   "xc_comm_create_group with the same ranks and tag?)",
                   list[i], tag);
    XC_TRY(st);
    GroupRecord rec{};
    if (value.size() != sizeof rec) return Error(XC_ERR_INTERNAL, "rank %d sent a malformed group record", list[i]);
    memcpy(&rec, value.data(), sizeof rec);
    if (!rec.valid)
      return Error(XC_ERR_INVALID_ARGUMENT, "rank %d passed an invalid config or output to the same group", list[i]);
  }
  return Status::Ok();
}

}  // namespace

Status comm_make(std::shared_ptr<Fabric> fabric, std::vector<int> members, int my_index, uint64_t ctx,
                 const xc_config_t &cfg, const std::string &name, xc_comm_s **out) {
  return make_comm(std::move(fabric), std::move(members), my_index, ctx, cfg, name, out);
}

uint64_t comm_lineage(const xc_comm_s *comm) { return lineage(comm); }

uint64_t comm_derive_ctx(uint64_t base, uint64_t salt, uint64_t seq) {
  uint64_t h = mix64(base ^ salt);
  h = mix64(h ^ (seq << 20) ^ 0x3c6ef372fe94f82bULL);
  return h & ~uint64_t{3};
}

Status comm_child_config(const xc_comm_s *parent, const xc_config_t *cfg, xc_comm_s **out, xc_config_t *child,
                         std::string *name) {
  return child_config(parent, cfg, out, child, name);
}

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
  Status why;
  if (comm->fabric->engine().revoked(comm->ctx, &why)) return why;
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
  setup.ranks_per_node = li.ranks_per_node;
  setup.timeout_ms = cfg.timeout_ms;
  setup.thread_safe = cfg.thread_mode != XC_THREAD_SERIALIZED;
  std::shared_ptr<Fabric> fabric;
  XC_TRY(Fabric::create(setup, &fabric));
  std::vector<int> members(static_cast<size_t>(li.size));
  for (int r = 0; r < li.size; ++r) members[static_cast<size_t>(r)] = r;
  XC_INFO("world of %d ranks started by %s", li.size, li.launcher.c_str());
  trace_install_signal();
  XC_TRY(make_comm(std::move(fabric), std::move(members), li.rank, 0, cfg, "world", out));
  nccl_setup_root(*out, cfg.nccl_lazy != 0);
  return Status::Ok();
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
  trace_install_signal();
  XC_TRY(make_comm(std::move(fabric), std::move(members), rank, 0, cfg, "comm", out));
  nccl_setup_root(*out, cfg.nccl_lazy != 0);
  return Status::Ok();
}

Status comm_split(xc_comm_s *parent, int color, int key, const xc_config_t *cfg, xc_comm_s **out) {
  xc_config_t child_cfg;
  std::string name;
  Status local = child_config(parent, cfg, out, &child_cfg, &name);
  if (local.ok() && color < 0 && color != XC_UNDEFINED)
    local = Error(XC_ERR_INVALID_ARGUMENT, "color %d must be >= 0 or XC_UNDEFINED", color);
  // Exchange first, so a rank's bad argument fails every rank instead of hanging them.
  SplitRecord mine{color, key, local.ok() ? 1u : 0u, local.ok() && child_cfg.nccl_lazy ? kSplitNcclLazy : 0u, 0};
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
    nccl_setup_split(parent, nullptr, 0, 0, all_lazy(all));
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
  Status made = make_comm(parent->fabric, std::move(members), my_index, child_ctx(lineage(parent), seq, group), child_cfg,
                          name, out);
  // Every parent rank takes part in the NCCL split, also one whose make failed.
  nccl_setup_split(parent, made.ok() ? *out : nullptr, static_cast<int>(group), my_index, all_lazy(all));
  return made;
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
  SplitRecord mine{0, 0, local.ok() ? 1u : 0u, local.ok() && child_cfg.nccl_lazy ? kSplitNcclLazy : 0u, digest};
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
    nccl_setup_split(parent, nullptr, 0, 0, all_lazy(all));  // NCCL_SPLIT_NOCOLOR
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
  Status made = make_comm(parent->fabric, std::move(members), my_index,
                          child_ctx(lineage(parent), seq, static_cast<size_t>(g)), child_cfg, name, out);
  // One ncclCommSplit per rank whatever the number of groups: color = group, key = new rank.
  nccl_setup_split(parent, made.ok() ? *out : nullptr, g, my_index, all_lazy(all));
  return made;
}

Status comm_create_group(xc_comm_s *parent, int n, const int *ranks, int tag, const xc_config_t *cfg, xc_comm_s **out) {
  // The list first: without a valid one there is no one to tell.
  if (n < 1 || n > parent->size)
    return Error(XC_ERR_INVALID_ARGUMENT, "n = %d: a group holds 1 to %d (the parent's size) ranks", n, parent->size);
  if (!ranks) return Error(XC_ERR_INVALID_ARGUMENT, "ranks is NULL");
  if (tag < 0) return Error(XC_ERR_INVALID_ARGUMENT, "tag %d is negative (tags are 0 .. XC_TAG_MAX)", tag);
  std::vector<int> list(ranks, ranks + n);
  std::vector<char> seen(static_cast<size_t>(parent->size), 0);
  int me = -1;
  for (int i = 0; i < n; ++i) {
    int r = list[static_cast<size_t>(i)];
    if (r < 0 || r >= parent->size)
      return Error(XC_ERR_INVALID_ARGUMENT, "ranks[%d] = %d is outside the parent's [0, %d)", i, r, parent->size);
    if (seen[static_cast<size_t>(r)])
      return Error(XC_ERR_INVALID_ARGUMENT, "rank %d is listed twice (ranks[%d])", r, i);
    seen[static_cast<size_t>(r)] = 1;
    if (r == parent->rank) me = i;
  }
  if (me < 0)
    return Error(XC_ERR_INVALID_ARGUMENT, "this rank (%d) is not in ranks: only the listed ranks call it",
                 parent->rank);
  uint64_t digest = fnv1a(0xcbf29ce484222325ULL, &n, sizeof n);
  digest = fnv1a(digest, ranks, sizeof(int) * static_cast<size_t>(n));
  const uint64_t ctx = group_child_ctx(parent->ctx, tag, digest);
  uint32_t generation = 0;
  if (!parent->fabric->claim_context(ctx, &generation))
    return Error(XC_ERR_INVALID_USAGE,
                 "a live group made from this communicator already has these %d ranks and tag %d: give the new "
                 "one another tag (or free the old one first)",
                 n, tag);

  // Bad output or config: still take part, so the others fail with us.
  xc_config_t child_cfg;
  std::string name;
  Status local = child_config(parent, cfg, out, &child_cfg, &name);
  GroupRecord mine{digest, n, local.ok() ? 1u : 0u};
  std::vector<int> members(static_cast<size_t>(n));  // fabric ranks
  for (int i = 0; i < n; ++i)
    members[static_cast<size_t>(i)] = (*parent->members)[static_cast<size_t>(list[static_cast<size_t>(i)])];
  // Every member sees the same answer: a transport reaches all of them
  // exactly when they are all on one host.
  Status st = n == 1                                   ? Status::Ok()
              : parent->fabric->reaches_all(members) ? group_exchange_p2p(parent, list, me, tag, mine)
                                                     : group_exchange_store(parent, list, me, tag, mine);
  if (st.ok()) st = std::move(local);
  xc_comm_s *child = nullptr;
  if (st.ok()) st = make_comm(parent->fabric, std::move(members), me, ctx, child_cfg, name, &child);
  if (!st.ok()) {
    parent->fabric->release_context(ctx);
    return st;
  }
  child->claimed_ctx = true;
  child->ctx_generation = generation;
  *out = child;
  return Status::Ok();
}

Status comm_dup(xc_comm_s *comm, xc_comm_s **out) { return comm_split(comm, 0, comm->rank, nullptr, out); }

Status comm_free(xc_comm_s *comm) {
  trace_unregister(comm);      // no SIGUSR2 dump from here on
  comm->executor->shutdown();  // started collectives finish (or time out) first; a worker is joined
  device_ops_finish(comm);     // and the device ops it enqueued
  // Synchronise so no rank tears down while a peer still needs its messages;
  // skipped after an abort or a failure, where it could only time out.
  // Its failure is returned (a peer that never frees, or died meanwhile,
  // is the caller's to know); the handle is released all the same.
  Status closing;
  // Not after a revoke either: the members left their ops at different points.
  if (!comm->aborted.load() && !comm->broken.load() && !comm->fabric->engine().revoked(comm->ctx) &&
      comm->fabric->engine().first_failed(*comm->members) < 0) {
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
  comm->fabric->engine().cancel_context(comm_agree_ctx(comm), why);  // agreements' leftovers
  comm->magic = kCommFreed;
  comm->backends.clear();  // segments and scratch go now; only the shell stays
  comm->executor.reset();  // shut down above
  comm->members.reset();
  comm->rank_of_fabric.reset();
  if (comm->claimed_ctx) comm->fabric->release_context(comm->ctx);
  comm->fabric->comm_freed();  // the last one says this process leaves
  comm->fabric.reset();  // the last communicator of a fabric tears it down
  // The rest of the shell's heap: the executor (shut down above) and its
  // queue were ~850 of the ~1.2 KB a freed communicator kept.
  comm->executor.reset();
  comm->device_error.reset();
  comm->recorder.reset();
  std::string().swap(comm->name);
  return closing;
}

void comm_abort(xc_comm_s *comm) {
  comm->aborted.store(true);
  {
    std::lock_guard<std::mutex> g(comm->device_mu);  // held briefly by every user: abort does not wait long
    if (comm->custom) comm->custom->abort();
  }
  nccl_abort(comm);  // ncclCommAbort; never blocks
  Status why = Error(XC_ERR_ABORTED, "the communicator was aborted");
  comm->executor->abort(why);  // queued collectives fail; the running one fails with its context below
  comm->fabric->engine().abort_context(comm->ctx, why);
  for (uint64_t c = comm->ctx + 1; c <= comm->ctx + 3; ++c) comm->fabric->engine().abort_context(c, why);
}

xc_result_t comm_async_error(xc_comm_s *comm) {
  if (comm->aborted.load()) return XC_ERR_ABORTED;
  if (comm->fabric->engine().revoked(comm->ctx)) return XC_ERR_REVOKED;
  if (int dev = comm->device_error->load()) return static_cast<xc_result_t>(dev);
  if (xc_result_t nccl = nccl_async_error(comm)) return nccl;
  if (comm->fabric->engine().first_failed(*comm->members) >= 0) return XC_ERR_PEER_FAILED;
  return XC_SUCCESS;
}

}  // namespace xc
