// How many cores this host offers, and whether a group of ranks outnumbers
// them. The collective selector and the shared-memory waits use this one
// rule, so every rank of a host decides alike. Inline: the selector asks on
// every op.
#pragma once

#include <unistd.h>

namespace xc::topo {

// Online cores; 0 or less when unknown.
inline long host_cores() {
  static const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores;
}

// More ranks than this host has cores (the ranks of an all-local op).
inline bool oversubscribed(int nranks) {
  long cores = host_cores();
  return cores > 0 && nranks > cores;
}

}  // namespace xc::topo
