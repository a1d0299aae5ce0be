// The collective algorithms (algo/) over the point-to-point engine and the
// in-process fake transport (fake_transport.h): N ranks are N threads in this
// process, each driving its own engine through a CollContext. Every op runs
// for N = 1, 2, 3, 4, 5, 7, 8; results are checked against a reference
// computed here (exact for integers and min/max, within a tolerance for
// floating-point sum/prod/avg) and every rank's result must be bit-identical
// to rank 0's.
#include "unit_test.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "algo/algorithms.h"
#include "algo/collective.h"
#include "algo/backends.h"
#include "algo/forced.h"
#include "algo/hier/layout.h"
#include "algo/selector.h"
#include "base/dtype.h"
#include "coll/desc.h"
#include "coll/shm/root_split.h"
#include "cpu/half.h"
#include "cpu/reduce.h"
#include "fake_transport.h"
#include "topo/cores.h"

using xc::Deadline;
using xc::Status;
using xc::coll::CollContext;
using xc_fake::FakeHubOptions;
using xc_fake::FakeWorld;

namespace {

constexpr uint64_t kCtx = 0x5eed;
constexpr uint64_t kDeadlineMs = 20000;

// ---- deterministic inputs ---------------------------------------------------

uint64_t mix(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull ^
               (c + 0x1234567ull) * 0x94d049bb133111ebull;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *b = static_cast<const unsigned char *>(p);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

void fill_pattern(void *buf, size_t bytes, uint64_t seed, uint64_t who) {
  unsigned char *b = static_cast<unsigned char *>(buf);
  for (size_t i = 0; i < bytes; ++i) b[i] = static_cast<unsigned char>(mix(seed, who, i / 8) >> (8 * (i % 8)));
}

bool is_int(xc_dtype_t d) { return xc::dtype_is_integer(d); }

// A float input: [-1, 1) for sum/avg/min/max; magnitude [0.5, 2) with a
// random sign for prod (so a product of 8 neither overflows nor underflows).
double float_input(uint64_t bits, xc_op_t op, bool quirky = false) {
  if (quirky) {  // values where min/max depend on operand order: +0/-0, NaNs
    switch (bits % 8) {
      case 0: case 1: case 2: return 0.0;
      case 3: case 4: case 5: return -0.0;
      case 6: return (bits & 0x100) ? 1.0 : -1.0;
      default: {
        uint64_t nan = 0x7ff8000000000000ull | ((bits >> 12) & 0xfffffffffull);  // rank-specific payload
        double d;
        memcpy(&d, &nan, 8);
        return (bits & 0x200) ? -d : d;
      }
    }
  }
  double u = static_cast<double>(bits >> 11) * 0x1.0p-53;
  if (op == XC_PROD) return (bits & 1 ? -1.0 : 1.0) * (0.5 + 1.5 * u);
  return 2.0 * u - 1.0;
}

void fill_input(void *buf, size_t count, xc_dtype_t dtype, xc_op_t op, uint64_t seed, int rank, bool quirky = false) {
  for (size_t i = 0; i < count; ++i) {
    uint64_t bits = mix(seed, static_cast<uint64_t>(rank), i);
    switch (dtype) {
      case XC_INT8: static_cast<int8_t *>(buf)[i] = static_cast<int8_t>(bits); break;
      case XC_UINT8: static_cast<uint8_t *>(buf)[i] = static_cast<uint8_t>(bits); break;
      case XC_INT32: static_cast<int32_t *>(buf)[i] = static_cast<int32_t>(bits); break;
      case XC_UINT32: static_cast<uint32_t *>(buf)[i] = static_cast<uint32_t>(bits); break;
      case XC_INT64: static_cast<int64_t *>(buf)[i] = static_cast<int64_t>(bits); break;
      case XC_UINT64: static_cast<uint64_t *>(buf)[i] = bits; break;
      case XC_FLOAT16:
        static_cast<uint16_t *>(buf)[i] = xc::cpu::float_to_half(static_cast<float>(float_input(bits, op, quirky)));
        break;
      case XC_BFLOAT16:
        static_cast<uint16_t *>(buf)[i] = xc::cpu::float_to_bf16(static_cast<float>(float_input(bits, op, quirky)));
        break;
      case XC_FLOAT32: static_cast<float *>(buf)[i] = static_cast<float>(float_input(bits, op, quirky)); break;
      case XC_FLOAT64: static_cast<double *>(buf)[i] = float_input(bits, op, quirky); break;
      default: break;
    }
  }
}

double float_at(const void *buf, size_t i, xc_dtype_t dtype) {
  switch (dtype) {
    case XC_FLOAT16: return xc::cpu::half_to_float(static_cast<const uint16_t *>(buf)[i]);
    case XC_BFLOAT16: return xc::cpu::bf16_to_float(static_cast<const uint16_t *>(buf)[i]);
    case XC_FLOAT32: return static_cast<const float *>(buf)[i];
    case XC_FLOAT64: return static_cast<const double *>(buf)[i];
    default: return 0;
  }
}

// ---- failures from rank threads (cmocka asserts only on the main thread) ----

struct Failures {
  std::mutex mu;
  std::vector<std::string> msgs;
  size_t total = 0;
  void add(const char *fmt, ...) __attribute__((format(printf, 2, 3))) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    std::lock_guard<std::mutex> g(mu);
    if (msgs.size() < 20) msgs.emplace_back(line);
    ++total;
  }
};

// ---- the ops ---------------------------------------------------------------------

enum class Kind { kBarrier, kBroadcast, kAllgather, kAllreduce, kAllreduceRd, kAllreduceRing };

struct OpSpec {
  Kind kind;
  size_t bytes = 0;  // broadcast; allgather block
  int root = 0;
  size_t count = 0;  // allreduce
  xc_dtype_t dtype = XC_INT8;
  xc_op_t op = XC_SUM;
  bool quirky = false;  // float min/max on +0/-0 and NaN inputs
  std::string describe() const {
    char s[160];
    switch (kind) {
      case Kind::kBarrier: return "barrier";
      case Kind::kBroadcast: snprintf(s, sizeof s, "broadcast %zu bytes from root %d", bytes, root); return s;
      case Kind::kAllgather: snprintf(s, sizeof s, "allgather %zu-byte blocks", bytes); return s;
      default:
        snprintf(s, sizeof s, "%s count %zu %s %s%s",
                 kind == Kind::kAllreduce ? "allreduce" : kind == Kind::kAllreduceRd ? "allreduce_rd" : "allreduce_ring",
                 count, xc::dtype_name(dtype), xc::op_name(op), quirky ? " (+-0, NaN inputs)" : "");
        return s;
    }
  }
};

const xc_dtype_t kDtypes[] = {XC_INT8, XC_UINT8, XC_INT32, XC_UINT32, XC_INT64,
                              XC_UINT64, XC_FLOAT16, XC_BFLOAT16, XC_FLOAT32, XC_FLOAT64};

std::vector<OpSpec> make_ops(int n) {
  std::vector<OpSpec> ops;
  OpSpec b{Kind::kBarrier};
  for (int i = 0; i < 3; ++i) ops.push_back(b);
  for (int root = 0; root < n; ++root)
    for (size_t bytes : {size_t(0), size_t(1), size_t(1000), size_t(5000), size_t(100000)}) {
      OpSpec o{Kind::kBroadcast};
      o.bytes = bytes;
      o.root = root;
      ops.push_back(o);
    }
  for (size_t bytes : {size_t(0), size_t(1), size_t(13), size_t(5000), size_t(40000)}) {
    OpSpec o{Kind::kAllgather};
    o.bytes = bytes;
    ops.push_back(o);
  }
  for (xc_dtype_t d : kDtypes) {
    size_t esize = xc::dtype_size(d);
    size_t wide = (d == XC_FLOAT16 || d == XC_BFLOAT16) ? 4 : esize;  // halves are reduced as float32
    // Large enough for the ring (>= 64 KiB as reduced), and not a multiple of n.
    size_t large = (64 << 10) / wide + 13;
    std::vector<size_t> counts = {0, 1, 7, static_cast<size_t>(n - 1), large};
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    int last_op = is_int(d) ? XC_BXOR : XC_AVG;
    for (int op = XC_SUM; op <= last_op; ++op)
      for (size_t count : counts) {
        OpSpec o{Kind::kAllreduce};
        o.count = count;
        o.dtype = d;
        o.op = static_cast<xc_op_t>(op);
        ops.push_back(o);
      }
  }
  // Float min/max whose result depends on the operand order (min(+0, -0),
  // which NaN wins): bit-identical results need every rank to combine the
  // same operands in the same order.
  for (xc_dtype_t d : {XC_FLOAT16, XC_BFLOAT16, XC_FLOAT32, XC_FLOAT64})
    for (xc_op_t op : {XC_MIN, XC_MAX}) {
      OpSpec o{Kind::kAllreduce};
      o.count = 200;
      o.dtype = d;
      o.op = op;
      o.quirky = true;
      ops.push_back(o);
    }
  // The two algorithms called directly, outside the sizes allreduce() picks
  // them for: the ring with fewer elements than ranks (empty chunks), and
  // recursive doubling on a large buffer.
  for (size_t count : {size_t(0), size_t(1), size_t(n > 1 ? n - 1 : 2), size_t(1000)}) {
    OpSpec o{Kind::kAllreduceRing};
    o.count = count;
    o.dtype = XC_INT32;
    o.op = XC_SUM;
    ops.push_back(o);
    o.dtype = XC_FLOAT64;
    o.op = XC_MAX;
    ops.push_back(o);
    o.dtype = XC_FLOAT32;
    o.op = XC_SUM;
    ops.push_back(o);
  }
  for (xc_dtype_t d : {XC_INT64, XC_FLOAT64}) {
    OpSpec o{Kind::kAllreduceRd};
    o.count = 20000;
    o.dtype = d;
    o.op = d == XC_INT64 ? XC_BXOR : XC_SUM;
    ops.push_back(o);
  }
  return ops;
}

// ---- reference checks (run by comm rank 0) ---------------------------------------

template <typename T>
T int_combine(T a, T b, xc_op_t op) {
  switch (op) {
    case XC_SUM: case XC_AVG: return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    case XC_PROD: return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    case XC_MIN: return std::min(a, b);
    case XC_MAX: return std::max(a, b);
    case XC_BAND: return static_cast<T>(a & b);
    case XC_BOR: return static_cast<T>(a | b);
    case XC_BXOR: return static_cast<T>(a ^ b);
    default: return a;
  }
}

template <typename T>
size_t check_int(const OpSpec &o, uint64_t seed, int n, const void *result, Failures &f, const char *where) {
  std::vector<T> in(o.count), acc(o.count);
  fill_input(acc.data(), o.count, o.dtype, o.op, seed, 0, o.quirky);
  for (int r = 1; r < n; ++r) {
    fill_input(in.data(), o.count, o.dtype, o.op, seed, r, o.quirky);
    for (size_t i = 0; i < o.count; ++i) acc[i] = int_combine(acc[i], in[i], o.op);
  }
  bool avg = o.op == XC_AVG && o.kind == Kind::kAllreduce;
  const T *res = static_cast<const T *>(result);
  size_t bad = 0;
  for (size_t i = 0; i < o.count; ++i) {
    T want = avg ? static_cast<T>(acc[i] / static_cast<T>(n)) : acc[i];
    if (res[i] != want && bad++ < 3)
      f.add("%s: %s element %zu is %lld, expected %lld", where, o.describe().c_str(), i,
            static_cast<long long>(res[i]), static_cast<long long>(want));
  }
  return bad;
}

size_t check_float(const OpSpec &o, uint64_t seed, int n, const void *result, Failures &f, const char *where) {
  size_t esize = xc::dtype_size(o.dtype);
  std::vector<char> in(o.count * esize);
  std::vector<double> acc(o.count), mag(o.count);
  for (int r = 0; r < n; ++r) {
    fill_input(in.data(), o.count, o.dtype, o.op, seed, r, o.quirky);
    for (size_t i = 0; i < o.count; ++i) {
      double x = float_at(in.data(), i, o.dtype);
      if (r == 0 || std::isnan(x)) {  // min/max propagate a NaN
        acc[i] = x;
        mag[i] = std::fabs(x);
        continue;
      }
      if (std::isnan(acc[i])) continue;
      switch (o.op) {
        case XC_SUM: case XC_AVG: acc[i] += x; mag[i] += std::fabs(x); break;
        case XC_PROD: acc[i] *= x; break;
        case XC_MIN: acc[i] = std::min(acc[i], x); break;
        case XC_MAX: acc[i] = std::max(acc[i], x); break;
        default: break;
      }
    }
  }
  // Rounding unit of the accumulation and of the output.
  double eps_acc, eps_out, tiny;
  switch (o.dtype) {
    case XC_FLOAT64: eps_acc = eps_out = 0x1.0p-53; tiny = 0; break;
    case XC_FLOAT32: eps_acc = eps_out = 0x1.0p-24; tiny = 0; break;
    case XC_FLOAT16: eps_acc = 0x1.0p-24; eps_out = 0x1.0p-11; tiny = 0x1.0p-24; break;
    default: eps_acc = 0x1.0p-24; eps_out = 0x1.0p-8; tiny = 0x1.0p-126; break;  // bfloat16
  }
  if (o.kind == Kind::kAllreduceRing && (o.dtype == XC_FLOAT16 || o.dtype == XC_BFLOAT16)) eps_acc = eps_out;
  size_t bad = 0;
  for (size_t i = 0; i < o.count; ++i) {
    double want = acc[i], got = float_at(result, i, o.dtype), tol = 0;
    switch (o.op) {
      case XC_SUM: tol = (n + 2) * eps_acc * mag[i] + 2 * eps_out * std::fabs(want) + tiny; break;
      case XC_AVG:
        want /= n;
        tol = (n + 3) * eps_acc * mag[i] / n + 2 * eps_out * std::fabs(want) + tiny;
        break;
      case XC_PROD: tol = ((n + 2) * eps_acc + 2 * eps_out) * std::fabs(want); break;
      default: tol = 0; break;  // min, max: exact
    }
    bool good = std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= tol;
    if (!good && bad++ < 3)
      f.add("%s: %s element %zu is %.17g, expected %.17g (tolerance %.3g)", where, o.describe().c_str(), i, got,
            want, tol);
  }
  return bad;
}

size_t check_allreduce(const OpSpec &o, uint64_t seed, int n, const void *result, Failures &f, const char *where) {
  switch (o.dtype) {
    case XC_INT8: return check_int<int8_t>(o, seed, n, result, f, where);
    case XC_UINT8: return check_int<uint8_t>(o, seed, n, result, f, where);
    case XC_INT32: return check_int<int32_t>(o, seed, n, result, f, where);
    case XC_UINT32: return check_int<uint32_t>(o, seed, n, result, f, where);
    case XC_INT64: return check_int<int64_t>(o, seed, n, result, f, where);
    case XC_UINT64: return check_int<uint64_t>(o, seed, n, result, f, where);
    default: return check_float(o, seed, n, result, f, where);
  }
}

// ---- one world ---------------------------------------------------------------------

struct WorldConfig {
  int n;
  bool reversed_members;  // comm rank r is fabric rank n-1-r
  bool read_remote;
  size_t capacity_frames;
};

struct Run {
  explicit Run(const WorldConfig &c)
      : cfg(c), world(hub(c), engine_opts()), ops(make_ops(c.n)),
        hashes(ops.size(), std::vector<uint64_t>(static_cast<size_t>(c.n), 0)),
        arrived(ops.size()) {
    std::vector<int> m(static_cast<size_t>(c.n));
    for (int r = 0; r < c.n; ++r) m[static_cast<size_t>(r)] = c.reversed_members ? c.n - 1 - r : r;
    members = std::make_shared<const std::vector<int>>(m);
    for (auto &a : arrived) a = 0;
  }
  static FakeHubOptions hub(const WorldConfig &c) {
    FakeHubOptions h;
    h.ranks = c.n;
    h.capacity_frames = c.capacity_frames;
    h.max_payload = 4096;
    h.eager_bytes = 1024;  // so 5000-byte pieces already go by rendezvous
    h.read_remote = c.read_remote;
    return h;
  }
  static xc::EngineOptions engine_opts() {
    xc::EngineOptions o;
    o.spin = 50;
    return o;
  }

  WorldConfig cfg;
  FakeWorld world;
  std::shared_ptr<const std::vector<int>> members;
  std::vector<OpSpec> ops;
  std::vector<std::vector<uint64_t>> hashes;  // [op][comm rank]
  std::vector<std::atomic<int>> arrived;      // barrier check
  std::atomic<bool> stop{false};
  Failures failures;

  void abort_all(const char *why) {
    stop = true;
    for (int r = 0; r < cfg.n; ++r) world.engine(r).abort_context(kCtx, xc::Error(XC_ERR_ABORTED, "%s", why));
  }

  void rank_main(int fabric_rank) {
    int me = static_cast<int>(std::find(members->begin(), members->end(), fabric_rank) - members->begin());
    int n = cfg.n;
    xc::P2pEngine &engine = world.engine(fabric_rank);
    char where[64];
    snprintf(where, sizeof where, "n=%d rank %d", n, me);
    std::vector<char> buf, want;
    for (size_t k = 0; k < ops.size() && !stop; ++k) {
      const OpSpec &o = ops[k];
      uint64_t seed = k * 7919 + static_cast<uint64_t>(n);
      CollContext c(engine, members, me, kCtx, static_cast<int>(k), Deadline::AfterMs(kDeadlineMs));
      Status st;
      switch (o.kind) {
        case Kind::kBarrier: {
          // The last rank arrives late; nobody may leave before everyone came.
          if (me == n - 1) std::this_thread::sleep_for(std::chrono::milliseconds(3));
          arrived[k].fetch_add(1);
          st = xc::algo::barrier_dissemination(c);
          if (st.ok() && arrived[k].load() != n)
            failures.add("%s: left barrier op %zu with only %d of %d ranks arrived", where, k, arrived[k].load(), n);
          buf.clear();
          break;
        }
        case Kind::kBroadcast: {
          buf.assign(o.bytes, static_cast<char>(0xee));
          if (me == o.root) fill_pattern(buf.data(), o.bytes, seed, 0);
          st = xc::algo::broadcast_binomial(c, buf.data(), o.bytes, o.root);
          if (st.ok()) {
            want.resize(o.bytes);
            fill_pattern(want.data(), o.bytes, seed, 0);
            if (o.bytes && memcmp(buf.data(), want.data(), o.bytes) != 0)
              failures.add("%s: %s delivered wrong bytes", where, o.describe().c_str());
          }
          break;
        }
        case Kind::kAllgather: {
          size_t total = o.bytes * static_cast<size_t>(n);
          buf.assign(total, static_cast<char>(0xee));
          fill_pattern(buf.data() + static_cast<size_t>(me) * o.bytes, o.bytes, seed, static_cast<uint64_t>(me));
          st = xc::algo::allgather_ring(c, buf.data(), o.bytes);
          if (st.ok()) {
            want.resize(total);
            for (int r = 0; r < n; ++r)
              fill_pattern(want.data() + static_cast<size_t>(r) * o.bytes, o.bytes, seed, static_cast<uint64_t>(r));
            for (int r = 0; r < n && o.bytes; ++r)
              if (memcmp(buf.data() + static_cast<size_t>(r) * o.bytes, want.data() + static_cast<size_t>(r) * o.bytes,
                         o.bytes) != 0)
                failures.add("%s: %s: block of rank %d is wrong", where, o.describe().c_str(), r);
          }
          break;
        }
        default: {
          size_t bytes = o.count * xc::dtype_size(o.dtype);
          buf.assign(bytes, 0);
          fill_input(buf.data(), o.count, o.dtype, o.op, seed, me, o.quirky);
          if (o.kind == Kind::kAllreduce)
            st = xc::algo::allreduce(c, buf.data(), o.count, o.dtype, o.op);
          else if (o.kind == Kind::kAllreduceRd)
            st = xc::algo::allreduce_recursive_doubling(c, buf.data(), o.count, o.dtype, o.op);
          else
            st = xc::algo::allreduce_ring(c, buf.data(), o.count, o.dtype, o.op);
          if (st.ok() && me == 0) check_allreduce(o, seed, n, buf.data(), failures, where);
          break;
        }
      }
      if (!st.ok()) {
        failures.add("%s: %s (op %zu) failed: %d %s", where, o.describe().c_str(), k, static_cast<int>(st.code()),
                     st.message().c_str());
        abort_all("another rank failed");
        return;
      }
      hashes[k][static_cast<size_t>(me)] = fnv1a(buf.data(), buf.size());
    }
  }
};

void run_world(const WorldConfig &cfg) {
  auto t0 = std::chrono::steady_clock::now();
  auto run = std::make_unique<Run>(cfg);
  std::vector<std::thread> threads;
  for (int r = 0; r < cfg.n; ++r) threads.emplace_back([&run, r] { run->rank_main(r); });
  for (auto &t : threads) t.join();
  // Bit-identical results everywhere.
  if (!run->stop)
    for (size_t k = 0; k < run->ops.size(); ++k)
      for (int r = 1; r < cfg.n; ++r)
        if (run->hashes[k][static_cast<size_t>(r)] != run->hashes[k][0])
          run->failures.add("n=%d: %s (op %zu): rank %d's result differs from rank 0's", cfg.n,
                            run->ops[k].describe().c_str(), k, r);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  printf("  n=%d: %zu ops in %lld ms (members %s, %s, FIFO %zu frames)\n", cfg.n, run->ops.size(),
         static_cast<long long>(ms), cfg.reversed_members ? "reversed" : "in order",
         cfg.read_remote ? "single-copy" : "chunked copy", cfg.capacity_frames);
  for (const auto &m : run->failures.msgs) print_error("%s\n", m.c_str());
  if (run->world.hub().violations()) print_error("transport contract breach: %s\n",
                                                 run->world.hub().first_violation().c_str());
  assert_int_equal(run->failures.total, 0);
  assert_int_equal(run->world.hub().violations(), 0);
}

void collectives_n1(void **) { run_world({1, false, false, 8}); }
void collectives_n2(void **) { run_world({2, false, false, 8}); }
void collectives_n3(void **) { run_world({3, true, true, 8}); }
void collectives_n4(void **) { run_world({4, false, false, 2}); }
void collectives_n5(void **) { run_world({5, true, false, 8}); }
void collectives_n7(void **) { run_world({7, false, true, 4}); }
void collectives_n8(void **) { run_world({8, true, false, 8}); }

// A rank dies before it joins an allreduce: the others fail with
// XC_ERR_PEER_FAILED soon, rather than waiting out their deadline.
void allreduce_fails_fast_when_a_rank_dies(void **) {
  const int n = 4;
  FakeHubOptions h;
  h.ranks = n;
  FakeWorld world(h, Run::engine_opts());
  auto members = std::make_shared<const std::vector<int>>(std::vector<int>{0, 1, 2, 3});
  Status st[n];
  std::vector<std::thread> threads;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < n - 1; ++r)
    threads.emplace_back([&, r] {
      std::vector<int32_t> buf(1000, r);
      CollContext c(world.engine(r), members, r, kCtx, 1, Deadline::AfterMs(10000));
      st[r] = xc::algo::allreduce(c, buf.data(), buf.size(), XC_INT32, XC_SUM);
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  world.hub().kill(n - 1);
  for (auto &t : threads) t.join();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  for (int r = 0; r < n - 1; ++r) {
    if (st[r].code() != XC_ERR_PEER_FAILED) print_error("rank %d: %d %s\n", r, st[r].code(), st[r].message().c_str());
    assert_int_equal(static_cast<int>(st[r].code()), XC_ERR_PEER_FAILED);
  }
  assert_true(ms < 3000);
}

// ---- every collective through the dispatcher, every algorithm ---------------------
// run_algorithm() with each algorithm each op has, in place and not, at counts
// 0, 1, n+3 and 1500, and 40001 for the hierarchical ones (v-ops: uneven blocks, some empty, laid out in reverse
// rank order with gaps), roots 0 and n-1, integer and floating dtypes (float16
// and bfloat16 through the float32 widening, AVG divided once). Every rank
// checks its whole receive buffer against a reference built here: exact for
// integers, min and max and all data movement; within rounding for
// floating-point sums.

using xc::CollDesc;
using xc::CollKind;
using xc::algo::Algo;

struct Case {
  CollKind kind;
  Algo algo;
  size_t count;
  xc_dtype_t dtype;
  xc_op_t op;
  int root;
  bool in_place;
  std::string describe() const {
    char s[200];
    snprintf(s, sizeof s, "%s/%s count %zu %s %s root %d%s", xc::coll_kind_name(kind), xc::algo::algo_name(algo),
             count, xc::dtype_name(dtype), xc::op_name(op), root, in_place ? " in place" : "");
    return s;
  }
};

bool rooted(CollKind k) {
  return k == CollKind::kBroadcast || k == CollKind::kReduce || k == CollKind::kGather || k == CollKind::kGatherv ||
         k == CollKind::kScatter || k == CollKind::kScatterv;
}

const std::vector<Algo> kP2p = {Algo::kDissemination, Algo::kBinomial,  Algo::kScatterAllgather,
                                Algo::kReduceScatterGather, Algo::kRecursiveDoubling, Algo::kRing,
                                Algo::kBruck,         Algo::kLinear,    Algo::kPairwise};

// big: also 40001 elements (beyond one-shot's reach: the hierarchical
// algorithms' local phases then run single copy or the pipelines).
std::vector<Case> make_cases(int n, const std::vector<Algo> &p2p = kP2p, bool big = false) {
  const std::pair<xc_dtype_t, xc_op_t> red[] = {{XC_INT32, XC_SUM},   {XC_UINT8, XC_BXOR},   {XC_INT64, XC_MAX},
                                                {XC_INT32, XC_AVG},   {XC_FLOAT32, XC_SUM},  {XC_FLOAT16, XC_AVG},
                                                {XC_BFLOAT16, XC_SUM}, {XC_FLOAT64, XC_MIN}};
  const xc_dtype_t moved[] = {XC_UINT8, XC_INT32, XC_FLOAT16, XC_FLOAT64};
  std::vector<Case> cases;
  for (int k = 0; k < xc::kCollKindCount; ++k) {
    CollKind kind = static_cast<CollKind>(k);
    for (Algo a : p2p) {
      if (!xc::algo::algo_applies(kind, a)) continue;
      if (kind == CollKind::kBarrier) {
        cases.push_back({kind, a, 0, XC_UINT8, XC_SUM, 0, false});
        continue;
      }
      int v = 0;
      for (size_t count : {size_t(0), size_t(1), static_cast<size_t>(n + 3), size_t(1500), size_t(40001)})
        for (int last : {0, 1}) {
          int root = last ? n - 1 : 0;
          if (count == 40001 && (!big || root != 0)) continue;
          if (root != 0 && !rooted(kind)) continue;
          if (last && n == 1) continue;  // the same as root 0 (this skipped both at n = 1)
          for (bool in_place : {false, true}) {
            if (in_place && kind == CollKind::kBroadcast) continue;
            if (xc::coll_kind_reduces(kind)) {
              // All eight dtype/op pairs at small counts, two at the largest.
              for (size_t i = 0; i < 8; ++i) {
                if (count >= 1500 && (i + static_cast<size_t>(v)) % 4 != 0) continue;
                cases.push_back({kind, a, count, red[i].first, red[i].second, root, in_place});
              }
            } else {
              cases.push_back({kind, a, count, moved[v % 4], XC_SUM, root, in_place});
            }
            ++v;
          }
        }
    }
  }
  return cases;
}

// Sizes of the v-ops: uneven, some blocks empty. Symmetric in (i, j) so an
// in-place alltoallv (send layout = receive layout) is consistent.
size_t vcount(size_t count, int i, int j = 0) { return static_cast<size_t>((i + j) % 3) * count + static_cast<size_t>((i * j + i + j) % 2); }

// Blocks laid out in reverse rank order with one element of gap after each.
std::vector<size_t> reverse_displs(const std::vector<size_t> &counts, size_t *extent) {
  std::vector<size_t> d(counts.size());
  size_t at = 0;
  for (size_t q = counts.size(); q-- > 0;) {
    d[q] = at;
    at += counts[q] + 1;
  }
  *extent = at;
  return d;
}

// The data rank q sends to rank j (alltoall, scatter, gather blocks).
void block_data(void *buf, size_t cnt, xc_dtype_t dt, uint64_t seed, int q, int j) {
  fill_input(buf, cnt, dt, XC_SUM, seed * 131 + static_cast<uint64_t>(j) + 1, q);
}

// Rank-order reduction of ranks [first, last] of inputs (each an array of
// dtype; elements [off, off + cnt)), with the library's semantics: 16-bit
// floats in float32, AVG divided at the end by the number of inputs. mag gets sum |x| (floats).
void reference_reduce(const std::vector<std::vector<char>> &inputs, int first, int last, size_t off, size_t cnt,
                      xc_dtype_t dt, xc_op_t op, void *out, std::vector<double> *mag) {
  size_t es = xc::dtype_size(dt);
  bool half = dt == XC_FLOAT16 || dt == XC_BFLOAT16;
  xc_dtype_t rt = half ? XC_FLOAT32 : dt;
  size_t rs = xc::dtype_size(rt);
  std::vector<char> acc(cnt * rs), x(cnt * rs);
  mag->assign(cnt, 0.0);
  for (int q = first; q <= last; ++q) {
    const char *src = inputs[static_cast<size_t>(q)].data() + off * es;
    if (half)
      xc::cpu::widen_to_float(src, reinterpret_cast<float *>(x.data()), cnt, dt);
    else if (cnt)
      memcpy(x.data(), src, cnt * es);
    if (!is_int(dt))
      for (size_t i = 0; i < cnt; ++i) (*mag)[i] += std::fabs(float_at(x.data(), i, rt));
    if (q == first) {
      acc = x;
    } else {
      xc::cpu::reduce(acc.data(), x.data(), cnt, rt, op);
    }
  }
  if (op == XC_AVG) {
    int inputs = last - first + 1;  // scan/exscan average their prefix
    xc::cpu::scale_avg(acc.data(), cnt, rt, inputs);
    for (double &m : *mag) m /= inputs;
  }
  if (half)
    xc::cpu::narrow_from_float(reinterpret_cast<const float *>(acc.data()), out, cnt, dt);
  else if (cnt)
    memcpy(out, acc.data(), cnt * es);
}

// got vs want, cnt elements: bytes for integers and min/max, within rounding otherwise.
bool reduction_matches(const void *got, const void *want, size_t cnt, xc_dtype_t dt, xc_op_t op, int nranks,
                       const std::vector<double> &mag, size_t *where) {
  if (is_int(dt) || op == XC_MIN || op == XC_MAX) {
    size_t es = xc::dtype_size(dt);
    for (size_t i = 0; i < cnt; ++i)
      if (memcmp(static_cast<const char *>(got) + i * es, static_cast<const char *>(want) + i * es, es) != 0) {
        *where = i;
        return false;
      }
    return true;
  }
  double eps = dt == XC_FLOAT64 ? 0x1.0p-50 : dt == XC_FLOAT32 ? 0x1.0p-21 : dt == XC_FLOAT16 ? 0x1.0p-9 : 0x1.0p-6;
  double tiny = dt == XC_FLOAT16 ? 0x1.0p-14 : 0;
  for (size_t i = 0; i < cnt; ++i) {
    double g = float_at(got, i, dt), w = float_at(want, i, dt);
    if (!(std::fabs(g - w) <= (nranks + 2) * eps * mag[i] + tiny)) {
      *where = i;
      return false;
    }
  }
  return true;
}

struct CaseRun {
  // hosts: the host of each rank, for the hierarchical algorithms (each rank
  // then gets the hierarchical backend, and its host's members shared memory).
  explicit CaseRun(int n_, const std::vector<int> &hosts = {})
      : n(n_), world(hub(n_), Run::engine_opts()),
        cases(hosts.empty() ? make_cases(n_) : make_cases(n_, hier_algos(hosts), true)),
        backends(static_cast<size_t>(n_)) {
    std::vector<int> m(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) m[static_cast<size_t>(r)] = r;
    members = std::make_shared<const std::vector<int>>(m);
    if (!hosts.empty())
      for (int r = 0; r < n; ++r) {
        xc::algo::Team team;
        team.size = n;
        team.rank = r;
        team.hosts = hosts;
        xc::algo::add_backends(team, &backends[static_cast<size_t>(r)]);
      }
  }
  static std::vector<Algo> hier_algos(const std::vector<int> &hosts) {
    if (xc::algo::hier::make_layout(hosts).equal()) return {Algo::kHierLeader, Algo::kHierMultiLeader};
    return {Algo::kHierLeader};
  }
  static FakeHubOptions hub(int n) {
    FakeHubOptions h;
    h.ranks = n;
    h.capacity_frames = 8;
    h.max_payload = 4096;
    return h;
  }

  int n;
  FakeWorld world;
  std::shared_ptr<const std::vector<int>> members;
  std::vector<Case> cases;
  std::vector<xc::coll::BackendSet> backends;  // per rank
  std::atomic<bool> stop{false};
  Failures failures;

  void rank_main(int me) {
    for (size_t k = 0; k < cases.size() && !stop; ++k) {
      const Case &cs = cases[k];
      CollContext c(world.engine(me), members, me, kCtx + 1, static_cast<int>(k), Deadline::AfterMs(kDeadlineMs));
      c.set_backends(&backends[static_cast<size_t>(me)]);
      Status st = run_case(c, cs, k * 7919 + static_cast<uint64_t>(n), me);
      if (!st.ok()) {
        failures.add("n=%d rank %d: %s failed: %d %s", n, me, cs.describe().c_str(), static_cast<int>(st.code()),
                     st.message().c_str());
        stop = true;
        for (int r = 0; r < n; ++r)
          world.engine(r).abort_context(kCtx + 1, xc::Error(XC_ERR_ABORTED, "another rank failed"));
        return;
      }
    }
  }

  Status run_case(CollContext &c, const Case &cs, uint64_t seed, int me) {
    size_t es = xc::dtype_size(cs.dtype), cnt = cs.count, un = static_cast<size_t>(n);
    bool root = me == cs.root;
    CollDesc d;
    d.kind = cs.kind;
    d.dtype = cs.dtype;
    d.op = cs.op;
    d.root = cs.root;
    d.count = cnt;
    d.in_place = cs.in_place;
    std::vector<char> send, recv, want;
    bool recv_null = false;  // recvbuf passed as nullptr (non-roots of reduce/gather, scatter root in place)
    bool reduced = false;    // want's first red_count elements compare as a reduction
    size_t red_count = 0;
    std::vector<double> mag;
    auto sentinel = [](std::vector<char> &v, size_t bytes) { v.assign(bytes, static_cast<char>(0xee)); };
    auto input = [&](int q, size_t elems) {
      std::vector<char> v(elems * es);
      fill_input(v.data(), elems, cs.dtype, cs.op, seed, q);
      return v;
    };
    auto all_inputs = [&](size_t elems) {
      std::vector<std::vector<char>> v;
      for (int q = 0; q < n; ++q) v.push_back(input(q, elems));
      return v;
    };
    switch (cs.kind) {
      case CollKind::kBarrier: break;
      case CollKind::kBroadcast:
        want = input(cs.root, cnt);
        if (root) recv = want; else sentinel(recv, cnt * es);
        break;
      case CollKind::kReduce:
      case CollKind::kAllreduce:
      case CollKind::kScan:
      case CollKind::kExscan: {
        auto ins = all_inputs(cnt);
        bool has_out = cs.kind != CollKind::kReduce || root;
        if (cs.in_place && cs.kind == CollKind::kReduce && !root) d.in_place = false;  // root only
        if (d.in_place) recv = ins[static_cast<size_t>(me)]; else { send = ins[static_cast<size_t>(me)]; sentinel(recv, has_out ? cnt * es : 0); }
        recv_null = !has_out;
        want = recv;
        int first = 0, last = n - 1;
        if (cs.kind == CollKind::kScan) last = me;
        if (cs.kind == CollKind::kExscan) last = me - 1;
        if (has_out && last >= first) {
          reference_reduce(ins, first, last, 0, cnt, cs.dtype, cs.op, want.data(), &mag);
          reduced = true;
          red_count = cnt;
        }
        break;
      }
      case CollKind::kReduceScatter:
      case CollKind::kReduceScatterv: {
        if (cs.kind == CollKind::kReduceScatterv)
          for (int q = 0; q < n; ++q) d.recvcounts.push_back(vcount(cnt, q));
        else
          d.recvcounts.assign(un, cnt);
        size_t total = 0, off = 0;
        for (int q = 0; q < n; ++q) {
          if (q < me) off += d.recvcounts[static_cast<size_t>(q)];
          total += d.recvcounts[static_cast<size_t>(q)];
        }
        size_t mine = d.recvcounts[static_cast<size_t>(me)];
        if (cs.kind == CollKind::kReduceScatterv) d.count = mine; else d.recvcounts.clear();
        auto ins = all_inputs(total);
        if (d.in_place) recv = ins[static_cast<size_t>(me)]; else { send = ins[static_cast<size_t>(me)]; sentinel(recv, mine * es); }
        want = recv;
        reference_reduce(ins, 0, n - 1, off, mine, cs.dtype, cs.op, want.data(), &mag);
        reduced = true;
        red_count = mine;
        if (d.in_place) want.resize(mine * es);  // the rest of the input is scratch
        break;
      }
      case CollKind::kAllgather:
      case CollKind::kAllgatherv:
      case CollKind::kGather:
      case CollKind::kGatherv: {
        bool v = cs.kind == CollKind::kAllgatherv || cs.kind == CollKind::kGatherv;
        bool all = cs.kind == CollKind::kAllgather || cs.kind == CollKind::kAllgatherv;
        bool gets = all || root;
        if (cs.in_place && !gets) d.in_place = false;
        std::vector<size_t> counts(un, cnt), displs(un);
        size_t extent = un * cnt;
        if (v) {
          for (int q = 0; q < n; ++q) counts[static_cast<size_t>(q)] = vcount(cnt, q);
          displs = reverse_displs(counts, &extent);
        } else {
          for (size_t q = 0; q < un; ++q) displs[q] = q * cnt;
        }
        d.count = counts[static_cast<size_t>(me)];
        if (v && gets) {
          d.recvcounts = counts;
          d.rdispls = displs;
        }
        std::vector<char> mine(d.count * es);
        block_data(mine.data(), d.count, cs.dtype, seed, me, 0);
        if (gets) {
          sentinel(want, extent * es);
          for (int q = 0; q < n; ++q)
            block_data(want.data() + displs[static_cast<size_t>(q)] * es, counts[static_cast<size_t>(q)], cs.dtype, seed, q, 0);
          sentinel(recv, extent * es);
        } else {
          recv_null = true;
        }
        if (d.in_place) {
          if (!mine.empty()) memcpy(recv.data() + displs[static_cast<size_t>(me)] * es, mine.data(), mine.size());
        } else {
          send = mine;
        }
        break;
      }
      case CollKind::kScatter:
      case CollKind::kScatterv: {
        bool v = cs.kind == CollKind::kScatterv;
        std::vector<size_t> counts(un, cnt), displs(un);
        size_t extent = un * cnt;
        if (v) {
          for (int q = 0; q < n; ++q) counts[static_cast<size_t>(q)] = vcount(cnt, q);
          displs = reverse_displs(counts, &extent);
        } else {
          for (size_t q = 0; q < un; ++q) displs[q] = q * cnt;
        }
        d.count = counts[static_cast<size_t>(me)];
        if (cs.in_place && !root) d.in_place = false;
        if (root) {
          sentinel(send, extent * es);
          for (int q = 0; q < n; ++q)
            block_data(send.data() + displs[static_cast<size_t>(q)] * es, counts[static_cast<size_t>(q)], cs.dtype, seed, cs.root, q);
          if (v) {
            d.sendcounts = counts;
            d.sdispls = displs;
          }
        }
        if (d.in_place) {
          recv_null = true;
        } else {
          sentinel(recv, d.count * es);
          want.resize(d.count * es);
          block_data(want.data(), d.count, cs.dtype, seed, cs.root, me);
        }
        break;
      }
      case CollKind::kAlltoall:
      case CollKind::kAlltoallv: {
        bool v = cs.kind == CollKind::kAlltoallv;
        std::vector<size_t> rc(un, cnt), rd(un), sc(un, cnt), sd(un);
        size_t rext = un * cnt, sext = un * cnt;
        if (v) {
          for (int q = 0; q < n; ++q) {
            rc[static_cast<size_t>(q)] = vcount(cnt, q, me);
            sc[static_cast<size_t>(q)] = vcount(cnt, me, q);
          }
          rd = reverse_displs(rc, &rext);
          size_t at = 0;
          for (size_t q = 0; q < un; ++q) {
            sd[q] = at;
            at += sc[q];
          }
          sext = at;
          if (d.in_place) {
            sd = rd;
            sext = rext;
          }
          d.recvcounts = rc;
          d.rdispls = rd;
          d.sendcounts = sc;
          d.sdispls = sd;
        } else {
          for (size_t q = 0; q < un; ++q) rd[q] = sd[q] = q * cnt;
        }
        std::vector<char> in;
        sentinel(in, sext * es);
        for (int q = 0; q < n; ++q)
          block_data(in.data() + sd[static_cast<size_t>(q)] * es, sc[static_cast<size_t>(q)], cs.dtype, seed, me, q);
        sentinel(want, rext * es);
        for (int q = 0; q < n; ++q)
          block_data(want.data() + rd[static_cast<size_t>(q)] * es, rc[static_cast<size_t>(q)], cs.dtype, seed, q, me);
        if (d.in_place) {
          recv = in;
        } else {
          send = in;
          sentinel(recv, rext * es);
        }
        break;
      }
    }
    // Scatter's in-place marker is recvbuf; its root always reads sendbuf.
    bool scatter = cs.kind == CollKind::kScatter || cs.kind == CollKind::kScatterv;
    d.sendbuf = (d.in_place && !scatter) || send.empty() ? nullptr : send.data();
    d.recvbuf = recv_null ? nullptr : recv.data();
    XC_TRY(xc::algo::run_algorithm(c, d, cs.algo));
    char where[64];
    snprintf(where, sizeof where, "n=%d rank %d", n, me);
    if (recv_null) return Status::Ok();
    size_t check = std::min(recv.size(), want.size());
    if (recv.size() < want.size()) {
      failures.add("%s: %s: receive buffer shorter than expected", where, cs.describe().c_str());
      return Status::Ok();
    }
    size_t at = 0;
    if (reduced) {
      if (!reduction_matches(recv.data(), want.data(), red_count, cs.dtype, cs.op, n, mag, &at))
        failures.add("%s: %s: element %zu is %.17g, expected %.17g", where, cs.describe().c_str(), at,
                     is_int(cs.dtype) ? 0.0 : float_at(recv.data(), at, cs.dtype),
                     is_int(cs.dtype) ? 0.0 : float_at(want.data(), at, cs.dtype));
      size_t head = red_count * es;
      if (check > head && memcmp(recv.data() + head, want.data() + head, check - head) != 0)
        failures.add("%s: %s: bytes after the result changed", where, cs.describe().c_str());
    } else if (check && memcmp(recv.data(), want.data(), check) != 0) {
      while (at < check && recv[at] == want[at]) ++at;
      failures.add("%s: %s: byte %zu of %zu is wrong", where, cs.describe().c_str(), at, check);
    }
    return Status::Ok();
  }
};

void run_cases(int n, const std::vector<int> &hosts = {}) {
  auto t0 = std::chrono::steady_clock::now();
  auto run = std::make_unique<CaseRun>(n, hosts);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&run, r] { run->rank_main(r); });
  for (auto &t : threads) t.join();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  printf("  n=%d: %zu cases through run_algorithm in %lld ms\n", n, run->cases.size(), static_cast<long long>(ms));
  for (const auto &m : run->failures.msgs) print_error("%s\n", m.c_str());
  assert_int_equal(run->failures.total, 0);
}

void every_algorithm_n1(void **) { run_cases(1); }
void every_algorithm_n2(void **) { run_cases(2); }
void every_algorithm_n3(void **) { run_cases(3); }
void every_algorithm_n4(void **) { run_cases(4); }
void every_algorithm_n5(void **) { run_cases(5); }
void every_algorithm_n6(void **) { run_cases(6); }
void every_algorithm_n8(void **) { run_cases(8); }

// The hierarchical algorithms on hosts of threads: their local phases run
// the shared-memory algorithms between threads of this process (the same
// segment mapped once per rank, single copy within the process).
void hierarchical_2x2(void **) { run_cases(4, {7, 7, 9, 9}); }
void hierarchical_2x3_dealt(void **) { run_cases(6, {0, 1, 0, 1, 0, 1}); }  // hosts are not ranges of ranks
void hierarchical_3x2_mixed(void **) { run_cases(6, {0, 1, 1, 2, 0, 2}); }
void hierarchical_2_plus_1(void **) { run_cases(3, {0, 0, 1}); }
void hierarchical_1_plus_3_plus_1(void **) { run_cases(5, {4, 6, 6, 5, 6}); }

void host_layout(void **) {
  using xc::algo::hier::make_layout;
  auto l = make_layout({5, 5, 3, 3});
  assert_int_equal(l.hosts(), 2);
  assert_true(l.contiguous && l.equal() && l.hierarchical());
  assert_int_equal(l.rank_at(1, 0), 2);
  l = make_layout({0, 1, 0, 1, 0});  // dealt round-robin, unequal
  assert_int_equal(l.hosts(), 2);
  assert_false(l.contiguous);
  assert_false(l.equal());
  assert_int_equal(l.min_local, 2);
  assert_int_equal(l.max_local, 3);
  assert_int_equal(l.rank_at(0, 2), 4);
  assert_int_equal(l.local_of[3], 1);
  assert_int_equal(l.host_position(3), 4);  // host 0's three members first
  assert_int_equal(l.offset[1], 3);
  assert_false(make_layout({0, 1, 2}).hierarchical());  // one rank per host: flat
  assert_false(make_layout({4, 4, 4}).hierarchical());  // one host: shared memory
  assert_true(make_layout({4, 4, 5}).hierarchical());
  // The hierarchical backend goes exactly to such teams.
  xc::algo::Team t;
  t.size = 3;
  t.hosts = {0, 1, 2};
  xc::coll::BackendSet none, some;
  xc::algo::add_backends(t, &none);
  assert_null(none.get(xc::coll::BackendId::kHier));
  t.hosts = {0, 1, 1};
  xc::algo::add_backends(t, &some);
  assert_non_null(some.get(xc::coll::BackendId::kHier));
  assert_null(some.get(xc::coll::BackendId::kShm));
}

// ---- the selector and XC_ALGO --------------------------------------------------

void selector_policy(void **) {
  using xc::algo::choose;
  using xc::algo::Locality;
  Locality remote, local{true, false}, local_cma{true, true};
  assert_true(choose(CollKind::kAllreduce, 100, 1, remote, false) == Algo::kLocal);
  assert_true(choose(CollKind::kAllreduce, 1024, 4, remote, false) == Algo::kRecursiveDoubling);
  assert_true(choose(CollKind::kAllreduce, 1 << 20, 4, remote, false) == Algo::kRing);
  assert_true(choose(CollKind::kAlltoall, 4 * 8, 4, remote, false) == Algo::kBruck);
  assert_true(choose(CollKind::kAlltoall, 4 << 20, 4, remote, false) == Algo::kPairwise);
  assert_true(choose(CollKind::kBarrier, 1 << 30, 4, local, false) == Algo::kShmOneShot);
  assert_true(choose(CollKind::kAllreduce, 1024, 4, local, false) == Algo::kShmOneShot);
  assert_true(choose(CollKind::kAllreduce, 64 << 20, 4, local, false) == Algo::kShmTwoShot);
  // Large and beyond cache: out of place through a staging pipeline, in
  // place (allreduce) by single copy; allgather's bytes are one block.
  assert_true(choose(CollKind::kAllreduce, 64 << 20, 4, local_cma, false) == Algo::kShmTwoShot);
  assert_true(choose(CollKind::kAllreduce, 64 << 20, 4, local_cma, true) == Algo::kShmSingleCopy);
  assert_true(choose(CollKind::kAllreduce, 1 << 20, 2, local_cma, false) == Algo::kShmSingleCopy);
  assert_true(choose(CollKind::kAllgather, 64 << 20, 4, local, false) == Algo::kShmStaged);
  assert_true(choose(CollKind::kAllgatherv, 16 << 20, 2, local_cma, false) == Algo::kShmStaged);
  assert_true(choose(CollKind::kAllgather, 8 << 20, 2, local_cma, false) ==
              (xc::topo::oversubscribed(2) ? Algo::kShmStaged : Algo::kShmSingleCopy));
  assert_true(choose(CollKind::kAllgather, 256 << 10, 2, local_cma, true) == Algo::kShmSingleCopy);
  // In-place alltoall goes staged wherever one-shot stops; out of place
  // stays single copy.
  assert_true(choose(CollKind::kAlltoall, 16 << 10, 2, local_cma, true) == Algo::kShmStaged);
  assert_true(choose(CollKind::kAlltoall, 64 << 20, 4, local, true) == Algo::kShmStaged);
  assert_true(choose(CollKind::kAlltoall, 16 << 10, 2, local_cma, false) == Algo::kShmSingleCopy);
  // Broadcast beyond one-shot: staged from 4 ranks with a core each, else single copy.
  assert_true(choose(CollKind::kBroadcast, 16 << 10, 2, local_cma, false) == Algo::kShmSingleCopy);
  assert_true(choose(CollKind::kBroadcast, 64 << 20, 4, local_cma, false) ==
              (xc::topo::oversubscribed(4) ? Algo::kShmSingleCopy : Algo::kShmStaged));
  assert_true(choose(CollKind::kBroadcast, 1 << 10, 4, local_cma, false) == Algo::kShmOneShot);
  // in_place weighs only where every rank shares it.
  assert_true(choose(CollKind::kReduceScatter, 64 << 20, 4, local_cma, true) == Algo::kShmSingleCopy);
  // reduce stays one-shot further than allreduce (one result: single copy's
  // transfer into the root and its done barrier cost more).
  assert_true(choose(CollKind::kReduce, 32 << 10, 2, local_cma, false) == Algo::kShmOneShot);
  assert_true(choose(CollKind::kReduce, (32 << 10) + 4, 2, local_cma, false) == Algo::kShmSingleCopy);
  assert_true(choose(CollKind::kAllreduce, 32 << 10, 2, local_cma, false) == Algo::kShmSingleCopy);
  // Sizes only some ranks know: one-shot, each rank staging its own part or
  // publishing it for single copy, so only where single copy works.
  assert_true(choose(CollKind::kGatherv, 0, 4, local, false) == Algo::kLinear);
  assert_true(choose(CollKind::kAlltoallv, 0, 4, local_cma, false) == Algo::kShmOneShot);
  assert_false(xc::algo::algo_usable(CollKind::kScatterv, Algo::kShmOneShot, local));
  assert_true(xc::algo::algo_usable(CollKind::kScatterv, Algo::kShmOneShot, local_cma));
  assert_true(xc::algo::algo_usable(CollKind::kScatter, Algo::kShmOneShot, local));
  // Several hosts, more than one rank on some: hierarchical for the ops and
  // sizes where it was measured to win (selector.h), the point-to-point
  // policy for the rest.
  Locality spread = remote, unequal = remote;
  spread.hosts = unequal.hosts = 2;
  spread.hierarchical = unequal.hierarchical = true;
  unequal.equal_hosts = false;
  assert_true(choose(CollKind::kAllreduce, 8, 4, spread, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kAllreduce, 64 << 10, 4, spread, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kAllreduce, 64 << 20, 4, spread, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kAllreduce, 1024, 5, unequal, false) == Algo::kRecursiveDoubling);
  assert_true(choose(CollKind::kAllreduce, 1 << 20, 5, unequal, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kReduceScatter, 64, 4, spread, false) == Algo::kHierMultiLeader);
  assert_true(choose(CollKind::kReduceScatter, 64, 5, unequal, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kBroadcast, 1 << 10, 4, spread, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kBroadcast, 1 << 20, 5, unequal, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kAllgather, 64, 4, spread, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kAllgather, 1 << 20, 5, unequal, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kAlltoall, 4 * 64, 4, spread, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kAlltoall, (1 << 20) - 4, 5, unequal, false) == Algo::kHierLeader);
  assert_true(choose(CollKind::kAlltoall, 1 << 20, 5, unequal, false) == Algo::kPairwise);
  assert_true(choose(CollKind::kAlltoall, 4 << 20, 4, spread, false) == Algo::kPairwise);
  assert_true(choose(CollKind::kGather, 1 << 10, 4, spread, false) == Algo::kBinomial);
  assert_true(choose(CollKind::kScan, 1 << 10, 4, spread, false) == Algo::kRecursiveDoubling);
  // Every default is an algorithm of its op.
  for (int k = 0; k < xc::kCollKindCount; ++k)
    for (size_t bytes : {size_t(0), size_t(100), size_t(1) << 16, size_t(1) << 26})
      for (int n : {1, 2, 3, 8})
        for (Locality l : {remote, local, local_cma, spread, unequal})
          for (bool in_place : {false, true})
            assert_true(xc::algo::algo_applies(static_cast<CollKind>(k),
                                               choose(static_cast<CollKind>(k), bytes, n, l, in_place)));
}

// The algorithm table: names unique and found by name, XC_ALGO's choices
// read from it, and usability by memory kind, backend and single copy.
void algorithm_table(void **) {
  using xc::algo::AlgoEntry;
  using xc::algo::Locality;
  std::vector<std::string> names;
  for (int a = 0; a < xc::algo::kAlgoCount; ++a) {
    const AlgoEntry &e = xc::algo::algo_table()[a];
    assert_int_equal(static_cast<int>(e.id), a);
    assert_non_null(e.run);
    if (e.id == Algo::kLocal) {
      assert_null(xc::algo::find_algo(e.name));  // not a choice
      continue;
    }
    assert_true(xc::algo::find_algo(e.name) == &e);
    for (const std::string &n : names) assert_string_not_equal(n.c_str(), e.name);
    names.push_back(e.name);
    for (int k = 0; k < xc::kCollKindCount; ++k) {
      std::string choices = ", " + xc::algo::algo_choices(static_cast<CollKind>(k)) + ",";
      bool listed = choices.find(", " + std::string(e.name) + ",") != std::string::npos;
      assert_int_equal(listed, xc::algo::algo_applies(static_cast<CollKind>(k), e.id));
    }
  }
  assert_null(xc::algo::find_algo("no_such_algorithm"));
  Locality remote, local{true, false}, local_cma{true, true}, device{true, true};
  device.memory = xc::MemKind::kDevice;
  for (int a = 0; a < xc::algo::kAlgoCount; ++a) {
    Algo id = static_cast<Algo>(a);
    const AlgoEntry &e = xc::algo::algo_entry(id);
    bool shm = e.backend == xc::coll::BackendId::kShm, hier = e.backend == xc::coll::BackendId::kHier;
    Locality spread = remote, unequal = remote;
    spread.hierarchical = unequal.hierarchical = true;
    unequal.equal_hosts = false;
    for (int k = 0; k < xc::kCollKindCount; ++k) {
      CollKind kind = static_cast<CollKind>(k);
      // The device algorithms (run by the device layer) move device memory only.
      bool host = (e.memory & xc::algo::mem_bit(xc::MemKind::kHost)) != 0;
      assert_int_equal(xc::algo::algo_usable(kind, id, device), !host);
      assert_int_equal(xc::algo::algo_usable(kind, id, remote), host && !shm && !hier);
      assert_int_equal(xc::algo::algo_usable(kind, id, local_cma), host && !hier);
      bool needs_cma = (e.single_copy_ops & xc::algo::op_bit(kind)) != 0;
      assert_int_equal(xc::algo::algo_usable(kind, id, local), host && !needs_cma && !hier);
      assert_int_equal(xc::algo::algo_usable(kind, id, spread), host && !shm);
      assert_int_equal(xc::algo::algo_usable(kind, id, unequal), host && !shm && id != Algo::kHierMultiLeader);
    }
  }
}

// An op on memory no algorithm moves fails at once, naming it, on every rank.
void device_memory_refused(void **) {
  FakeHubOptions h;
  h.ranks = 2;
  FakeWorld world(h, Run::engine_opts());
  auto members = std::make_shared<const std::vector<int>>(std::vector<int>{0, 1});
  for (int r = 0; r < 2; ++r) {
    std::vector<float> buf(16, 1.0f);
    CollDesc d;
    d.kind = CollKind::kAllreduce;
    d.memory = xc::MemKind::kDevice;
    d.in_place = true;
    d.recvbuf = buf.data();
    d.count = buf.size();
    d.dtype = XC_FLOAT32;
    CollContext c(world.engine(r), members, r, kCtx, 1, Deadline::AfterMs(10000));
    Status st = xc::algo::run_collective(c, d);
    assert_int_equal(st.code(), XC_ERR_UNSUPPORTED);
    assert_non_null(strstr(st.message().c_str(), "allreduce on device memory"));
    for (float x : buf) assert_true(x == 1.0f);  // untouched
  }
}

// Rooted gather/scatter of large blocks: how much of each block the root
// copies itself (the peer copies the rest).
void root_share(void **) {
  using xc::coll::shm_root_parts;
  using xc::coll::shm_root_share;
  using xc::coll::shm_root_split_policy;
  using Split = xc::coll::ShmRootSplit;
  constexpr size_t kShort = xc::coll::kShmRootSplitShortBytes;
  assert_int_equal(shm_root_parts(false, 2, Split::kAlways, 1 << 20), 0);  // out of place: its own block is its share...
  assert_int_equal(shm_root_parts(false, 2, Split::kOwnCores, 1 << 20), 8);  // ... and 1/(4n) with a core per rank
  assert_int_equal(shm_root_parts(true, 2, Split::kOwnCores, 64 << 20), 2);
  assert_int_equal(shm_root_parts(true, 4, Split::kNever, 1 << 20), 0);
  assert_int_equal(shm_root_parts(true, 3, Split::kAlways, 64 << 20), 3);
  assert_int_equal(shm_root_parts(true, 3, Split::kShortOps, kShort - 1), 3);
  assert_int_equal(shm_root_parts(true, 3, Split::kShortOps, kShort), 0);
  // Split where all n ranks copying fill the cores no worse than n-1 peers.
  assert_true(shm_root_split_policy(2, 2) == Split::kOwnCores);
  assert_true(shm_root_split_policy(2, 0) == Split::kOwnCores);  // cores unknown
  assert_true(shm_root_split_policy(4, 2) == Split::kAlways);
  assert_true(shm_root_split_policy(8, 2) == Split::kAlways);
  assert_true(shm_root_split_policy(3, 2) == Split::kShortOps);
  assert_true(shm_root_split_policy(5, 2) == Split::kShortOps);
  assert_true(shm_root_split_policy(7, 3) == Split::kShortOps);
  assert_true(shm_root_split_policy(5, 3) == Split::kAlways);
  assert_int_equal(shm_root_share(64 << 20, 0), 0);
  assert_int_equal(shm_root_share(32 << 10, 2), 16 << 10);
  assert_int_equal(shm_root_share((32 << 10) - 1, 2), 0);  // below the least share: one copy call
  for (size_t block : {size_t(100000), size_t(1) << 20, (size_t(5) << 20) + 3, size_t(400004)})
    for (uint32_t parts : {2u, 3u, 5u}) {
      size_t share = shm_root_share(block, parts);
      assert_int_equal(share % 4096, 0);  // whole pages
      assert_true(share <= block / parts);
      assert_true(share == 0 || share >= xc::coll::kShmRootShareMinBytes);
      assert_true(block / parts - share < 4096 || share == 0);
    }
}

void xc_algo_parsing(void **) {
  using xc::algo::forced_algo;
  bool forced = false;
  Algo a = Algo::kLocal;
  assert_true(forced_algo("", CollKind::kAllreduce, &forced, &a).ok());
  assert_false(forced);
  assert_true(forced_algo("ring", CollKind::kAllreduce, &forced, &a).ok());
  assert_true(forced && a == Algo::kRing);
  assert_true(forced_algo("ring", CollKind::kAlltoall, &forced, &a).ok());  // no ring there: not forced
  assert_false(forced);
  assert_true(forced_algo(" allreduce = ring , alltoall=bruck", CollKind::kAlltoall, &forced, &a).ok());
  assert_true(forced && a == Algo::kBruck);
  assert_true(forced_algo("ring,reduce_scatter=pairwise", CollKind::kReduceScatter, &forced, &a).ok());
  assert_true(forced && a == Algo::kPairwise);
  assert_true(forced_algo("ring,reduce_scatter=pairwise", CollKind::kAllgather, &forced, &a).ok());
  assert_true(forced && a == Algo::kRing);
  // An algorithm the op lacks: an error at that op only, naming the choices.
  Status st = forced_algo("allreduce=bruck", CollKind::kAllreduce, &forced, &a);
  assert_int_equal(st.code(), XC_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(st.message().c_str(), "allreduce has no algorithm 'bruck'"));
  assert_non_null(strstr(st.message().c_str(), "recursive_doubling, ring"));
  assert_true(forced_algo("allreduce=bruck", CollKind::kAlltoall, &forced, &a).ok());
  // Unknown names: an error at every op.
  st = forced_algo("rnig", CollKind::kBarrier, &forced, &a);
  assert_int_equal(st.code(), XC_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(st.message().c_str(), "unknown algorithm 'rnig'"));
  st = forced_algo("allredcue=ring", CollKind::kBarrier, &forced, &a);
  assert_int_equal(st.code(), XC_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(st.message().c_str(), "unknown op 'allredcue'"));
  // nccl: device memory to NCCL (docs/nccl.md), no host algorithm forced.
  bool nccl = false;
  assert_true(forced_algo("nccl", CollKind::kAlltoall, &forced, &a, &nccl).ok());
  assert_true(nccl && !forced);
  assert_true(forced_algo("allreduce=nccl", CollKind::kAllreduce, &forced, &a, &nccl).ok());
  assert_true(nccl && !forced);
  assert_true(forced_algo("allreduce=nccl", CollKind::kBroadcast, &forced, &a, &nccl).ok());
  assert_false(nccl);
  assert_true(forced_algo("nccl,allreduce=ring", CollKind::kAllreduce, &forced, &a, &nccl).ok());
  assert_true(forced && a == Algo::kRing && !nccl);  // the op's own item wins
  assert_true(forced_algo("ring,allreduce=nccl", CollKind::kAllreduce, &forced, &a, &nccl).ok());
  assert_true(nccl && forced && a == Algo::kRing);  // host memory keeps the bare ring
  st = forced_algo("allredcue=nccl", CollKind::kBarrier, &forced, &a, &nccl);
  assert_int_equal(st.code(), XC_ERR_INVALID_ARGUMENT);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(collectives_n1),
      cmocka_unit_test(collectives_n2),
      cmocka_unit_test(collectives_n3),
      cmocka_unit_test(collectives_n4),
      cmocka_unit_test(collectives_n5),
      cmocka_unit_test(collectives_n7),
      cmocka_unit_test(collectives_n8),
      cmocka_unit_test(allreduce_fails_fast_when_a_rank_dies),
      cmocka_unit_test(every_algorithm_n1),
      cmocka_unit_test(every_algorithm_n2),
      cmocka_unit_test(every_algorithm_n3),
      cmocka_unit_test(every_algorithm_n4),
      cmocka_unit_test(every_algorithm_n5),
      cmocka_unit_test(every_algorithm_n6),
      cmocka_unit_test(every_algorithm_n8),
      cmocka_unit_test(host_layout),
      cmocka_unit_test(hierarchical_2x2),
      cmocka_unit_test(hierarchical_2x3_dealt),
      cmocka_unit_test(hierarchical_3x2_mixed),
      cmocka_unit_test(hierarchical_2_plus_1),
      cmocka_unit_test(hierarchical_1_plus_3_plus_1),
      cmocka_unit_test(selector_policy),
      cmocka_unit_test(algorithm_table),
      cmocka_unit_test(device_memory_refused),
      cmocka_unit_test(root_share),
      cmocka_unit_test(xc_algo_parsing),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
