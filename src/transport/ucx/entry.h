// The UCX transport's entry in the transport table (transport/registry.cc):
// ranks on other hosts, set up from XC_UCX_* (and UCX's own UCX_*).
#pragma once

#include "transport/registry.h"

namespace xc::ucx {

extern const TransportEntry kEntry;

}  // namespace xc::ucx
