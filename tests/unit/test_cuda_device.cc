// gpu/cuda_device: the CUDA device, on a machine without a GPU.
//
// Three parts. This machine: no driver, so make_cuda_device fails with
// XC_ERR_UNSUPPORTED and says why; the toolkit's stub libcuda.so, which
// loads but has no device, likewise. The build: the fatbin nvcc made is
// embedded whole and holds every kernel the loader will ask for; the
// hand-written driver declarations match cuda.h (cuda_driver_abi.cc).
// The device itself: every call of gpu/device.h against fake_cuda_driver.so,
// a stand-in libcuda.so.1 (XC_CUDA_LIBRARY) that records what it is asked.
// What only a GPU shows (the kernels' results, IPC between processes,
// streams really running concurrently) is for the device tests run with
// XC_DEVICE=cuda on a GPU machine.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu/cuda_device.h"
#include "gpu/cuda_driver.h"
#include "gpu/fatbin.h"
#include "gpu/kernel_names.h"
#include "gpu/range_cache.h"
#include "unit_test.h"
#include "xcomm_build_config.h"

#if XC_TEST_CUDA_H
void cuda_driver_matches_cuda_h(void **);  // cuda_driver_abi.cc
#else
static void cuda_driver_matches_cuda_h(void **) { skip(); }  // no cuda.h in this build
#endif

namespace {

using xc::Status;
using xc::gpu::Device;

// ---- the fake driver ----------------------------------------------------------

const char *fake_path() {
  const char *path = getenv("XC_TEST_FAKE_CUDA_DRIVER");
  if (!path) fail_msg("XC_TEST_FAKE_CUDA_DRIVER is not set (run through meson test)");
  return path;
}

// Held open for the whole run: the device loads the same object, so the
// test reads the state the device's calls left there.
void *fake() {
  static void *lib = nullptr;
  if (!lib && !(lib = dlopen(fake_path(), RTLD_NOW | RTLD_LOCAL))) fail_msg("cannot load the fake: %s", dlerror());
  return lib;
}

template <typename F>
F fake_fn(const char *name) {
  auto fn = reinterpret_cast<F>(dlsym(fake(), name));
  if (!fn) fail_msg("the fake has no %s", name);
  return fn;
}

int counter(const char *name) { return fake_fn<int (*)(const char *)>("fake_cuda_counter")(name); }
int ctx_refs(int dev) { return fake_fn<int (*)(int)>("fake_cuda_ctx_refs")(dev); }
void set_busy(bool b) { fake_fn<void (*)(int)>("fake_cuda_set_busy")(b); }
void *current_ctx() {
  void *ctx = nullptr;
  fake_fn<int (*)(void **)>("cuCtxGetCurrent")(&ctx);
  return ctx;
}
void set_current_ctx(void *ctx) { fake_fn<int (*)(void *)>("cuCtxSetCurrent")(ctx); }

struct Launch {
  std::string name;
  unsigned grid[3], block[3];
  void *stream;
  unsigned char params[sizeof(xc::kernels::ReduceArgs)];
};
Launch last_launch() {
  Launch l{};
  auto fn = fake_fn<const char *(*)(unsigned *, unsigned *, void **, void *, size_t)>("fake_cuda_last_launch");
  const char *name = fn(l.grid, l.block, &l.stream, l.params, sizeof l.params);
  l.name = name ? name : "";
  return l;
}

const char *const kVars[] = {"XC_CUDA_LIBRARY", "FAKE_CUDA_COUNT", "FAKE_CUDA_SMS", "FAKE_CUDA_FAIL", "FAKE_CUDA_MEMOPS"};

int clean_env(void **) {
  for (const char *v : kVars) unsetenv(v);
  return 0;
}

bool starts_with(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

// A device on the fake; skipped in a build without kernels, where no CUDA
// device can be made at all (this_machine_has_no_device checks that).
std::unique_ptr<Device> fake_device(int ordinal = 0) {
  if (!XC_HAVE_CUDA) skip();
  fake();
  setenv("XC_CUDA_LIBRARY", fake_path(), 1);
  Status why;
  std::unique_ptr<Device> d(xc::gpu::make_cuda_device(ordinal, &why));
  if (!d) fail_msg("make_cuda_device on the fake: %s", why.message().c_str());
  return d;
}

// make_cuda_device fails with code and a message starting with prefix.
void expect_no_device(xc_result_t code, const char *prefix, int ordinal = 0) {
  Status why;
  Device *d = xc::gpu::make_cuda_device(ordinal, &why);
  if (d) fail_msg("make_cuda_device succeeded, want '%s...'", prefix);
  if (why.code() != code || !starts_with(why.message(), prefix))
    fail_msg("got %d '%s', want %d '%s...'", why.code(), why.message().c_str(), code, prefix);
}

// ---- this machine and the loader ------------------------------------------------

// No driver here: a clean XC_ERR_UNSUPPORTED that names what is missing.
// (Skipped where a GPU answers.)
void this_machine_has_no_device(void **) {
  Status why;
  std::unique_ptr<Device> d(xc::gpu::make_cuda_device(0, &why));
  if (d) skip();
  assert_int_equal(why.code(), XC_ERR_UNSUPPORTED);
  if (!XC_HAVE_CUDA) {
    assert_string_equal(why.message().c_str(), "built without CUDA kernels (-Dcuda=disabled or nvcc not found)");
  } else if (!starts_with(why.message(), "libcuda.so.1 not found: libcuda.so.1: ") &&
             !starts_with(why.message(), "no CUDA device (")) {
    fail_msg("'%s', want 'libcuda.so.1 not found: ...' or 'no CUDA device (...'", why.message().c_str());
  }
}

// The toolkit's link stub loads and has every entry point, but cuInit says
// it is a stub: that is no device, as on a machine without a driver.
void stub_driver_is_no_device(void **) {
  const char *stub = getenv("XC_TEST_CUDA_STUB");
  if (!XC_HAVE_CUDA || !stub || access(stub, R_OK) != 0) skip();
  setenv("XC_CUDA_LIBRARY", stub, 1);
  expect_no_device(XC_ERR_UNSUPPORTED, (std::string("no CUDA device (cuInit: ") + stub +
                                        " is the toolkit's stub, not a driver (34))").c_str());
}

void loader_names_what_is_missing(void **) {
  std::string why;
  setenv("XC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  assert_null(xc::gpu::load_cuda_driver(&why));
  if (!starts_with(why, "/nonexistent/libcuda.so.1 not found: /nonexistent/libcuda.so.1: "))
    fail_msg("'%s'", why.c_str());
  setenv("XC_CUDA_LIBRARY", "libm.so.6", 1);
  assert_null(xc::gpu::load_cuda_driver(&why));
  assert_string_equal(why.c_str(), "libm.so.6 lacks cuInit");
}

void loader_loads_every_entry_point(void **) {
  setenv("XC_CUDA_LIBRARY", fake_path(), 1);
  std::string why;
  const xc::gpu::CudaDriver *cu = xc::gpu::load_cuda_driver(&why);
  if (!cu) fail_msg("%s", why.c_str());
  assert_string_equal(cu->name.c_str(), fake_path());
#define XC_TEST_ENTRY(field, plain, symbol) \
  if (!cu->field) fail_msg("%s not resolved", symbol);
  XC_CUDA_DRIVER_ENTRIES(XC_TEST_ENTRY)
#undef XC_TEST_ENTRY
  assert_string_equal(cu->error(2).c_str(), "out of memory (2)");
  assert_string_equal(cu->error(12345).c_str(), "unknown error (12345)");  // the driver has no text for it
  assert_ptr_equal(xc::gpu::load_cuda_driver(&why), cu);                   // loaded once
}

// ---- the build ------------------------------------------------------------------

void kernel_names(void **) {
  using xc::gpu::reduce_kernel_name;
  assert_string_equal(reduce_kernel_name(XC_FLOAT32, XC_SUM).c_str(), "xc_reduce_XC_FLOAT32_XC_SUM");
  assert_string_equal(reduce_kernel_name(XC_BFLOAT16, XC_MAX).c_str(), "xc_reduce_XC_BFLOAT16_XC_MAX");
  assert_string_equal(reduce_kernel_name(XC_UINT64, XC_BXOR).c_str(), "xc_reduce_XC_UINT64_XC_BXOR");
  assert_true(reduce_kernel_name(XC_FLOAT32, XC_AVG).empty());   // SUM with a divisor
  assert_true(reduce_kernel_name(XC_FLOAT64, XC_BAND).empty());  // bitwise ops: integers only
  assert_true(reduce_kernel_name(static_cast<xc_dtype_t>(10), XC_SUM).empty());
  assert_true(reduce_kernel_name(XC_INT8, static_cast<xc_op_t>(-1)).empty());
  using xc::gpu::custom_kernel_name;
  assert_string_equal(custom_kernel_name(XC_BFLOAT16, XC_MIN).c_str(), "xc_custom_XC_BFLOAT16_XC_MIN");
  assert_string_equal(custom_kernel_name(XC_FLOAT16, XC_AVG).c_str(), "xc_custom_XC_FLOAT16_XC_SUM");
  assert_true(custom_kernel_name(XC_FLOAT64, XC_SUM).empty());  // the 16- and 32-bit floats only
  assert_true(custom_kernel_name(XC_FLOAT32, XC_PROD).empty());
}

// Every name the loader can ask for: each dtype × op with a reduction
// kernel, the intra-node kernels (AVG shares SUM's), and the gate (unused in
// a build without kernels).
[[maybe_unused]] std::vector<std::string> all_kernel_names() {
  std::vector<std::string> names{xc::gpu::kGateKernelName, xc::gpu::kCustomGatherKernelName};
  for (int d = 0; d < xc::reduce_table::kNumDtypes; ++d)
    for (int o = 0; o < xc::reduce_table::kNumOps; ++o) {
      std::string n = xc::gpu::reduce_kernel_name(static_cast<xc_dtype_t>(d), static_cast<xc_op_t>(o));
      if (!n.empty()) names.push_back(n);
      if (o != XC_AVG) n = xc::gpu::custom_kernel_name(static_cast<xc_dtype_t>(d), static_cast<xc_op_t>(o));
      if (o != XC_AVG && !n.empty()) names.push_back(n);
    }
  return names;
}

void fatbin_holds_every_kernel(void **) {
#if XC_HAVE_CUDA
  using xc::gpu::kKernelsFatbin;
  using xc::gpu::kKernelsFatbinSize;
  assert_true(kKernelsFatbinSize > 16);
  assert_int_equal(reinterpret_cast<uintptr_t>(kKernelsFatbin) % 8, 0);
  // Header: magic, version, header size, then the size of the rest.
  uint32_t magic;
  uint16_t header;
  uint64_t rest;
  memcpy(&magic, kKernelsFatbin, 4);
  memcpy(&header, kKernelsFatbin + 6, 2);
  memcpy(&rest, kKernelsFatbin + 8, 8);
  assert_int_equal(magic, 0xBA55ED50u);
  assert_int_equal(header + rest, kKernelsFatbinSize);  // embedded whole
  std::vector<std::string> names = all_kernel_names();
  // The gate and the gather; 6 integer dtypes × 7 ops, 4 float dtypes × 4; 3 floats × sum, min, max.
  assert_int_equal(names.size(), 2 + 6 * 7 + 4 * 4 + 3 * 3);
  for (const std::string &n : names)
    if (!memmem(kKernelsFatbin, kKernelsFatbinSize, n.c_str(), n.size() + 1))
      fail_msg("%s is not in the fatbin", n.c_str());
#else
  skip();
#endif
}

void range_cache(void **) {
  xc::gpu::RangeCache c;
  assert_false(c.contains(0));
  c.add(0x1000, 0x100);
  assert_true(c.contains(0x1000));
  assert_true(c.contains(0x10ff));
  assert_false(c.contains(0x1100));
  assert_false(c.contains(0xfff));
  c.forget(0x1000);
  assert_false(c.contains(0x1000));
  for (uintptr_t i = 0; i < 17; ++i) c.add(0x10000 * (i + 1), 16);  // the 17th replaces the first
  assert_false(c.contains(0x10000));
  assert_true(c.contains(0x20000));
  assert_true(c.contains(0x110000));
}

// ---- the device, on the fake driver ---------------------------------------------

void fake_no_device(void **) {
  if (!XC_HAVE_CUDA) skip();
  setenv("XC_CUDA_LIBRARY", fake_path(), 1);
  setenv("FAKE_CUDA_COUNT", "0", 1);
  expect_no_device(XC_ERR_UNSUPPORTED, "no CUDA device (cuDeviceGetCount: 0)");
  setenv("FAKE_CUDA_COUNT", "1", 1);
  setenv("FAKE_CUDA_FAIL", "cuInit=100", 1);
  expect_no_device(XC_ERR_UNSUPPORTED, "no CUDA device (cuInit: no CUDA-capable device is detected (100))");
  // A driver that is there and fails is an error, not an absence.
  setenv("FAKE_CUDA_FAIL", "cuInit=999", 1);
  expect_no_device(XC_ERR_CUDA, "cuInit failed: unknown error (999)");
  unsetenv("FAKE_CUDA_FAIL");
}

// The kernels are loaded at open; a GPU they were not built for is refused
// then, with everything taken so far given back.
void fake_module_failure(void **) {
  if (!XC_HAVE_CUDA) skip();
  setenv("XC_CUDA_LIBRARY", fake_path(), 1);
  setenv("FAKE_CUDA_FAIL", "cuModuleLoadData=209", 1);
  expect_no_device(XC_ERR_CUDA,
                   "CUDA device 0: loading the kernels (built for sm_80, sm_90 and compute_90 PTX): "
                   "cuModuleLoadData failed: no kernel image is available for execution on the device (209)");
  assert_int_equal(ctx_refs(0), 0);
  setenv("FAKE_CUDA_FAIL", "cuModuleGetFunction=500", 1);
  expect_no_device(XC_ERR_CUDA, "CUDA device 0: cuModuleGetFunction(xc_gate) failed: named symbol not found (500)");
  assert_int_equal(ctx_refs(0), 0);
  assert_int_equal(counter("live_modules"), 0);
}

// Ordinal modulo the device count (-1 - r: local rank r modulo it); one
// context reference and one module while the device lives; the caller's
// current context left as it was.
void fake_open_and_close(void **) {
  setenv("FAKE_CUDA_COUNT", "3", 1);
  {
    std::unique_ptr<Device> d = fake_device(4);
    assert_string_equal(d->name(), "cuda");
    assert_int_equal(d->ordinal(), 1);
    assert_int_equal(ctx_refs(1), 1);
    assert_int_equal(counter("live_modules"), 1);
    assert_null(current_ctx());
  }
  assert_int_equal(ctx_refs(1), 0);
  assert_int_equal(counter("live_modules"), 0);
  assert_int_equal(fake_device(-1)->ordinal(), 0);      // XC_DEVICE_AUTO, local rank 0
  assert_int_equal(fake_device(-1 - 5)->ordinal(), 2);  // local rank 5 of a host with 3 GPUs
  assert_int_equal(ctx_refs(0) + ctx_refs(2), 0);
}

// Without a device object, in any build: the driver tells device memory
// from host memory, with no context current. This is the test's only call
// of cuda_pointer_is_device, which keeps the driver of its first call.
void fake_pointer_classification(void **) {
  setenv("XC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  assert_false(xc::gpu::cuda_driver_present());
  setenv("XC_CUDA_LIBRARY", fake_path(), 1);
  assert_true(xc::gpu::cuda_driver_present());
  auto mem_alloc = fake_fn<int (*)(unsigned long long *, size_t)>("cuMemAlloc_v2");
  auto mem_free = fake_fn<int (*)(unsigned long long)>("cuMemFree_v2");
  int any_context;
  set_current_ctx(&any_context);  // the fake allocates in a context only
  unsigned long long dev = 0;
  assert_int_equal(mem_alloc(&dev, 100), 0);
  set_current_ctx(nullptr);
  int host = 0;
  assert_true(xc::gpu::cuda_pointer_is_device(reinterpret_cast<void *>(dev)));
  assert_true(xc::gpu::cuda_pointer_is_device(reinterpret_cast<char *>(dev) + 99));
  assert_false(xc::gpu::cuda_pointer_is_device(&host));
  assert_false(xc::gpu::cuda_pointer_is_device(nullptr));
  assert_int_equal(mem_free(dev), 0);
  assert_false(xc::gpu::cuda_pointer_is_device(reinterpret_cast<void *>(dev)));
}

void fake_memory(void **) {
  std::unique_ptr<Device> d = fake_device();
  void *p = nullptr;
  ASSERT_OK(d->alloc(1000, &p));
  assert_non_null(p);
  assert_true(d->allocated_here(p));
  assert_false(d->allocated_here(static_cast<char *>(p) + 1));
  int queries = counter("cuPointerGetAttribute");
  assert_true(d->is_device_pointer(p));
  assert_true(d->is_device_pointer(static_cast<char *>(p) + 999));  // from the cache
  assert_int_equal(counter("cuPointerGetAttribute"), queries + 1);
  int host = 0;
  assert_false(d->is_device_pointer(&host));
  assert_false(d->is_device_pointer(&host));  // host answers are asked again
  assert_int_equal(counter("cuPointerGetAttribute"), queries + 3);
  assert_false(d->is_device_pointer(nullptr));

  ASSERT_OK(d->free(p));
  assert_false(d->allocated_here(p));
  assert_false(d->is_device_pointer(p));  // forgotten by the cache, and the fake no longer knows it
  expect_error(d->free(p), XC_ERR_INVALID_ARGUMENT, "is not device memory from xc_mem_alloc_device");
  expect_error(d->free(&host), XC_ERR_INVALID_ARGUMENT, "is not device memory from xc_mem_alloc_device");
  assert_int_equal(counter("live_device_allocations"), 0);

  ASSERT_OK(d->alloc(0, &p));
  assert_null(p);
  setenv("FAKE_CUDA_FAIL", "cuMemAlloc_v2=2", 1);
  expect_error(d->alloc(64, &p), XC_ERR_CUDA, "allocating 64 bytes: cuMemAlloc failed: out of memory (2)");
  assert_null(current_ctx());
}

void fake_ipc(void **) {
  std::unique_ptr<Device> d = fake_device();
  void *p = nullptr;
  ASSERT_OK(d->alloc(4096, &p));
  xc::gpu::IpcHandle h;
  size_t offset = 0;
  int made = counter("cuIpcGetMemHandle");
  ASSERT_OK(d->ipc_export(static_cast<char *>(p) + 100, &h, &offset));
  assert_int_equal(offset, 100);
  assert_int_equal(h.size, 2 << 20);  // whole 2 MiB: never a sub-allocation of the driver's
  assert_int_equal(counter("cuIpcGetMemHandle"), made + 1);
  xc::gpu::IpcHandle again;
  ASSERT_OK(d->ipc_export(p, &again, &offset));
  assert_int_equal(offset, 0);
  assert_int_equal(counter("cuIpcGetMemHandle"), made + 1);  // from the cache
  assert_memory_equal(again.bytes, h.bytes, sizeof h.bytes);
  assert_int_equal(again.buffer_id, h.buffer_id);

  void *mapped = nullptr;
  ASSERT_OK(d->ipc_open(h, 1234, &mapped));
  assert_ptr_equal(mapped, p);  // the fake maps a handle where it was made
  assert_int_equal(counter("live_ipc_maps"), 1);
  ASSERT_OK(d->ipc_close(mapped));
  assert_int_equal(counter("live_ipc_maps"), 0);

  // A peer's sub-allocation: mapped, its block is larger than the allocation
  // the peer described; and a second allocation of a block already mapped.
  // Both refused with the reason, nothing left mapped.
  xc::gpu::IpcHandle part = h;
  part.size = 4096;
  expect_error(d->ipc_open(part, 1234, &mapped), XC_ERR_UNSUPPORTED,
               "a peer's device buffer (an allocation of 4096 bytes) is part of a larger block");
  assert_int_equal(counter("live_ipc_maps"), 0);
  setenv("FAKE_CUDA_FAIL", "cuIpcOpenMemHandle_v2=208", 1);
  expect_error(d->ipc_open(h, 1234, &mapped), XC_ERR_UNSUPPORTED, "a peer's device buffer");
  unsetenv("FAKE_CUDA_FAIL");

  // Memory the application allocated, freed and allocated again at the same
  // address (the fake reuses a freed block of the same size): a new buffer
  // id, so a new handle, never the stale one.
  auto mem_alloc = fake_fn<int (*)(unsigned long long *, size_t)>("cuMemAlloc_v2");
  auto mem_free = fake_fn<int (*)(unsigned long long)>("cuMemFree_v2");
  set_current_ctx(reinterpret_cast<void *>(&h));  // any non-null context for the fake
  unsigned long long app = 0, app_again = 0;
  assert_int_equal(mem_alloc(&app, 777), 0);
  ASSERT_OK(d->ipc_export(reinterpret_cast<void *>(app), &h, &offset));
  assert_int_equal(mem_free(app), 0);
  assert_int_equal(mem_alloc(&app_again, 777), 0);
  assert_true(app_again == app);
  ASSERT_OK(d->ipc_export(reinterpret_cast<void *>(app), &again, &offset));
  assert_true(again.buffer_id != h.buffer_id);
  assert_int_equal(counter("cuIpcGetMemHandle"), made + 3);
  assert_ptr_equal(current_ctx(), &h);  // the application's context given back
  assert_int_equal(mem_free(app_again), 0);
  set_current_ctx(nullptr);

  expect_error(d->ipc_export(&offset, &h, &offset), XC_ERR_CUDA, "cuMemGetAddressRange failed: named symbol not found (500)");
  ASSERT_OK(d->free(p));
}

void fake_streams_and_events(void **) {
  std::unique_ptr<Device> d = fake_device();
  xc::gpu::Stream *s = nullptr, *wrapped = nullptr;
  ASSERT_OK(d->stream_create(&s));
  assert_int_equal(counter("stream_flags"), 1);  // non-blocking
  assert_int_equal(counter("live_streams"), 1);
  ASSERT_OK(d->stream_wrap(nullptr, &wrapped));  // the legacy default stream
  assert_non_null(wrapped);

  bool idle = false, done = false;
  ASSERT_OK(d->stream_query(s, &idle));
  assert_true(idle);
  xc::gpu::Event *e = nullptr;
  ASSERT_OK(d->event_record(s, &e));
  assert_int_equal(counter("event_flags"), 2);  // no timing
  assert_int_equal(counter("live_events"), 1);
  set_busy(true);
  ASSERT_OK(d->stream_query(wrapped, &idle));
  assert_false(idle);
  ASSERT_OK(d->event_query(e, &done));
  assert_false(done);
  set_busy(false);
  ASSERT_OK(d->event_query(e, &done));
  assert_true(done);
  d->event_destroy(e);
  assert_int_equal(counter("live_events"), 0);

  // Any answer but done or not ready is the op's error; a failed record
  // leaves no event behind.
  setenv("FAKE_CUDA_FAIL", "cuEventRecord=700", 1);
  expect_error(d->event_record(s, &e), XC_ERR_CUDA,
               "cuEventRecord failed: an illegal memory access was encountered (700)");
  assert_int_equal(counter("live_events"), 0);
  unsetenv("FAKE_CUDA_FAIL");
  ASSERT_OK(d->event_record(s, &e));
  setenv("FAKE_CUDA_FAIL", "cuEventQuery=700,cuStreamQuery=700", 1);
  expect_error(d->event_query(e, &done), XC_ERR_CUDA, "cuEventQuery failed: an illegal memory access");
  expect_error(d->stream_query(s, &idle), XC_ERR_CUDA, "cuStreamQuery failed: an illegal memory access");
  unsetenv("FAKE_CUDA_FAIL");
  d->event_destroy(e);
  d->event_destroy(nullptr);

  int destroyed = counter("cuStreamDestroy_v2");
  d->stream_release(wrapped);  // the application's: not destroyed
  assert_int_equal(counter("cuStreamDestroy_v2"), destroyed);
  d->stream_release(s);
  d->stream_release(nullptr);
  assert_int_equal(counter("live_streams"), 0);
  assert_int_equal(counter("live_events"), 0);
  assert_null(current_ctx());
}

void fake_copy(void **) {
  std::unique_ptr<Device> d = fake_device();
  xc::gpu::Stream *s = nullptr;
  ASSERT_OK(d->stream_create(&s));
  void *dev = nullptr;
  ASSERT_OK(d->alloc(16, &dev));
  char in[16] = "to the device", out[16] = {};
  ASSERT_OK(d->copy_async(dev, in, sizeof in, s));
  ASSERT_OK(d->copy_async(out, dev, sizeof out, s));
  assert_string_equal(out, "to the device");
  int copies = counter("cuMemcpyAsync");
  ASSERT_OK(d->copy_async(out, dev, 0, s));  // nothing to copy: no call
  assert_int_equal(counter("cuMemcpyAsync"), copies);
  ASSERT_OK(d->free(dev));
  d->stream_release(s);
}

xc::kernels::ReduceArgs reduce_args(xc_dtype_t dtype, xc_op_t op, uint64_t count) {
  xc::kernels::ReduceArgs a{};
  static char dst[8], src0[8], src1[8];
  a.dst = dst;
  a.src[0] = src0;
  a.src[1] = src1;
  a.nsrc = 2;
  a.dtype = dtype;
  a.op = op;
  a.count = count;
  return a;
}

// The kernel of the dtype and op, found by name in the fatbin (the fake
// searches it), launched with the arguments by value, 256 threads a block,
// enough blocks for the count up to 4 per multiprocessor.
void fake_launch_reduce(void **) {
  setenv("FAKE_CUDA_SMS", "3", 1);
  std::unique_ptr<Device> d = fake_device();
  xc::gpu::Stream *s = nullptr;
  ASSERT_OK(d->stream_create(&s));
  xc::kernels::ReduceArgs a = reduce_args(XC_FLOAT32, XC_SUM, 1000);
  ASSERT_OK(d->launch_reduce(a, s));
  Launch l = last_launch();
  assert_string_equal(l.name.c_str(), "xc_reduce_XC_FLOAT32_XC_SUM");
  assert_int_equal(l.grid[0], 4);
  assert_int_equal(l.grid[1] * l.grid[2], 1);
  assert_int_equal(l.block[0], 256);
  assert_int_equal(l.block[1] * l.block[2], 1);
  assert_memory_equal(l.params, &a, sizeof a);

  a = reduce_args(XC_BFLOAT16, XC_MAX, uint64_t{1} << 40);
  a.nsrc = xc::kernels::kMaxSources;
  ASSERT_OK(d->launch_reduce(a, s));
  l = last_launch();
  assert_string_equal(l.name.c_str(), "xc_reduce_XC_BFLOAT16_XC_MAX");
  assert_int_equal(l.grid[0], 12);  // 4 × 3 multiprocessors
  assert_memory_equal(l.params, &a, sizeof a);

  // AVG is SUM with a divisor; one that slips through is still summed.
  a = reduce_args(XC_INT32, XC_AVG, 1);
  a.avg_divisor = 4;
  ASSERT_OK(d->launch_reduce(a, s));
  assert_string_equal(last_launch().name.c_str(), "xc_reduce_XC_INT32_XC_SUM");

  // One lookup per kernel.
  int lookups = counter("cuModuleGetFunction");
  ASSERT_OK(d->launch_reduce(reduce_args(XC_FLOAT32, XC_SUM, 5), s));
  assert_int_equal(counter("cuModuleGetFunction"), lookups);

  // Every kernel the table has is found in the fatbin.
  for (int dt = 0; dt < xc::reduce_table::kNumDtypes; ++dt)
    for (int op = 0; op < xc::reduce_table::kNumOps; ++op)
      if (!xc::gpu::reduce_kernel_name(static_cast<xc_dtype_t>(dt), static_cast<xc_op_t>(op)).empty())
        ASSERT_OK(d->launch_reduce(reduce_args(static_cast<xc_dtype_t>(dt), static_cast<xc_op_t>(op), 1), s));

  int launches = counter("cuLaunchKernel");
  ASSERT_OK(d->launch_reduce(reduce_args(XC_FLOAT32, XC_SUM, 0), s));  // nothing to do: no launch
  assert_int_equal(counter("cuLaunchKernel"), launches);
  a = reduce_args(XC_FLOAT32, XC_SUM, 8);
  a.nsrc = 0;
  expect_error(d->launch_reduce(a, s), XC_ERR_INVALID_ARGUMENT, "reduction of 0 sources (1 to 64)");
  a.nsrc = xc::kernels::kMaxSources + 1;
  expect_error(d->launch_reduce(a, s), XC_ERR_INVALID_ARGUMENT, "reduction of 65 sources");
  expect_error(d->launch_reduce(reduce_args(XC_FLOAT64, XC_BXOR, 8), s), XC_ERR_INVALID_ARGUMENT,
               "no reduction kernel for dtype 9, op 7");
  setenv("FAKE_CUDA_FAIL", "cuLaunchKernel=1", 1);
  expect_error(d->launch_reduce(reduce_args(XC_FLOAT32, XC_SUM, 8), s), XC_ERR_CUDA,
               "cuLaunchKernel(reduce) failed: invalid argument (1)");
  unsetenv("FAKE_CUDA_FAIL");
  d->stream_release(s);
}

void fake_launch_gate(void **) {
  std::unique_ptr<Device> d = fake_device();
  xc::gpu::Stream *s = nullptr;
  ASSERT_OK(d->stream_wrap(reinterpret_cast<void *>(0x5), &s));
  xc::gpu::SharedFlags flags;
  ASSERT_OK(d->flags_alloc(64, &flags));
  xc::kernels::GateArgs g{};
  g.flag = static_cast<const volatile uint64_t *>(flags.dev);
  g.value = 7;
  g.timeout_ns = 1000000;
  ASSERT_OK(d->launch_gate(g, s));
  Launch l = last_launch();
  assert_string_equal(l.name.c_str(), "xc_gate");
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(l.grid[i], 1);
    assert_int_equal(l.block[i], 1);
  }
  assert_ptr_equal(l.stream, reinterpret_cast<void *>(0x5));  // the wrapped stream itself
  assert_memory_equal(l.params, &g, sizeof g);
  assert_int_equal(counter("cuStreamWaitValue64_v2"), 0);
  d->flags_free(&flags);
  d->stream_release(s);

  // With 64-bit stream memory operations: a stream wait on the flag, no kernel.
  setenv("FAKE_CUDA_MEMOPS", "1", 1);
  std::unique_ptr<Device> w = fake_device();
  ASSERT_OK(w->stream_wrap(reinterpret_cast<void *>(0x6), &s));
  ASSERT_OK(w->flags_alloc(64, &flags));
  g.flag = static_cast<const volatile uint64_t *>(flags.dev);
  int launches = counter("cuLaunchKernel");
  ASSERT_OK(w->launch_gate(g, s));
  assert_int_equal(counter("cuLaunchKernel"), launches);
  void *stream = nullptr;
  unsigned long long addr = 0, value = 0;
  unsigned wait_flags = 99;
  fake_fn<void (*)(void **, unsigned long long *, unsigned long long *, unsigned *)>("fake_cuda_last_wait")(
      &stream, &addr, &value, &wait_flags);
  assert_ptr_equal(stream, reinterpret_cast<void *>(0x6));
  assert_true(addr == reinterpret_cast<uintptr_t>(flags.dev));
  assert_true(value == 7);
  assert_int_equal(wait_flags, 0);  // CU_STREAM_WAIT_VALUE_GEQ
  setenv("FAKE_CUDA_FAIL", "cuStreamWaitValue64_v2=1", 1);
  expect_error(w->launch_gate(g, s), XC_ERR_CUDA, "cuStreamWaitValue64 failed: invalid argument (1)");
  unsetenv("FAKE_CUDA_FAIL");
  w->flags_free(&flags);
  w->stream_release(s);
}

// Every kernel is loaded when the device is made (cuFuncLoad), none at its
// first launch: lazy loading may wait for the context to go idle, which a
// gate holding a stream for that very kernel would never let it.
void fake_kernels_loaded_up_front(void **) {
  int loads = counter("cuFuncLoad");
  std::unique_ptr<Device> d = fake_device();
  assert_int_equal(counter("cuFuncLoad") - loads, static_cast<int>(all_kernel_names().size()));
  int lookups = counter("cuModuleGetFunction");
  xc::gpu::Stream *s = nullptr;
  ASSERT_OK(d->stream_create(&s));
  ASSERT_OK(d->launch_reduce(reduce_args(XC_BFLOAT16, XC_MAX, 8), s));
  assert_int_equal(counter("cuModuleGetFunction"), lookups);
  d->stream_release(s);
}

// Pinned, mapped for the device, portable, and zeroed (the driver does not).
void fake_flags(void **) {
  std::unique_ptr<Device> d = fake_device();
  xc::gpu::SharedFlags f;
  ASSERT_OK(d->flags_alloc(256, &f));
  assert_int_equal(counter("host_alloc_flags"), 3);
  assert_non_null(f.host);
  assert_ptr_equal(f.dev, f.host);  // the fake maps host memory at its own address, as UVA does
  assert_int_equal(f.bytes, 256);
  for (size_t i = 0; i < 256; ++i) assert_int_equal(static_cast<unsigned char *>(f.host)[i], 0);
  assert_int_equal(counter("live_pinned"), 1);
  d->flags_free(&f);
  assert_null(f.host);
  assert_int_equal(counter("live_pinned"), 0);
  d->flags_free(&f);  // twice: nothing
  d->flags_free(nullptr);
  expect_error(d->flags_alloc(0, &f), XC_ERR_INVALID_ARGUMENT, "flags of 0 bytes");
  setenv("FAKE_CUDA_FAIL", "cuMemHostGetDevicePointer_v2=1", 1);
  expect_error(d->flags_alloc(8, &f), XC_ERR_CUDA, "cuMemHostGetDevicePointer failed: invalid argument (1)");
  assert_int_equal(counter("live_pinned"), 0);
}

// Calls from a thread that never saw the device: the context is made
// current for each call (the fake fails every call without one) and the
// thread's own context, none here, is given back.
void fake_other_thread(void **) {
  std::unique_ptr<Device> d = fake_device();
  std::string problem;
  std::thread t([&] {
    void *p = nullptr;
    Status s = d->alloc(32, &p);
    if (!s.ok()) problem = s.message();
    else if (!d->is_device_pointer(p)) problem = "not a device pointer";
    else if (current_ctx() != nullptr) problem = "context left current";
    else if (!(s = d->free(p)).ok()) problem = s.message();
  });
  t.join();
  if (!problem.empty()) fail_msg("%s", problem.c_str());
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test_setup(this_machine_has_no_device, clean_env),
      cmocka_unit_test_setup(stub_driver_is_no_device, clean_env),
      cmocka_unit_test_setup(loader_names_what_is_missing, clean_env),
      cmocka_unit_test_setup(loader_loads_every_entry_point, clean_env),
      cmocka_unit_test(cuda_driver_matches_cuda_h),
      cmocka_unit_test(kernel_names),
      cmocka_unit_test(fatbin_holds_every_kernel),
      cmocka_unit_test(range_cache),
      cmocka_unit_test_setup(fake_no_device, clean_env),
      cmocka_unit_test_setup(fake_module_failure, clean_env),
      cmocka_unit_test_setup(fake_open_and_close, clean_env),
      cmocka_unit_test_setup(fake_pointer_classification, clean_env),
      cmocka_unit_test_setup(fake_memory, clean_env),
      cmocka_unit_test_setup(fake_ipc, clean_env),
      cmocka_unit_test_setup(fake_streams_and_events, clean_env),
      cmocka_unit_test_setup(fake_copy, clean_env),
      cmocka_unit_test_setup(fake_launch_reduce, clean_env),
      cmocka_unit_test_setup(fake_launch_gate, clean_env),
      cmocka_unit_test_setup(fake_kernels_loaded_up_front, clean_env),
      cmocka_unit_test_setup(fake_flags, clean_env),
      cmocka_unit_test_setup(fake_other_thread, clean_env),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
