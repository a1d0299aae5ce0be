// How many cores this host offers, and whether a group of ranks outnumbers
// them. The collective selector and the shared-memory waits use this one
// rule, so every rank of a host decides alike.
#pragma once

namespace xc::topo {

long host_cores();  // online cores; 0 or less when unknown
// More ranks than this host has cores (the ranks of an all-local op).
bool oversubscribed(int nranks);

}  // namespace xc::topo
