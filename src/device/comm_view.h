// What a device op needs of its communicator, copied when the op is
// enqueued so that it runs on the stream's thread without touching the
// communicator (which the application may free meanwhile: its contexts are
// then cancelled and the op fails at once).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "p2p/engine.h"

namespace xc::device {

// A communicator's four context ids: ctx (host point-to-point), ctx + 1
// (host collectives), and these two for device ops.
constexpr uint64_t kP2pCtxOffset = 2;      // device point-to-point: buffer descriptions
constexpr uint64_t kControlCtxOffset = 3;  // device collectives' exchanges and receivers' acknowledgements
// Tags on the control context: a collective's sequence number, or an
// acknowledgement's id with this bit set, so the two never match.
constexpr int kTagMask = 0x3fffffff;
constexpr int kAckTagBit = 0x40000000;
// The top two acknowledgement tags are the kernels' registry's (device/
// custom_registry.h): a registration announced, and its acknowledgement.
constexpr int kRegistryAnnounceTag = kAckTagBit | kTagMask;
constexpr int kRegistryAckTag = kAckTagBit | (kTagMask - 1);
constexpr uint32_t kAckIds = kTagMask - 1;  // acknowledgement ids below them

struct CommView {
  P2pEngine *engine = nullptr;
  std::shared_ptr<void> keep_engine;  // the fabric that owns it
  std::shared_ptr<const std::vector<int>> members;  // fabric rank of each rank
  int rank = 0;
  int size = 1;
  uint64_t ctx = 0;
  uint64_t timeout_ms = 0;
  std::string name;
  gpu::Device *dev = nullptr;
  // The host topology's index of the GPU this rank drives (the intra-node
  // kernels' routes): the CUDA device's ordinal; on the emulated device the
  // one XC_DEVICE_AUTO would take, local rank modulo the host's GPUs.
  int gpu_index = 0;

  int fabric_rank(int r) const { return (*members)[static_cast<size_t>(r)]; }
};

}  // namespace xc::device
