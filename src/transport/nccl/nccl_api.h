// NCCL's entry points, loaded with dlopen (libnccl.so.2, or XC_NCCL_LIBRARY)
// the first time a communicator needs NCCL: device memory between hosts,
// or within a host when XC_NCCL / XC_ALGO ask for it. Linking libnccl would
// load it (and its CUDA runtime) into every process that uses xcomm, host-
// only jobs included, and tie the build to one NCCL. The few types and
// enums used are declared here from NCCL's documented ABI (nccl.h of 2.18
// to 2.28: the values have never changed), so nccl.h is not needed to
// build; ncclConfig_t is NCCL's own layout with its size/magic/version
// header, so a newer NCCL reads the fields it knows and an older one the
// prefix it knows (NCCL's parseCommConfig).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "base/status.h"

namespace xc::nccl {

typedef struct ncclComm *ncclComm_t;
struct ncclUniqueId {
  char internal[128];
};

enum ncclResult_t : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};
enum ncclRedOp_t : int { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 };
enum ncclDataType_t : int {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
};
constexpr int kSplitNoColor = -1;              // NCCL_SPLIT_NOCOLOR
constexpr int kConfigUndefInt = INT32_MIN;     // NCCL_CONFIG_UNDEF_INT
constexpr unsigned kConfigMagic = 0xcafebeef;  // NCCL_CONFIG_INITIALIZER's magic
constexpr int kVersionSplit = 21800;           // 2.18.0: ncclCommSplit
constexpr unsigned kConfigVersion = 22800;     // the layout below (ncclConfig_v22800)

// ncclConfig_v22800 (nccl.h 2.28). Each NCCL version appends fields; the
// header says which layout the caller holds.
struct ncclConfig_t {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char *netName;
  int splitShare;
  int trafficClass;
  const char *commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
};
static_assert(offsetof(ncclConfig_t, blocking) == 16, "ncclConfig_t header");
static_assert(offsetof(ncclConfig_t, netName) == 32, "ncclConfig_t layout");
static_assert(offsetof(ncclConfig_t, splitShare) == 40, "ncclConfig_t layout");
static_assert(sizeof(ncclConfig_t) == 80, "ncclConfig_v22800");

// NCCL_CONFIG_INITIALIZER: every field undefined (NCCL's default).
ncclConfig_t config_initializer();

#define XC_NCCL_ENTRIES(X)                                                                                          \
  X(ncclGetVersion, ncclResult_t(int *))                                                                            \
  X(ncclGetUniqueId, ncclResult_t(ncclUniqueId *))                                                                  \
  X(ncclCommInitRankConfig, ncclResult_t(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *))                     \
  X(ncclCommSplit, ncclResult_t(ncclComm_t, int, int, ncclComm_t *, ncclConfig_t *))                                \
  X(ncclCommAbort, ncclResult_t(ncclComm_t))                                                                        \
  X(ncclCommDestroy, ncclResult_t(ncclComm_t))                                                                      \
  X(ncclCommFinalize, ncclResult_t(ncclComm_t))                                                                     \
  X(ncclCommGetAsyncError, ncclResult_t(ncclComm_t, ncclResult_t *))                                                \
  X(ncclGetErrorString, const char *(ncclResult_t))                                                                 \
  X(ncclGetLastError, const char *(ncclComm_t))                                                                     \
  X(ncclAllReduce, ncclResult_t(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, void *))     \
  X(ncclBroadcast, ncclResult_t(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, void *))             \
  X(ncclReduce, ncclResult_t(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, void *))   \
  X(ncclAllGather, ncclResult_t(const void *, void *, size_t, ncclDataType_t, ncclComm_t, void *))                  \
  X(ncclReduceScatter, ncclResult_t(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, void *)) \
  X(ncclSend, ncclResult_t(const void *, size_t, ncclDataType_t, int, ncclComm_t, void *))                          \
  X(ncclRecv, ncclResult_t(void *, size_t, ncclDataType_t, int, ncclComm_t, void *))                                \
  X(ncclGroupStart, ncclResult_t())                                                                                 \
  X(ncclGroupEnd, ncclResult_t())

struct NcclApi {
  std::string library;  // what was loaded
  int version = 0;      // ncclGetVersion's code (22809 for 2.28.9)
#define XC_NCCL_FIELD(name, sig) std::add_pointer_t<sig> name = nullptr;
  XC_NCCL_ENTRIES(XC_NCCL_FIELD)
#undef XC_NCCL_FIELD
};

// The loaded API (once per process; later calls return the same answer), or
// XC_ERR_UNSUPPORTED naming what was tried and what was found: no library,
// a missing entry point, or a version older than 2.18 (ncclCommSplit).
Status nccl_api(const NcclApi **out);

// "2.28.9" from a version code (both of NCCL's encodings).
std::string version_text(int code);

}  // namespace xc::nccl
