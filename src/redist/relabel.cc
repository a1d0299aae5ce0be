// COSTA's relabelling as a greedy matching: the largest overlaps first, a
// rank and a destination part taken once each. Exact when dst is src with
// ranks renumbered (each part then has one full overlap); within a factor
// of two of the best otherwise (greedy maximum-weight matching).
#include <algorithm>
#include <tuple>

#include "redist/planner.h"

namespace xc::redist {

std::vector<int> greedy_relabel(const std::vector<uint64_t> &v, int n, uint64_t *kept) {
  std::vector<std::tuple<uint64_t, int, int>> edges;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (uint64_t w = v[static_cast<size_t>(i) * static_cast<size_t>(n) + static_cast<size_t>(j)])
        edges.emplace_back(w, i, j);
  // Heaviest first; ties: keep a rank on its own part, then lowest ranks.
  std::sort(edges.begin(), edges.end(), [](const auto &a, const auto &b) {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
    bool sa = std::get<1>(a) == std::get<2>(a), sb = std::get<1>(b) == std::get<2>(b);
    if (sa != sb) return sa;
    return std::make_pair(std::get<2>(a), std::get<1>(a)) < std::make_pair(std::get<2>(b), std::get<1>(b));
  });
  std::vector<int> perm(static_cast<size_t>(n), -1);
  std::vector<bool> taken(static_cast<size_t>(n), false);
  *kept = 0;
  for (const auto &[w, i, j] : edges) {
    if (taken[static_cast<size_t>(i)] || perm[static_cast<size_t>(j)] >= 0) continue;
    taken[static_cast<size_t>(i)] = true;
    perm[static_cast<size_t>(j)] = i;
    *kept += w;
  }
  // Parts nobody holds any of: the free ranks, own part first.
  for (int j = 0; j < n; ++j)
    if (perm[static_cast<size_t>(j)] < 0 && !taken[static_cast<size_t>(j)]) {
      perm[static_cast<size_t>(j)] = j;
      taken[static_cast<size_t>(j)] = true;
    }
  int next = 0;
  for (int j = 0; j < n; ++j) {
    if (perm[static_cast<size_t>(j)] >= 0) continue;
    while (taken[static_cast<size_t>(next)]) ++next;
    perm[static_cast<size_t>(j)] = next;
    taken[static_cast<size_t>(next)] = true;
  }
  return perm;
}

}  // namespace xc::redist
