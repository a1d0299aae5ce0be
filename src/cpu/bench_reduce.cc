// xc-reduce-bench: throughput of the host reduction kernels, inout op= in, at
// every instruction-set level this CPU supports. GB/s counts the bytes the
// kernel moves: inout and in read, inout written (3 × the operand size).
//
//   xc-reduce-bench [--ms MILLISECONDS] [--only TEXT]
//     --ms    time per measurement (default 200)
//     --only  run only the rows whose "kernel, size" contains TEXT
//
// Not installed; see docs/reduce-kernels.md for figures.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/half.h"
#include "cpu/reduce.h"

namespace {

using Clock = std::chrono::steady_clock;

// A 64-byte aligned byte buffer.
class Buffer {
 public:
  explicit Buffer(size_t bytes) : storage_(bytes + 64) {
    uintptr_t p = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + ((64 - p % 64) % 64);
  }
  char *data() { return data_; }

 private:
  std::vector<char> storage_;
  char *data_;
};

struct Case {
  const char *name;
  xc_dtype_t dtype;
  xc_op_t op;
  size_t esize;
};

void fill(char *p, size_t bytes, xc_dtype_t dtype, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  switch (dtype) {
    case XC_FLOAT32:
      for (size_t i = 0; i < bytes / 4; ++i) reinterpret_cast<float *>(p)[i] = dist(rng);
      break;
    case XC_FLOAT64:
      for (size_t i = 0; i < bytes / 8; ++i) reinterpret_cast<double *>(p)[i] = dist(rng);
      break;
    case XC_FLOAT16:
      for (size_t i = 0; i < bytes / 2; ++i) reinterpret_cast<uint16_t *>(p)[i] = xc::cpu::float_to_half(dist(rng));
      break;
    case XC_BFLOAT16:
      for (size_t i = 0; i < bytes / 2; ++i) reinterpret_cast<uint16_t *>(p)[i] = xc::cpu::float_to_bf16(dist(rng));
      break;
    default:
      for (size_t i = 0; i < bytes / 4; ++i) reinterpret_cast<uint32_t *>(p)[i] = rng();
      break;
  }
}

// Best GB/s over several measurements of about ms milliseconds each.
double measure(const xc::cpu::Kernels &k, const Case &c, size_t bytes, double ms) {
  Buffer a(bytes), b(bytes);
  std::mt19937 rng(42);
  fill(a.data(), bytes, c.dtype, rng);
  fill(b.data(), bytes, c.dtype, rng);
  size_t count = bytes / c.esize;
  auto once = [&] { k.reduce3(a.data(), a.data(), b.data(), count, c.dtype, c.op); };
  // Calibrate: how many calls fill one measurement.
  once();
  size_t iters = 1;
  for (;;) {
    auto t0 = Clock::now();
    for (size_t i = 0; i < iters; ++i) once();
    double took = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (took >= ms / 4 || iters >= (size_t{1} << 30)) {
      iters = took > 0 ? static_cast<size_t>(static_cast<double>(iters) * ms / took) + 1 : iters;
      break;
    }
    iters *= 2;
  }
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    for (size_t i = 0; i < iters; ++i) once();
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    double gbs = 3.0 * static_cast<double>(bytes) * static_cast<double>(iters) / s / 1e9;
    if (gbs > best) best = gbs;
  }
  return best;
}

}  // namespace

int main(int argc, char **argv) {
  double ms = 200;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc) {
      ms = atof(argv[++i]);
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--ms MILLISECONDS] [--only TEXT]\n", argv[0]);
      return 2;
    }
  }
  const Case cases[] = {
      {"float32 sum", XC_FLOAT32, XC_SUM, 4}, {"float16 sum", XC_FLOAT16, XC_SUM, 2},
      {"bfloat16 sum", XC_BFLOAT16, XC_SUM, 2}, {"int32 max", XC_INT32, XC_MAX, 4},
      {"float64 sum", XC_FLOAT64, XC_SUM, 8},
  };
  // Per operand: both fit in L1, in L2, and neither fits in L2.
  const size_t sizes[] = {size_t{8} << 10, size_t{64} << 10, size_t{64} << 20};
  const char *size_names[] = {"8 KiB", "64 KiB", "64 MiB"};
  const size_t num_sizes = sizeof sizes / sizeof sizes[0];

  std::vector<const xc::cpu::Kernels *> levels;
  for (int i = 0; i < xc::cpu::kNumIsas; ++i)
    if (const xc::cpu::Kernels *k = xc::cpu::kernels_for(static_cast<xc::cpu::Isa>(i))) levels.push_back(k);

  printf("GB/s = 3 x operand bytes per call (inout and in read, inout written) / time; best of 5.\n");
  printf("active level: %s\n\n", xc::cpu::isa_name(xc::cpu::isa_active()));
  printf("| kernel | operand size |");
  for (const auto *k : levels) printf(" %s GB/s |", xc::cpu::isa_name(k->isa));
  for (size_t i = 1; i < levels.size(); ++i) printf(" %s / scalar |", xc::cpu::isa_name(levels[i]->isa));
  printf("\n|---|---|");
  for (size_t i = 0; i < 2 * levels.size() - 1; ++i) printf("---:|");
  printf("\n");
  for (const Case &c : cases) {
    for (size_t s = 0; s < num_sizes; ++s) {
      if (!only.empty() && (std::string(c.name) + ", " + size_names[s]).find(only) == std::string::npos) continue;
      std::vector<double> gbs;
      for (const auto *k : levels) gbs.push_back(measure(*k, c, sizes[s], ms));
      printf("| %s | %s |", c.name, size_names[s]);
      for (double g : gbs) printf(" %.1f |", g);
      for (size_t i = 1; i < gbs.size(); ++i) printf(" %.1fx |", gbs[i] / gbs[0]);
      printf("\n");
      fflush(stdout);
    }
  }
  return 0;
}
