// How a communicator's members spread over hosts, as every member computes it
// alike from the fabric's host of each member: the hosts in the order of
// their lowest member, each host's members in rank order. The hierarchical
// algorithms (algo/hier) run a phase on one host's members and a phase on
// one member per host, and the selector weighs the spread (equal counts per
// host allow the multi-leader algorithms).
#pragma once

#include <cstddef>
#include <vector>

namespace xc::algo::hier {

struct HostLayout {
  int nranks = 0;
  std::vector<int> host_of;               // per rank: its host, 0 .. hosts() - 1
  std::vector<int> local_of;              // per rank: its index among its host's members
  std::vector<std::vector<int>> members;  // per host: its ranks, ascending
  std::vector<int> offset;                // per host: its members' first position in host order
  int min_local = 0, max_local = 0;       // fewest and most members of a host
  // Host order (host 0's members, then host 1's, ...) is rank order: a
  // result laid out by host needs no reordering.
  bool contiguous = true;

  int hosts() const { return static_cast<int>(members.size()); }
  bool equal() const { return min_local == max_local; }
  // Worth a hierarchy: several hosts, and some host holds more than one.
  bool hierarchical() const { return hosts() > 1 && max_local > 1; }
  int local_size(int h) const { return static_cast<int>(members[static_cast<size_t>(h)].size()); }
  // The rank that is member l of host h.
  int rank_at(int h, int l) const { return members[static_cast<size_t>(h)][static_cast<size_t>(l)]; }
  // Where rank r sits in host order.
  int host_position(int r) const {
    return offset[static_cast<size_t>(host_of[static_cast<size_t>(r)])] + local_of[static_cast<size_t>(r)];
  }
};

// host_ids: any id per rank, equal for ranks on one host.
HostLayout make_layout(const std::vector<int> &host_ids);

}  // namespace xc::algo::hier
