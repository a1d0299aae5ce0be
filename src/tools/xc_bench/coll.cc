// xc-bench collectives: nccl-tests-style sweeps of one collective.
//
//   xcrun -n 4 xc-bench allreduce -b 8 -e 64M -f 4 -d float32 -o sum -n 50 -w 5 -c 1
//
// The options, the columns and the bus-bandwidth formulas are nccl-tests'
// (all_reduce_perf and friends), so the numbers read the same way; see
// coll_usage() and docs/benchmarks.md. Each collective is ONE entry of kColls
// (coll_table.cc, described in coll_spec.h): its buffer sizes, bus-bandwidth
// factor, where its input lives in place, where each result element comes
// from (for the check), and the call. In the in-place columns of rooted
// collectives whose in-place form is the root's alone (reduce, gather,
// scatter), the other ranks call the out-of-place form.
//
// What a row measures: WARMUP untimed calls, a barrier, then ITERS calls back
// to back; the time is the slowest rank's average per call. Two inputs are
// filled before the loop (variants 0 and 1; for sum and avg they differ in
// every element) and the calls alternate between them; each call also first
// rewrites one input element (position it % count) with 1 + it % 61. So
// consecutive calls never see the same input and a buffer's content does not
// come back for at least 61 of its calls, while the loop does O(1) work
// besides the call. In
// place, the alternate buffers also hold the previous results (as in
// nccl-tests, whose in-place loop reuses one buffer). With -c 1, one more
// call after the loop runs on freshly filled input variant 0 into an output
// filled with kPoison, and every output element is compared bit for bit with
// the value computed locally (coll_data.h); #wrong is the sum over ranks.
//
// -m device: every buffer from xc_mem_alloc_device, filled and read back
// through a host staging buffer (device_mem.h: memcpy on the emulated device,
// cudaMemcpy on a GPU), so the timed loop skips the per-call element rewrite
// (a host write) and alternates between the two inputs only. The ops are
// stream-ordered, as in nccl-tests: the world's collectives are bound to one
// xc_stream_create stream; the warmup calls end with xc_stream_synchronize
// before the barrier, the ITERS calls are enqueued back to back and
// followed by ONE xc_stream_synchronize, and the time is that span / ITERS.
// The checked call is synchronised before its output is copied back.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench.h"
#include "coll_data.h"
#include "coll_spec.h"
#include "device_mem.h"

namespace xcb {

const CollSpec *find_coll(const char *name) {
  for (size_t i = 0; i < kNumColls; ++i)
    if (strcmp(kColls[i].name, name) == 0) return &kColls[i];
  return nullptr;
}

void list_colls(FILE *to) {
  for (size_t i = 0; i < kNumColls; ++i) fprintf(to, "  %-15s %s\n", kColls[i].name, kColls[i].summary);
}

namespace {

struct Options {
  size_t min_bytes = 8, max_bytes = 32u << 20;
  int factor = 2, iters = 20, warmup = 5, check = 1, root = 0, hugepages = 0;
  bool device = false;  // -m device
  std::vector<const DtypeInfo *> dtypes;
  std::vector<const RedopInfo *> ops;
  bool skipped_combos = false;  // -o all/-d all left out bitwise ops on float types
};

void coll_usage(const CollSpec &c, FILE *to) {
  fprintf(to,
          "usage: %s %s [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-d DTYPE|all]%s%s\n"
          "       %*s [-n ITERS] [-w WARMUP] [-c 0|1] [-H 0|1] [-m host|device]\n"
          "\n"
          "%s.\n"
          "Run it under a launcher (xcrun -n N %s %s ...). Options as nccl-tests':\n"
          "  -b, --minbytes     smallest size (default 8); K/M/G are powers of 1024\n"
          "  -e, --maxbytes     largest size (default 32M)\n"
          "  -f, --stepfactor   size multiplier from one row to the next (default 2)\n"
          "  -d, --datatype     int8 uint8 int32 uint32 int64 uint64 float16 bfloat16\n"
          "                     float32 float64, or all (default float32)\n"
          "  -o, --op           sum prod min max avg band bor bxor, or all (default sum);\n"
          "                     band/bor/bxor are for integer types (left out of 'all' for floats)\n"
          "  -r, --root         root rank, for collectives with one (default 0)\n"
          "  -n, --iters        timed calls per row (default 20)\n"
          "  -w, --warmup_iters untimed calls before them (default 5)\n"
          "  -c, --check        1: after the timed calls, one more call on fresh input,\n"
          "                     every result element checked on every rank (default 1)\n"
          "  -H, --hugepages    1: buffers from xc_mem_alloc (2 MiB pages where the kernel\n"
          "                     offers them); 0: aligned_alloc, 4 KiB pages (default 0)\n"
          "  -m, --memory       host (default) or device: buffers from xc_mem_alloc_device,\n"
          "                     ops on one stream, ITERS calls then one xc_stream_synchronize;\n"
          "                     XC_DEVICE=emulated runs it without a GPU (results checked,\n"
          "                     times not meaningful). On a GPU the header shows the\n"
          "                     device's floors (empty kernel launch, device-to-device copy)\n"
          "\n"
          "Columns (rank 0 prints): size (B) and count (elements) of the largest buffer\n"
          "a rank holds, type, redop, root; then out-of-place and in-place: time = the\n"
          "slowest rank's average per call in microseconds, algbw = size / time in GB/s\n"
          "(10^9 B/s), busbw = algbw times nccl-tests' factor for the collective, and\n"
          "#wrong = result elements that differ from the expected value, summed over\n"
          "ranks (N/A: not checked, or no such form). The last line averages busbw\n"
          "over all rows and both placements. The exit status is 1 when #wrong > 0.\n"
          "In place for reduce, gather(v) and scatter(v) is the root's in-place form,\n"
          "the other ranks calling the out-of-place one; the v forms use equal counts.\n"
          "The timed loop alternates between two pre-filled inputs and (host memory)\n"
          "rewrites one element before each call, so consecutive calls never see the\n"
          "same input.\n",
          g_prog, c.name, (c.flags & kRedop) ? " [-o OP|all]" : "", (c.flags & kRoot) ? " [-r ROOT]" : "",
          static_cast<int>(strlen(g_prog) + strlen(c.name) + 1), "", c.summary, g_prog, c.name);
}

const DtypeInfo *dtype_by_name(const std::string &name) {
  static const struct {
    const char *alias, *name;
  } kAliases[] = {{"char", "int8"},     {"half", "float16"},     {"fp16", "float16"},  {"bf16", "bfloat16"},
                  {"float", "float32"}, {"double", "float64"}, {"int", "int32"},      {"uint", "uint32"}};
  std::string n = name;
  for (const auto &a : kAliases)
    if (n == a.alias) n = a.name;
  for (size_t i = 0; i < kNumDtypes; ++i)
    if (n == kDtypes[i].name) return &kDtypes[i];
  return nullptr;
}

const RedopInfo *redop_by_name(const std::string &name) {
  for (size_t i = 0; i < kNumRedops; ++i)
    if (name == kRedops[i].name) return &kRedops[i];
  return nullptr;
}

// 0 ok, 1 -h, 2 usage error (already reported).
int parse_options(const CollSpec &c, int argc, char **argv, Options *o) {
  struct Opt {
    char short_name;
    const char *long_name;
  };
  static const Opt kOpts[] = {{'b', "minbytes"}, {'e', "maxbytes"}, {'f', "stepfactor"},   {'d', "datatype"},
                              {'o', "op"},       {'r', "root"},     {'n', "iters"},        {'w', "warmup_iters"},
                              {'c', "check"},    {'H', "hugepages"},  {'m', "memory"}};
  std::string dtype_arg = "float32", op_arg = "sum";
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") return 1;
    char which = 0;
    std::string value;
    bool has_value = false;
    for (const Opt &opt : kOpts) {
      std::string lng = std::string("--") + opt.long_name;
      if (a.size() >= 2 && a[0] == '-' && a[1] == opt.short_name) {
        which = opt.short_name;
        if (a.size() > 2) value = a.substr(2), has_value = true;
      } else if (a == lng || a.rfind(lng + "=", 0) == 0) {
        which = opt.short_name;
        if (a.size() > lng.size()) value = a.substr(lng.size() + 1), has_value = true;
      }
      if (which) break;
    }
    if (!which) {
      fprintf(stderr, "%s %s: unknown argument '%s'\n", g_prog, c.name, argv[i]);
      return 2;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s %s: %s needs a value\n", g_prog, c.name, argv[i]);
        return 2;
      }
      value = argv[++i];
    }
    bool ok = true;
    const char *v = value.c_str();
    switch (which) {
      case 'b': ok = parse_bytes(v, &o->min_bytes); break;
      case 'e': ok = parse_bytes(v, &o->max_bytes); break;
      case 'f': ok = parse_count(v, 2, &o->factor); break;
      case 'd': dtype_arg = value; break;
      case 'o': op_arg = value; break;
      case 'r': ok = parse_count(v, 0, &o->root); break;
      case 'n': ok = parse_count(v, 1, &o->iters); break;
      case 'w': ok = parse_count(v, 0, &o->warmup); break;
      case 'c': ok = parse_count(v, 0, &o->check); break;
      case 'H': ok = parse_count(v, 0, &o->hugepages) && o->hugepages <= 1; break;
      case 'm':
        ok = value == "host" || value == "device";
        o->device = value == "device";
        break;
      default: ok = false;
    }
    if (!ok) {
      fprintf(stderr, "%s %s: bad value '%s' for -%c\n", g_prog, c.name, v, which);
      return 2;
    }
  }
  if (o->device && o->hugepages) {
    fprintf(stderr, "%s %s: -H 1 is for host memory (-m host)\n", g_prog, c.name);
    return 2;
  }
  if (o->min_bytes == 0 || o->min_bytes > o->max_bytes) {
    fprintf(stderr, "%s %s: need 0 < MINBYTES <= MAXBYTES\n", g_prog, c.name);
    return 2;
  }
  if (dtype_arg == "all") {
    for (size_t i = 0; i < kNumDtypes; ++i) o->dtypes.push_back(&kDtypes[i]);
  } else if (const DtypeInfo *d = dtype_by_name(dtype_arg)) {
    o->dtypes.push_back(d);
  } else {
    fprintf(stderr, "%s %s: unknown dtype '%s'\n", g_prog, c.name, dtype_arg.c_str());
    return 2;
  }
  if (op_arg == "all") {
    for (size_t i = 0; i < kNumRedops; ++i) o->ops.push_back(&kRedops[i]);
  } else if (const RedopInfo *r = redop_by_name(op_arg)) {
    o->ops.push_back(r);
    bool any_int = false;
    for (const DtypeInfo *d : o->dtypes) any_int |= d->is_int;
    if (r->int_only && !any_int) {
      fprintf(stderr, "%s %s: %s is for integer types only\n", g_prog, c.name, r->name);
      return 2;
    }
  } else {
    fprintf(stderr, "%s %s: unknown op '%s'\n", g_prog, c.name, op_arg.c_str());
    return 2;
  }
  return 0;
}

// Where the buffers live and how they are reached.
enum class Mem { kHost, kHostPages, kDevice };  // aligned_alloc; -H 1; -m device

// Page-aligned (from xc_mem_alloc with -H 1), and filled once (with
// kPoison) so no timed call pays for first-touch page faults. Device
// blocks (xc_mem_alloc_device) are filled through `stage`, a host buffer of
// at least `bytes`.
struct BlockDeleter {
  bool from_xc = false;  // xc_mem_alloc or xc_mem_alloc_device: xc_mem_free
  void operator()(unsigned char *p) const {
    if (from_xc)
      xc_mem_free(nullptr, p);
    else
      free(p);
  }
};
using Block = std::unique_ptr<unsigned char, BlockDeleter>;
Block alloc_block(size_t bytes, xc_comm_t comm, Mem mem, std::vector<unsigned char> &stage) {
  if (bytes == 0) return nullptr;
  size_t rounded = (bytes + 4095) / 4096 * 4096;
  unsigned char *p = nullptr;
  if (mem != Mem::kHost) {
    void *q = nullptr;
    if (mem == Mem::kDevice)
      BENCH_CHECK(xc_mem_alloc_device(comm, rounded, &q));
    else
      BENCH_CHECK(xc_mem_alloc(comm, rounded, &q));
    p = static_cast<unsigned char *>(q);
  } else {
    p = static_cast<unsigned char *>(aligned_alloc(4096, rounded));
  }
  if (!p) {
    fprintf(stderr, "%s: rank %d: out of memory (%zu bytes)\n", g_prog, g_rank, bytes);
    exit(1);
  }
  if (mem == Mem::kDevice) {
    memset(stage.data(), kPoison, bytes);
    copy_to_device(p, stage.data(), bytes);
  } else {
    memset(p, kPoison, rounded);
  }
  return Block(p, BlockDeleter{mem != Mem::kHost});
}

struct Buffers {
  Block send[2], recv[2];
  bool device = false;              // -m device: the blocks are device memory, reached through stage
  xc_stream_t stream = nullptr;     // -m device: the stream the world's collectives are bound to
  std::vector<unsigned char> stage;  // -m device: host side of every fill and read-back
};

// nccl-tests' getFloatStr: as many decimals as the width allows.
std::string fmt_num(double value, int width) {
  int power = 0;
  for (uint64_t v = 1; value >= static_cast<double>(v) && power < 30; v *= 10) power++;
  char buf[32];
  if (power < width - 2) snprintf(buf, sizeof buf, "%*.2f", width, value);
  else if (power < width - 1) snprintf(buf, sizeof buf, "%*.1f", width, value);
  else if (power < width + 1) snprintf(buf, sizeof buf, "%*.0f", width, value);
  else snprintf(buf, sizeof buf, "%*.1e", width, value);
  return buf;
}

struct Timing {
  bool done = false;   // measured (else N/A)
  double us = 0;       // slowest rank's average per call
  double wrong = -1;   // summed over ranks; -1 = not checked
};

const char *op_name(int op) {
  for (size_t i = 0; i < kNumRedops; ++i)
    if (kRedops[i].op == op) return kRedops[i].name;
  return "none";
}

size_t verify(const CollSpec &s, const CollArgs &a, const unsigned char *got, int variant, bool in_place,
              size_t row_bytes) {
  const DtypeInfo &d = *a.dtype;
  size_t n = s.checked ? s.checked(a) : a.recv_count, wrong = 0;
  unsigned char want[8];
  for (size_t i = 0; i < n; ++i) {
    Source src = s.source(a, i);
    expected_value(d, a.op, a.nranks, src.lo, src.hi, src.j, variant, want);
    if (memcmp(want, got + i * d.size, d.size) != 0) {
      if (wrong == 0) {
        uint64_t w = 0, g = 0;
        memcpy(&w, want, d.size);
        memcpy(&g, got + i * d.size, d.size);
        fprintf(stderr, "%s: rank %d: %s %s %s %zu B %s: first wrong element %zu: 0x%llx, expected 0x%llx\n",
                g_prog, a.rank, s.name, d.name, op_name(a.op), row_bytes,
                in_place ? "in-place" : "out-of-place", i, static_cast<unsigned long long>(g),
                static_cast<unsigned long long>(w));
      }
      ++wrong;
    }
  }
  return wrong;
}

Timing measure(const CollSpec &s, const CollArgs &row, const Options &o, bool in_place, Buffers &b,
               size_t row_bytes) {
  Timing h;
  h.done = true;
  static const DtypeInfo kNoData = {"none", XC_UINT8, 1, true, false};
  CollArgs a = row;
  // Whether THIS rank calls the in-place form (see kInPlaceAtRoot).
  a.in_place = in_place && (!(s.flags & kInPlaceAtRoot) || a.rank == a.root);
  const DtypeInfo &d = a.dtype ? *a.dtype : kNoData;
  const bool data = (s.flags & kData) != 0;
  const bool input = data && (s.has_input ? s.has_input(a) : true) && a.send_count > 0;
  const bool in_recv = a.in_place && !(s.flags & kInPlaceInSend);  // the input lives in recvbuf
  const size_t off = in_recv && s.in_place_offset ? s.in_place_offset(a) : 0;
  const size_t recv_bytes = a.recv_count * d.size;
  const void *send[2] = {nullptr, nullptr};
  unsigned char *recv[2] = {nullptr, nullptr}, *in[2] = {nullptr, nullptr};
  // Input variant k into in[k] (on the device: through the staging buffer).
  auto fill = [&](int k) {
    if (b.device) {
      fill_input(d, a.op, a.nranks, a.rank, k, b.stage.data(), a.send_count);
      copy_to_device(in[k], b.stage.data(), a.send_count * d.size);
    } else {
      fill_input(d, a.op, a.nranks, a.rank, k, in[k], a.send_count);
    }
  };
  // Ops on device memory are enqueued; this waits until they have run.
  auto sync = [&] {
    if (b.device) BENCH_CHECK(xc_stream_synchronize(b.stream));
  };
  for (int k = 0; k < 2 && data; ++k) {
    recv[k] = in_place ? b.recv[k].get() : b.recv[0].get();
    send[k] = in_recv ? XC_IN_PLACE : b.send[k].get();
    in[k] = in_recv ? recv[k] + off * d.size : b.send[k].get();
    if (input) fill(k);
  }
  long it = 0;
  auto step = [&] {
    int k = static_cast<int>(it & 1);
    // A host write; on the device it would be a copy per call, in the timing.
    if (input && !b.device) store_value(d, in[k], static_cast<size_t>(it) % a.send_count, 1 + it % 61);
    BENCH_CHECK(s.call(a, send[k], recv[k]));
    ++it;
  };
  for (int w = 0; w < o.warmup; ++w) step();
  sync();
  BENCH_CHECK(xc_barrier(a.comm));
  double t0 = now_us();
  for (int i = 0; i < o.iters; ++i) step();
  sync();
  h.us = max_over_ranks((now_us() - t0) / o.iters, a.comm);
  if (o.check && data) {
    const unsigned char *got = recv[0];
    if (b.device) {
      memset(b.stage.data(), kPoison, recv_bytes);
      copy_to_device(recv[0], b.stage.data(), recv_bytes);
    } else {
      memset(recv[0], kPoison, recv_bytes);
    }
    if (input) fill(0);
    BENCH_CHECK(s.call(a, send[0], recv[0]));
    if (b.device) {
      sync();
      copy_to_host(b.stage.data(), recv[0], recv_bytes);
      got = b.stage.data();
    }
    size_t wrong = verify(s, a, got, 0, in_place, row_bytes);
    h.wrong = sum_over_ranks(static_cast<double>(wrong), a.comm);
  }
  return h;
}

void print_half(const Timing &h, bool data, double bytes, double factor, double *bw_sum, int *bw_count) {
  if (!h.done) {
    printf("  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    return;
  }
  char wrong[32] = "N/A";
  if (h.wrong >= 0) snprintf(wrong, sizeof wrong, "%g", h.wrong);
  if (!data) {  // no bandwidth (barrier)
    printf("  %7s  %6s  %6s  %6s", fmt_num(h.us, 7).c_str(), "N/A", "N/A", wrong);
    return;
  }
  double algbw = bytes / h.us * 1e-3;  // B/µs → GB/s
  double busbw = algbw * factor;
  *bw_sum += busbw;
  ++*bw_count;
  printf("  %7s  %6s  %6s  %6s", fmt_num(h.us, 7).c_str(), fmt_num(algbw, 6).c_str(), fmt_num(busbw, 6).c_str(), wrong);
}

// The nominal sizes of the rows: MINBYTES times FACTOR^k, the last one not
// above MAXBYTES (as nccl-tests steps).
std::vector<size_t> nominal_sizes(const Options &o) {
  std::vector<size_t> sizes;
  for (size_t bytes = o.min_bytes;; bytes *= static_cast<size_t>(o.factor)) {
    sizes.push_back(bytes);
    if (bytes > o.max_bytes / static_cast<size_t>(o.factor)) break;
  }
  return sizes;
}

// The row size (bytes of a rank's largest buffer) of the largest row of any
// requested dtype; 0 without data.
size_t largest_row(const CollSpec &s, const Options &o, int nranks) {
  size_t largest = 0;
  if (!(s.flags & kData)) return 0;
  for (const DtypeInfo *d : o.dtypes)
    for (size_t bytes : nominal_sizes(o)) {
      size_t sc = 0, rc = 0;
      if (bytes / d->size == 0) continue;
      s.counts(bytes / d->size, nranks, &sc, &rc);
      largest = std::max(largest, std::max(sc, rc) * d->size);
    }
  return largest;
}

void print_header(const CollSpec &s, const Options &o, int nranks, xc_comm_t world, const Buffers &b) {
  // Who runs where, as nccl-tests' "Using devices" lists it.
  struct Who {
    int32_t rank, pid;
    char host[56];
  } me{};
  std::vector<Who> who(static_cast<size_t>(nranks));
  me.rank = g_rank;
  me.pid = static_cast<int32_t>(getpid());
  gethostname(me.host, sizeof me.host - 1);
  // Rank 0 measures the device's floors (on a GPU) while the others wait
  // here, in the allgather, so nothing else runs on the machine meanwhile.
  std::string device_lines;
  if (b.device && g_rank == 0) device_lines = device_header(b.recv[0].get(), largest_row(s, o, nranks));
  BENCH_CHECK(xc_allgather(&me, who.data(), sizeof me, XC_UINT8, world));
  if (g_rank != 0) return;
  if (s.flags & kData)
    printf("# %s %s: nranks %d minBytes %zu maxBytes %zu step: %d(factor) warmup iters: %d iters: %d validation: %d\n",
           g_prog, s.name, nranks, o.min_bytes, o.max_bytes, o.factor, o.warmup, o.iters, o.check ? 1 : 0);
  else
    printf("# %s %s: nranks %d warmup iters: %d iters: %d (no data: one row, time only)\n", g_prog, s.name, nranks,
           o.warmup, o.iters);
  printf("#\n# Using ranks\n");
  for (const Who &w : who) printf("#  Rank %2d Pid %7d on %s\n", w.rank, w.pid, w.host);
  if (o.hugepages) printf("#\n# Buffers from xc_mem_alloc (2 MiB pages where the kernel offers them)\n");
  if (b.device) printf("#\n%s", device_lines.c_str());
  if (o.skipped_combos) printf("#\n# band, bor and bxor are for integer types: left out for float types\n");
  printf("#\n");
  printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "", "",
         "", "");
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type", "redop",
         "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "", "", "",
         "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  fflush(stdout);
}

}  // namespace

int run_coll(const CollSpec &s, int argc, char **argv) {
  Options o;
  switch (parse_options(s, argc, argv, &o)) {
    case 1: coll_usage(s, stdout); return 0;
    case 2: coll_usage(s, stderr); return 2;
    default: break;
  }
  const bool data = (s.flags & kData) != 0;
  if (!(s.flags & kRedop)) o.ops.assign(1, nullptr);  // one pass, redop "none"
  if (!data) {                                        // barrier: one row, no dtype
    o.dtypes.assign(1, nullptr);
    o.ops.assign(1, nullptr);
  }
  for (const DtypeInfo *d : o.dtypes)
    for (const RedopInfo *r : o.ops)
      if (d && r && r->int_only && !d->is_int) o.skipped_combos = true;

  xc_comm_t world = nullptr;
  int nranks = 0;
  BENCH_CHECK(xc_init(nullptr, &world));
  BENCH_CHECK(xc_comm_rank(world, &g_rank));
  BENCH_CHECK(xc_comm_size(world, &nranks));
  if ((s.flags & kRoot) && o.root >= nranks) {
    if (g_rank == 0) fprintf(stderr, "%s %s: root %d is not a rank of %d\n", g_prog, s.name, o.root, nranks);
    BENCH_CHECK(xc_comm_free(world));
    return 2;
  }

  Buffers b;
  if (o.device) {
    std::string why;
    if (!device_open(&why)) {
      fprintf(stderr, "%s %s: rank %d: -m device: %s\n", g_prog, s.name, g_rank, why.c_str());
      exit(1);
    }
    b.device = true;
    BENCH_CHECK(xc_stream_create(world, &b.stream));
    BENCH_CHECK(xc_stream_bind(world, b.stream, XC_BIND_COLLECTIVES));
  }
  // Buffers for the largest row of any requested dtype.
  if (data) {
    size_t send_max = 0, recv_max = 0;
    for (const DtypeInfo *d : o.dtypes) {
      size_t sc = 0, rc = 0;
      s.counts(std::max<size_t>(1, o.max_bytes / d->size), nranks, &sc, &rc);
      send_max = std::max(send_max, sc * d->size);
      recv_max = std::max(recv_max, rc * d->size);
    }
    // In place the input lives in recvbuf, and can be the larger side (reduce_scatter).
    if ((s.flags & kInPlace) && !(s.flags & kInPlaceInSend)) recv_max = std::max(recv_max, send_max);
    const Mem mem = o.device ? Mem::kDevice : o.hugepages ? Mem::kHostPages : Mem::kHost;
    if (o.device) b.stage.resize(std::max(send_max, recv_max));
    if (s.flags & kOutOfPlace) {
      b.send[0] = alloc_block(send_max, world, mem, b.stage);
      b.send[1] = alloc_block(send_max, world, mem, b.stage);
    }
    b.recv[0] = alloc_block(recv_max, world, mem, b.stage);
    if (s.flags & kInPlace) b.recv[1] = alloc_block(recv_max, world, mem, b.stage);
  }

  print_header(s, o, nranks, world, b);
  double bw_sum = 0, total_wrong = 0;
  int bw_count = 0;
  const double factor = s.bus_factor(nranks);
  for (const DtypeInfo *d : o.dtypes) {
    for (const RedopInfo *r : o.ops) {
      if (d && r && r->int_only && !d->is_int) continue;
      CollArgs a;
      a.comm = world;
      a.dtype = d;
      a.op = r ? r->op : kCopy;
      a.root = (s.flags & kRoot) ? o.root : -1;
      a.rank = g_rank;
      a.nranks = nranks;
      for (size_t bytes : nominal_sizes(o)) {
        size_t count = d ? bytes / d->size : 0;
        if (!data || count > 0) {
          s.counts(count, nranks, &a.send_count, &a.recv_count);
          if (s.flags & kVector) {  // equal blocks, packed in rank order
            a.block = a.send_count == a.recv_count ? a.send_count / static_cast<size_t>(nranks)
                                                   : std::min(a.send_count, a.recv_count);
            a.counts.assign(static_cast<size_t>(nranks), a.block);
            a.displs.resize(static_cast<size_t>(nranks));
            for (int i = 0; i < nranks; ++i) a.displs[static_cast<size_t>(i)] = static_cast<size_t>(i) * a.block;
          }
          size_t elems = std::max(a.send_count, a.recv_count);
          size_t row_bytes = elems * (d ? d->size : 0);
          Timing out, in;
          if (s.flags & kOutOfPlace) out = measure(s, a, o, false, b, row_bytes);
          if (s.flags & kInPlace) in = measure(s, a, o, true, b, row_bytes);
          for (const Timing *h : {&out, &in})
            if (h->wrong > 0) total_wrong += h->wrong;
          if (g_rank == 0) {
            printf("%12zu  %12zu  %8s  %6s  %6d", row_bytes, elems, d ? d->name : "none", r ? r->name : "none",
                   a.root);
            print_half(out, data, static_cast<double>(row_bytes), factor, &bw_sum, &bw_count);
            print_half(in, data, static_cast<double>(row_bytes), factor, &bw_sum, &bw_count);
            printf("\n");
            fflush(stdout);
          }
        }
        if (!data) break;
      }
    }
  }
  if (g_rank == 0) {
    printf("# Out of bounds values : %.0f %s\n", total_wrong, total_wrong > 0 ? "FAILED" : "OK");
    if (bw_count > 0)
      printf("# Avg bus bandwidth    : %g \n", bw_sum / bw_count);
    else
      printf("# Avg bus bandwidth    : N/A \n");
    printf("#\n");
    fflush(stdout);
  }
  BENCH_CHECK(xc_stream_destroy(b.stream));  // waits for its ops; NULL (host memory): nothing
  b.send[0].reset(), b.send[1].reset(), b.recv[0].reset(), b.recv[1].reset();  // before the communicator
  BENCH_CHECK(xc_comm_free(world));
  return total_wrong > 0 ? 1 : 0;
}

}  // namespace xcb
