#include "coll/desc.h"

#include <string>
#include <vector>

#include "base/dtype.h"

namespace xc {

const char *mem_kind_name(MemKind kind) { return kind == MemKind::kDevice ? "device" : "host"; }

bool coll_kind_reduces(CollKind kind) {
  switch (kind) {
    case CollKind::kReduce:
    case CollKind::kAllreduce:
    case CollKind::kReduceScatter:
    case CollKind::kReduceScatterv:
    case CollKind::kScan:
    case CollKind::kExscan: return true;
    default: return false;
  }
}

namespace {

bool per_rank_counts(CollKind kind) {
  switch (kind) {
    case CollKind::kAllgatherv:
    case CollKind::kGatherv:
    case CollKind::kScatterv:
    case CollKind::kReduceScatterv:
    case CollKind::kAlltoallv: return true;
    default: return false;
  }
}

bool rooted(CollKind kind) {
  switch (kind) {
    case CollKind::kBroadcast:
    case CollKind::kReduce:
    case CollKind::kGather:
    case CollKind::kGatherv:
    case CollKind::kScatter:
    case CollKind::kScatterv: return true;
    default: return false;
  }
}

// Stands in for 0 (an int8 barrier): no op produces it, a barrier carries no count.
constexpr uint32_t kSigNonZero = 1u << 31;
static_assert(XC_FLOAT64 < 0xf, "dtype bits 15 mark kSigGaveUp");

}  // namespace

bool placement_agrees(CollKind kind) {
  return kind == CollKind::kAllreduce || kind == CollKind::kAllgather || kind == CollKind::kAllgatherv ||
         kind == CollKind::kAlltoall || kind == CollKind::kAlltoallv;
}

uint32_t coll_signature(const CollDesc &d) {
  bool counted = d.kind != CollKind::kBarrier && !per_rank_counts(d.kind);
  uint32_t sig = static_cast<uint32_t>(d.kind) & 0xf;
  sig |= (static_cast<uint32_t>(d.dtype) & 0xf) << 4;
  sig |= (coll_kind_reduces(d.kind) ? static_cast<uint32_t>(d.op) & 0x7 : 0) << 8;
  sig |= (rooted(d.kind) ? static_cast<uint32_t>(d.root) & 0x1ff : 0) << 11;
  sig |= (placement_agrees(d.kind) && d.in_place ? 1u : 0u) << 11;
  sig |= (counted ? static_cast<uint32_t>(d.count & 0xfff) : 0) << 20;
  return sig ? sig : kSigNonZero;
}

// A signature keeps only the low 12 bits of the count and 9 of the root (the
// rest of the word is the op, dtype and reduction): enough to tell ranks
// apart, not to say what another rank passed. So the names below never show
// them; the difference says that they differ, in words.
std::string describe_signature(uint32_t sig) {
  auto kind = static_cast<CollKind>(sig & 0xf);
  if (sig == kSigCommFree) return "xc_comm_free's closing barrier";
  if (sig == kSigCommSplit) return "a communicator split (xc_comm_split, _dup or _split_groups)";
  if (sig == kSigCommGrow) return "xc_comm_grow";
  std::string s = coll_kind_name(kind);
  if (kind == CollKind::kBarrier) return s;
  s += std::string(" ") + dtype_name(static_cast<xc_dtype_t>((sig >> 4) & 0xf));
  if (coll_kind_reduces(kind)) s += std::string(" ") + op_name(static_cast<xc_op_t>((sig >> 8) & 0x7));
  if (placement_agrees(kind)) s += (sig >> 11) & 1 ? " in place" : " out of place";
  return s;
}

std::string describe_signature_difference(uint32_t mine, uint32_t theirs) {
  if (mine == theirs) return "the same call";
  auto kind = static_cast<CollKind>(mine & 0xf);
  auto is_special = [](uint32_t s) { return s == kSigCommFree || s == kSigCommSplit || s == kSigCommGrow; };
  bool special = is_special(mine) || is_special(theirs);
  if (special || kind != static_cast<CollKind>(theirs & 0xf)) return "different collectives";
  std::vector<std::string> diffs;
  auto field = [&](int shift, uint32_t mask) { return ((mine >> shift) & mask) != ((theirs >> shift) & mask); };
  if (field(4, 0xf)) diffs.push_back("datatypes differ");
  if (coll_kind_reduces(kind) && field(8, 0x7)) diffs.push_back("reductions differ");
  if (rooted(kind) && field(11, 0x1ff)) diffs.push_back("roots differ");
  if (placement_agrees(kind) && field(11, 1)) diffs.push_back("one rank passes XC_IN_PLACE and the other does not");
  if (field(20, 0xfff)) diffs.push_back("counts differ");
  if (diffs.empty()) return "the arguments differ";
  std::string s = diffs[0];
  for (size_t i = 1; i < diffs.size(); ++i) s += (i + 1 == diffs.size() ? " and " : ", ") + diffs[i];
  return s;
}

std::string describe_call(const CollDesc &d) {
  std::string s = describe_signature(coll_signature(d));
  if (d.kind == CollKind::kBarrier) return s;
  if (!per_rank_counts(d.kind)) s += " with count " + std::to_string(d.count);
  if (rooted(d.kind)) s += (per_rank_counts(d.kind) ? " with root " : ", root ") + std::to_string(d.root);
  return s;
}

size_t selection_bytes(const CollDesc &d, int nranks) {
  size_t es = dtype_size(d.dtype), n = static_cast<size_t>(nranks);
  switch (d.kind) {
    case CollKind::kBarrier: return 0;
    case CollKind::kBroadcast:
    case CollKind::kReduce:
    case CollKind::kAllreduce:
    case CollKind::kScan:
    case CollKind::kExscan:
    case CollKind::kAllgather:
    case CollKind::kGather: return d.count * es;
    case CollKind::kScatter:
    case CollKind::kReduceScatter:
    case CollKind::kAlltoall: return d.count * es * n;
    case CollKind::kAllgatherv: return d.recvcounts.largest() * es;  // what one-shot stages
    case CollKind::kReduceScatterv: return d.recvcounts.total() * es;
    case CollKind::kGatherv:
    case CollKind::kScatterv:
    case CollKind::kAlltoallv: return 0;
  }
  return 0;
}

}  // namespace xc
