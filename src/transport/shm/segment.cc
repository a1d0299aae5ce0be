#include "transport/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <utility>

namespace xc::shm {

Segment::~Segment() { reset(); }

Segment::Segment(Segment &&other) noexcept { *this = std::move(other); }

Segment &Segment::operator=(Segment &&other) noexcept {
  if (this != &other) {
    reset();
    name_ = std::move(other.name_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owner_ = std::exchange(other.owner_, false);
  }
  return *this;
}

void Segment::reset() {
  unlink();
  if (base_) munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
}

void Segment::unlink() {
  if (owner_) shm_unlink(name_.c_str());
  owner_ = false;
}

void Segment::remove() {
  if (!name_.empty()) shm_unlink(name_.c_str());
  name_.clear();
  owner_ = false;
}

Status Segment::create(const std::string &name, size_t bytes, Segment *out) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return SystemError(errno, "shm_open(%s) failed", name.c_str());
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int err = errno;
    close(fd);
    shm_unlink(name.c_str());
    return SystemError(err, "cannot size shared memory %s to %zu bytes (is /dev/shm full?)", name.c_str(), bytes);
  }
  // MAP_POPULATE faults every page in now, on this (the reader's) NUMA node,
  // so the hot path never takes a page fault.
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name.c_str());
    return SystemError(err, "mmap of shared memory %s (%zu bytes) failed", name.c_str(), bytes);
  }
  Segment s;
  s.name_ = name;
  s.base_ = p;
  s.size_ = bytes;
  s.owner_ = true;
  *out = std::move(s);
  return Status::Ok();
}

namespace {

constexpr const char *kUnrenamed = ".new";

// shm_open's names live in /dev/shm (glibc, Linux), where rename works.
std::string shm_path(const std::string &name) { return "/dev/shm" + name; }

}  // namespace

Status Segment::create_whole(const std::string &name, size_t bytes, Segment *out) {
  std::string twin = name + kUnrenamed;
  Segment s;
  XC_TRY(create(twin, bytes, &s));
  if (rename(shm_path(twin).c_str(), shm_path(name).c_str()) != 0) {
    int err = errno;
    return SystemError(err, "cannot rename shared memory %s to %s", twin.c_str(), name.c_str());  // s unlinks twin
  }
  s.name_ = name;
  *out = std::move(s);
  return Status::Ok();
}

void Segment::forget(const std::string &name) {
  shm_unlink(name.c_str());
  shm_unlink((name + kUnrenamed).c_str());
}

Status Segment::attach(const std::string &name, size_t bytes, Segment *out) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) return SystemError(errno, "cannot open a peer's shared memory %s", name.c_str());
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    close(fd);
    return Error(XC_ERR_INTERNAL, "peer's shared memory %s is smaller than the expected %zu bytes", name.c_str(),
                 bytes);
  }
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) return SystemError(err, "mmap of a peer's shared memory %s failed", name.c_str());
  Segment s;
  s.name_ = name;
  s.base_ = p;
  s.size_ = bytes;
  *out = std::move(s);
  return Status::Ok();
}

bool Segment::gone(const std::string &name) {
  int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd >= 0) close(fd);
  return fd < 0 && errno == ENOENT;
}

}  // namespace xc::shm
