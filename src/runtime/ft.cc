// Communicators that survive a failure (xcomm.h: xc_comm_revoke, _agree,
// _get_failed, _shrink, _grow; docs/fault-tolerance.md).
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "algo/algorithms.h"
#include "base/log.h"
#include "coll/desc.h"
#include "runtime/agree.h"
#include "runtime/comm.h"

namespace xc {

namespace {

constexpr uint64_t kAgreeSalt = 0x510e527fade682d1ULL;
constexpr uint64_t kShrinkSalt = 0x9b05688c2b3e6c1fULL;

// Every agreement of a communicator has 4 tags of its own.
constexpr uint32_t kAgreementTags = 4;
constexpr uint32_t kMaxAgreementNumber = static_cast<uint32_t>(std::numeric_limits<int>::max()) / kAgreementTags;

std::string rank_list(const std::vector<char> &failed) {
  std::string s;
  for (size_t i = 0; i < failed.size(); ++i)
    if (failed[i]) s += (s.empty() ? "" : ", ") + std::to_string(i);
  return s;
}

// One agreement on comm; its number (the same on every member: agreements
// are collective and run in one order) in *number.
Status run_agreement(xc_comm_s *comm, uint32_t flag, AgreeResult *res, uint32_t *number) {
  if (!comm->fabric->reaches_all(*comm->members))
    return Error(XC_ERR_UNSUPPORTED,
                 "the agreement needs a transport to every member, and some are on hosts none reaches");
  AgreeInput in;
  in.engine = &comm->fabric->engine();
  in.members = comm->members;
  in.me = comm->rank;
  in.ctx = comm_agree_ctx(comm);
  in.flag = flag;
  in.deadline = op_deadline(comm);
  {
    std::lock_guard<std::mutex> lock(comm->ft_mu);
    *number = comm->agreements++ % kMaxAgreementNumber;
    in.known_failed = comm->agreed_failed;
  }
  in.tag_base = static_cast<int>(*number * kAgreementTags);
  // What the agreement before the last one left (its decision, passed on by everyone).
  if (*number >= 2) in.engine->discard_unexpected(in.ctx, in.tag_base - static_cast<int>(kAgreementTags));
  XC_TRY(agree(in, res));
  std::lock_guard<std::mutex> lock(comm->ft_mu);
  comm->agreed_failed.resize(static_cast<size_t>(comm->size), 0);
  for (size_t i = 0; i < res->failed.size(); ++i)
    if (res->failed[i]) comm->agreed_failed[i] = 1;
  return Status::Ok();
}

}  // namespace

uint64_t comm_agree_ctx(const xc_comm_s *comm) { return comm_derive_ctx(comm_lineage(comm), kAgreeSalt, 0); }

Status comm_revoke(xc_comm_s *comm) {
  comm->fabric->engine().revoke(comm->ctx, *comm->members, comm->fabric->rank());
  return Status::Ok();
}

Status comm_agree(xc_comm_s *comm, int *flag) {
  // A NULL flag still takes part (as 0), so the others do not wait for it
  // until their deadline.
  AgreeResult res;
  uint32_t number = 0;
  XC_TRY(run_agreement(comm, flag ? static_cast<uint32_t>(*flag) : 0u, &res, &number));
  if (!flag) return Error(XC_ERR_INVALID_ARGUMENT, "flag is NULL (it took part as 0)");
  *flag = static_cast<int>(res.flag);
  std::string failed = rank_list(res.failed);
  if (!failed.empty())
    return Error(XC_ERR_PEER_FAILED, "the survivors agreed (flag 0x%x) that rank(s) %s failed",
                 static_cast<unsigned>(*flag), failed.c_str());
  return Status::Ok();
}

Status comm_get_failed(xc_comm_s *comm, int *n, int *ranks) {
  if (!n) return Error(XC_ERR_INVALID_ARGUMENT, "n is NULL");
  std::vector<char> failed(static_cast<size_t>(comm->size), 0);
  for (int r : comm->fabric->engine().failed_among(*comm->members)) failed[static_cast<size_t>(r)] = 1;
  {
    std::lock_guard<std::mutex> lock(comm->ft_mu);
    for (size_t i = 0; i < comm->agreed_failed.size(); ++i)
      if (comm->agreed_failed[i]) failed[i] = 1;
  }
  int count = 0;
  for (int r = 0; r < comm->size; ++r)
    if (failed[static_cast<size_t>(r)]) {
      if (ranks) ranks[count] = r;
      ++count;
    }
  *n = count;
  return Status::Ok();
}

Status comm_shrink(xc_comm_s *comm, const xc_config_t *cfg, xc_comm_s **out) {
  xc_config_t child_cfg;
  std::string name;
  // A bad argument still takes part (as a flag of 0), so every rank fails alike.
  Status local = comm_child_config(comm, cfg, out, &child_cfg, &name);
  AgreeResult res;
  uint32_t number = 0;
  XC_TRY(run_agreement(comm, local.ok() ? 1u : 0u, &res, &number));
  if (!local.ok()) return local;
  if (!res.flag) return Error(XC_ERR_INVALID_ARGUMENT, "a rank passed an invalid config or output to the same shrink");
  if (res.failed[static_cast<size_t>(comm->rank)])
    return Error(XC_ERR_INTERNAL, "the survivors counted this rank (%d) as failed", comm->rank);
  std::vector<int> members;
  int my_index = 0;
  for (int r = 0; r < comm->size; ++r) {
    if (res.failed[static_cast<size_t>(r)]) continue;
    if (r == comm->rank) my_index = static_cast<int>(members.size());
    members.push_back((*comm->members)[static_cast<size_t>(r)]);
  }
  // The context comes from the parent's and the agreement's number, which
  // every survivor shares: no rendezvous, as in a split.
  uint64_t ctx = comm_derive_ctx(comm_lineage(comm), kShrinkSalt, number);
  XC_INFO("shrink: %zu of %d ranks survive (failed: %s)", members.size(), comm->size, rank_list(res.failed).c_str());
  return comm_make(comm->fabric, std::move(members), my_index, ctx, child_cfg, name, out);
}

// ---- grow ---------------------------------------------------------------------------

namespace {

// What each rank of comm brings to a grow: rank 0's id goes to all.
struct GrowRecord {
  xc_unique_id_t id;
  int32_t nnew;
  uint32_t valid;
};

}  // namespace

Status comm_grow(xc_comm_s *comm, int nnew, const xc_unique_id_t *id, const xc_config_t *cfg, xc_comm_s **out) {
  xc_config_t child_cfg;
  std::string name;
  Status local = comm_child_config(comm, cfg, out, &child_cfg, &name);
  if (local.ok() && (nnew < 0 || nnew > std::numeric_limits<int>::max() - comm->size))
    local = Error(XC_ERR_INVALID_ARGUMENT, "nnew %d must be 0 or more (and size + nnew fit an int)", nnew);
  if (local.ok() && comm->rank == 0 && !id)
    local = Error(XC_ERR_INVALID_ARGUMENT, "id is NULL on rank 0 (rank 0 passes the id from xc_get_unique_id)");
  GrowRecord mine;
  memset(&mine, 0, sizeof mine);
  if (local.ok() && comm->rank == 0) mine.id = *id;
  mine.nnew = nnew;
  mine.valid = local.ok() ? 1u : 0u;
  int failed = comm->fabric->engine().first_failed(*comm->members);
  if (failed >= 0) {
    auto it = std::find(comm->members->begin(), comm->members->end(), failed);
    return Error(XC_ERR_PEER_FAILED, "rank %d of the communicator has failed: shrink it before growing",
                 static_cast<int>(it - comm->members->begin()));
  }
  // Exchange first, so a rank's bad argument fails every rank instead of hanging them.
  std::vector<GrowRecord> all(static_cast<size_t>(comm->size));
  all[static_cast<size_t>(comm->rank)] = mine;
  comm->executor->drain();
  coll::CollContext c = make_coll_context(comm);
  c.set_signature(kSigCommGrow);
  if (comm->size > 1) {
    if (!comm->fabric->reaches_all(*comm->members))
      return Error(XC_ERR_UNSUPPORTED, "xc_comm_grow needs a transport between the communicator's ranks");
    XC_TRY(algo::allgather_ring(c, all.data(), sizeof(GrowRecord)));
  }
  if (!local.ok()) return local;
  for (int r = 0; r < comm->size; ++r) {
    const GrowRecord &g = all[static_cast<size_t>(r)];
    if (!g.valid) return Error(XC_ERR_INVALID_ARGUMENT, "rank %d passed an invalid argument to the same grow", r);
    if (g.nnew != nnew)
      return Error(XC_ERR_INVALID_USAGE, "rank %d passed nnew %d and this rank %d: every rank passes the same", r, g.nnew,
                   nnew);
  }
  // A new fabric over old and new processes: the newcomers' connections
  // cannot come from comm's (xcomm.h).
  xc_unique_id_t id0 = all[0].id;
  XC_TRY_CTX(comm_init_rank(comm->size + nnew, &id0, comm->rank, &child_cfg, out),
             "joining the grown communicator's rendezvous");
  return Status::Ok();
}

}  // namespace xc
