#include "device/ipc.h"

#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <utility>

namespace xc::device {
namespace {

struct Registered {
  size_t bytes;
  BufDesc desc;  // of the start
};

std::mutex g_mu;
std::map<uintptr_t, Registered> g_registered;                   // by start address
std::map<std::pair<int32_t, uint64_t>, void *> g_mapped;  // (owner pid, buffer id) → base here

}  // namespace

Status describe(gpu::Device *dev, const void *p, BufDesc *out) {
  memset(out, 0, sizeof *out);
  if (!p) return Status::Ok();
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  {
    std::lock_guard<std::mutex> g(g_mu);
    auto it = g_registered.upper_bound(a);
    if (it != g_registered.begin()) {
      --it;
      if (a < it->first + it->second.bytes) {
        *out = it->second.desc;
        out->offset += a - it->first;
        out->address = a;
        return Status::Ok();
      }
    }
  }
  size_t offset = 0;
  XC_TRY(dev->ipc_export(p, &out->handle, &offset));
  out->offset = offset;
  out->address = a;
  out->pid = static_cast<int32_t>(getpid());
  out->present = 1;
  return Status::Ok();
}

Status reach(gpu::Device *dev, const BufDesc &d, void **out) {
  if (!d.present) {
    *out = nullptr;
    return Status::Ok();
  }
  if (d.pid == static_cast<int32_t>(getpid())) {
    *out = reinterpret_cast<void *>(d.address);
    return Status::Ok();
  }
  std::lock_guard<std::mutex> g(g_mu);
  auto key = std::make_pair(d.pid, d.handle.buffer_id);
  auto it = g_mapped.find(key);
  if (it == g_mapped.end()) {
    void *base = nullptr;
    XC_TRY(dev->ipc_open(d.handle, d.pid, &base));
    it = g_mapped.emplace(key, base).first;
  }
  *out = static_cast<char *>(it->second) + d.offset;
  return Status::Ok();
}

Status register_buffer(gpu::Device *dev, void *p, size_t bytes) {
  BufDesc d;
  XC_TRY(describe(dev, p, &d));
  std::lock_guard<std::mutex> g(g_mu);
  g_registered[reinterpret_cast<uintptr_t>(p)] = Registered{bytes, d};
  return Status::Ok();
}

Status deregister_buffer(void *p) {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_registered.erase(reinterpret_cast<uintptr_t>(p)) == 0)
    return Error(XC_ERR_INVALID_ARGUMENT, "%p is not a registered buffer", p);
  return Status::Ok();
}

}  // namespace xc::device
