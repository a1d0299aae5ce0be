// Which host this process runs on, as a string equal for every process that
// can share memory with it: the kernel's boot id plus the hostname (network
// namespaces and containers give different hostnames or boot ids), or
// XC_HOST_ID when set.
#pragma once

#include <string>

namespace xc {

std::string host_id();
std::string host_name();

}  // namespace xc
