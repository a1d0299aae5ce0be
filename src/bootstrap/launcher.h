// Who am I and where is the rendezvous: read from the environment of whatever
// started this process (xcrun, torchrun, Slurm, Open MPI, MPICH/Hydra), or a
// world of one when nothing did.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace xc::bootstrap {

struct LaunchInfo {
  std::string launcher;      // "xcrun", "torchrun", "slurm", "openmpi", "mpich", "none"
  int rank = 0;
  int size = 1;
  int local_rank_hint = -1;  // what the launcher says; the host id exchange decides
  std::string store_host;    // empty when size == 1
  uint16_t store_port = 0;
  std::string token;         // XC_STORE_TOKEN, or derived from the launcher's job id
  int store_fd = -1;         // XC_STORE_FD: a listening socket for rank 0 to serve on
  std::string job_id;        // names shared-memory segments; unique per job
  // Ranks per node when the launcher lays nodes out in blocks (node k holds
  // ranks k*n .. k*n+n-1: xcrun --nnodes, torchrun); 0 when unknown. Only
  // for messages: a start-up timeout names the nodes that never arrived.
  int ranks_per_node = 0;
};

// Parse the environment. Errors: inconsistent or malformed variables, or a
// multi-rank launch with no rendezvous address (the message says to set
// XC_STORE_ADDR).
Status detect_launch(LaunchInfo *out);

// "host:port" (IPv4, IPv6 in [brackets], or a name) → parts.
Status parse_host_port(const std::string &text, std::string *host, uint16_t *port);

}  // namespace xc::bootstrap
