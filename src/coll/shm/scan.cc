// Chained scan/exscan over single copy. Rank r's inclusive prefix is
// P(r) = P(r-1) op x(r), P(0) = x(0): the same left-to-right order as
// reducing x(0..r) in rank order, so the bits match every other algorithm.
// Chunk k of P(r) needs only chunk k of P(r-1): rank r reads it from rank
// r-1 (process_vm_readv into a bounce buffer that stays in cache), combines
// it with its own input and raises its progress counter, so the ranks form a
// pipeline and each reads one remote buffer per chunk, not r of them.
// Where P(r) lives (published as the arrival's src address):
//   rank 0: its input (ready at arrival; it never waits for anyone);
//   scan, 0 < r < n-1: its output;
//   exscan, 0 < r < n-1: a per-communicator buffer (the output is P(r-1)).
// Nobody reads the last rank's prefix: it publishes its input and output.
// In place is natural: rank r reads only P(r-1), never an input that its
// owner overwrites. A rank returns once rank r+1 has read all of P(r): no
// barrier over everyone. On two ranks rank 0 takes part of rank 1's work
// (below).
#include "coll/shm/scan.h"

#include <algorithm>
#include <cstring>

#include "base/dtype.h"
#include "coll/shm/reduce.h"
#include "cpu/copy.h"
#include "cpu/reduce.h"

namespace xc::coll {

bool shm_scan_chain_applies(const CollDesc &d) {
  return (d.kind == CollKind::kScan || d.kind == CollKind::kExscan) && !dtype_is_half(d.dtype) && d.op != XC_AVG;
}

namespace {

// Chunk of the chain. Beyond two ranks the chain is a pipeline, and one
// 128 KiB op in 128 KiB chunks passes its single chunk along every rank in
// turn: aim for n chunks, down to 64 KiB (4 ranks, 128 KiB scan 56-66 ->
// 30-42 us; 16-32 KiB no better, noisier). Two ranks have no pipeline
// (rank 0's prefix is ready at arrival): smaller chunks only cost calls.
size_t scan_chunk_bytes(size_t bytes, int n) {
  constexpr size_t kMin = 64 << 10;
  if (n <= 2) return kShmCmaChunkBytes;
  return std::max(kMin, std::min(kShmCmaChunkBytes, bytes / static_cast<size_t>(n))) & ~size_t{63};
}

// On two ranks rank 0 has nothing to wait for and rank 1 does all the
// work, so rank 0 takes the upper part of rank 1's output; rank 0's
// counter says its writes are over, and rank 1 returns only after that.
// Exscan (a pure copy there): rank 0 writes its input into half of it (2
// MiB 200 -> 80 us, 32 MiB 6.0 -> 2.8 ms; 128 KiB no better). Scan: rank 0
// reads rank 1's input, reduces and writes the result back, which costs it
// more per byte than rank 1's read and reduce: it takes 40 % in place, 30 %
// out of place (where it also copies its own input to its output). Medians
// of 5 (in place, out of place): 128 KiB 10.4 -> 7.5-8.3 us, 11.4 -> 10.4;
// 512 KiB 50 -> 29, 70 -> 41; 8 MiB 1080 -> 661, 1235 -> 1106 (a 50 % split
// 745 and 1566; 64 KiB about even, 32 KiB slower).
constexpr size_t kScanSplitMinBytes = 64 << 10;
// Elements [0, split) are rank 1's, page-aligned.
size_t split_elems(const CollDesc &d, size_t es) {
  size_t bytes = d.count * es;
  bool ex = d.kind == CollKind::kExscan;
  if (bytes < (ex ? 2 * kShmCmaChunkBytes : kScanSplitMinBytes)) return d.count;
  size_t percent = ex ? 50 : d.in_place ? 60 : 70;
  return (bytes / 100 * percent & ~size_t{4095}) / es;
}

// Rank 0 of two: bytes [from, end) of rank 1's output, then says so.
Status upper_part(CollContext &c, const CollDesc &d, ShmState &st, uint64_t s, size_t from, char *bounce) {
  size_t es = dtype_size(d.dtype), bytes = d.count * es;
  const char *in = d.in_place ? static_cast<const char *>(d.recvbuf) : static_cast<const char *>(d.sendbuf);
  XC_TRY(st.wait_arrived(c, 1, s));
  const ShmArrival &peer = st.arrival(1, s);
  if (d.kind == CollKind::kExscan) {
    XC_TRY(st.cma_write(c, 1, peer.addr.dst + from, in + from, bytes - from));
  } else {
    for (size_t off = from; off < bytes; off += kShmCmaChunkBytes) {
      size_t len = std::min(kShmCmaChunkBytes, bytes - off);
      XC_TRY(st.cma_read(c, 1, peer.addr.src + off, bounce, len));
      cpu::reduce3(bounce, in + off, bounce, len / es, d.dtype, d.op);  // x(0) op x(1)
      XC_TRY(st.cma_write(c, 1, peer.addr.dst + off, bounce, len));
    }
  }
  shm_publish_progress(st, s, 1);
  return Status::Ok();
}

Status chain(CollContext &c, const CollDesc &d, ShmState &st, uint64_t s) {
  int n = c.size(), r = c.rank();
  bool ex = d.kind == CollKind::kExscan, last = r == n - 1;
  size_t es = dtype_size(d.dtype), bytes = d.count * es;
  const char *in = d.in_place ? static_cast<const char *>(d.recvbuf) : static_cast<const char *>(d.sendbuf);
  char *out = static_cast<char *>(d.recvbuf);
  size_t step = scan_chunk_bytes(bytes, n) / es;  // elements per chunk
  uint64_t chunks = (d.count + step - 1) / step;
  size_t split = n == 2 ? split_elems(d, es) : d.count;  // rank 1 does [0, split), rank 0 the rest

  // Exscan's middle ranks keep P(r) for rank r+1 (the output holds P(r-1)).
  bool hold_prefix = ex && r > 0 && !last;
  char *hold = st.scratch_beyond_bounce(hold_prefix ? bytes : 0);
  char *bounce = st.scratch.data() + 2 * kShmCmaChunkBytes;
  const char *prefix = r == 0 ? in : hold_prefix ? hold : out;
  st.arrive(c, s, last && r > 0 ? in : prefix, last ? out : nullptr);
  if (chunks == 0) return Status::Ok();

  if (r == 0) {
    if (!ex && !d.in_place) cpu::copy_large(out, in, bytes);
    if (split < d.count) XC_TRY(upper_part(c, d, st, s, split * es, bounce));
  } else {
    int prev = r - 1;
    XC_TRY(st.wait_arrived(c, prev, s));
    uint64_t remote = st.arrival(prev, s).addr.src;
    uint64_t ready = prev == 0 ? chunks : 0;  // rank 0's prefix is ready at arrival
    for (uint64_t k = 0; k < (split + step - 1) / step; ++k) {
      if (ready <= k) XC_TRY(shm_wait_progress(c, st, prev, s, k + 1, "the previous rank's prefix", &ready));
      size_t first = static_cast<size_t>(k) * step, len = std::min(step, split - first);
      size_t off = first * es;
      if (ex && last) {  // P(r-1) is all we output
        XC_TRY(st.cma_read(c, prev, remote + off, out + off, len * es));
      } else if (ex && !d.in_place) {  // out = P(r-1); hold = P(r-1) op x(r)
        XC_TRY(st.cma_read(c, prev, remote + off, out + off, len * es));
        cpu::reduce3(hold + off, out + off, in + off, len, d.dtype, d.op);
      } else if (ex) {  // in place: read x(r) before P(r-1) overwrites it
        XC_TRY(st.cma_read(c, prev, remote + off, bounce, len * es));
        cpu::reduce3(hold + off, bounce, in + off, len, d.dtype, d.op);
        memcpy(out + off, bounce, len * es);  // over the lines reduce3 just read
      } else {
        XC_TRY(st.cma_read(c, prev, remote + off, bounce, len * es));
        cpu::reduce3(out + off, bounce, in + off, len, d.dtype, d.op);
      }
      // Rank r+1 waits for each chunk; rank r-1 only for the last one.
      if (!last) shm_publish_progress(st, s, k + 1);
    }
    if (last) shm_publish_progress(st, s, chunks);
  }
  if (last && split < d.count) return shm_wait_progress(c, st, 0, s, 1, "rank 0 to write its part of the output");
  if (last) return Status::Ok();
  // P(r) (rank 0: the input) must stay until rank r+1 has read all of it.
  XC_TRY(st.wait_arrived(c, r + 1, s));
  return shm_wait_progress(c, st, r + 1, s, chunks, "the next rank to read this rank's prefix");
}

}  // namespace

Status shm_scan_chain(CollContext &c, const CollDesc &d, ShmState &st, uint64_t s) {
  return st.give_up_if(s, chain(c, d, st, s));  // our neighbours wait on our counter
}

}  // namespace xc::coll
