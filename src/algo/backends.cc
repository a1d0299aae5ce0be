#include "algo/backends.h"

#include "coll/shm/backend.h"

namespace xc::algo {

namespace {

const BackendEntry kBackends[] = {
    {coll::BackendId::kShm, "shm", "every member on this host (more than one)",
     [](const Team &t) { return t.size > 1 && t.one_host; },
     []() -> std::unique_ptr<coll::Backend> { return std::make_unique<coll::ShmColl>(); }},
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
    if (e.applies(team)) set->add(e.make());
}

}  // namespace xc::algo
