// Whether this rank's thread has to wait for its core (a noisy neighbour on
// it), from the kernel's scheduling statistics. A rank that shares its core
// with another process runs at a fraction of its speed; algorithms whose
// ranks move in lock step then wait for the slowest at every step, where
// ranks that copy independently do not.
#pragma once

namespace xc::topo {

// The calling thread spent more than a fifth of the time between its last
// two samples runnable but waiting for a cpu (/proc/thread-self/schedstat's
// run delay). A sample is taken when a millisecond or more passed since the
// last one (about 3 µs); sooner, the last verdict is returned (a clock
// read). False at the first call and when the statistics cannot be read.
// Transient work elsewhere (a process woken for a moment) barely moves it;
// a process spinning on the same core holds it near a half.
bool core_contended();

}  // namespace xc::topo
