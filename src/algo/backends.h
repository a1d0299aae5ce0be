// Which collective backends (coll/backend.h) a communicator gets: one table,
// asked once per communicator when it is made. A backend the table offers
// serves the algorithms of algo/table.cc that name it.
#pragma once

#include <memory>
#include <vector>

#include "coll/backend.h"

namespace xc::algo {

// What the choice depends on, the same on every member.
struct Team {
  int size = 1;
  int rank = 0;
  bool one_host = false;  // every member on this host
  std::vector<int> hosts;  // the host of each member (the fabric's index), in rank order
};

struct BackendEntry {
  coll::BackendId id;
  const char *name;
  const char *serves;  // for xc-info: which communicators get it
  bool (*applies)(const Team &team);
  std::unique_ptr<coll::Backend> (*make)(const Team &team);
};

// Every backend, in slot order.
const BackendEntry *backend_table(size_t *count);

// The backends the table offers team.
void add_backends(const Team &team, coll::BackendSet *set);

}  // namespace xc::algo
