#include "cpu/host_mem.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

namespace xc {

namespace {

struct Mapping {
  size_t len;
  bool huge;  // MADV_HUGEPAGE taken and THP not "never"
};

std::mutex g_mu;
std::map<void *, Mapping> g_live;  // by start

// THP "never" takes the advice but never gives a huge page.
bool thp_offered() {
  static const bool offered = [] {
    char line[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return false;
    bool got = fgets(line, sizeof line, f) != nullptr;
    fclose(f);
    return got && strstr(line, "[never]") == nullptr;
  }();
  return offered;
}

}  // namespace

Status host_mem_alloc(size_t bytes, void **ptr) {
  if (bytes > SIZE_MAX - 2 * kHostMemAlign)
    return Error(XC_ERR_INVALID_ARGUMENT, "%zu bytes is more than any mapping can hold", bytes);
  size_t len = (bytes + kHostMemAlign - 1) & ~(kHostMemAlign - 1);
  // Map one alignment more than needed and trim both ends to the boundary.
  size_t over = len + kHostMemAlign;
  void *raw = mmap(nullptr, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    int err = errno;
    if (err == ENOMEM) return Error(XC_ERR_NO_MEMORY, "cannot map %zu bytes", over);
    return SystemError(err, "mmap of %zu bytes", over);
  }
  auto base = reinterpret_cast<uintptr_t>(raw);
  uintptr_t start = (base + kHostMemAlign - 1) & ~(kHostMemAlign - 1);
  if (start > base) munmap(raw, start - base);
  if (size_t tail = base + over - (start + len)) munmap(reinterpret_cast<void *>(start + len), tail);
  void *p = reinterpret_cast<void *>(start);
  // EINVAL where the kernel has no THP: the memory is still good, on 4 KiB pages.
  bool huge = madvise(p, len, MADV_HUGEPAGE) == 0 && thp_offered();
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_live.emplace(p, Mapping{len, huge});
  }
  *ptr = p;
  return Status::Ok();
}

Status host_mem_free(void *ptr) {
  size_t len;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_live.find(ptr);
    if (it == g_live.end())
      return Error(XC_ERR_INVALID_ARGUMENT, "%p is not memory from xc_mem_alloc or xc_mem_alloc_device (or it was freed already)", ptr);
    len = it->second.len;
    g_live.erase(it);
  }
  if (munmap(ptr, len) != 0) return SystemError(errno, "munmap of %zu bytes at %p", len, ptr);
  return Status::Ok();
}

bool host_mem_on_huge_pages(const void *p) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_live.upper_bound(const_cast<void *>(p));
  if (it == g_live.begin()) return false;
  --it;
  auto at = reinterpret_cast<uintptr_t>(p), start = reinterpret_cast<uintptr_t>(it->first);
  return it->second.huge && at < start + it->second.len;
}

}  // namespace xc
