// The job's identity (id and token), its rendezvous socket, and the
// environment every rank gets.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "xcrun.h"

extern char **environ;

namespace xcrun {
namespace {

constexpr int kListenBacklog = 4096;  // the kernel caps it at somaxconn

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  size_t got = 0;
  while (got < bytes) {
    ssize_t r = getrandom(buf.data() + got, bytes - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die(std::string("getrandom: ") + strerror(errno));
    got += size_t(r);
  }
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : buf) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

// A listening TCP socket on 127.0.0.1 at a port the kernel picks. It is
// created close-on-exec so that only rank 0, which clears the flag after
// fork, inherits it; and kept above 2 so it cannot collide with stdio.
void open_store_socket(Job *job) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 || listen(fd, kListenBacklog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0)
    die(std::string("cannot open the rendezvous socket on 127.0.0.1: ") + strerror(errno));
  if (fd < 3) {
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (high < 0) die(std::string("fcntl: ") + strerror(errno));
    close(fd);
    fd = high;
  }
  job->store_fd = fd;
  job->port = ntohs(addr.sin_port);
}

}  // namespace

Job make_job() {
  Job job;
  job.id = "j" + std::to_string(getpid()) + "-" + random_hex(4);
  job.token = random_hex(16);
  open_store_socket(&job);
  return job;
}

// What every rank shares: xcrun's environment without the variables xcrun
// manages, then the -x assignments. Each name appears once (getenv would
// see the first): -x replaces an inherited value, a later -x an earlier one.
std::vector<std::string> common_env(const Options &o) {
  auto name_of = [](const std::string &kv) { return kv.substr(0, kv.find('=')); };
  auto set_later = [&](const std::string &name, size_t after) {
    return std::any_of(o.extra_env.begin() + long(after), o.extra_env.end(),
                       [&](const std::string &x) { return name_of(x) == name; });
  };
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    std::string name = name_of(*e);
    if (!is_managed_var(name) && !set_later(name, 0)) env.emplace_back(*e);
  }
  for (size_t i = 0; i < o.extra_env.size(); ++i)
    if (!set_later(name_of(o.extra_env[i]), i + 1)) env.push_back(o.extra_env[i]);
  return env;
}

std::vector<std::string> rank_env(const std::vector<std::string> &common, const Job &job, int rank, int np) {
  std::vector<std::string> env = common;
  auto set = [&](const char *name, const std::string &value) { env.push_back(std::string(name) + "=" + value); };
  std::string r = std::to_string(rank), n = std::to_string(np), port = std::to_string(job.port);
  set("XC_RANK", r);
  set("XC_SIZE", n);
  set("XC_LOCAL_RANK", r);  // every rank is on this host
  set("XC_LOCAL_SIZE", n);
  set("XC_STORE_ADDR", "127.0.0.1:" + port);
  set("XC_STORE_TOKEN", job.token);
  set("XC_JOB_ID", job.id);
  if (rank == 0) set("XC_STORE_FD", std::to_string(job.store_fd));
  // The torchrun names, so a program written for torchrun runs unchanged.
  set("RANK", r);
  set("WORLD_SIZE", n);
  set("LOCAL_RANK", r);
  set("LOCAL_WORLD_SIZE", n);
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", port);
  return env;
}

}  // namespace xcrun
