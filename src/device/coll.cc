#include "device/coll.h"

#include <string>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "device/control.h"
#include "device/ipc.h"
#include "kernels/args.cuh"

namespace xc::device {
namespace {

// What rank i tells rank j before anything moves.
struct Info {
  BufDesc in;               // i's input, where the op reads it
  uint64_t count_for_peer;  // scatterv, alltoallv: what i sends to j
  uint64_t displ_for_peer;
  uint32_t sig;
  int32_t reserved;
};

// The start of rank's input as d defines it (in place: inside recvbuf).
const void *input_of(const CollDesc &d, int rank, size_t es) {
  const char *out = static_cast<const char *>(d.recvbuf);
  switch (d.kind) {
    case CollKind::kBarrier: return nullptr;
    case CollKind::kBroadcast: return d.recvbuf;
    case CollKind::kScatter:
    case CollKind::kScatterv: return d.sendbuf;
    case CollKind::kAllgather:
    case CollKind::kGather: return d.in_place ? out + static_cast<size_t>(rank) * d.count * es : d.sendbuf;
    case CollKind::kAllgatherv:
    case CollKind::kGatherv: return d.in_place ? out + d.rdispls[static_cast<size_t>(rank)] * es : d.sendbuf;
    default: return d.in_place ? d.recvbuf : d.sendbuf;
  }
}

// Bytes of rank's input that peers may read (0: none).
size_t input_bytes(const CollDesc &d, int rank, int n, size_t es) {
  switch (d.kind) {
    case CollKind::kBarrier: return 0;
    case CollKind::kBroadcast: return rank == d.root ? d.count * es : 0;
    case CollKind::kScatter: return rank == d.root ? d.count * es * static_cast<size_t>(n) : 0;
    case CollKind::kScatterv: return rank == d.root ? d.sendcounts.total() * es : 0;
    case CollKind::kReduceScatter: return d.count * es * static_cast<size_t>(n);
    case CollKind::kReduceScatterv: return d.recvcounts.total() * es;
    case CollKind::kAlltoall: return d.count * es * static_cast<size_t>(n);
    case CollKind::kAlltoallv: return d.sendcounts.total() * es;
    default: return d.count * es;
  }
}

class DeviceColl {
 public:
  DeviceColl(const CommView &c, const CollDesc &d, int tag, JobEnv &env)
      : c_(c), d_(d), tag_(tag), env_(env), n_(c.size), me_(c.rank), es_(dtype_size(d.dtype)), msgs_(c) {}

  Status run() {
    XC_TRY(exchange());
    Status st = move_data();
    XC_TRY(close(st));
    if (temp_ && !blockwise_) XC_TRY(copy(d_.recvbuf, temp_, temp_bytes_));
    for (const auto &b : copy_back_)  // only the blocks: the gaps between them stay the application's
      XC_TRY(copy(static_cast<char *>(d_.recvbuf) + b.first, static_cast<char *>(temp_) + b.first, b.second));
    return Status::Ok();
  }

 private:
  // Every rank's Info to every other; the peers' inputs mapped here.
  Status exchange() {
    uint32_t sig = coll_signature(d_);
    const void *in = input_bytes(d_, me_, n_, es_) ? input_of(d_, me_, es_) : nullptr;
    mine_.assign(static_cast<size_t>(n_), Info{});
    theirs_.assign(static_cast<size_t>(n_), Info{});
    XC_TRY_CTX(describe(env_.dev(), in, &mine_[0].in), "describing this rank's input");
    for (int j = 0; j < n_; ++j) {
      Info &m = mine_[static_cast<size_t>(j)];
      m.in = mine_[0].in;
      m.sig = sig;
      if (d_.kind == CollKind::kScatterv && me_ == d_.root) {
        m.count_for_peer = d_.sendcounts[static_cast<size_t>(j)];
        m.displ_for_peer = d_.sdispls[static_cast<size_t>(j)];
      } else if (d_.kind == CollKind::kAlltoallv) {
        m.count_for_peer = d_.sendcounts[static_cast<size_t>(j)];
        m.displ_for_peer = d_.sdispls[static_cast<size_t>(j)];
      }
    }
    theirs_[static_cast<size_t>(me_)] = mine_[static_cast<size_t>(me_)];
    for (int j = 0; j < n_; ++j) {
      if (j == me_) continue;
      msgs_.recv(kControlCtxOffset, j, tag_, &theirs_[static_cast<size_t>(j)], sizeof(Info), true);
      msgs_.send(kControlCtxOffset, j, tag_, &mine_[static_cast<size_t>(j)], sizeof(Info), true);
    }
    XC_TRY(msgs_.wait_all(env_.deadline(), "device collective: finding the peers' buffers"));
    peer_in_.assign(static_cast<size_t>(n_), nullptr);
    for (int j = 0; j < n_; ++j) {
      const Info &t = theirs_[static_cast<size_t>(j)];
      if (t.sig != sig)
        return Error(XC_ERR_INVALID_USAGE,
                     "ranks disagree on the device collective: rank %d called %s, this rank (%d) %s: %s", j,
                     describe_signature(t.sig).c_str(), me_, describe_call(d_).c_str(),
                     describe_signature_difference(sig, t.sig).c_str());
      void *p = nullptr;
      XC_TRY_CTX(reached_.reach(env_.dev(), t.in, &p), "mapping the input of rank " + std::to_string(j));
      peer_in_[static_cast<size_t>(j)] = p;
    }
    return Status::Ok();
  }

  // Tell every peer this rank no longer reads its memory (or why it failed),
  // and hear the same from each: then every buffer is the application's again.
  Status close(Status mine) {
    Status drained = env_.finish_work();  // also after a failure: mappings may close once we return
    if (mine.ok()) mine = std::move(drained);
    int32_t my_code = mine.code();
    std::vector<int32_t> codes(static_cast<size_t>(n_), 0);
    Messages done(c_);
    for (int j = 0; j < n_; ++j) {
      if (j == me_) continue;
      done.recv(kControlCtxOffset, j, tag_, &codes[static_cast<size_t>(j)], sizeof(int32_t), true);
      done.send(kControlCtxOffset, j, tag_, &my_code, sizeof(int32_t), true);
    }
    Status st = done.wait_all(env_.deadline(), "device collective: waiting for the peers to finish reading");
    if (!mine.ok()) return mine;
    XC_TRY(st);
    for (int j = 0; j < n_; ++j)
      if (codes[static_cast<size_t>(j)] != XC_SUCCESS)
        return Error(static_cast<xc_result_t>(codes[static_cast<size_t>(j)]),
                     "device collective: rank %d failed its part (%s)", j,
                     xc_strerror(static_cast<xc_result_t>(codes[static_cast<size_t>(j)])));
    return Status::Ok();
  }

  Status copy(void *dst, const void *src, size_t bytes) {
    if (!bytes || dst == src) return Status::Ok();
    return env_.dev()->copy_async(dst, src, bytes, env_.work());
  }

  const char *in_at(int j, size_t elems) const {
    return static_cast<const char *>(peer_in_[static_cast<size_t>(j)]) + elems * es_;
  }

  // dst = reduction over ranks [0, upto) of their input at element offset, count elements.
  Status reduce(void *dst, int upto, size_t offset, size_t count, int avg_divisor) {
    if (!count || upto <= 0) return Status::Ok();
    if (upto > kernels::kMaxSources)
      return Error(XC_ERR_UNSUPPORTED, "device reductions over more than %d ranks of one host are not supported",
                   kernels::kMaxSources);
    kernels::ReduceArgs a{};
    a.dst = dst;
    for (int j = 0; j < upto; ++j) a.src[j] = in_at(j, offset);
    a.nsrc = upto;
    a.dtype = d_.dtype;
    a.op = d_.op == XC_AVG ? XC_SUM : d_.op;
    a.avg_divisor = d_.op == XC_AVG ? avg_divisor : 0;
    a.count = count;
    return env_.dev()->launch_reduce(a, env_.work());
  }

  // Where this rank's result goes: its output, or scratch when that output
  // is input peers still read (copied over after the closing exchange).
  Status result_buffer(bool overwrites_input, size_t bytes, void **out) {
    if (!overwrites_input || !bytes) {
      *out = d_.recvbuf;
      return Status::Ok();
    }
    XC_TRY(env_.scratch(bytes, &temp_));
    temp_bytes_ = bytes;
    *out = temp_;
    return Status::Ok();
  }

  Status move_data() {
    size_t r = static_cast<size_t>(me_);
    char *out = static_cast<char *>(d_.recvbuf);
    void *dst = nullptr;
    switch (d_.kind) {
      case CollKind::kBarrier: return Status::Ok();
      case CollKind::kBroadcast:
        return me_ == d_.root ? Status::Ok() : copy(d_.recvbuf, peer_in_[static_cast<size_t>(d_.root)], d_.count * es_);
      case CollKind::kReduce:
        return me_ == d_.root ? reduce(d_.recvbuf, n_, 0, d_.count, n_) : Status::Ok();
      case CollKind::kAllreduce:
        XC_TRY(result_buffer(d_.in_place, d_.count * es_, &dst));
        return reduce(dst, n_, 0, d_.count, n_);
      case CollKind::kScan:
      case CollKind::kExscan: {
        int upto = d_.kind == CollKind::kScan ? me_ + 1 : me_;
        if (upto == 0) return Status::Ok();  // exscan leaves rank 0's output alone
        XC_TRY(result_buffer(d_.in_place, d_.count * es_, &dst));
        return reduce(dst, upto, 0, d_.count, upto);
      }
      case CollKind::kReduceScatter:
        XC_TRY(result_buffer(d_.in_place, d_.count * es_, &dst));
        return reduce(dst, n_, r * d_.count, d_.count, n_);
      case CollKind::kReduceScatterv: {
        size_t offset = 0;
        for (size_t j = 0; j < r; ++j) offset += d_.recvcounts[j];
        XC_TRY(result_buffer(d_.in_place, d_.count * es_, &dst));
        return reduce(dst, n_, offset, d_.count, n_);
      }
      case CollKind::kAllgather:
      case CollKind::kAllgatherv:
        for (int j = 0; j < n_; ++j) {
          if (j == me_ && d_.in_place) continue;
          XC_TRY(copy(out + recv_block_displ(d_, j) * es_, in_at(j, 0), recv_block_count(d_, j) * es_));
        }
        return Status::Ok();
      case CollKind::kGather:
      case CollKind::kGatherv:
        if (me_ != d_.root) return Status::Ok();
        for (int j = 0; j < n_; ++j) {
          if (j == me_ && d_.in_place) continue;
          XC_TRY(copy(out + recv_block_displ(d_, j) * es_, in_at(j, 0), recv_block_count(d_, j) * es_));
        }
        return Status::Ok();
      case CollKind::kScatter:
        if (me_ == d_.root && d_.in_place) return Status::Ok();
        return copy(d_.recvbuf, in_at(d_.root, r * d_.count), d_.count * es_);
      case CollKind::kScatterv: {
        if (me_ == d_.root && d_.in_place) return Status::Ok();
        const Info &t = theirs_[static_cast<size_t>(d_.root)];
        if (t.count_for_peer > d_.count)
          return Error(XC_ERR_TRUNCATED, "scatterv: the root sends %llu elements, recvcount is %zu",
                       static_cast<unsigned long long>(t.count_for_peer), d_.count);
        return copy(d_.recvbuf, in_at(d_.root, t.displ_for_peer), t.count_for_peer * es_);
      }
      case CollKind::kAlltoall:
        XC_TRY(result_buffer(d_.in_place, d_.count * es_ * static_cast<size_t>(n_), &dst));
        for (int j = 0; j < n_; ++j)
          XC_TRY(copy(static_cast<char *>(dst) + static_cast<size_t>(j) * d_.count * es_, in_at(j, r * d_.count),
                      d_.count * es_));
        return Status::Ok();
      case CollKind::kAlltoallv: {
        size_t extent = 0;
        for (int j = 0; j < n_; ++j) {
          size_t end = d_.rdispls[static_cast<size_t>(j)] + d_.recvcounts[static_cast<size_t>(j)];
          if (end > extent) extent = end;
        }
        XC_TRY(result_buffer(d_.in_place, extent * es_, &dst));
        if (dst != d_.recvbuf) out = static_cast<char *>(dst);
        blockwise_ = temp_ != nullptr;
        for (int j = 0; j < n_; ++j) {
          const Info &t = theirs_[static_cast<size_t>(j)];
          size_t want = d_.recvcounts[static_cast<size_t>(j)];
          if (t.count_for_peer != want)
            return Error(XC_ERR_INVALID_USAGE, "alltoallv: rank %d sends %llu elements to rank %d, which expects %zu", j,
                         static_cast<unsigned long long>(t.count_for_peer), me_, want);
          size_t at = d_.rdispls[static_cast<size_t>(j)] * es_;
          XC_TRY(copy(out + at, in_at(j, t.displ_for_peer), want * es_));
          if (temp_ && want) copy_back_.emplace_back(at, want * es_);
        }
        return Status::Ok();
      }
    }
    return Error(XC_ERR_INTERNAL, "unknown collective");
  }

  const CommView &c_;
  const CollDesc &d_;
  int tag_;
  JobEnv &env_;
  int n_, me_;
  size_t es_;
  Messages msgs_;
  Reached reached_;
  std::vector<Info> mine_, theirs_;
  std::vector<const void *> peer_in_;
  void *temp_ = nullptr;
  size_t temp_bytes_ = 0;
  bool blockwise_ = false;  // copy back only copy_back_, not all of temp_ (the gaps stay the application's)
  std::vector<std::pair<size_t, size_t>> copy_back_;  // (offset, bytes) of temp_
};

}  // namespace

Status run_collective(const CommView &c, const CollDesc &d, int tag, JobEnv &env) {
  DeviceColl op(c, d, tag, env);
  return op.run();
}

}  // namespace xc::device
