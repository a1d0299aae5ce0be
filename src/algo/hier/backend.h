// The backend (coll/backend.h) of communicators whose members span several
// hosts with more than one member on some host: the host layout, and
// sub-contexts of an op over a subset of the members, on which the
// hierarchical algorithms run their phases (this host's members through
// the shared-memory backend; one member per host over point-to-point).
//
// A sub-context carries the op's context id, tag, deadline, signature and
// (for the engine's failure and mismatch handling) the communicator's
// members: an abort, a free, a member's crash or a mismatch of the op
// reaches its phases as it reaches a flat algorithm, and no other op's
// message can match. Phases never mix
// within a pair of ranks: local phases exchange only between members of one
// host, cross-host phases only between members of different hosts, and the
// phases on one pair follow each other in the same order on both sides, as
// the steps of a flat algorithm do under one tag.
#pragma once

#include <memory>
#include <vector>

#include "algo/hier/layout.h"
#include "coll/backend.h"
#include "coll/context.h"

namespace xc::algo::hier {

class HierColl final : public coll::Backend {
 public:
  HierColl(HostLayout layout, int rank);
  coll::BackendId id() const override { return coll::BackendId::kHier; }
  const char *name() const override { return "hier"; }
  // Builds the member lists of the sub-groups (no messages; every rank
  // reaches it at the same op). The local shared-memory backend is set up by
  // the first phase that uses it (phase.h), collectively over this host.
  Status ensure(coll::CollContext &c) override;

  const HostLayout &layout() const { return layout_; }
  int rank() const { return rank_; }
  int host() const { return layout_.host_of[static_cast<size_t>(rank_)]; }
  int local_rank() const { return layout_.local_of[static_cast<size_t>(rank_)]; }
  int local_size() const { return layout_.local_size(host()); }

  // Sub-contexts of c's op (after ensure):
  // this host's members, in rank order, with their shared-memory backend;
  coll::CollContext local(const coll::CollContext &c) const;
  // member local_rank() of every host, in host order (equal counts per host,
  // or at a leader: member 0 of every host);
  coll::CollContext peers(const coll::CollContext &c) const;
  // one representative per host, in host order: root on its host, member 0
  // on the others. Only at a representative.
  coll::CollContext reps(const coll::CollContext &c, int root);

 private:
  coll::CollContext sub(const coll::CollContext &c, const std::shared_ptr<const std::vector<int>> *members,
                        int index, const coll::BackendSet *backends) const;

  HostLayout layout_;
  int rank_;
  bool ready_ = false;
  std::shared_ptr<const std::vector<int>> local_, peers_;  // fabric ranks
  std::vector<std::shared_ptr<const std::vector<int>>> reps_;  // per root, made at its first op
  coll::BackendSet local_backends_;
  coll::BackendSet none_;
};

inline HierColl *hier_of(const coll::CollContext &c) {
  return static_cast<HierColl *>(c.backend(coll::BackendId::kHier));
}

}  // namespace xc::algo::hier
