// How many cores this host offers, and whether a group of ranks outnumbers
// them. The collective selector, the waits and the engine's spin use this
// one rule, so every rank of a host decides alike.
#pragma once

namespace xc::topo {

// The cores this host gives the job: XC_LOCAL_CORES where the launcher
// said (xcrun: the cpus it may use itself, a cpuset, taskset or a Slurm
// allocation; a rank's own affinity cannot tell, once it is bound to one
// core), else every online core; 0 or less when unknown.
long host_cores();

// More ranks than this host has cores (the ranks of an all-local op).
// Inline: the selector asks on every op.
inline bool oversubscribed(int nranks) {
  long cores = host_cores();
  return cores > 0 && nranks > cores;
}

}  // namespace xc::topo
