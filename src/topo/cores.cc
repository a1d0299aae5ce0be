#include "topo/cores.h"

#include <unistd.h>

#include "base/env.h"
#include "base/log.h"

namespace xc::topo {

long host_cores() {
  static const long cores = [] {
    int64_t given = 0;
    if (env_is_set("XC_LOCAL_CORES")) {
      Status st = env_int("XC_LOCAL_CORES", &given);
      if (st.ok()) return long(given);
      XC_WARN("%s; counting every online core instead", st.message().c_str());
    }
    return sysconf(_SC_NPROCESSORS_ONLN);
  }();
  return cores;
}

}  // namespace xc::topo
