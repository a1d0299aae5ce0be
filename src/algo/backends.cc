#include "algo/backends.h"

#include "algo/hier/backend.h"
#include "coll/shm/backend.h"

namespace xc::algo {

namespace {

const BackendEntry kBackends[] = {
    {coll::BackendId::kShm, "shm", "every member on this host (more than one)",
     [](const Team &t) { return t.size > 1 && t.one_host; },
     [](const Team &) -> std::unique_ptr<coll::Backend> { return std::make_unique<coll::ShmColl>(); }},
    {coll::BackendId::kHier, "hier", "members on several hosts, more than one on some host",
     [](const Team &t) { return !t.one_host && hier::make_layout(t.hosts).hierarchical(); },
     [](const Team &t) -> std::unique_ptr<coll::Backend> {
       return std::make_unique<hier::HierColl>(hier::make_layout(t.hosts), t.rank);
     }},
};
static_assert(sizeof kBackends / sizeof kBackends[0] == static_cast<size_t>(coll::BackendId::kCount),
              "one entry per backend slot");

}  // namespace

const BackendEntry *backend_table(size_t *count) {
  *count = sizeof kBackends / sizeof kBackends[0];
  return kBackends;
}

void add_backends(const Team &team, coll::BackendSet *set) {
  for (const BackendEntry &e : kBackends)
    if (e.applies(team)) set->add(e.make(team));
}

}  // namespace xc::algo
