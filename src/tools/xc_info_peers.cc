// xc-info --peers, under a launcher: how this job's frames travel between
// ranks, per class of peer (same host, other host), e.g. "other host: ucx
// tcp/eth0 (4 pairs)". Every rank first exchanges a byte with every other
// (UCX wires an endpoint up at its first message), then rank 0 gathers the
// ranks' summaries and prints each distinct one with how many pairs it has.
#include "tools/xc_info_peers.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "runtime/comm.h"
#include "xcomm.h"

namespace {

constexpr size_t kSummaryBytes = 4096;  // one rank's lines, NUL-padded

int fail(const char *what) {
  fprintf(stderr, "xc-info --peers: %s failed: %s\n", what, xc_last_error());
  return 1;
}

}  // namespace

int print_peers() {
  xc_comm_t world = nullptr;
  if (xc_init(nullptr, &world) != XC_SUCCESS) return fail("xc_init");
  int rank = 0, size = 1;
  xc_comm_rank(world, &rank);
  xc_comm_size(world, &size);
  std::vector<unsigned char> out(static_cast<size_t>(size), 1), in(static_cast<size_t>(size));
  if (xc_alltoall(out.data(), in.data(), 1, XC_UINT8, world) != XC_SUCCESS) return fail("xc_alltoall");

  const xc::Fabric &fabric = *world->fabric;
  std::map<std::string, int> mine;  // "class: route" → pairs from this rank
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    int fr = (*world->members)[static_cast<size_t>(r)];
    const char *cls = fabric.host_of(fr) == fabric.host_of(fabric.rank()) ? "same host" : "other host";
    ++mine[std::string(cls) + ": " + fabric.route_summary(fr)];
  }
  std::string text;
  for (const auto &[line, n] : mine) text += line + "\t" + std::to_string(n) + "\n";
  std::vector<char> summary(kSummaryBytes, 0), all;
  memcpy(summary.data(), text.data(), std::min(text.size(), kSummaryBytes - 1));
  if (rank == 0) all.resize(kSummaryBytes * static_cast<size_t>(size));
  if (xc_gather(summary.data(), all.data(), kSummaryBytes, XC_UINT8, 0, world) != XC_SUCCESS) return fail("xc_gather");
  if (rank == 0) {
    std::map<std::string, int> pairs;
    for (int r = 0; r < size; ++r) {
      std::string lines(all.data() + kSummaryBytes * static_cast<size_t>(r));
      for (size_t pos = 0, nl; (nl = lines.find('\n', pos)) != std::string::npos; pos = nl + 1) {
        std::string line = lines.substr(pos, nl - pos);
        size_t tab = line.rfind('\t');
        pairs[line.substr(0, tab)] += std::stoi(line.substr(tab + 1));
      }
    }
    printf("Routes between the %d ranks of this job on %d host(s) (directed pairs):\n", size, fabric.host_count());
    for (const auto &[line, n] : pairs) printf("  %-60s %d\n", line.c_str(), n);
  }
  xc_comm_free(world);
  return 0;
}
