#include "algo/hier/backend.h"

#include "coll/shm/backend.h"

namespace xc::algo::hier {

HierColl::HierColl(HostLayout layout, int rank) : layout_(std::move(layout)), rank_(rank) {
  // Its members share this host: the shared-memory backend serves them,
  // set up by the first phase that runs there.
  if (local_size() > 1) local_backends_.add(std::make_unique<coll::ShmColl>());
}

Status HierColl::ensure(coll::CollContext &c) {
  if (ready_) return Status::Ok();
  const HostLayout &l = layout_;
  auto local = std::make_shared<std::vector<int>>();
  for (int r : l.members[static_cast<size_t>(host())]) local->push_back(c.fabric_rank(r));
  auto peers = std::make_shared<std::vector<int>>();
  for (int h = 0; h < l.hosts(); ++h)
    if (local_rank() < l.local_size(h)) peers->push_back(c.fabric_rank(l.rank_at(h, local_rank())));
  local_ = std::move(local);
  peers_ = std::move(peers);
  reps_.resize(static_cast<size_t>(l.nranks));
  ready_ = true;
  return Status::Ok();
}

coll::CollContext HierColl::sub(const coll::CollContext &c, const std::shared_ptr<const std::vector<int>> *members,
                                int index, const coll::BackendSet *backends) const {
  coll::CollContext s(c.engine(), members, index, c.context_id(), c.seq(), 0);
  s.set_deadline(c.deadline());
  s.set_op_members(c.op_members());  // a crash of any member fails every phase; errors name communicator ranks
  s.set_signature(c.signature(), c.desc());
  s.set_backends(backends);
  s.set_host_class(c.host_class());
  return s;
}

coll::CollContext HierColl::local(const coll::CollContext &c) const {
  return sub(c, &local_, local_rank(), &local_backends_);
}

coll::CollContext HierColl::peers(const coll::CollContext &c) const {
  // Hosts with fewer members than local_rank() + 1 are left out; the
  // algorithms ask for peers only at a leader or under equal counts.
  int index = 0;
  for (int h = 0; h < host(); ++h) index += local_rank() < layout_.local_size(h) ? 1 : 0;
  return sub(c, &peers_, index, &none_);
}

coll::CollContext HierColl::reps(const coll::CollContext &c, int root) {
  std::shared_ptr<const std::vector<int>> &list = reps_[static_cast<size_t>(root)];
  int root_host = layout_.host_of[static_cast<size_t>(root)];
  if (!list) {
    auto reps = std::make_shared<std::vector<int>>();
    for (int h = 0; h < layout_.hosts(); ++h)
      reps->push_back(c.fabric_rank(h == root_host ? root : layout_.rank_at(h, 0)));
    list = std::move(reps);
  }
  return sub(c, &list, host(), &none_);
}

}  // namespace xc::algo::hier
