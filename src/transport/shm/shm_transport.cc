#include "transport/shm/shm_transport.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "base/log.h"
#include "transport/shm/cma.h"

namespace xc::shm {

namespace {

constexpr uint64_t kMagic = 0x78636f6d6d73686dULL;  // "xcommshm"
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kRingControlBytes = 256;
// Crashed ranks a departing rank names in its header (the first ones: one
// is what a survivor's message needs).
constexpr size_t kMaxCrashedNamed = 64;

struct SegmentHeader {
  uint64_t magic;
  int64_t pid;
  uint64_t local_count;
  uint64_t ring_bytes;
  alignas(64) Doorbell bell;
  std::atomic<uint32_t> departed;  // 1: left on purpose, not a crash
  // Written before departed: the ranks it knew crashed (announce_departure).
  uint32_t crashed_count;
  int32_t crashed[kMaxCrashedNamed];
};
static_assert(sizeof(SegmentHeader) <= kHeaderBytes, "segment header fits its page");

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

ShmTransport::ShmTransport(const ShmOptions &opts) : opts_(opts) {}

ShmTransport::~ShmTransport() {
  for (Peer &p : peers_)
    if (p.pidfd >= 0) close(p.pidfd);
}

size_t ShmTransport::segment_bytes() const {
  return kHeaderBytes + opts_.local_ranks.size() * (kRingControlBytes + opts_.ring_bytes);
}

RingControl *ShmTransport::ring_control(void *segment_base, int sender_local) const {
  char *base = static_cast<char *>(segment_base) + kHeaderBytes;
  return reinterpret_cast<RingControl *>(base + static_cast<size_t>(sender_local) * (kRingControlBytes + opts_.ring_bytes));
}

Status ShmTransport::create(const ShmOptions &opts, std::unique_ptr<ShmTransport> *out) {
  if (opts.ring_bytes < (64u << 10) || (opts.ring_bytes & (opts.ring_bytes - 1)) != 0)
    return Error(XC_ERR_INVALID_ARGUMENT, "XC_SHM_RING_BYTES=%zu must be a power of two of at least 65536",
                 opts.ring_bytes);
  std::unique_ptr<ShmTransport> t(new ShmTransport(opts));
  t->local_index_.assign(static_cast<size_t>(opts.fabric_size), -1);
  for (size_t i = 0; i < opts.local_ranks.size(); ++i) {
    t->local_index_[static_cast<size_t>(opts.local_ranks[i])] = static_cast<int>(i);
    if (opts.local_ranks[i] == opts.my_rank) t->my_local_ = static_cast<int>(i);
  }
  std::string name = opts.name_prefix + std::to_string(opts.my_rank);
  XC_TRY(Segment::create(name, t->segment_bytes(), &t->own_));
  auto *hdr = new (t->own_.base()) SegmentHeader();
  hdr->pid = getpid();
  hdr->local_count = opts.local_ranks.size();
  hdr->ring_bytes = opts.ring_bytes;
  for (size_t i = 0; i < opts.local_ranks.size(); ++i) new (t->ring_control(t->own_.base(), static_cast<int>(i))) RingControl();
  std::atomic_thread_fence(std::memory_order_release);
  hdr->magic = kMagic;
  t->own_bell_ = &hdr->bell;
  t->own_departed_ = &hdr->departed;
  *out = std::move(t);
  return Status::Ok();
}

Status ShmTransport::connect() {
  size_t n = opts_.local_ranks.size();
  peers_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Peer &p = peers_[i];
    void *peer_base;
    if (static_cast<int>(i) == my_local_) {
      peer_base = own_.base();
    } else {
      std::string name = opts_.name_prefix + std::to_string(opts_.local_ranks[i]);
      XC_TRY(Segment::attach(name, segment_bytes(), &p.segment));
      peer_base = p.segment.base();
    }
    auto *hdr = static_cast<SegmentHeader *>(peer_base);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (hdr->magic != kMagic || hdr->local_count != n || hdr->ring_bytes != opts_.ring_bytes)
      return Error(XC_ERR_INVALID_USAGE,
                   "shared memory of rank %d disagrees on its layout (ranks started with different XC_SHM_* settings?)",
                   opts_.local_ranks[i]);
    p.bell = &hdr->bell;
    p.departed = &hdr->departed;
    p.header = hdr;
    p.pid = static_cast<pid_t>(hdr->pid);
    p.writer = RingWriter(ring_control(peer_base, my_local_),
                          reinterpret_cast<char *>(ring_control(peer_base, my_local_)) + kRingControlBytes,
                          opts_.ring_bytes);
    RingControl *in = ring_control(own_.base(), static_cast<int>(i));
    p.reader = RingReader(in, reinterpret_cast<char *>(in) + kRingControlBytes, opts_.ring_bytes);
    if (static_cast<int>(i) != my_local_) {
      p.pidfd = open_pidfd(p.pid);  // -1: fall back to kill(pid, 0)
    }
  }
  max_payload_ = peers_.empty() ? 0 : peers_[0].writer.max_payload();
  return Status::Ok();
}

bool ShmTransport::try_send(int peer, const FrameHeader &h, const void *payload, size_t len) {
  Peer &p = peers_[static_cast<size_t>(local_index_[static_cast<size_t>(peer)])];
  if (!p.writer.try_write(h, payload, len)) return false;
  p.bell->ring();
  return true;
}

size_t ShmTransport::poll(FrameSink &sink) {
  size_t frames = 0;
  size_t n = peers_.size();
  // Start at a rotating peer so one busy sender cannot starve the others.
  for (size_t k = 0; k < n; ++k) {
    size_t i = (poll_start_ + k) % n;
    Peer &p = peers_[i];
    if (p.reader.empty()) continue;
    int src = opts_.local_ranks[i];
    size_t got = p.reader.drain([&](const FrameHeader &h, const void *payload, size_t len) {
      sink.on_frame(src, h, payload, len);
    });
    if (got) p.bell->ring();  // the sender may be asleep waiting for space
    frames += got;
  }
  poll_start_ = n ? (poll_start_ + 1) % n : 0;
  return frames;
}

uint32_t ShmTransport::prepare_wait() { return own_bell_->prepare_sleep(); }

bool ShmTransport::finish_wait(uint32_t token, int max_ms) {
  for (const Peer &p : peers_)  // without the engine's lock: another thread may be draining
    if (p.reader.maybe_nonempty()) max_ms = 0;
  return own_bell_->sleep(token, max_ms);
}

bool ShmTransport::peer_alive(int peer) {
  Peer &p = peers_[static_cast<size_t>(local_index_[static_cast<size_t>(peer)])];
  if (p.dead) return false;
  if (p.pidfd >= 0) {
    struct pollfd pfd = {p.pidfd, POLLIN, 0};
    if (::poll(&pfd, 1, 0) > 0) p.dead = true;  // readable once the process has exited
  } else if (p.pid > 0 && kill(p.pid, 0) != 0 && errno == ESRCH) {
    p.dead = true;
  }
  return !p.dead;
}

bool ShmTransport::peer_departed(int peer) {
  const Peer &p = peers_[static_cast<size_t>(local_index_[static_cast<size_t>(peer)])];
  return p.departed->load(std::memory_order_acquire) != 0;
}

void ShmTransport::announce_departure(const std::vector<int> &crashed) {
  auto *hdr = static_cast<SegmentHeader *>(own_.base());
  size_t n = std::min(crashed.size(), kMaxCrashedNamed);
  for (size_t i = 0; i < n; ++i) hdr->crashed[i] = crashed[i];
  hdr->crashed_count = static_cast<uint32_t>(n);
  own_departed_->store(1, std::memory_order_release);
}

std::vector<int> ShmTransport::departure_blames(int peer) {
  if (!peer_departed(peer)) return {};  // acquires what was written before
  const Peer &p = peers_[static_cast<size_t>(local_index_[static_cast<size_t>(peer)])];
  const auto *hdr = static_cast<const SegmentHeader *>(p.header);
  size_t n = std::min<size_t>(hdr->crashed_count, kMaxCrashedNamed);
  return std::vector<int>(hdr->crashed, hdr->crashed + n);
}

Status ShmTransport::describe(int, const void *buf, size_t, RemoteMem *out) {
  uint64_t addr = reinterpret_cast<uint64_t>(buf);
  const char *p = reinterpret_cast<const char *>(&addr);
  out->bytes.assign(p, p + sizeof addr);
  return Status::Ok();
}

Status ShmTransport::read_remote(int peer, const RemoteMem &mem, void *dst, size_t len) {
  uint64_t addr;
  if (mem.bytes.size() != sizeof addr)
    return Error(XC_ERR_INTERNAL, "a single-copy description of %zu bytes is not an address", mem.bytes.size());
  memcpy(&addr, mem.bytes.data(), sizeof addr);
  const Peer &p = peers_[static_cast<size_t>(local_index_[static_cast<size_t>(peer)])];
  int err = cma_copy(p.pid, dst, addr, len, false);
  if (err == 0) return Status::Ok();
  if (err == ESRCH) return Error(XC_ERR_PEER_FAILED, "the sender's process is gone");
  if (err == kCmaNoProgress)
    return Error(XC_ERR_PEER_FAILED, "single-copy read returned nothing: the sender's memory is gone");
  return SystemError(err, "single-copy read (process_vm_readv) failed; set XC_SHM_LARGE=copy");
}

}  // namespace xc::shm
