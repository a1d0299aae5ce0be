// A stand-in for libcuda.so.1 (tests/unit/meson.build builds it as
// fake_cuda_driver.so; test_cuda_device.cc points XC_CUDA_LIBRARY at it), so
// every path of gpu/cuda_device.cc runs on a machine without a GPU. "Device
// memory" is host memory from malloc that the fake calls device, so copies
// really copy; kernels are not run, their launches are recorded; a module
// must be a fatbin, and a function is found by searching it for the name,
// so a name the loader asks for that nvcc did not build fails here too.
//
// FAKE_CUDA_COUNT  devices (default 1)
// FAKE_CUDA_SMS    multiprocessors per device (default 2)
// FAKE_CUDA_MEMOPS 1: the device has 64-bit stream memory operations (default 0)
// FAKE_CUDA_FAIL   "symbol=code,...": those entry points fail with that code
// The test reads and steers the rest through the fake_cuda_* functions.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "kernels/args.cuh"

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kInvalidImage = 200, kInvalidContext = 201,
                   kNotFound = 500, kNotReady = 600;

std::mutex mu;
std::map<std::string, int> counters;  // calls and live objects, by name

struct Block {
  size_t bytes;
  unsigned long long buffer_id;
};
std::map<uintptr_t, Block> device_mem;    // allocations, by base
std::map<uintptr_t, size_t> pinned_mem;   // cuMemHostAlloc memory
// Freed device blocks, reused by size as a driver would; released at exit.
struct FreedBlocks : std::multimap<size_t, uintptr_t> {
  ~FreedBlocks() {
    for (auto &b : *this) free(reinterpret_cast<void *>(b.second));
  }
};
FreedBlocks freed;
unsigned long long next_buffer_id = 1;
int refs[8];                               // primary context references per device
char contexts[8];                          // a context is the address of one of these
bool busy = false;                         // streams and events report NOT_READY
thread_local void *current = nullptr;

struct Module {
  const unsigned char *image;
  size_t bytes;
};
struct Launch {
  std::string name;
  unsigned grid[3], block[3];
  void *stream;
  unsigned char params[sizeof(xc::kernels::ReduceArgs)];
};
Launch last_launch;
struct Wait {
  void *stream = nullptr;
  unsigned long long addr = 0, value = 0;
  unsigned flags = 0;
};
Wait last_wait;

int env_int(const char *name, int fallback) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

// The code FAKE_CUDA_FAIL gives symbol, 0 when none.
CUresult injected(const char *symbol) {
  const char *spec = getenv("FAKE_CUDA_FAIL");
  if (!spec) return kSuccess;
  std::string s(spec), want = std::string(symbol) + "=";
  for (size_t at = 0; at < s.size();) {
    size_t end = s.find(',', at);
    if (end == std::string::npos) end = s.size();
    if (s.compare(at, want.size(), want) == 0) return atoi(s.c_str() + at + want.size());
    at = end + 1;
  }
  return kSuccess;
}

#define FAKE_ENTRY(symbol)                    \
  std::lock_guard<std::mutex> lock(mu);       \
  ++counters[symbol];                         \
  if (CUresult rc_ = injected(symbol)) return rc_

bool in_context() { return current != nullptr; }

const Block *find_block(uintptr_t p, uintptr_t *base) {
  auto it = device_mem.upper_bound(p);
  if (it == device_mem.begin()) return nullptr;
  --it;
  if (p >= it->first + it->second.bytes) return nullptr;
  *base = it->first;
  return &it->second;
}

}  // namespace

extern "C" {

// ---- steering and reading, for the test -------------------------------------
int fake_cuda_counter(const char *name) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = counters.find(name);
  return it == counters.end() ? 0 : it->second;
}
int fake_cuda_ctx_refs(int dev) {
  std::lock_guard<std::mutex> lock(mu);
  return refs[dev];
}
void fake_cuda_set_busy(int b) {
  std::lock_guard<std::mutex> lock(mu);
  busy = b != 0;
}
// The last kernel launched: its name (nullptr if none), grid, block, stream
// and the bytes of its one parameter.
const char *fake_cuda_last_launch(unsigned grid[3], unsigned block[3], void **stream, void *params,
                                  size_t bytes) {
  std::lock_guard<std::mutex> lock(mu);
  if (last_launch.name.empty()) return nullptr;
  memcpy(grid, last_launch.grid, sizeof last_launch.grid);
  memcpy(block, last_launch.block, sizeof last_launch.block);
  *stream = last_launch.stream;
  memcpy(params, last_launch.params, bytes < sizeof last_launch.params ? bytes : sizeof last_launch.params);
  return last_launch.name.c_str();
}

// The last stream wait (cuStreamWaitValue64): its stream, address, value and flags.
void fake_cuda_last_wait(void **stream, unsigned long long *addr, unsigned long long *value, unsigned *flags) {
  std::lock_guard<std::mutex> lock(mu);
  *stream = last_wait.stream;
  *addr = last_wait.addr;
  *value = last_wait.value;
  *flags = last_wait.flags;
}

// ---- the driver ---------------------------------------------------------------
CUresult cuInit(unsigned) {
  FAKE_ENTRY("cuInit");
  return kSuccess;
}

CUresult cuGetErrorString(CUresult rc, const char **s) {
  static const std::map<int, const char *> text = {
      {0, "no error"}, {1, "invalid argument"}, {2, "out of memory"}, {100, "no CUDA-capable device is detected"},
      {200, "device kernel image is invalid"}, {208, "resource already mapped"}, {209, "no kernel image is available for execution on the device"},
      {500, "named symbol not found"}, {600, "device not ready"}, {700, "an illegal memory access was encountered"},
      {999, "unknown error"}};
  auto it = text.find(rc);
  if (it == text.end()) return kInvalidValue;  // as the driver does for a code it does not know
  *s = it->second;
  return kSuccess;
}

CUresult cuDeviceGetCount(int *n) {
  FAKE_ENTRY("cuDeviceGetCount");
  *n = env_int("FAKE_CUDA_COUNT", 1);
  return kSuccess;
}

CUresult cuDeviceGet(int *dev, int ordinal) {
  FAKE_ENTRY("cuDeviceGet");
  if (ordinal < 0 || ordinal >= env_int("FAKE_CUDA_COUNT", 1) || ordinal >= 8) return 101;
  *dev = ordinal;
  return kSuccess;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int) {
  FAKE_ENTRY("cuDeviceGetAttribute");
  if (attr == 16) *v = env_int("FAKE_CUDA_SMS", 2);  // multiprocessors
  else if (attr == 122) *v = env_int("FAKE_CUDA_MEMOPS", 0);  // 64-bit stream memory operations
  else return kInvalidValue;
  return kSuccess;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  FAKE_ENTRY("cuDevicePrimaryCtxRetain");
  ++refs[dev];
  *ctx = &contexts[dev];
  return kSuccess;
}

CUresult cuDevicePrimaryCtxRelease_v2(int dev) {
  FAKE_ENTRY("cuDevicePrimaryCtxRelease_v2");
  --refs[dev];
  return kSuccess;
}

CUresult cuCtxGetCurrent(void **ctx) {
  *ctx = current;
  return kSuccess;
}

CUresult cuCtxSetCurrent(void *ctx) {
  FAKE_ENTRY("cuCtxSetCurrent");
  current = ctx;
  return kSuccess;
}

CUresult cuPointerGetAttribute(void *data, int attr, unsigned long long p) {
  FAKE_ENTRY("cuPointerGetAttribute");  // needs no context: the driver knows every UVA range
  uintptr_t base;
  const Block *b = find_block(static_cast<uintptr_t>(p), &base);
  if (attr == 2) {  // memory type
    if (b) *static_cast<unsigned *>(data) = 2;
    else if (pinned_mem.count(static_cast<uintptr_t>(p))) *static_cast<unsigned *>(data) = 1;
    else return kInvalidValue;  // memory the driver does not know
    return kSuccess;
  }
  if (attr == 7 && b) {  // buffer id
    *static_cast<unsigned long long *>(data) = b->buffer_id;
    return kSuccess;
  }
  return kInvalidValue;
}

CUresult cuMemAlloc_v2(unsigned long long *p, size_t bytes) {
  FAKE_ENTRY("cuMemAlloc_v2");
  if (!in_context()) return kInvalidContext;
  if (bytes == 0) return kInvalidValue;
  uintptr_t base;
  auto reuse = freed.find(bytes);
  if (reuse != freed.end()) {
    base = reuse->second;
    freed.erase(reuse);
  } else {
    base = reinterpret_cast<uintptr_t>(malloc(bytes));
  }
  device_mem[base] = Block{bytes, next_buffer_id++};
  ++counters["live_device_allocations"];
  *p = base;
  return kSuccess;
}

CUresult cuMemFree_v2(unsigned long long p) {
  FAKE_ENTRY("cuMemFree_v2");
  auto it = device_mem.find(static_cast<uintptr_t>(p));
  if (it == device_mem.end()) return kInvalidValue;
  freed.emplace(it->second.bytes, it->first);
  device_mem.erase(it);
  --counters["live_device_allocations"];
  return kSuccess;
}

CUresult cuMemGetAddressRange_v2(unsigned long long *base, size_t *bytes, unsigned long long p) {
  FAKE_ENTRY("cuMemGetAddressRange_v2");
  uintptr_t b;
  const Block *blk = find_block(static_cast<uintptr_t>(p), &b);
  if (!blk) return kNotFound;
  *base = b;
  *bytes = blk->bytes;
  return kSuccess;
}

CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags) {
  FAKE_ENTRY("cuMemHostAlloc");
  counters["host_alloc_flags"] = static_cast<int>(flags);
  *p = malloc(bytes);
  memset(*p, 0xab, bytes);  // the driver does not zero it either
  pinned_mem[reinterpret_cast<uintptr_t>(*p)] = bytes;
  ++counters["live_pinned"];
  return kSuccess;
}

CUresult cuMemHostGetDevicePointer_v2(unsigned long long *d, void *p, unsigned) {
  FAKE_ENTRY("cuMemHostGetDevicePointer_v2");
  if (!pinned_mem.count(reinterpret_cast<uintptr_t>(p))) return kInvalidValue;
  *d = reinterpret_cast<uintptr_t>(p);
  return kSuccess;
}

CUresult cuMemFreeHost(void *p) {
  FAKE_ENTRY("cuMemFreeHost");
  if (!pinned_mem.erase(reinterpret_cast<uintptr_t>(p))) return kInvalidValue;
  free(p);
  --counters["live_pinned"];
  return kSuccess;
}

CUresult cuMemcpyAsync(unsigned long long dst, unsigned long long src, size_t bytes, void *) {
  FAKE_ENTRY("cuMemcpyAsync");
  if (!in_context()) return kInvalidContext;
  memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src), bytes);
  return kSuccess;
}

// A handle carries the base and buffer id; the fake "maps" it at the same address.
CUresult cuIpcGetMemHandle(char handle[64], unsigned long long p) {
  FAKE_ENTRY("cuIpcGetMemHandle");
  auto it = device_mem.find(static_cast<uintptr_t>(p));
  if (it == device_mem.end()) return kInvalidValue;
  memset(handle, 0, 64);
  memcpy(handle, "fakeipc", 8);
  memcpy(handle + 8, &it->first, sizeof it->first);
  memcpy(handle + 16, &it->second.buffer_id, sizeof it->second.buffer_id);
  return kSuccess;
}

struct Handle {
  char reserved[64];
};
CUresult cuIpcOpenMemHandle_v2(unsigned long long *p, Handle h, unsigned flags) {
  FAKE_ENTRY("cuIpcOpenMemHandle_v2");
  if (memcmp(h.reserved, "fakeipc", 8) != 0 || flags != 1) return kInvalidValue;
  uintptr_t base;
  memcpy(&base, h.reserved + 8, sizeof base);
  *p = base;
  ++counters["live_ipc_maps"];
  return kSuccess;
}

CUresult cuIpcCloseMemHandle(unsigned long long) {
  FAKE_ENTRY("cuIpcCloseMemHandle");
  --counters["live_ipc_maps"];
  return kSuccess;
}

CUresult cuStreamCreate(void **s, unsigned flags) {
  FAKE_ENTRY("cuStreamCreate");
  counters["stream_flags"] = static_cast<int>(flags);
  *s = new char;
  ++counters["live_streams"];
  return kSuccess;
}

CUresult cuStreamDestroy_v2(void *s) {
  FAKE_ENTRY("cuStreamDestroy_v2");
  delete static_cast<char *>(s);
  --counters["live_streams"];
  return kSuccess;
}

CUresult cuStreamQuery(void *) {
  FAKE_ENTRY("cuStreamQuery");
  return busy ? kNotReady : kSuccess;
}

CUresult cuEventCreate(void **e, unsigned flags) {
  FAKE_ENTRY("cuEventCreate");
  counters["event_flags"] = static_cast<int>(flags);
  *e = new char;
  ++counters["live_events"];
  return kSuccess;
}

CUresult cuEventRecord(void *, void *) {
  FAKE_ENTRY("cuEventRecord");
  return kSuccess;
}

CUresult cuEventQuery(void *) {
  FAKE_ENTRY("cuEventQuery");
  return busy ? kNotReady : kSuccess;
}

CUresult cuEventDestroy_v2(void *e) {
  FAKE_ENTRY("cuEventDestroy_v2");
  delete static_cast<char *>(e);
  --counters["live_events"];
  return kSuccess;
}

// A fatbin begins with its magic, a 16-bit version, the header's size and
// the size of what follows it: the image is that long.
CUresult cuModuleLoadData(void **m, const void *image) {
  FAKE_ENTRY("cuModuleLoadData");
  if (!in_context()) return kInvalidContext;
  uint32_t magic;
  uint16_t header;
  uint64_t rest;
  memcpy(&magic, image, 4);
  memcpy(&header, static_cast<const char *>(image) + 6, 2);
  memcpy(&rest, static_cast<const char *>(image) + 8, 8);
  if (magic != 0xBA55ED50u) return kInvalidImage;
  *m = new Module{static_cast<const unsigned char *>(image), header + rest};
  ++counters["live_modules"];
  return kSuccess;
}

CUresult cuModuleUnload(void *m) {
  FAKE_ENTRY("cuModuleUnload");
  delete static_cast<Module *>(m);
  --counters["live_modules"];
  return kSuccess;
}

CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  FAKE_ENTRY("cuModuleGetFunction");
  // The name as the ELF string tables inside the fatbin hold it: NUL-terminated.
  const auto *mod = static_cast<const Module *>(m);
  if (!memmem(mod->image, mod->bytes, name, strlen(name) + 1)) return kNotFound;
  *f = new std::string(name);  // never freed: a function outlives its module in no test
  return kSuccess;
}

CUresult cuFuncLoad(void *f) {
  FAKE_ENTRY("cuFuncLoad");
  return f ? kSuccess : kInvalidValue;
}

// Never capturing: graphs are the GPU's business (tests/device).
CUresult cuStreamIsCapturing(void *, int *status) {
  FAKE_ENTRY("cuStreamIsCapturing");
  if (!in_context()) return kInvalidContext;
  *status = 0;
  return kSuccess;
}

CUresult cuStreamWaitValue64_v2(void *stream, unsigned long long addr, unsigned long long value, unsigned flags) {
  FAKE_ENTRY("cuStreamWaitValue64_v2");
  if (!in_context()) return kInvalidContext;
  last_wait = Wait{stream, addr, value, flags};
  return kSuccess;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  FAKE_ENTRY("cuLaunchKernel");
  if (!in_context()) return kInvalidContext;
  if (shared != 0 || extra != nullptr || !params || !params[0]) return kInvalidValue;
  Launch l;
  l.name = *static_cast<std::string *>(f);
  unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  memcpy(l.grid, g, sizeof g);
  memcpy(l.block, b, sizeof b);
  l.stream = stream;
  size_t bytes = l.name == "xc_gate" ? sizeof(xc::kernels::GateArgs) : sizeof(xc::kernels::ReduceArgs);
  memset(l.params, 0, sizeof l.params);
  memcpy(l.params, params[0], bytes);
  last_launch = l;
  return kSuccess;
}

}  // extern "C"
