// A POSIX shared-memory segment mapped into this process. The creator unlinks
// the name once every peer has attached, so a crash leaves nothing behind in
// /dev/shm; the mapping lives until the object is destroyed.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace xc::shm {

class Segment {
 public:
  Segment() = default;
  ~Segment();
  Segment(const Segment &) = delete;
  Segment &operator=(const Segment &) = delete;
  Segment(Segment &&other) noexcept;
  Segment &operator=(Segment &&other) noexcept;

  // Create name (exclusive) of bytes, mapped and pre-faulted by this process.
  static Status create(const std::string &name, size_t bytes, Segment *out);
  // Create name whole: made, sized and mapped as name + ".new" (exclusive),
  // then renamed, so whoever opens name finds all of it. A creator killed
  // before the rename leaves only that twin, which forget() removes too.
  static Status create_whole(const std::string &name, size_t bytes, Segment *out);
  // Remove name and its unrenamed twin, whoever made them (any process may):
  // a member that gives up on a segment it was told of but never mapped.
  static void forget(const std::string &name);
  // Map an existing segment; its size must be at least bytes.
  static Status attach(const std::string &name, size_t bytes, Segment *out);
  // No segment of this name exists (any more): its creator unlinked it.
  static bool gone(const std::string &name);
  // Remove the name (the memory stays mapped where it is). Idempotent.
  void unlink();
  // Remove the name whoever created it (any process may shm_unlink it): the
  // last of a group to attach, or a member that gives up before the creator
  // could. Idempotent; the mapping stays.
  void remove();

  void *base() const { return base_; }
  size_t size() const { return size_; }

 private:
  void reset();
  std::string name_;
  void *base_ = nullptr;
  size_t size_ = 0;
  bool owner_ = false;
};

}  // namespace xc::shm
