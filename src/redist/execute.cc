#include "redist/execute.h"

#include <cstring>

namespace xc::redist {

void Buffers::size_for(const Plan &plan) {
  // Bytes are fixed at plan time: sized once, reused by every run.
  mid[0].resize(plan.mid_count[0] * plan.esize);
  mid[1].resize(plan.mid_count[1] * plan.esize);
  send.resize(plan.send_staging * plan.esize);
  recv.resize(plan.recv_staging * plan.esize);
}

void identity_of(xc_dtype_t dtype, xc_op_t op, void *out) {
  size_t size = dtype == XC_INT8 || dtype == XC_UINT8       ? 1
                : dtype == XC_FLOAT16 || dtype == XC_BFLOAT16 ? 2
                : dtype == XC_INT64 || dtype == XC_UINT64 || dtype == XC_FLOAT64 ? 8
                                                                                : 4;
  memset(out, 0, size);
  if (op != XC_PROD) return;  // sum, bxor: zero
  switch (dtype) {
    case XC_FLOAT16: { uint16_t one = 0x3C00; memcpy(out, &one, 2); break; }
    case XC_BFLOAT16: { uint16_t one = 0x3F80; memcpy(out, &one, 2); break; }
    case XC_FLOAT32: { float one = 1; memcpy(out, &one, 4); break; }
    case XC_FLOAT64: { double one = 1; memcpy(out, &one, 8); break; }
    default: { uint64_t one = 1; memcpy(out, &one, size); break; }  // little-endian integers
  }
}

namespace {

void copy_all(const std::vector<Piece> &pieces, const char *from, char *to, size_t esize) {
  for (const Piece &p : pieces) copy_box(p.box, from, p.from, to, p.to, esize);
}

Status run_p2p(const Step &s, const char *in, char *out, Buffers &b, size_t esize, Transport &t) {
  std::vector<Transfer> sends, recvs;
  for (const Message &m : s.sends) {
    copy_all(m.pieces, in, b.send.data(), esize);
    sends.push_back(Transfer{m.peer, b.send.data() + m.offset * esize, m.count});
  }
  for (const Message &m : s.recvs) recvs.push_back(Transfer{m.peer, b.recv.data() + m.offset * esize, m.count});
  // The local pieces are copied while the messages travel.
  XC_TRY(t.exchange(sends, recvs, [&] { copy_all(s.copies, in, out, esize); }));
  for (const Message &m : s.recvs) copy_all(m.pieces, b.recv.data(), out, esize);
  return Status::Ok();
}

}  // namespace

Status run_plan(const Plan &plan, Buffers &b, const void *src, void *dst, Transport &t) {
  size_t es = plan.esize;
  auto buf = [&](Buf which) -> char * {
    switch (which) {
      case Buf::kSrc: return const_cast<char *>(static_cast<const char *>(src));
      case Buf::kMidA: return b.mid[0].data();
      case Buf::kMidB: return b.mid[1].data();
      default: return static_cast<char *>(dst);
    }
  };
  for (const Step &s : plan.steps) {
    char *in = buf(s.in), *out = buf(s.out);
    // Collectives read the packed input, or `in` itself when nothing needs packing.
    const char *cin = in;
    if (!s.pack.empty()) {
      copy_all(s.pack, in, b.send.data(), es);
      cin = b.send.data();
    }
    char *cout = s.unpack.empty() ? out : b.recv.data();
    switch (s.kind) {
      case StepKind::kP2p: XC_TRY(run_p2p(s, in, out, b, es, t)); continue;
      case StepKind::kFill: {
        char one[8];
        identity_of(plan.dtype, s.op, one);
        for (size_t i = 0; i < s.count; ++i) memcpy(out + i * es, one, es);
        continue;
      }
      case StepKind::kAllreduce: XC_TRY(t.allreduce(s.mesh_dim, cin, cout, s.count, s.op)); break;
      case StepKind::kReduceScatter: XC_TRY(t.reduce_scatterv(s.mesh_dim, cin, cout, s.recv_counts.data(), s.op)); break;
      case StepKind::kAllgather:
        XC_TRY(t.allgatherv(s.mesh_dim, cin, s.count, cout, s.recv_counts.data(), s.recv_displs.data()));
        break;
      case StepKind::kAlltoall:
        XC_TRY(t.alltoallv(s.mesh_dim, cin, s.send_counts.data(), s.send_displs.data(), cout, s.recv_counts.data(),
                           s.recv_displs.data()));
        break;
    }
    if (!s.unpack.empty()) copy_all(s.unpack, b.recv.data(), out, es);
  }
  return Status::Ok();
}

}  // namespace xc::redist
