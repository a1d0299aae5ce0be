#include "algo/hier/layout.h"

#include <algorithm>
#include <map>

namespace xc::algo::hier {

HostLayout make_layout(const std::vector<int> &host_ids) {
  HostLayout l;
  l.nranks = static_cast<int>(host_ids.size());
  l.host_of.resize(host_ids.size());
  l.local_of.resize(host_ids.size());
  std::map<int, int> index;  // host id -> host, numbered by first appearance
  for (size_t r = 0; r < host_ids.size(); ++r) {
    auto it = index.emplace(host_ids[r], static_cast<int>(index.size())).first;
    int h = it->second;
    if (h == static_cast<int>(l.members.size())) l.members.emplace_back();
    l.host_of[r] = h;
    l.local_of[r] = static_cast<int>(l.members[static_cast<size_t>(h)].size());
    l.members[static_cast<size_t>(h)].push_back(static_cast<int>(r));
  }
  int at = 0;
  l.min_local = l.members.empty() ? 0 : l.nranks;
  for (const std::vector<int> &m : l.members) {
    for (size_t i = 0; i < m.size(); ++i) l.contiguous = l.contiguous && m[i] == at + static_cast<int>(i);
    l.offset.push_back(at);
    at += static_cast<int>(m.size());
    l.min_local = std::min(l.min_local, static_cast<int>(m.size()));
    l.max_local = std::max(l.max_local, static_cast<int>(m.size()));
  }
  return l;
}

}  // namespace xc::algo::hier
