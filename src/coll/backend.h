// A communicator's collective backends, as a UCC team holds its TL teams:
// each keeps what its algorithms need per communicator (shared memory now;
// device IPC and NCCL later) and serves the entries of the algorithm table
// (algo/table.cc) that name it. The point-to-point algorithms need none: the
// engine is the fabric's. Which backends a communicator gets is decided in
// one place (algo/backends.cc) when it is made; a backend sets itself up
// lazily and collectively, at the first op that uses it, and goes with the
// communicator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/status.h"

namespace xc::coll {

class CollContext;

// Fixed slots, so an algorithm finds its backend with one load.
enum class BackendId : uint8_t {
  kShm,   // coll/shm: every member on this host, host memory
  kHier,  // algo/hier: members on several hosts, more than one on some host
  kCount,
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendId id() const = 0;
  virtual const char *name() const = 0;
  // Collective over c (every member calls it at the same op): set up on
  // first use, cheap afterwards.
  virtual Status ensure(CollContext &c) = 0;
};

class BackendSet {
 public:
  Backend *get(BackendId id) const { return slots_[static_cast<size_t>(id)].get(); }
  // Takes b into its slot (replacing what was there).
  void add(std::unique_ptr<Backend> b) {
    size_t at = static_cast<size_t>(b->id());
    slots_[at] = std::move(b);
  }
  // Frees every backend (their segments, mappings, scratch).
  void clear() {
    for (auto &b : slots_) b.reset();
  }

 private:
  std::unique_ptr<Backend> slots_[static_cast<size_t>(BackendId::kCount)];
};

}  // namespace xc::coll
