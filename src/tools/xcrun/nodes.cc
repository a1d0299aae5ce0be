// One node of a job over several hosts (--nnodes, --node-rank, --rdzv), as
// torchrun runs one agent per node. Nothing passes between the xcruns:
// every node derives the job id and the store token from --rdzv and
// --job-id alone, so they agree without talking. Node 0 binds the
// rendezvous port before its ranks start and hands the socket to rank 0,
// which serves the bootstrap store there, as on one node.
//
// The derived token keeps apart jobs that share a rendezvous address by
// mistake; it is not a secret (anyone who knows the address and job id can
// compute it). For a real one, export the same random XC_STORE_TOKEN to
// xcrun on every node (e.g. `openssl rand -hex 16`).

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "xcrun.h"

namespace xcrun {
namespace {

constexpr int kListenBacklog = 4096;  // the kernel caps it at somaxconn

// 32 hex characters from text: FNV-1a through SplitMix64's finaliser, as
// the library derives a launcher's token (bootstrap/launcher.cc). Not
// cryptographic: it only has to be equal on every node.
std::string hash_hex(const std::string &text) {
  auto fnv = [&text](uint64_t h) {
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
    return h;
  };
  auto mix = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  uint64_t a = mix(fnv(0xcbf29ce484222325ULL));
  uint64_t b = mix(fnv(a ^ 0x6a09e667f3bcc909ULL));
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint64_t w : {a, b})
    for (int i = 60; i >= 0; i -= 4) out.push_back(kHex[(w >> i) & 15]);
  return out;
}

// Whether this node can bind addr (port 0): true for its own addresses only.
bool is_local_address(const addrinfo *ai) {
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_storage ss{};
  memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
  if (ss.ss_family == AF_INET) reinterpret_cast<sockaddr_in *>(&ss)->sin_port = 0;
  if (ss.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port = 0;
  bool ok = bind(fd, reinterpret_cast<sockaddr *>(&ss), ai->ai_addrlen) == 0;
  close(fd);
  return ok;
}

std::string address_text(const addrinfo *ai) {
  char buf[INET6_ADDRSTRLEN] = "?";
  getnameinfo(ai->ai_addr, ai->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST);
  return buf;
}

// Node 0: listens on every address at the rendezvous port, once it knows
// that HOST is one of this node's addresses. Every address rather than
// HOST's alone because a name may resolve here to another address than on
// the other nodes (Debian maps the hostname to 127.0.1.1 in /etc/hosts).
// SO_REUSEADDR: a job started again at once must not wait out the last
// one's TIME_WAIT connections.
int listen_rendezvous(const Options &o) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *res = nullptr;
  int gai = getaddrinfo(o.rdzv_host.c_str(), nullptr, &hints, &res);
  if (gai != 0) die("--rdzv " + o.rdzv + ": cannot resolve '" + o.rdzv_host + "': " + gai_strerror(gai));
  int family = -1;
  std::string seen;
  for (const addrinfo *ai = res; ai; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    seen += (seen.empty() ? "" : ", ") + address_text(ai);
    if (family < 0 && is_local_address(ai)) family = ai->ai_family;
  }
  freeaddrinfo(res);
  if (family < 0)
    die("--node-rank 0 must run on the rendezvous host, but " + o.rdzv_host + " (" + seen +
        ") is not an address of this node");
  int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die(std::string("socket: ") + strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == AF_INET) {
    auto *a = reinterpret_cast<sockaddr_in *>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    a->sin_port = htons(o.rdzv_port);
    len = sizeof *a;
  } else {
    auto *a = reinterpret_cast<sockaddr_in6 *>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_any;
    a->sin6_port = htons(o.rdzv_port);
    len = sizeof *a;
  }
  if (bind(fd, reinterpret_cast<sockaddr *>(&ss), len) != 0 || listen(fd, kListenBacklog) != 0)
    die("cannot listen on port " + std::to_string(o.rdzv_port) + " for --rdzv " + o.rdzv + ": " + strerror(errno));
  return above_stdio(fd);
}

}  // namespace

Job make_multinode_job(const Options &o) {
  Job job;
  std::string identity = o.rdzv + ";" + o.job_id;
  job.id = "xn-" + hash_hex("job;" + identity).substr(0, 16);  // 19 characters: the library takes 24
  const char *tok = getenv("XC_STORE_TOKEN");
  if (tok && *tok) {
    size_t n = strlen(tok);
    bool ok = n <= 256;
    for (size_t i = 0; ok && i < n; ++i) ok = tok[i] > ' ' && tok[i] <= '~';
    if (!ok) die("XC_STORE_TOKEN must be 1 to 256 printable characters without spaces");
    job.token = tok;
  } else {
    job.token = hash_hex("token;" + identity);
  }
  job.store_addr = o.rdzv;
  job.port = o.rdzv_port;
  job.master_addr = o.rdzv_host;
  job.master_port = static_cast<uint16_t>(o.rdzv_port + 1);  // options.cc keeps the port below 65535
  if (o.node_rank == 0) job.store_fd = listen_rendezvous(o);
  return job;
}

}  // namespace xcrun
