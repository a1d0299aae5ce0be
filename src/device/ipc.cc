#include "device/ipc.h"

#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace xc::device {
namespace {

struct Registered {
  size_t bytes;
  BufDesc desc;  // of the start
};

std::mutex g_mu;
std::map<uintptr_t, Registered> g_registered;                   // by start address
struct Mapped {
  void *base;
  gpu::Device *dev;
  int users;          // ops holding it now
  uint64_t last_use;  // g_uses when last reached
};
std::map<std::pair<int32_t, uint64_t>, Mapped> g_mapped;  // (owner pid, buffer id) → base here
uint64_t g_uses = 0;

// Close the least recently used mappings no op holds, down to the cap. Under
// g_mu. The closing is left to a thread of its own: unmapping may wait for
// the whole device, and the thread of an op holds a gate on its stream
// that only it opens.
void trim_locked() {
  std::vector<Mapped> victims;
  while (g_mapped.size() > kMaxMapped) {
    auto victim = g_mapped.end();
    for (auto it = g_mapped.begin(); it != g_mapped.end(); ++it)
      if (it->second.users == 0 && (victim == g_mapped.end() || it->second.last_use < victim->second.last_use))
        victim = it;
    if (victim == g_mapped.end()) break;  // every one is in use
    victims.push_back(victim->second);
    g_mapped.erase(victim);
  }
  if (victims.empty()) return;
  std::thread([victims] {
    for (const Mapped &m : victims) (void)m.dev->ipc_close(m.base);
  }).detach();
}

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

Reached::~Reached() {
  std::lock_guard<std::mutex> g(g_mu);
  for (const auto &key : held_) {
    auto it = g_mapped.find(key);
    if (it != g_mapped.end()) --it->second.users;
  }
  trim_locked();
}

Status Reached::reach(gpu::Device *dev, const BufDesc &d, void **out) {
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
    it = g_mapped.emplace(key, Mapped{base, dev, 0, 0}).first;
  }
  ++it->second.users;
  it->second.last_use = ++g_uses;
  held_.push_back(key);
  *out = static_cast<char *>(it->second.base) + d.offset;
  return Status::Ok();
}

Status register_buffer(gpu::Device *dev, void *p, size_t bytes) {
  BufDesc d;
  XC_TRY(describe(dev, p, &d));
  std::lock_guard<std::mutex> g(g_mu);
  g_registered[reinterpret_cast<uintptr_t>(p)] = Registered{bytes, d};
  return Status::Ok();
}

bool find_registration(const void *p, size_t bytes, uintptr_t *start, size_t *length, BufDesc *desc) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> g(g_mu);
  auto it = g_registered.upper_bound(a);
  if (it == g_registered.begin()) return false;
  --it;
  if (a + bytes > it->first + it->second.bytes) return false;
  *start = it->first;
  *length = it->second.bytes;
  *desc = it->second.desc;
  return true;
}

Status deregister_buffer(void *p) {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_registered.erase(reinterpret_cast<uintptr_t>(p)) == 0)
    return Error(XC_ERR_INVALID_ARGUMENT, "%p is not a registered buffer", p);
  return Status::Ok();
}

}  // namespace xc::device
