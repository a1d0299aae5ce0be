// Whether this rank's thread has to wait for its core (a noisy neighbour on
// it), from the kernel's scheduling statistics. A rank that shares its core
// with another process runs at a fraction of its speed; algorithms whose
// ranks move in lock step then wait for the slowest at every step, where
// ranks that copy independently do not.
#pragma once

namespace xc::topo {

// The calling thread spent more than a fifth of the time since its previous
// call (at least a millisecond ago) runnable but waiting for a cpu
// (/proc/thread-self/schedstat's run delay). False at the first call, when
// the statistics cannot be read, or when less than a millisecond passed
// (then the previous sample is kept). About 3 µs: for large ops only.
// Transient work elsewhere (a process woken for a moment) barely moves it;
// a process spinning on the same core holds it near a half.
bool core_contended();

}  // namespace xc::topo
