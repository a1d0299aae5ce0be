#include "topo/cores.h"

#include <unistd.h>

namespace xc::topo {

long host_cores() {
  static const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores;
}

bool oversubscribed(int nranks) {
  long cores = host_cores();
  return cores > 0 && nranks > cores;
}

}  // namespace xc::topo
