// Cross-memory attach: copying straight between this process and another
// one's memory (process_vm_readv/writev), for single-copy large messages and
// the shared-memory collectives.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace xc::shm {

// cma_copy's answer when a call moved nothing: the remote range is gone.
constexpr int kCmaNoProgress = -1;

// Copy len bytes between local and the address remote in process pid: read
// from it (to_remote false) or write to it; partial transfers and EINTR are
// continued. 0 on success, else an errno value (ESRCH: the process is gone)
// or kCmaNoProgress.
int cma_copy(pid_t pid, void *local, uint64_t remote, size_t len, bool to_remote);

}  // namespace xc::shm
