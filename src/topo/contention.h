// Whether other work competes with a group of ranks for this host's cores
// right now (a noisy neighbour), read from the kernel's count of runnable
// tasks. A rank that shares its core with another process runs at a
// fraction of its speed; algorithms whose ranks move in lock step then wait
// for the slowest at every step, where ranks that copy independently do not.
#pragma once

namespace xc::topo {

// More tasks are runnable on this host now than it has cores, while the
// nranks ranks of an op (runnable themselves: they are in it) have a core
// each. False when ranks outnumber cores (their own contention, which the
// algorithms already weigh) or when the count cannot be read. About 3 µs
// (one read of /proc/loadavg): for large ops only.
bool cores_contended(int nranks);

}  // namespace xc::topo
