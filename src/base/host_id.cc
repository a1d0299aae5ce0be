#include "base/host_id.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "base/env.h"

namespace xc {

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string host_id() {
  std::string override_id = env_get("XC_HOST_ID");
  if (!override_id.empty()) return override_id;
  std::string boot_id;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::getline(f, boot_id);
  // Which /dev/shm this process sees: two containers on one kernel with the
  // same hostname but private /dev/shm (no shared IPC) cannot share segments.
  struct stat st {};
  std::string shm = stat("/dev/shm", &st) == 0
                        ? std::to_string(static_cast<unsigned long long>(st.st_dev)) + "." +
                              std::to_string(static_cast<unsigned long long>(st.st_ino))
                        : "noshm";
  return boot_id + ":" + host_name() + ":" + shm;
}

}  // namespace xc
