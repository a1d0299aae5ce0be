// Device buffers across processes: a buffer described so a peer on this
// host can reach it (its allocation's IPC handle and the offset), and the
// process's cache of peers' allocations it has mapped. Handles are opened
// once per allocation and kept; the exporter's buffer id is part of the key,
// so a freed and reused address is mapped anew, never served stale.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/status.h"
#include "gpu/device.h"

namespace xc::device {

struct BufDesc {
  gpu::IpcHandle handle;
  uint64_t offset;   // of the buffer in its allocation
  uint64_t address;  // in the owner's process: what the owner itself uses
  int32_t pid;       // the owner
  int32_t present;   // 0: no buffer (NULL, or nothing to read)
};

// p (device memory, or NULL for "none") described for peers. A registered
// buffer (xc_buffer_register) is described without asking the device.
Status describe(gpu::Device *dev, const void *p, BufDesc *out);

// The peers' buffers one op reads, reached in this process: our own at
// their address, a peer's through its allocation mapped here (once, then
// cached) plus the offset. Mappings stay while an op holds them; beyond
// kMaxMapped allocations the least recently used one no op holds is closed.
class Reached {
 public:
  Reached() = default;
  ~Reached();  // lets go of every mapping reach() handed out
  Reached(const Reached &) = delete;
  Reached &operator=(const Reached &) = delete;
  Status reach(gpu::Device *dev, const BufDesc &d, void **out);

 private:
  std::vector<std::pair<int32_t, uint64_t>> held_;
};
constexpr size_t kMaxMapped = 256;

// xc_buffer_register: describe [p, p + bytes) once and keep it.
Status register_buffer(gpu::Device *dev, void *p, size_t bytes);
// Forget a registration; XC_ERR_INVALID_ARGUMENT when p was not registered.
Status deregister_buffer(void *p);
// The registration holding all of [p, p + bytes), if one does: its start,
// its length and the description of its start.
bool find_registration(const void *p, size_t bytes, uintptr_t *start, size_t *length, BufDesc *desc);

}  // namespace xc::device
