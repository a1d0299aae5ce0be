// One-shot for the ops whose sizes only some ranks know: gatherv, scatterv,
// alltoallv. No rank can tell whether every part fits a staging slot, so each
// decides alone for what IT contributes: stage it (in its arrival record, a
// small slot or a large one: the smallest that holds it, within one-shot's
// reach) or publish its own buffer for single copy. Its arrival record says
// which, and readers follow each peer's record. Only a rank that published
// its buffer waits for its readers (their done flags, set only by ranks that
// read such a buffer); one that staged leaves at once and may run ahead as
// far as the ring it staged in allows, exactly like gather's and scatter's
// one-shot. gatherv's root also waits for the senders that write part of
// their block into its buffer (gatherv()). In-place alltoallv publishes no
// buffer: what a rank does not stage goes through the staged pipeline's
// steps (alltoallv_in_place()).
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/dtype.h"
#include "coll/shm/backend.h"
#include "coll/shm/root_split.h"
#include "coll/shm/state.h"
#include "coll/shm/steps.h"
#include "coll/shm/tables.h"

namespace xc::coll {

namespace {

// A staged part with one block per destination (scatterv's root, alltoallv)
// starts with a table: where destination j's block lies in it. Staged parts
// are at most kShmOneShotMaxBytes, so 16 bits hold offsets and lengths.
struct Block {
  uint16_t off, len;
};
static_assert(kShmOneShotMaxBytes <= 65536, "a staged part's offsets must fit Block");

struct OneShotV {
  CollContext &c;
  const CollDesc &d;
  ShmState &st;
  int n, r;
  size_t es;
  size_t reach;  // the most bytes this rank stages (beyond: single copy is faster)
  uint64_t s = 0;
  // Some peer published its buffer for us to read in this op: it waits for
  // our done flag (else we set none: a peer asleep on the bell would be woken
  // for nothing).
  bool read_in_place = false;

  ShmArrival &mine() const { return st.ctrl[r].arrival[s % kShmArrivalDepth]; }
  size_t table_bytes() const { return static_cast<size_t>(n) * sizeof(Block); }

  uint32_t pick(size_t bytes) const {
    if (bytes == 0) return kShmVNothing;
    if (bytes <= kShmVInlineBytes) return kShmVInline;
    if (bytes > reach) return st.cma_ok ? kShmVCma : kShmVFail;
    return bytes <= kShmSmallSlotBytes ? kShmVSmall : kShmVLarge;
  }
  // Start op s with the depth of the ring this rank's part goes to.
  Status enter(uint32_t where) {
    uint64_t depth = where == kShmVSmall ? kShmSmallSlotDepth : where == kShmVLarge ? kShmSlotDepth : kShmArrivalDepth;
    return st.enter(c, depth, &s);
  }
  char *area(uint32_t where) const {
    return where == kShmVInline ? mine().v.data : where == kShmVSmall ? st.small_slot(r, s) : st.slot(r, s);
  }
  static bool staged(uint32_t where) { return where == kShmVInline || where == kShmVSmall || where == kShmVLarge; }
  // parts: a root that stages nothing says how it splits large blocks
  // (shm_root_parts).
  void publish(uint32_t where, size_t bytes, uint32_t parts = 0) {
    ShmArrival &a = mine();
    a.v.where = where;
    if (staged(where))
      a.v.bytes = static_cast<uint32_t>(bytes);
    else
      a.v.parts = parts;
    st.arrive_inline(c, s);
    if (where == kShmVSmall) st.prefetch_small_slot(s, bytes);
  }
  // One block (displs null: its bytes travel along) or one per destination
  // (at displs, with their counts, which each reader checks against its own).
  void publish_buffer(const void *src, const size_t *displs, const size_t *counts, size_t bytes, uint32_t parts = 0) {
    ShmArrival &a = mine();
    a.v.cma.src = reinterpret_cast<uint64_t>(src);
    a.v.cma.displs = reinterpret_cast<uint64_t>(displs);
    if (displs) {
      a.v.cma.counts = reinterpret_cast<uint64_t>(counts);
      shm_publish_table(st, s, displs, counts);
    } else {
      a.v.cma.bytes = bytes;
    }
    publish(kShmVCma, bytes, parts);
  }
  // Stage one block per destination (blocks[j] bytes at in + displs[j] * es,
  // none to ourselves) behind their table.
  void stage_blocks(char *to, const char *in, const CountArray &counts, const CountArray &displs) {
    size_t pos = table_bytes();
    for (int j = 0; j < n; ++j) {
      size_t len = j == r ? 0 : counts[static_cast<size_t>(j)] * es;
      Block b{static_cast<uint16_t>(pos), static_cast<uint16_t>(len)};
      memcpy(to + static_cast<size_t>(j) * sizeof(Block), &b, sizeof b);
      if (len) memcpy(to + pos, in + displs[static_cast<size_t>(j)] * es, len);
      pos += len;
    }
  }
  size_t blocks_bytes(const CountArray &counts) const {
    size_t sum = 0;
    for (int j = 0; j < n; ++j)
      if (j != r) sum += counts[static_cast<size_t>(j)];
    return sum * es;
  }

  Status cannot_stage(size_t bytes) const {
    return Error(XC_ERR_UNSUPPORTED,
                 "%s: rank %d cannot stage its %zu bytes (one-shot holds %zu) and single copy is off (op #%d)",
                 coll_kind_name(d.kind), r, bytes, kShmOneShotMaxBytes, c.seq());
  }
  Status mismatch(int j, size_t want, size_t got) const {
    return shm_block_mismatch(c, st, coll_kind_name(d.kind), j, want, got);
  }
  // Copy the want bytes peer j sends us into dst, from wherever its record
  // says (tabled: one block per destination, ours at index r).
  Status fetch(int j, bool tabled, void *dst, size_t want) {
    // What we will likely read of j's small slot at the next like op
    // (nothing when the part fits its record).
    size_t entry = static_cast<size_t>(r) * sizeof(Block), slotted = want > kShmVInlineBytes ? want : 0;
    XC_TRY(st.wait_arrived_ahead(c, j, s, tabled ? entry : 0, tabled && slotted ? sizeof(Block) : slotted));
    const ShmArrival &a = st.arrival(j, s);
    switch (a.v.where) {
      case kShmVNothing:
        return want ? mismatch(j, want, 0) : Status::Ok();
      case kShmVFail:
        return Error(XC_ERR_UNSUPPORTED, "%s: rank %d could not stage its part and single copy is off (op #%d)",
                     coll_kind_name(d.kind), j, c.seq());
      case kShmVSteps:  // its blocks come through the steps (alltoallv_in_place)
        return Error(XC_ERR_INTERNAL, "%s: rank %d's part is in the steps, not staged (op #%d)", coll_kind_name(d.kind),
                     j, c.seq());
      case kShmVCma: {
        read_in_place = true;
        size_t displ = 0;
        if (tabled) {
          XC_TRY(shm_peer_block(c, st, j, s, a.v.cma.displs, a.v.cma.counts, es, want, coll_kind_name(d.kind),
                                &displ));
        } else if (a.v.cma.bytes != want) {
          return mismatch(j, want, a.v.cma.bytes);
        }
        // gatherv's root: a sender may write the end of its block itself;
        // scatterv's receiver: the root may write the front of ours.
        size_t tail = d.kind == CollKind::kGatherv ? pushed_by(static_cast<size_t>(j), want) : 0;
        size_t front = d.kind == CollKind::kScatterv ? written_by_root(want) : 0;
        if (want <= tail + front) return Status::Ok();
        return st.cma_read(c, j, a.v.cma.src + displ * es + front, static_cast<char *>(dst) + front, want - tail - front);
      }
      default: break;
    }
    const char *base = st.v_staged(j, s);
    size_t off = 0, len = a.v.bytes;
    if (tabled) {
      Block b;
      memcpy(&b, base + static_cast<size_t>(r) * sizeof(Block), sizeof b);
      off = b.off;
      len = b.len;
    }
    if (len != want) return mismatch(j, want, len);
    if (want) memcpy(dst, base + off, want);
    return Status::Ok();
  }

  Status gatherv();
  size_t pushed_by(size_t j, size_t want) const;
  size_t written_by_root(size_t want) const;
  Status wait_written(int j);
  Status push_to_root(size_t own);
  Status scatterv();
  Status alltoallv();
  bool can_step() const;
  void publish_steps();
  Status alltoallv_in_place(uint32_t where);
  Status take_alltoallv(int j);
  Status take_agreed(int j, Status *disagreed);
};

// gatherv: a block published for single copy is copied from both ends, the
// root pulling its front and the sender pushing the rest
// (shm_root_share), where the root says where the blocks go: its
// record (target, parts) and its table of displacements and counts. Each side checks
// the same pair of counts, so both agree on whether the sender pushes.
Status OneShotV::gatherv() {
  size_t own = d.count * es;
  if (r != d.root) {
    uint32_t where = pick(own);
    XC_TRY(enter(where));
    if (where == kShmVCma) {
      publish_buffer(d.sendbuf, nullptr, nullptr, own);
      Status pushed = push_to_root(own);
      Status read = st.wait_done(c, d.root, s);
      return pushed.ok() ? read : pushed;
    }
    if (staged(where)) memcpy(area(where), d.sendbuf, own);
    publish(where, own);
    return where == kShmVFail ? cannot_stage(own) : Status::Ok();
  }
  XC_TRY(enter(kShmVNothing));
  char *out = static_cast<char *>(d.recvbuf);
  bool any_cma = false;  // some sender may write (it publishes its buffer)
  for (int j = 0; j < n; ++j) any_cma = any_cma || (j != r && pick(d.recvcounts[static_cast<size_t>(j)] * es) == kShmVCma);
  ShmVTarget &target = mine().v.target;
  target.recvbuf = any_cma ? reinterpret_cast<uint64_t>(out) : 0;
  if (any_cma) {
    target.displs = reinterpret_cast<uint64_t>(d.rdispls.data());
    target.counts = reinterpret_cast<uint64_t>(d.recvcounts.data());
    shm_publish_table(st, s, d.rdispls.data(), d.recvcounts.data());
  }
  publish(kShmVNothing, 0, any_cma ? shm_root_parts(d.in_place, n, st.root_split, d.recvcounts.largest() * es) : 0);
  if (!d.in_place && own) memcpy(out + d.rdispls[static_cast<size_t>(r)] * es, d.sendbuf, own);
  Status status = Status::Ok();
  for (int k = 1; k < n && status.ok(); ++k) {
    size_t j = static_cast<size_t>((r + k) % n);
    status = fetch(static_cast<int>(j), false, out + d.rdispls[j] * es, d.recvcounts[j] * es);
  }
  if (read_in_place || !status.ok()) st.mark_done(s);  // after an error too: peers may wait for it
  // Every sender's writes land before we return, after an error too; one
  // that failed to write gave up (its record says why).
  for (int j = 0; j < n && any_cma; ++j) {
    size_t want = d.recvcounts[static_cast<size_t>(j)] * es;
    if (j == r || pick(want) != kShmVCma) continue;  // it cannot write: it stages
    Status landed = st.wait_arrived(c, j, s);
    if (landed.ok() && pushed_by(static_cast<size_t>(j), want)) landed = wait_written(j);
    if (status.ok()) status = landed;
  }
  return status;
}

// gatherv's root: the bytes at the end of sender j's block (want bytes) that
// j writes itself: it published its buffer, with the count we expect.
size_t OneShotV::pushed_by(size_t j, size_t want) const {
  const ShmArrival &a = st.arrival(static_cast<int>(j), s);
  if (!mine().v.target.recvbuf || a.v.where != kShmVCma || a.v.cma.bytes != want) return 0;
  return want - shm_root_share(want, mine().v.parts);
}

// scatterv's receiver: the bytes at the front of our block (want bytes)
// that the root writes into it: it published its buffer and a split, and
// expects to send what we expect (its table; a mismatch fails in fetch).
size_t OneShotV::written_by_root(size_t want) const {
  const ShmArrival &a = st.arrival(d.root, s);
  return mine().v.target.recvbuf && a.v.where == kShmVCma ? shm_root_share(want, a.v.parts) : 0;
}

// Wait until peer j is done writing into our buffer; one that failed gave
// up its record (so we do not return its part as done).
Status OneShotV::wait_written(int j) {
  XC_TRY(st.wait_done(c, j, s));
  return st.gave_up(j, s) ? st.gave_up_error(c, j, s) : Status::Ok();
}

// gatherv's sender of a published buffer: write the part of it the root
// does not pull, where the root's table says, when its count matches ours
// (otherwise the root reports the mismatch, as we do). A failure gives up
// our record, so the root does not take our part as done.
Status OneShotV::push_to_root(size_t own) {
  auto read = [&](ShmPeerPart *part) {
    const ShmArrival &a = st.arrival(d.root, s);
    if (!a.v.target.recvbuf) return Status::Ok();  // it takes nothing written
    size_t displ = 0, count = 0;
    XC_TRY(shm_peer_entry(c, st, d.root, s, a.v.target.displs, a.v.target.counts, &displ, &count));
    size_t pulled = shm_root_share(own, a.v.parts);
    *part = {a.v.target.recvbuf + displ * es, count * es, pulled, own - pulled};
    return Status::Ok();
  };
  Status disagreed = Status::Ok();
  Status wrote = shm_write_part(c, st, s, "gatherv", d.root, static_cast<const char *>(d.sendbuf), own, read,
                                &disagreed);
  st.mark_done(s);
  return wrote.ok() ? disagreed : wrote;
}

// scatterv: a block read in place is copied from both ends, the root
// writing its front into the receiver (shm_root_share) and the receiver
// reading the rest, when the receiver's count (its record, target) matches
// the one the root sends; each side checks the same pair of counts.
Status OneShotV::scatterv() {
  char *out = static_cast<char *>(d.recvbuf);
  if (r == d.root) {
    size_t total = blocks_bytes(d.sendcounts);
    uint32_t where = total ? pick(table_bytes() + total) : kShmVNothing;
    XC_TRY(enter(where));
    uint32_t parts = shm_root_parts(d.in_place, n, st.root_split, d.sendcounts.largest() * es);
    if (where == kShmVCma) {
      publish_buffer(d.sendbuf, d.sdispls.data(), d.sendcounts.data(), total, parts);
    } else {
      if (staged(where)) stage_blocks(area(where), static_cast<const char *>(d.sendbuf), d.sendcounts, d.sdispls);
      publish(where, table_bytes() + total);
    }
    size_t own = d.count * es;
    if (!d.in_place && own)
      memcpy(out, static_cast<const char *>(d.sendbuf) + d.sdispls[static_cast<size_t>(r)] * es, own);
    if (where == kShmVFail) return cannot_stage(table_bytes() + total);
    if (where != kShmVCma) return Status::Ok();
    Status disagreed = Status::Ok();
    Status status = shm_write_fronts(c, st, s, d, parts, ShmRecvRecord::kV, &disagreed);
    st.mark_done(s);  // our writes are over: receivers wait for that
    for (int j = 0; j < n; ++j)
      if (j != r) XC_TRY(st.wait_done(c, j, s));
    return status.ok() ? disagreed : status;
  }
  XC_TRY(enter(kShmVNothing));
  ShmVTarget &target = mine().v.target;
  target.recvbuf = st.cma_ok ? reinterpret_cast<uint64_t>(out) : 0;
  target.count = d.count;
  publish(kShmVNothing, 0);
  Status status = fetch(d.root, true, out, d.count * es);
  size_t front = status.ok() ? written_by_root(d.count * es) : 0;
  if (read_in_place || !status.ok()) st.mark_done(s);
  if (front) status = wait_written(d.root);
  return status;
}

// In-place alltoallv beyond one-shot goes through the staged pipeline's
// steps (steps.h), as in-place alltoall does: each step stages a piece
// of every block we send before the piece from that peer overwrites it, so
// nothing copies the whole buffer and nothing reads it through CMA. A
// peer's check of its count for us (kept in the record, and in the table in
// our small slot) needs that table or CMA; the piece needs fewer than 4097
// ranks.
bool OneShotV::can_step() const { return (shm_shares_tables(st) || st.cma_ok) && shm_steps_piece(n) > 0; }

void OneShotV::publish_steps() {
  size_t longest = 0;
  for (int j = 0; j < n; ++j)
    if (j != r) longest = std::max(longest, d.sendcounts[static_cast<size_t>(j)] * es);
  size_t piece = shm_steps_piece(n);
  ShmArrival &a = mine();
  a.v.where = kShmVSteps;
  a.v.steps = static_cast<uint32_t>((longest + piece - 1) / piece);
  a.v.cma.displs = reinterpret_cast<uint64_t>(d.sdispls.data());
  a.v.cma.counts = reinterpret_cast<uint64_t>(d.sendcounts.data());
  shm_publish_table(st, s, d.sdispls.data(), d.sendcounts.data());
  st.arrive_inline(c, s);
}

// Copy peer j's block for us from its staging into recvbuf.
Status OneShotV::take_alltoallv(int j) {
  size_t at = d.rdispls[static_cast<size_t>(j)] * es, want = d.recvcounts[static_cast<size_t>(j)] * es;
  return fetch(j, true, static_cast<char *>(d.recvbuf) + at, want);
}

// In place, take_alltoallv: a disagreement goes to *disagreed (pair_agreed).
Status OneShotV::take_agreed(int j, Status *disagreed) {
  Status got = take_alltoallv(j);
  shm_pair_agreed(got, disagreed);
  return got;
}

// In place: blocks of peers that staged them are copied from their staging,
// at once (ours are staged: we may overwrite them) or, if we step, after
// the steps (which stage ours). When any rank steps, every rank runs the
// steps, as many as the longest block of any stepping rank needs; in them
// we take the blocks of the stepping peers. A pair must agree on its length
// (MPI's rule for in-place alltoallv): one that disagrees is skipped at
// both ends (shm_pair_agreed) and reported once every step has run,
// its blocks left as they were.
Status OneShotV::alltoallv_in_place(uint32_t where) {
  char *out = static_cast<char *>(d.recvbuf);
  bool stepping = where == kShmVSteps;
  uint64_t steps = stepping ? mine().v.steps : 0;
  Status disagreed = Status::Ok();
  for (int k = 1; k < n; ++k) {
    int j = (r + k) % n;  // start at different peers: spread the load
    XC_TRY(st.wait_arrived(c, j, s));
    const ShmArrival &a = st.arrival(j, s);
    if (a.v.where == kShmVSteps)
      steps = std::max<uint64_t>(steps, a.v.steps);
    else if (!stepping)
      XC_TRY(take_agreed(j, &disagreed));
  }
  if (steps == 0) return disagreed;
  // What we take from each stepping peer (0: nothing, or a disagreement).
  thread_local std::vector<size_t> take;  // ShmState::scratch says why per thread
  take.assign(static_cast<size_t>(n), 0);
  for (int j = 0; j < n; ++j) {
    const ShmArrival &a = st.arrival(j, s);
    if (j == r || a.v.where != kShmVSteps) continue;
    size_t len = d.recvcounts[static_cast<size_t>(j)] * es, ignored = 0;
    Status agreed = shm_peer_block(c, st, j, s, a.v.cma.displs, a.v.cma.counts, es, len, "alltoallv", &ignored);
    if (shm_pair_agreed(agreed, &disagreed) && agreed.ok()) take[static_cast<size_t>(j)] = len;
    XC_TRY(agreed);
  }
  const size_t piece = shm_steps_piece(n);
  auto block = [&](int j, uint64_t k) { return out + d.rdispls[static_cast<size_t>(j)] * es + k * piece; };
  XC_TRY(shm_run_steps(
      c, st, steps,
      [&](uint64_t k, char *mine) {
        for (int j = 0; j < n && stepping; ++j)
          if (size_t l = j == r ? 0 : shm_steps_chunk(d.sendcounts[static_cast<size_t>(j)] * es, piece, k))
            memcpy(mine + shm_steps_index(j, r) * piece, block(j, k), l);
      },
      [](uint64_t, const char *) {},
      [&](uint64_t k, int j, const char *theirs) {  // the output lines are in cache (just staged)
        if (size_t l = shm_steps_chunk(take[static_cast<size_t>(j)], piece, k))
          memcpy(block(j, k), theirs + shm_steps_index(r, j) * piece, l);
      }));
  for (int k = 1; k < n && stepping; ++k) {
    int j = (r + k) % n;
    if (st.arrival(j, s).v.where != kShmVSteps) XC_TRY(take_agreed(j, &disagreed));
  }
  return disagreed;
}

Status OneShotV::alltoallv() {
  char *out = static_cast<char *>(d.recvbuf);
  // In place the input is recvbuf, described by the receive counts (which the
  // entry point copied into the send side).
  const char *in = d.in_place ? out : static_cast<const char *>(d.sendbuf);
  size_t total = blocks_bytes(d.sendcounts);
  uint32_t where = total ? pick(table_bytes() + total) : kShmVNothing;
  // In place our buffer changes under peers' reads: never publish it.
  if (d.in_place && (where == kShmVCma || where == kShmVFail)) where = can_step() ? kShmVSteps : kShmVFail;
  XC_TRY(enter(where));
  if (where == kShmVSteps) {
    publish_steps();
  } else if (where == kShmVCma) {
    publish_buffer(in, d.sdispls.data(), d.sendcounts.data(), total);
  } else {
    if (staged(where)) stage_blocks(area(where), in, d.sendcounts, d.sdispls);
    publish(where, table_bytes() + total);
  }
  if (where == kShmVFail) {
    st.mark_done(s);  // a peer that published its buffer for us waits for it
    return cannot_stage(table_bytes() + total);
  }
  if (d.in_place) return alltoallv_in_place(where);
  size_t me = static_cast<size_t>(r);
  if (d.recvcounts[me]) memcpy(out + d.rdispls[me] * es, in + d.sdispls[me] * es, d.recvcounts[me] * es);
  Status status = Status::Ok();
  for (int k = 1; k < n && status.ok(); ++k) {
    int j = (r + k) % n;  // start at different peers: spread the load
    status = take_alltoallv(j);
  }
  if (read_in_place || !status.ok()) st.mark_done(s);
  if (!status.ok()) return status;
  if (where == kShmVCma)  // our readers: every peer
    for (int j = 0; j < n; ++j)
      if (j != r) XC_TRY(st.wait_done(c, j, s));
  return Status::Ok();
}

}  // namespace

Status shm_oneshot_v(CollContext &c, const CollDesc &d) {
  XC_TRY(shm_of(c)->ensure(c));
  ShmState &st = *shm_of(c)->state();
  int n = c.size();
  OneShotV o{c, d, st, n, c.rank(), dtype_size(d.dtype), shm_oneshot_limit(d.kind, n, st.cma_ok)};
  switch (d.kind) {
    case CollKind::kGatherv: return o.gatherv();
    case CollKind::kScatterv: return o.scatterv();
    case CollKind::kAlltoallv: return o.alltoallv();
    default: break;
  }
  return Error(XC_ERR_INTERNAL, "shm one-shot-v does not run %s", coll_kind_name(d.kind));
}

}  // namespace xc::coll
