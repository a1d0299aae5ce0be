// xc-info: what this build of xcomm is and how it is configured. Later it
// also reports the topology; for now: version, build features, and every
// XC_* environment variable with its value, default and doc line.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/env.h"
#include "core/host_id.h"
#include "xcomm.h"
#include "xcomm_build_config.h"

namespace {

std::string json_escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

void print_text() {
  int major, minor, patch;
  xc_get_version(&major, &minor, &patch);
  printf("xcomm %d.%d.%d (ABI %d)\n", major, minor, patch, XC_ABI_VERSION);
  printf("host         %s\n", xc::host_name().c_str());
  printf("host id      %s\n", xc::host_id().c_str());
  printf("libraries    hwloc %s, ucx %s at build time\n", XC_HAVE_HWLOC ? "found" : "not found",
         XC_HAVE_UCX ? "found" : "not found");
  printf("transports   shared memory (same host, host memory); no inter-host or device-memory transport yet\n");
  printf("\nEnvironment variables (value, default, meaning):\n");
  for (const xc::EnvVar &v : xc::env_registry()) {
    const char *value = getenv(v.name);
    printf("  %-20s = %-12s (default %s)\n      %s\n", v.name, value ? value : "<unset>",
           v.default_value[0] ? v.default_value : "none", v.doc);
  }
}

void print_json() {
  int major, minor, patch;
  xc_get_version(&major, &minor, &patch);
  printf("{\n  \"version\": \"%d.%d.%d\",\n  \"abi\": %d,\n", major, minor, patch, XC_ABI_VERSION);
  printf("  \"host\": \"%s\",\n  \"host_id\": \"%s\",\n", json_escape(xc::host_name()).c_str(),
         json_escape(xc::host_id()).c_str());
  printf("  \"libraries_found\": {\"hwloc\": %s, \"ucx\": %s},\n", XC_HAVE_HWLOC ? "true" : "false",
         XC_HAVE_UCX ? "true" : "false");
  printf("  \"transports\": [\"shm\"],\n");
  printf("  \"env\": [\n");
  const auto &vars = xc::env_registry();
  for (size_t i = 0; i < vars.size(); ++i) {
    const char *value = getenv(vars[i].name);
    printf("    {\"name\": \"%s\", \"value\": %s%s%s, \"default\": \"%s\", \"doc\": \"%s\"}%s\n", vars[i].name,
           value ? "\"" : "", value ? json_escape(value).c_str() : "null", value ? "\"" : "",
           json_escape(vars[i].default_value).c_str(), json_escape(vars[i].doc).c_str(), i + 1 < vars.size() ? "," : "");
  }
  printf("  ]\n}\n");
}

}  // namespace

int main(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      printf("usage: xc-info [--json]\n  Reports this build of xcomm and its XC_* settings.\n");
      return 0;
    } else {
      fprintf(stderr, "xc-info: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  if (json)
    print_json();
  else
    print_text();
  return 0;
}
