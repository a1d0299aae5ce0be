// Which host this process runs on, as a string equal for every process that
// can share memory with it: the kernel's boot id, the hostname (network
// namespaces and containers give different ones) and the identity of the
// /dev/shm mount it sees, or XC_HOST_ID when set.
#pragma once

#include <string>

namespace xc {

std::string host_id();
std::string host_name();

}  // namespace xc
