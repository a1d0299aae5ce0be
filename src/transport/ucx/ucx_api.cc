#include "transport/ucx/ucx_api.h"

#include <dlfcn.h>

#include <mutex>

#include "base/env.h"
#include "base/log.h"

namespace xc::ucx {

namespace {

Status load(UcxApi *api) {
  std::string name = env_is_set("XC_UCX_LIBRARY") ? env_get("XC_UCX_LIBRARY") : "libucp.so.0";
  // RTLD_LOCAL: UCX's symbols stay out of the program's namespace, so an
  // application that links its own UCX (an MPI) keeps resolving to its own.
  void *lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    return Error(XC_ERR_UNSUPPORTED, "UCX is needed between hosts but %s did not load: %s (install libucx0, or set XC_UCX_LIBRARY)",
                 name.c_str(), e ? e : "unknown dlopen error");
  }
  api->library = name;
#define XC_UCX_LOOKUP(fn)                                                                              \
  api->fn = reinterpret_cast<decltype(api->fn)>(dlsym(lib, #fn));                                   \
  if (!api->fn) {                                                                                    \
    dlclose(lib);                                                                                    \
    return Error(XC_ERR_UNSUPPORTED, "%s has no %s: UCX %d.%d or later is needed", name.c_str(), #fn, \
                 UCP_API_MAJOR, UCP_API_MINOR);                                                      \
  }
  XC_UCX_ENTRIES(XC_UCX_LOOKUP)
#undef XC_UCX_LOOKUP
  api->ucp_get_version(&api->major, &api->minor, &api->release);
  if (api->major < UCP_API_MAJOR || (api->major == UCP_API_MAJOR && api->minor < UCP_API_MINOR)) {
    dlclose(lib);
    return Error(XC_ERR_UNSUPPORTED, "%s is UCX %u.%u.%u; xcomm was built for %d.%d or later", name.c_str(), api->major,
                 api->minor, api->release, UCP_API_MAJOR, UCP_API_MINOR);
  }
  XC_INFO("loaded %s (UCX %u.%u.%u)", name.c_str(), api->major, api->minor, api->release);
  return Status::Ok();
}

}  // namespace

Status ucx_api(const UcxApi **out) {
  static std::once_flag once;
  static UcxApi api;
  static Status loaded;
  std::call_once(once, [] { loaded = load(&api); });
  if (!loaded.ok()) return loaded;
  *out = &api;
  return Status::Ok();
}

void ucx_request_free(void *request) {
  const UcxApi *api = nullptr;
  if (request && ucx_api(&api).ok()) api->ucp_request_free(request);
}

Status ucx_error(const UcxApi &api, ucs_status_t st, xc_result_t code, const std::string &what) {
  return Error(code, "%s: %s", what.c_str(), api.ucs_status_string(st));
}

}  // namespace xc::ucx
