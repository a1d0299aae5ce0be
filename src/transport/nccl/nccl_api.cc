#include "transport/nccl/nccl_api.h"

#include <dlfcn.h>

#include <mutex>

#include "base/env.h"
#include "base/log.h"

namespace xc::nccl {

ncclConfig_t config_initializer() {
  ncclConfig_t c{};
  c.size = sizeof c;
  c.magic = kConfigMagic;
  c.version = kConfigVersion;
  c.blocking = c.cgaClusterSize = c.minCTAs = c.maxCTAs = kConfigUndefInt;
  c.netName = nullptr;
  c.splitShare = c.trafficClass = kConfigUndefInt;
  c.commName = nullptr;
  c.collnetEnable = c.CTAPolicy = c.shrinkShare = c.nvlsCTAs = c.nChannelsPerNetPeer = c.nvlinkCentricSched =
      kConfigUndefInt;
  return c;
}

std::string version_text(int code) {
  // NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after.
  int major, minor, patch;
  if (code < 10000) {
    major = code / 1000;
    minor = (code % 1000) / 100;
    patch = code % 100;
  } else {
    major = code / 10000;
    minor = (code % 10000) / 100;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

namespace {

Status load(NcclApi *api) {
  std::string path = env_get("XC_NCCL_LIBRARY");
  if (path.empty()) path = "libnccl.so.2";
  // RTLD_LOCAL: NCCL's symbols stay out of the global namespace, so an
  // application that links its own NCCL keeps calling that one.
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    return Error(XC_ERR_UNSUPPORTED,
                 "NCCL is needed for device memory here but could not be loaded: dlopen(\"%s\") failed: %s (set "
                 "XC_NCCL_LIBRARY to its path)",
                 path.c_str(), e ? e : "?");
  }
  api->library = path;
#define XC_NCCL_RESOLVE(name, sig)                                        \
  api->name = reinterpret_cast<std::add_pointer_t<sig>>(dlsym(h, #name)); \
  if (!api->name)                                                         \
    return Error(XC_ERR_UNSUPPORTED, "%s has no %s: NCCL 2.18 or later is needed (ncclCommSplit)", path.c_str(), #name);
  XC_NCCL_ENTRIES(XC_NCCL_RESOLVE)
#undef XC_NCCL_RESOLVE
  int v = 0;
  if (api->ncclGetVersion(&v) != ncclSuccess)
    return Error(XC_ERR_UNSUPPORTED, "%s: ncclGetVersion failed", path.c_str());
  api->version = v;
  if (v < kVersionSplit)
    return Error(XC_ERR_UNSUPPORTED,
                 "%s is NCCL %s (version code %d): NCCL 2.18 or later is needed (ncclCommSplit); set XC_NCCL_LIBRARY "
                 "to a newer libnccl.so.2",
                 path.c_str(), version_text(v).c_str(), v);
  XC_INFO("NCCL %s loaded from %s", version_text(v).c_str(), path.c_str());
  return Status::Ok();
}

}  // namespace

Status nccl_api(const NcclApi **out) {
  static NcclApi api;
  static Status loaded;
  static std::once_flag once;
  std::call_once(once, [] { loaded = load(&api); });
  if (!loaded.ok()) return loaded;
  *out = &api;
  return Status::Ok();
}

}  // namespace xc::nccl
