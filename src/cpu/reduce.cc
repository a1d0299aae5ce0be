// The host reduction entry points and the choice of kernel set.
#include "cpu/reduce.h"

#include <cstring>
#include <string>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

#include "base/env.h"
#include "base/log.h"
#include "cpu/reduce_kernels.h"

namespace xc::cpu {

namespace {

bool cpu_has(Isa isa) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the wide registers;
  // F16C is asked of cpuid itself (not every compiler knows the name "f16c").
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  bool avx2 = f16c && __builtin_cpu_supports("avx2");
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return avx2;
    case Isa::kAvx512:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }
  return false;
#else
  return isa == Isa::kScalar;
#endif
}

// Every level's set, built once on first use; ok[i]: level i can run here.
struct Sets {
  Kernels sets[kNumIsas];
  bool ok[kNumIsas] = {};
  Sets() {
    detail::fill_scalar(sets[0]);
    ok[0] = true;
    // A vector level starts from the scalar set and replaces what it vectorises.
    detail::fill_scalar(sets[1]);
    ok[1] = cpu_has(Isa::kAvx2) && detail::fill_avx2(sets[1]);
    detail::fill_scalar(sets[2]);
    ok[2] = cpu_has(Isa::kAvx512) && detail::fill_avx512(sets[2]);
  }
};

const Sets &all_sets() {
  static const Sets sets;
  return sets;
}

Isa best_supported() {
  for (int i = kNumIsas - 1; i > 0; --i)
    if (all_sets().ok[i]) return static_cast<Isa>(i);
  return Isa::kScalar;
}

bool valid(xc_dtype_t dtype) { return static_cast<int>(dtype) >= 0 && static_cast<int>(dtype) < reduce_table::kNumDtypes; }

}  // namespace

const char *isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "invalid";
}

bool isa_supported(Isa isa) {
  int i = static_cast<int>(isa);
  return i >= 0 && i < kNumIsas && all_sets().ok[i];
}

const Kernels *kernels_for(Isa isa) { return isa_supported(isa) ? &all_sets().sets[static_cast<int>(isa)] : nullptr; }

Isa isa_resolve(const char *request) {
  Isa best = best_supported();
  if (request == nullptr || request[0] == '\0') return best;
  for (int i = 0; i < kNumIsas; ++i) {
    Isa isa = static_cast<Isa>(i);
    if (strcmp(request, isa_name(isa)) != 0) continue;
    if (isa_supported(isa)) return isa;
    XC_WARN("XC_CPU_ISA=%s: this CPU or build lacks it; using %s", request, isa_name(best));
    return best;
  }
  XC_WARN("XC_CPU_ISA=%s is not one of scalar, avx2, avx512; using %s", request, isa_name(best));
  return best;
}

Isa isa_active() {
  static const Isa active = [] {
    std::string request = env_get("XC_CPU_ISA");
    Isa isa = isa_resolve(request.c_str());
    XC_INFO("host reduction kernels: %s (%s%s)", isa_name(isa), request.empty() ? "the best this CPU has" : "XC_CPU_ISA=",
            request.c_str());
    return isa;
  }();
  return active;
}

const Kernels &active_kernels() {
  static const Kernels *const active = kernels_for(isa_active());
  return *active;
}

void Kernels::reduce3(void *out, const void *a, const void *b, size_t count, xc_dtype_t dtype, xc_op_t op) const {
  if (!valid(dtype) || static_cast<int>(op) < 0 || static_cast<int>(op) >= reduce_table::kNumOps || count == 0) return;
  ReduceFn fn = reduce[dtype][op];
  if (fn) fn(out, a, b, count);
}

void Kernels::scale_avg(void *buf, size_t count, xc_dtype_t dtype, int n) const {
  if (valid(dtype) && count > 0) scale[dtype](buf, count, n);
}

void Kernels::widen_to_float(const void *in, float *out, size_t count, xc_dtype_t dtype) const {
  // Anything but float16 is read as bfloat16, as before the kernel table.
  if (count > 0) widen[dtype == XC_FLOAT16 ? XC_FLOAT16 : XC_BFLOAT16](in, out, count);
}

void Kernels::narrow_from_float(const float *in, void *out, size_t count, xc_dtype_t dtype) const {
  if (count > 0) narrow[dtype == XC_FLOAT16 ? XC_FLOAT16 : XC_BFLOAT16](in, out, count);
}

void reduce(void *inout, const void *in, size_t count, xc_dtype_t dtype, xc_op_t op) {
  active_kernels().reduce3(inout, inout, in, count, dtype, op);
}

void reduce3(void *out, const void *a, const void *b, size_t count, xc_dtype_t dtype, xc_op_t op) {
  active_kernels().reduce3(out, a, b, count, dtype, op);
}

void scale_avg(void *buf, size_t count, xc_dtype_t dtype, int n) { active_kernels().scale_avg(buf, count, dtype, n); }

void widen_to_float(const void *in, float *out, size_t count, xc_dtype_t dtype) {
  active_kernels().widen_to_float(in, out, count, dtype);
}

void narrow_from_float(const float *in, void *out, size_t count, xc_dtype_t dtype) {
  active_kernels().narrow_from_float(in, out, count, dtype);
}

}  // namespace xc::cpu
