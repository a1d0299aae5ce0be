#include "gpu/device.h"

#include <unistd.h>

#include <mutex>
#include <string>

#include "base/backoff.h"
#include "base/env.h"
#include "gpu/cuda_device.h"
#include "gpu/emulated_device.h"

namespace xc::gpu {
namespace {

enum class Choice { kAuto, kCuda, kEmulated, kNone };

Choice choice() {
  static const Choice c = [] {
    std::string v;
    if (!env_choice("XC_DEVICE", &v).ok()) return Choice::kNone;  // env_check_all has reported it
    if (v == "cuda") return Choice::kCuda;
    if (v == "emulated") return Choice::kEmulated;
    if (v == "none") return Choice::kNone;
    return Choice::kAuto;
  }();
  return c;
}

// How pointers are told apart: decided once (a driver that is not on the
// machine at the first op will not appear later).
enum class Classifier { kNone, kEmulated, kCuda };

Classifier classifier() {
  static const Classifier c = [] {
    switch (choice()) {
      case Choice::kNone: return Classifier::kNone;
      case Choice::kEmulated: return Classifier::kEmulated;
      default: return cuda_driver_present() ? Classifier::kCuda : Classifier::kNone;
    }
  }();
  return c;
}

// The driver's "device" answers, remembered per thread by address: the
// device buffers an application uses are few and used again and again.
// Host answers are not kept: an address freed by the host may come back as
// device memory (a new driver reservation), and treating it as host would
// touch device memory from the CPU. The reverse mistake is only an error
// (a host buffer refused, its IPC export fails), never a crash.
bool cuda_cached(const void *p) {
  static thread_local const void *cache[64] = {};
  const void *&slot = cache[(reinterpret_cast<uintptr_t>(p) >> 8) & 63];
  if (slot == p && p) return true;
  bool device = cuda_pointer_is_device(p);
  if (device) slot = p;
  return device;
}

}  // namespace

Device *device_get(int ordinal, Status *why) {
  switch (choice()) {
    case Choice::kNone:
      *why = Error(XC_ERR_UNSUPPORTED, "no device: XC_DEVICE=none");
      return nullptr;
    case Choice::kEmulated: return emulated_device();
    default: break;
  }
  static std::mutex mu;
  static Device *cuda = nullptr;
  static Status failed = Status::Ok();
  std::lock_guard<std::mutex> g(mu);
  if (!cuda && failed.ok()) {
    cuda = make_cuda_device(ordinal, &failed);
    if (!cuda && failed.ok()) failed = Error(XC_ERR_UNSUPPORTED, "no CUDA device");
  }
  if (!cuda) *why = failed;
  return cuda;
}

bool pointer_is_device(const void *p) {
  switch (classifier()) {
    case Classifier::kNone: return false;
    case Classifier::kEmulated: return emulated_is_device_pointer(p);
    case Classifier::kCuda: return cuda_cached(p);
  }
  return false;
}

Status event_wait(Device *dev, Event *e, Deadline deadline, const std::function<Status()> &watch) {
  Backoff backoff(200, 200);
  int sleep_us = 20;
  for (;;) {
    bool done = false;
    Status st = dev->event_query(e, &done);
    if (!st.ok() || done) {
      dev->event_destroy(e);
      return st;
    }
    if (deadline.expired()) {
      dev->event_destroy(e);
      return Error(XC_ERR_TIMEOUT, "the %s device did not finish the work before the deadline", dev->name());
    }
    switch (backoff.next()) {
      case Backoff::Step::kSpin: cpu_relax(); break;
      case Backoff::Step::kYield: cpu_yield(); break;
      case Backoff::Step::kSleep:  // device work of milliseconds: sleeping costs no core
        if (watch) {
          Status w = watch();
          if (!w.ok()) {
            dev->event_destroy(e);
            return w;
          }
        }
        usleep(static_cast<useconds_t>(sleep_us));
        sleep_us = sleep_us < 1000 ? sleep_us * 2 : 1000;
        break;
    }
  }
}

}  // namespace xc::gpu
