#include "gpu/emulated_device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "base/dtype.h"
#include "gpu/emulated_kernels.h"

namespace xc::gpu {

// A stream: one thread running its work in submission order.
struct Stream {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> work;
  uint64_t submitted = 0;
  uint64_t finished = 0;
  bool stop = false;
  bool wrapped = false;
  // Stream capture (a test facility, emulated_capture_begin): work goes
  // into the graph instead of running.
  std::vector<std::function<void()>> *capture = nullptr;
  std::thread thread;

  Stream() {
    thread = std::thread([this] { run(); });
  }
  ~Stream() {
    {
      std::lock_guard<std::mutex> g(mu);
      stop = true;
    }
    cv.notify_all();
    thread.join();
  }
  void submit(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> g(mu);
      if (capture) {
        capture->push_back(std::move(fn));
        return;
      }
      work.push_back(std::move(fn));
      ++submitted;
    }
    cv.notify_all();
  }
  bool idle() {
    std::lock_guard<std::mutex> g(mu);
    return finished == submitted;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      cv.wait(lk, [this] { return stop || !work.empty(); });
      if (work.empty()) return;  // stopping, and everything ran
      std::function<void()> fn = std::move(work.front());
      work.pop_front();
      lk.unlock();
      fn();
      lk.lock();
      ++finished;
      cv.notify_all();  // for wait_for_work (device free)
    }
  }

 public:
  // Until the work submitted so far has run.
  void wait_for_work() {
    std::unique_lock<std::mutex> lk(mu);
    uint64_t target = submitted;
    cv.wait(lk, [&] { return finished >= target; });
  }
};

// Shared with the stream's mark, so destroying an event that has not
// happened yet (CUDA allows it) leaves the mark something to write to.
struct Event {
  std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
};

namespace {

struct Region {
  size_t size;
  uint64_t id;
  int fd;        // allocations: the memfd peers open; mappings: -1
  bool mapped;   // a peer's allocation mapped here
};

// The handle's bytes: who exported it and the descriptor that holds the memory.
struct HandleBody {
  int32_t pid;
  int32_t fd;
};

class EmulatedDevice final : public Device {
 public:
  const char *name() const override { return "emulated"; }
  int ordinal() const override { return 0; }

  bool is_device_pointer(const void *p) override { return find(p, nullptr, nullptr) != nullptr; }

  Status alloc(size_t bytes, void **out) override {
    int fd = memfd_create("xcomm-emulated-device", MFD_CLOEXEC);
    if (fd < 0) return SystemError(errno, "emulated device: memfd_create failed");
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      int e = errno;
      close(fd);
      return SystemError(e, "emulated device: cannot size %zu bytes", bytes);
    }
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      close(fd);
      return Error(XC_ERR_NO_MEMORY, "emulated device: cannot map %zu bytes: %s", bytes, strerror(e));
    }
    std::lock_guard<std::mutex> g(mu_);
    regions_[reinterpret_cast<uintptr_t>(p)] = Region{bytes, next_id_++, fd, false};
    live_.store(true, std::memory_order_release);
    *out = p;
    return Status::Ok();
  }

  // As cuMemFree: the work queued on every stream of the device runs first,
  // so a free on a thread that a queued gate waits for never returns (the
  // gate's own deadline aside), on this device as on a GPU.
  Status free(void *p) override {
    {
      std::lock_guard<std::mutex> streams(streams_mu_);
      for (Stream *s : streams_) s->wait_for_work();
    }
    std::lock_guard<std::mutex> g(mu_);
    auto it = regions_.find(reinterpret_cast<uintptr_t>(p));
    if (it == regions_.end() || it->second.mapped)
      return Error(XC_ERR_INVALID_ARGUMENT, "%p is not device memory from xc_mem_alloc_device", p);
    munmap(p, it->second.size);
    close(it->second.fd);
    regions_.erase(it);
    return Status::Ok();
  }

  bool allocated_here(const void *p) override {
    std::lock_guard<std::mutex> g(mu_);
    auto it = regions_.find(reinterpret_cast<uintptr_t>(p));
    return it != regions_.end() && !it->second.mapped;
  }

  Status ipc_export(const void *p, IpcHandle *h, size_t *offset) override {
    uintptr_t base = 0;
    Region r{};
    if (!find(p, &base, &r) || r.mapped)
      return Error(XC_ERR_INVALID_ARGUMENT, "%p is not in an allocation of this process's emulated device", p);
    memset(h, 0, sizeof *h);
    HandleBody body{static_cast<int32_t>(getpid()), r.fd};
    memcpy(h->bytes, &body, sizeof body);
    h->buffer_id = r.id;
    h->size = r.size;
    *offset = reinterpret_cast<uintptr_t>(p) - base;
    return Status::Ok();
  }

  Status ipc_open(const IpcHandle &h, int /*pid*/, void **base) override {
    HandleBody body;
    memcpy(&body, h.bytes, sizeof body);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", body.pid, body.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return SystemError(errno, "emulated device: cannot open peer memory %s", path);
    void *p = mmap(nullptr, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return SystemError(e, "emulated device: cannot map peer memory %s", path);
    std::lock_guard<std::mutex> g(mu_);
    regions_[reinterpret_cast<uintptr_t>(p)] = Region{h.size, 0, -1, true};
    live_.store(true, std::memory_order_release);
    *base = p;
    return Status::Ok();
  }

  Status ipc_close(void *base) override {
    std::lock_guard<std::mutex> g(mu_);
    auto it = regions_.find(reinterpret_cast<uintptr_t>(base));
    if (it == regions_.end() || !it->second.mapped)
      return Error(XC_ERR_INVALID_ARGUMENT, "%p is not a mapped peer allocation", base);
    munmap(base, it->second.size);
    regions_.erase(it);
    return Status::Ok();
  }

  Status stream_create(Stream **out) override {
    *out = new Stream();
    std::lock_guard<std::mutex> g(streams_mu_);
    streams_.insert(*out);
    return Status::Ok();
  }

  // The application's stream of that value: one per value, alive for the process.
  Status stream_wrap(void *native, Stream **out) override {
    Stream *made = nullptr;
    {
      std::lock_guard<std::mutex> g(mu_);
      auto &s = wrapped_[native];
      if (!s) {
        s = std::make_unique<Stream>();
        s->wrapped = true;
        made = s.get();
      }
      *out = s.get();
    }
    if (made) {
      std::lock_guard<std::mutex> g(streams_mu_);
      streams_.insert(made);
    }
    return Status::Ok();
  }

  void stream_release(Stream *s) override {
    if (!s || s->wrapped) return;
    {
      std::lock_guard<std::mutex> g(streams_mu_);
      streams_.erase(s);
    }
    delete s;
  }

  Status stream_query(Stream *s, bool *idle) override {
    *idle = s->idle();
    return Status::Ok();
  }

  Status event_record(Stream *s, Event **out) override {
    auto *e = new Event();
    s->submit([done = e->done] { done->store(true, std::memory_order_release); });
    *out = e;
    return Status::Ok();
  }

  Status event_query(Event *e, bool *done) override {
    *done = e->done->load(std::memory_order_acquire);
    return Status::Ok();
  }

  void event_destroy(Event *e) override { delete e; }

  Status copy_async(void *dst, const void *src, size_t bytes, Stream *s) override {
    if (bytes) s->submit([dst, src, bytes] { memmove(dst, src, bytes); });
    return Status::Ok();
  }

  Status launch_reduce(const kernels::ReduceArgs &args, Stream *s) override {
    if (args.count) s->submit([args] { emulated_reduce(args); });
    return Status::Ok();
  }

  Status launch_gate(const kernels::GateArgs &args, Stream *s) override {
    s->submit([args] { emulated_gate(args); });
    return Status::Ok();
  }

  Status launch_custom(const kernels::CustomArgs &args, Stream *s) override {
    s->submit([args] { emulated_custom(args); });
    return Status::Ok();
  }

  Status stream_capturing(Stream *s, bool *capturing) override {
    std::lock_guard<std::mutex> g(s->mu);
    *capturing = s->capture != nullptr;
    return Status::Ok();
  }

  // The test facility behind emulated_capture_begin and the rest.
  Stream *wrapped_stream(void *native) {
    Stream *s = nullptr;
    (void)stream_wrap(native, &s);
    return s;
  }

  Status flags_alloc(size_t bytes, SharedFlags *out) override {
    void *p = calloc(1, bytes);
    if (!p) return Error(XC_ERR_NO_MEMORY, "cannot allocate %zu bytes of flags", bytes);
    *out = SharedFlags{p, p, bytes};
    return Status::Ok();
  }

  void flags_free(SharedFlags *f) override {
    ::free(f->host);
    *f = SharedFlags();
  }

  bool any_live() const { return live_.load(std::memory_order_acquire); }

 private:
  // The region holding p (its base and copy through the out pointers), or nullptr.
  const Region *find(const void *p, uintptr_t *base, Region *copy) {
    if (!any_live()) return nullptr;
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> g(mu_);
    auto it = regions_.upper_bound(a);
    if (it == regions_.begin()) return nullptr;
    --it;
    if (a >= it->first + it->second.size) return nullptr;
    if (base) *base = it->first;
    if (copy) *copy = it->second;
    return &it->second;
  }

  std::mutex mu_;
  std::map<uintptr_t, Region> regions_;
  std::unordered_map<void *, std::unique_ptr<Stream>> wrapped_;
  std::mutex streams_mu_;  // held alone: free waits for the streams' work under it
  std::set<Stream *> streams_;  // every live stream, wrapped ones included
  uint64_t next_id_ = 1;
  std::atomic<bool> live_{false};
};

EmulatedDevice &the_device() {
  static EmulatedDevice *d = new EmulatedDevice();  // never destroyed: stream threads may outlive static teardown
  return *d;
}

}  // namespace

Device *emulated_device() { return &the_device(); }

struct EmulatedGraph {
  std::vector<std::function<void()>> work;
};

Status emulated_capture_begin(void *native) {
  Stream *s = the_device().wrapped_stream(native);
  std::lock_guard<std::mutex> g(s->mu);
  if (s->capture) return Error(XC_ERR_INVALID_USAGE, "the emulated stream is capturing already");
  s->capture = new std::vector<std::function<void()>>();
  return Status::Ok();
}

Status emulated_capture_end(void *native, EmulatedGraph **out) {
  Stream *s = the_device().wrapped_stream(native);
  std::lock_guard<std::mutex> g(s->mu);
  if (!s->capture) return Error(XC_ERR_INVALID_USAGE, "the emulated stream is not capturing");
  *out = new EmulatedGraph{std::move(*s->capture)};
  delete s->capture;
  s->capture = nullptr;
  return Status::Ok();
}

void emulated_graph_launch(EmulatedGraph *graph, void *native) {
  Stream *s = the_device().wrapped_stream(native);
  for (const auto &fn : graph->work) s->submit(fn);
}

void emulated_graph_destroy(EmulatedGraph *graph) { delete graph; }

void emulated_stream_synchronize(void *native) { the_device().wrapped_stream(native)->wait_for_work(); }

bool emulated_is_device_pointer(const void *p) { return the_device().is_device_pointer(p); }

}  // namespace xc::gpu
