// Single copy: ranks publish their buffer addresses on arrival and read (or
// write) peers' memory directly with process_vm_readv/writev. Reductions are
// split by rank: rank r reduces slice r through a bounce buffer that stays in
// cache, then everyone fetches the finished slices. A final "done" barrier
// keeps every buffer alive until no peer reads it any more.
#include <cstring>
#include <numeric>

#include "base/dtype.h"
#include "base/log.h"
#include "coll/shm/backend.h"
#include "coll/shm/reduce.h"
#include "coll/shm/root_split.h"
#include "coll/shm/scan.h"
#include "coll/shm/state.h"
#include "coll/shm/steps.h"
#include "coll/shm/swap.h"
#include "coll/shm/tables.h"
#include "cpu/copy.h"
#include "cpu/host_mem.h"
#include "topo/contention.h"

namespace xc::coll {

namespace {

struct SingleCopy {
  CollContext &c;
  const CollDesc &d;
  ShmState &st;
  uint64_t s;
  int n, r;
  size_t es;

  uint64_t src(int j) const { return st.arrival(j, s).addr.src; }
  uint64_t dst(int j) const { return st.arrival(j, s).addr.dst; }
  uint64_t aux(int j) const { return st.arrival(j, s).addr.aux; }
  const char *input() const {
    return d.in_place ? static_cast<const char *>(d.recvbuf) : static_cast<const char *>(d.sendbuf);
  }
  char *out() const { return static_cast<char *>(d.recvbuf); }
  char *spare() const { return const_cast<char *>(st.scratch.data()) + 2 * kShmCmaChunkBytes; }
  // Slice i of count elements split n ways.
  size_t slice_begin(size_t count, int i) const { return count * static_cast<size_t>(i) / static_cast<size_t>(n); }
  // Reduce: the root reads and reduces its slice like everyone, but writes
  // nothing, so with a core of its own it takes more. Per byte the others'
  // write of their result costs about half the reads and reduction of two
  // ranks' data; root : other = 1 + 1/(2(n-1)), 3 : 2 on two ranks (measured
  // there, medians of 5, out of place / in place: 128 KiB 10.3 / 9.8 -> 9.0
  // / 8.0 us, 512 KiB 38.1 / 35.9 -> 31.1 / 28.5, 8 MiB 824 / 755 -> 788 /
  // 618; 2 : 1 was slower again). Sharing cores, every core is busy anyway.
  size_t reduce_slice_begin(size_t count, int i) const {
    if (st.oversubscribed) return slice_begin(count, i);
    size_t other = 2 * static_cast<size_t>(n - 1), total = other * static_cast<size_t>(n) + 1;
    size_t before = other * static_cast<size_t>(i) + (i > d.root ? 1 : 0);  // weights of slices 0..i-1
    return static_cast<size_t>(static_cast<unsigned __int128>(count) * before / total);
  }

  // Elements [first, first + count) of ranks 0..m-1's inputs reduced in rank
  // order; deliver(offset_elems, piece, len_elems) takes each finished chunk.
  template <class Deliver>
  Status reduce_range(size_t first, size_t count, int m, int avg_n, char *direct_out, Deliver deliver) {
    size_t step = kShmCmaChunkBytes / es;
    for (size_t done = 0; done < count; done += step) {
      size_t len = std::min(step, count - done);
      size_t off = (first + done) * es;
      char *target = direct_out ? direct_out + done * es : spare();
      XC_TRY(shm_reduce_chain(st, target, len, d.dtype, d.op, m, avg_n, [&](int j, char *scratch, const void **p) {
        if (j == r) {
          *p = input() + off;
          return Status::Ok();
        }
        *p = scratch;
        return st.cma_read(c, j, src(j) + off, scratch, len * es);
      }));
      XC_TRY(deliver(done, target, len));
    }
    return Status::Ok();
  }
  static Status nothing(size_t, const char *, size_t) { return Status::Ok(); }
  // scatterv, alltoallv: where rank j keeps its block for us (elements).
  Status peer_block(int j, size_t want, size_t *displ) {
    return shm_peer_block(c, st, j, s, aux(j), st.arrival(j, s).addr.counts, es, want, coll_kind_name(d.kind), displ);
  }
  // A reader's error: say we are done, so the peers' finish() does not wait
  // for us until the deadline.
  Status failed(Status error) {
    st.mark_done(s);
    return error;
  }
  int avg(int m) const { return d.op == XC_AVG ? m : 0; }
  uint64_t root_parts() const { return st.arrival(d.root, s).addr.parts; }

  // allgather(v), gather(v), alltoall(v): where block j of the output lies,
  // and its length (bytes).
  size_t recv_off(int j) const { return recv_block_displ(d, j) * es; }
  size_t recv_len(int j) const { return recv_block_count(d, j) * es; }
  // What reduce(allreduce) and allgather(v) publish for peers to read.
  const void *published_src() const {
    bool gathers = d.kind == CollKind::kAllgather || d.kind == CollKind::kAllgatherv;
    return gathers && d.in_place ? out() + recv_off(r) : input();
  }

  Status run();
  Status reduce_arrived();  // reduce, allreduce: the rest after arrive()
  Status gather_arrived();  // allgather(v): the same
  Status swap_in_place();
  Status copy_in_place();
};

// In-place alltoall(v): every pair swaps its blocks (swap.h); the
// counter is the aux word of the op's arrival record (scan.h). An
// alltoallv pair first checks the partner's count for it against its own
// (MPI's rule for in place); a pair that disagrees is skipped on both sides
// and reported once the other pairs have traded.
Status SingleCopy::swap_in_place() {
  bool v = d.kind == CollKind::kAlltoallv;
  if (v) shm_publish_table(st, s, d.rdispls.data(), d.recvcounts.data());
  st.arrive(c, s, out(), v ? d.rdispls.data() : nullptr, nullptr, v ? d.recvcounts.data() : nullptr);
  Status disagreed = Status::Ok();
  size_t extent = static_cast<size_t>(n) * d.count * es;  // of the whole buffer, for copy_part
  if (v) {
    extent = 0;
    for (int j = 0; j < n; ++j)
      extent = std::max(extent, (d.rdispls[static_cast<size_t>(j)] + d.recvcounts[static_cast<size_t>(j)]) * es);
  }
  for (int t = 0; t < shm_swap_rounds(n) && n > 1; ++t) {
    int p = shm_swap_partner(n, r, t);
    if (p == r) continue;
    size_t mine = (v ? d.rdispls[static_cast<size_t>(p)] : static_cast<size_t>(p) * d.count) * es;
    size_t len = (v ? d.recvcounts[static_cast<size_t>(p)] : d.count) * es;
    if (len == 0) continue;
    XC_TRY(st.wait_arrived(c, p, s));
    size_t theirs = static_cast<size_t>(r) * d.count;
    if (v) {
      Status agreed = shm_peer_block(c, st, p, s, dst(p), st.arrival(p, s).addr.counts, es, len, "alltoallv", &theirs);
      if (!shm_pair_agreed(agreed, &disagreed)) continue;
      XC_TRY(agreed);
    }
    XC_TRY(shm_swap_block(c, st,
                          ShmSwap{p, t, s, out() + mine, src(p) + theirs * es, len, extent, shm_progress_word(st, r, s),
                                  shm_progress_word(st, p, s)}));
  }
  return disagreed;
}

// In-place alltoall of a size that stays in cache: copy the blocks we send
// into scratch, then read ours from every peer's copy (one read per peer).
// Two copies per byte like the swap, but two hand-shakes per op instead of
// one per chunk and pair.
Status SingleCopy::copy_in_place() {
  size_t bytes = d.count * es, mine = static_cast<size_t>(r) * bytes, total = static_cast<size_t>(n) * bytes;
  char *copy = st.scratch_beyond_bounce(total);
  memcpy(copy, out(), mine);  // all but our own block, which stays
  memcpy(copy + mine + bytes, out() + mine + bytes, total - mine - bytes);
  st.arrive(c, s, copy, nullptr);
  for (int k = 1; k < n; ++k) {
    int j = (r + k) % n;
    XC_TRY(st.wait_arrived(c, j, s));
    XC_TRY(st.cma_read(c, j, src(j) + mine, out() + static_cast<size_t>(j) * bytes, bytes));
  }
  return st.finish(c, s);
}

// Rank r reduces slice r chunk by chunk and WRITES each finished chunk, still
// in cache, into every other output (allreduce) or the root's: each result
// byte crosses once and nobody reads results back. Safe in place too: slice
// r of a peer's input is read by rank r alone, and chunk k of every input is
// read before chunk k of the result lands.
Status SingleCopy::reduce_arrived() {
  bool all = d.kind == CollKind::kAllreduce;
  XC_TRY(st.wait_all_arrived(c, s));
  size_t b = all ? slice_begin(d.count, r) : reduce_slice_begin(d.count, r);
  size_t e = all ? slice_begin(d.count, r + 1) : reduce_slice_begin(d.count, r + 1);
  if (all || r == d.root) {
    XC_TRY(reduce_range(b, e - b, n, avg(n), out() + b * es, [&](size_t done, const char *piece, size_t len) {
      if (!all) return Status::Ok();
      for (int k = 1; k < n; ++k) {
        int j = (r + k) % n;
        XC_TRY(st.cma_write(c, j, dst(j) + (b + done) * es, piece, len * es));
      }
      return Status::Ok();
    }));
  } else {
    XC_TRY(reduce_range(b, e - b, n, avg(n), nullptr, [&](size_t done, const char *piece, size_t len) {
      return st.cma_write(c, d.root, dst(d.root) + (b + done) * es, piece, len * es);
    }));
  }
  return st.finish(c, s);
}

Status SingleCopy::gather_arrived() {
  size_t bytes = d.count * es;
  if (!d.in_place) cpu::copy_part(out() + recv_off(r), d.sendbuf, bytes, bytes * static_cast<size_t>(n));
  for (int k = 1; k < n; ++k) {
    int j = (r + k) % n;  // start at different peers: spread the load
    XC_TRY(st.wait_arrived(c, j, s));
    XC_TRY(st.cma_read(c, j, src(j), out() + recv_off(j), recv_len(j)));
  }
  return st.finish(c, s);
}

Status SingleCopy::run() {
  size_t bytes = d.count * es;
  switch (d.kind) {
    case CollKind::kBarrier:
      st.arrive(c, s, nullptr, nullptr);
      return st.wait_all_arrived(c, s);

    case CollKind::kBroadcast: {
      // Split in n parts: receiver q reads every part but part q, which the
      // root writes into it, so the root's core copies too.
      st.arrive(c, s, d.recvbuf, d.recvbuf);
      auto part = [&](int i) { return bytes * static_cast<size_t>(i) / static_cast<size_t>(n); };
      if (r == d.root) {
        for (int q = 0; q < n; ++q) {
          if (q == r) continue;
          XC_TRY(st.wait_arrived(c, q, s));
          XC_TRY(st.cma_write(c, q, dst(q) + part(q), out() + part(q), part(q + 1) - part(q)));
        }
      } else {
        XC_TRY(st.wait_arrived(c, d.root, s));
        for (int i = 0; i < n; ++i)
          if (i != r) XC_TRY(st.cma_read(c, d.root, src(d.root) + part(i), out() + part(i), part(i + 1) - part(i)));
      }
      return st.finish(c, s);
    }

    case CollKind::kReduce:
    case CollKind::kAllreduce:
      st.arrive(c, s, published_src(), d.recvbuf);
      return reduce_arrived();

    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv: {
      bool v = d.kind == CollKind::kReduceScatterv;
      size_t first = v ? std::accumulate(d.recvcounts.begin(), d.recvcounts.begin() + r, size_t{0})
                        : static_cast<size_t>(r) * d.count;
      st.arrive(c, s, input(), d.recvbuf);
      XC_TRY(st.wait_all_arrived(c, s));
      // In place, peers still read the start of recvbuf: reduce into our own
      // block (only we read it) and move it down once everyone is done.
      char *target = d.in_place ? out() + first * es : out();
      XC_TRY(reduce_range(first, d.count, n, avg(n), target, nothing));
      XC_TRY(st.finish(c, s));
      if (d.in_place && first && bytes) memmove(out(), target, bytes);
      return Status::Ok();
    }

    case CollKind::kScan:
    case CollKind::kExscan: {
      if (shm_scan_chain_applies(d)) return shm_scan_chain(c, d, st, s);
      // float16/bfloat16 and XC_AVG: every rank reduces its whole prefix.
      st.arrive(c, s, input(), d.recvbuf);
      int m = d.kind == CollKind::kScan ? r + 1 : r;
      for (int j = 0; j < m; ++j) XC_TRY(st.wait_arrived(c, j, s));
      // In place, our input is read by later ranks: reduce into the bounce
      // buffer and copy out after everyone is done... unless nobody reads it.
      if (m > 0) {
        if (d.in_place && r < n - 1) {
          char *hold = st.scratch_beyond_bounce(bytes);
          XC_TRY(reduce_range(0, d.count, m, avg(m), hold, nothing));
          XC_TRY(st.finish(c, s));
          memcpy(out(), hold, bytes);
          return Status::Ok();
        }
        XC_TRY(reduce_range(0, d.count, m, avg(m), out(), nothing));
      }
      return st.finish(c, s);
    }

    case CollKind::kAllgather:
    case CollKind::kAllgatherv:
      st.arrive(c, s, published_src(), d.recvbuf);
      return gather_arrived();

    case CollKind::kGather:
    case CollKind::kGatherv: {
      // Each large block is copied from both ends (shm_root_share): the root
      // pulls its front while the sender writes the rest.
      bool v = d.kind == CollKind::kGatherv;
      uint32_t parts =
          r == d.root ? shm_root_parts(d.in_place, n, st.root_split, v ? d.recvcounts.largest() * es : bytes) : 0;
      st.arrive(c, s, d.in_place ? nullptr : d.sendbuf, d.recvbuf, nullptr, nullptr, parts);
      if (r == d.root) {
        if (!d.in_place && bytes) memcpy(out() + recv_off(r), d.sendbuf, bytes);
        for (int j = 0; j < n; ++j) {
          if (j == r) continue;
          // gatherv: only the root knows where each block goes: it pulls all
          size_t len = v ? recv_len(j) : shm_root_share(bytes, parts);
          if (len == 0) continue;
          XC_TRY(st.wait_arrived(c, j, s));
          XC_TRY(st.cma_read(c, j, src(j), out() + recv_off(j), len));
        }
      } else if (!v) {  // every rank writes (the rest of) its own block, in parallel
        auto read = [&](ShmPeerPart *part) {
          size_t pulled = shm_root_share(bytes, root_parts());
          *part = {dst(d.root) + static_cast<size_t>(r) * bytes, bytes, pulled, bytes - pulled};
          return Status::Ok();
        };
        Status disagreed = Status::Ok();  // never set: the op's signature carries the count
        XC_TRY(shm_write_part(c, st, s, "gather", d.root, static_cast<const char *>(d.sendbuf), bytes, read,
                              &disagreed));
      }
      return st.finish(c, s);
    }

    case CollKind::kScatter:
    case CollKind::kScatterv: {
      // Each large block is copied from both ends (shm_root_share): the root
      // writes its front into the receiver while the receiver reads the
      // rest. A scatterv receiver publishes its count (aux), and the root
      // writes only where it matches the count it sends.
      bool v = d.kind == CollKind::kScatterv;
      bool root = r == d.root;
      if (root && v) shm_publish_table(st, s, d.sdispls.data(), d.sendcounts.data());
      uint32_t parts = root ? shm_root_parts(d.in_place, n, st.root_split, v ? d.sendcounts.largest() * es : bytes) : 0;
      const void *extra = root ? (v ? d.sdispls.data() : nullptr) : reinterpret_cast<const void *>(uintptr_t{d.count});
      st.arrive(c, s, d.sendbuf, d.recvbuf, extra, root && v ? d.sendcounts.data() : nullptr, parts);
      if (root) {
        size_t own = (v ? d.sdispls[static_cast<size_t>(r)] : static_cast<size_t>(r) * d.count) * es;
        if (!d.in_place && bytes) memcpy(out(), static_cast<const char *>(d.sendbuf) + own, bytes);
        Status skipped = Status::Ok();  // reported once the others have their blocks
        XC_TRY(shm_write_fronts(c, st, s, d, parts, ShmRecvRecord::kAddr, &skipped));
        XC_TRY(st.finish(c, s));
        return skipped;
      }
      XC_TRY(st.wait_arrived(c, d.root, s));
      size_t displ = static_cast<size_t>(r) * d.count;
      Status got = v ? peer_block(d.root, bytes, &displ) : Status::Ok();
      size_t written = shm_root_share(bytes, root_parts());
      if (got.ok()) got = st.cma_read(c, d.root, src(d.root) + displ * es + written, out() + written, bytes - written);
      if (!got.ok()) return failed(std::move(got));
      return st.finish(c, s);
    }

    case CollKind::kAlltoall:
    case CollKind::kAlltoallv: {
      bool v = d.kind == CollKind::kAlltoallv;
      size_t extent = static_cast<size_t>(n) * bytes;
      if (v) {
        extent = 0;
        for (int j = 0; j < n; ++j)
          extent = std::max(extent, (d.sdispls[static_cast<size_t>(j)] + d.sendcounts[static_cast<size_t>(j)]) * es);
      }
      if (d.in_place && !v && extent >= kShmCopyInPlaceMinBytes && extent < kShmCopyInPlaceMaxBytes)
        return copy_in_place();
      if (d.in_place) return swap_in_place();
      const char *in = input();
      if (v) shm_publish_table(st, s, d.sdispls.data(), d.sendcounts.data());
      st.arrive(c, s, in, d.recvbuf, v ? d.sdispls.data() : nullptr, v ? d.sendcounts.data() : nullptr);
      for (int k = 0; k < n; ++k) {
        int j = (r + k) % n;
        size_t to = recv_off(j), len = recv_len(j);
        if (j == r) {
          size_t from = (v ? d.sdispls[static_cast<size_t>(r)] : static_cast<size_t>(r) * d.count) * es;
          cpu::copy_part(out() + to, in + from, len, extent);  // out of place: disjoint
          continue;
        }
        XC_TRY(st.wait_arrived(c, j, s));
        size_t displ = static_cast<size_t>(r) * d.count;
        Status got = v ? peer_block(j, len, &displ) : Status::Ok();
        if (got.ok()) got = st.cma_read(c, j, src(j) + displ * es, out() + to, len);
        if (!got.ok()) return failed(std::move(got));
      }
      return st.finish(c, s);
    }
  }
  return Error(XC_ERR_UNSUPPORTED, "shm single-copy does not run %s", coll_kind_name(d.kind));
}

}  // namespace

Status shm_pipeline_start(CollContext &c, const CollDesc &d, ShmState &st, bool may_single_copy, uint64_t *s,
                          bool *single_copy) {
  *single_copy = false;
  XC_TRY(st.enter(c, kShmArrivalDepth, s));  // staging is guarded by the step counters
  if (!may_single_copy || !st.cma_ok) {
    st.arrive(c, *s, nullptr, nullptr);
    return st.wait_all_arrived(c, *s);
  }
  SingleCopy x{c, d, st, *s, c.size(), c.rank(), dtype_size(d.dtype)};
  const void *src = x.published_src();
  // Each rank publishes two votes in its record's parts: its buffers lie on
  // 2 MiB pages (bit 0), and it had to wait for its core (bit 1).
  // An allgather's staged pipeline moves in lock step, so a rank that shares
  // its core with another process holds every step up (2-rank 64 MiB with
  // one core busy: 0.38x Open MPI's bandwidth), where single copy lets each
  // rank copy on its own; the other pipelines (two-shot reductions, staged
  // broadcast) stayed ahead there and keep to the rule of the pages.
  bool huge = host_mem_on_huge_pages(src) && host_mem_on_huge_pages(d.recvbuf);
  bool gathers = d.kind == CollKind::kAllgather || d.kind == CollKind::kAllgatherv;
  bool contended = gathers && topo::core_contended();
  st.arrive(c, *s, src, d.recvbuf, nullptr, nullptr, (huge ? 1 : 0) | (contended ? 2 : 0));
  XC_TRY(st.wait_all_arrived(c, *s));
  bool all_huge = true, any_contended = false;
  for (int j = 0; j < x.n; ++j) {
    uint64_t votes = st.arrival(j, *s).addr.parts;
    all_huge = all_huge && (votes & 1);
    any_contended = any_contended || (votes & 2);
  }
  if (!all_huge && !any_contended) return Status::Ok();
  *single_copy = true;
  XC_INFO("%s: %s: single copy instead", coll_kind_name(d.kind),
          all_huge ? "every rank's buffers are on 2 MiB pages" : "a rank waits for its core (a busy neighbour)");
  return Status::Ok();
}

Status shm_single_copy_arrived(CollContext &c, const CollDesc &d, ShmState &st, uint64_t s) {
  SingleCopy x{c, d, st, s, c.size(), c.rank(), dtype_size(d.dtype)};
  switch (d.kind) {
    case CollKind::kReduce:
    case CollKind::kAllreduce: return x.reduce_arrived();
    case CollKind::kAllgather:
    case CollKind::kAllgatherv: return x.gather_arrived();
    default: break;
  }
  return Error(XC_ERR_INTERNAL, "single copy cannot take over %s from a pipeline", coll_kind_name(d.kind));
}

Status shm_single_copy(CollContext &c, const CollDesc &d) {
  XC_TRY(shm_of(c)->ensure(c));
  if (!shm_of(c)->single_copy_ok())
    return Error(XC_ERR_UNSUPPORTED, "single-copy (process_vm_readv) is not available between these ranks");
  ShmState &st = *shm_of(c)->state();
  SingleCopy x{c, d, st, 0, c.size(), c.rank(), dtype_size(d.dtype)};
  // Every single-copy op ends with finish(): only the arrival ring to guard.
  XC_TRY(st.enter(c, kShmArrivalDepth, &x.s));
  return x.run();
}

}  // namespace xc::coll
