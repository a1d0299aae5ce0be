// The shared-memory transport's entry in the transport table
// (transport/registry.cc): ranks on one host, set up from XC_SHM_*.
#pragma once

#include "transport/registry.h"

namespace xc::shm {

extern const TransportEntry kEntry;

}  // namespace xc::shm
