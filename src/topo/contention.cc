#include "topo/contention.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "topo/cores.h"

namespace xc::topo {

bool cores_contended(int nranks) {
  long cores = host_cores();
  if (cores <= 0 || nranks > cores) return false;
  // "0.52 0.58 0.59 3/645 12345": the fourth field is runnable/total.
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[128];
  ssize_t got = read(fd, text, sizeof text - 1);
  close(fd);
  if (got <= 0) return false;
  text[got] = '\0';
  double a, b, c;
  long running = 0, total = 0;
  if (sscanf(text, "%lf %lf %lf %ld/%ld", &a, &b, &c, &running, &total) != 5) return false;
  return running > cores;
}

}  // namespace xc::topo
