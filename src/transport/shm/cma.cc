#include "transport/shm/cma.h"

#include <sys/uio.h>

#include <cerrno>

namespace xc::shm {

int cma_copy(pid_t pid, void *local, uint64_t remote, size_t len, bool to_remote) {
  char *at = static_cast<char *>(local);
  while (len > 0) {
    struct iovec near = {at, len};
    struct iovec far = {reinterpret_cast<void *>(remote), len};
    ssize_t moved = to_remote ? process_vm_writev(pid, &near, 1, &far, 1, 0) : process_vm_readv(pid, &near, 1, &far, 1, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved < 0) return errno;
    if (moved == 0) return kCmaNoProgress;
    at += moved;
    remote += static_cast<uint64_t>(moved);
    len -= static_cast<size_t>(moved);
  }
  return 0;
}

}  // namespace xc::shm
