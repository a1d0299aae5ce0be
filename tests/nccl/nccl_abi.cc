// xcomm declares the few NCCL types it needs itself (transport/nccl/
// nccl_api.h: nccl.h is not needed to build). Where the toolkit has nccl.h,
// this checks the declarations against it at compile time: the config's
// layout and header, the enum values and the entry points' signatures.
#include <nccl.h>

#include <cstddef>
#include <type_traits>

#include "transport/nccl/nccl_api.h"

namespace x = xc::nccl;

#define SAME_OFFSET(field) \
  static_assert(offsetof(x::ncclConfig_t, field) == offsetof(::ncclConfig_t, field), "ncclConfig_t." #field)

static_assert(sizeof(x::ncclConfig_t) <= sizeof(::ncclConfig_t), "our config is a prefix of NCCL's");
SAME_OFFSET(size);
SAME_OFFSET(magic);
SAME_OFFSET(version);
SAME_OFFSET(blocking);
SAME_OFFSET(cgaClusterSize);
SAME_OFFSET(minCTAs);
SAME_OFFSET(maxCTAs);
SAME_OFFSET(netName);
SAME_OFFSET(splitShare);
SAME_OFFSET(trafficClass);
SAME_OFFSET(commName);
SAME_OFFSET(collnetEnable);
SAME_OFFSET(CTAPolicy);
SAME_OFFSET(shrinkShare);
SAME_OFFSET(nvlsCTAs);
SAME_OFFSET(nChannelsPerNetPeer);
SAME_OFFSET(nvlinkCentricSched);
static_assert(sizeof(x::ncclUniqueId) == sizeof(::ncclUniqueId), "ncclUniqueId");
static_assert(x::kSplitNoColor == NCCL_SPLIT_NOCOLOR, "NCCL_SPLIT_NOCOLOR");
static_assert(x::kConfigUndefInt == NCCL_CONFIG_UNDEF_INT, "NCCL_CONFIG_UNDEF_INT");
static_assert(x::kVersionSplit == NCCL_VERSION(2, 18, 0), "2.18");
static_assert(x::kConfigVersion <= NCCL_VERSION_CODE, "config version");

static_assert(static_cast<int>(x::ncclSuccess) == ::ncclSuccess, "");
static_assert(static_cast<int>(x::ncclSystemError) == ::ncclSystemError, "");
static_assert(static_cast<int>(x::ncclRemoteError) == ::ncclRemoteError, "");
static_assert(static_cast<int>(x::ncclInProgress) == ::ncclInProgress, "");
static_assert(static_cast<int>(x::ncclAvg) == ::ncclAvg, "");
static_assert(static_cast<int>(x::ncclMin) == ::ncclMin, "");
static_assert(static_cast<int>(x::ncclMax) == ::ncclMax, "");
static_assert(static_cast<int>(x::ncclProd) == ::ncclProd, "");
static_assert(static_cast<int>(x::ncclBfloat16) == ::ncclBfloat16, "");
static_assert(static_cast<int>(x::ncclFloat32) == ::ncclFloat32, "");
static_assert(static_cast<int>(x::ncclFloat16) == ::ncclFloat16, "");
static_assert(static_cast<int>(x::ncclUint64) == ::ncclUint64, "");

int main() {
  // The config initializer matches NCCL_CONFIG_INITIALIZER field by field.
  ::ncclConfig_t theirs = NCCL_CONFIG_INITIALIZER;
  x::ncclConfig_t ours = x::config_initializer();
  int bad = 0;
  bad += ours.magic != theirs.magic;
  bad += ours.blocking != theirs.blocking;
  bad += ours.splitShare != theirs.splitShare;
  bad += ours.netName != theirs.netName;
  bad += ours.nvlinkCentricSched != theirs.nvlinkCentricSched;
  bad += ours.size != sizeof(x::ncclConfig_t);
  return bad ? 1 : 0;
}
