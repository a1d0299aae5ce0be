// The intra-node kernels (kernels/args.cuh CustomArgs): a flag barrier in
// peer memory and the one-shot, two-shot and hybrid-cube-mesh bodies, one
// source for nvcc and for the host compiler (the emulated device).
//
// Each block keeps step with the same block of every peer: the grid is the
// same on every rank and each element is handled by the same global thread
// on every rank, so whatever block b of a peer wrote before a barrier is
// what block b here reads after it. Every rank reduces its sources in rank
// order, so an element has the same bits on every rank that computes it.
#pragma once

#include "kernels/args.cuh"
#include "kernels/exec.cuh"
#include "kernels/reduce.cuh"

namespace xc::kernels {

XC_HD uint64_t load_flag(const volatile uint64_t *p) {
#ifdef __CUDA_ARCH__
  return *p;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

XC_HD void store_flag(volatile uint64_t *p, uint64_t v) {
#ifdef __CUDA_ARCH__
  *p = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

// Raises value in this block's slot of every rank's pad, then waits until
// every rank raised it in ours. False (for the whole block) once *a.stop is
// set, or when the deadline, counted from start, passes: then this kernel
// sets it, and *a.who names the first rank that never came.
XC_KERNEL_FN bool custom_barrier(const Exec &ex, const CustomArgs &a, uint64_t value, uint64_t start) {
  ex.sync_block();  // the block's reads and writes of the phase before are done
  const unsigned slot = ex.block() * kCustomMaxRanks;
  for (int t = static_cast<int>(ex.thread()); t < a.n; t += static_cast<int>(ex.threads())) {
    ex.fence_system();
    store_flag(&a.pads[t]->flag[slot + static_cast<unsigned>(a.rank)], value);
  }
  bool ok = true;
  for (int t = static_cast<int>(ex.thread()); t < a.n && ok; t += static_cast<int>(ex.threads())) {
    const volatile uint64_t *f = &a.pads[a.rank]->flag[slot + static_cast<unsigned>(t)];
    while (load_flag(f) < value) {
      if (*a.stop != kCustomRunning) {
        ok = false;
        break;
      }
      if (ex.now_ns() - start > a.timeout_ns) {
        *a.who = static_cast<uint32_t>(1 + t);
        ex.fence_system();
        *a.stop = kCustomTimedOut;
        ok = false;
        break;
      }
      ex.pause();
    }
  }
  ex.fence_system();
  return ex.all_in_block(ok);
}

// Barriers each algorithm passes: every rank's counters advance alike.
XC_HD uint64_t custom_barriers(const CustomArgs &a) {
  if (a.mode != kCustomAllreduce || a.algo == kCustomOneShot) return 2;
  return 3;
}

// Before the first barrier: where this rank's input is, for its peers.
XC_KERNEL_FN void custom_publish(const Exec &ex, const CustomArgs &a) {
  if (ex.thread() != 0) return;
  volatile uint64_t *src = a.pads[a.rank]->source[ex.block()];
  store_flag(&src[1], a.my_offset);
  store_flag(&src[0], a.my_slot >= 0 ? static_cast<uint64_t>(a.my_slot) + 1 : 0);
}

// After it: rank j's input reached here, as j published it.
XC_HD const char *custom_input(const CustomArgs &a, int j, unsigned block) {
  if (j == a.rank) return a.my_slot >= 0 ? a.my_input : a.data[j];
  const volatile uint64_t *src = a.pads[j]->source[block];
  uint64_t slot = load_flag(&src[0]);
  if (slot == 0) return a.data[j];
  const volatile uint64_t *at = &a.registry[(slot - 1) * kCustomMaxRanks + static_cast<uint64_t>(j)];
  return reinterpret_cast<const char *>(static_cast<uintptr_t>(load_flag(at))) + load_flag(&src[1]);
}

// Every rank's input, reached here (after the first barrier).
XC_KERNEL_FN void custom_inputs(const Exec &ex, const CustomArgs &a, const char **in) {
  for (int j = 0; j < a.n; ++j) in[j] = custom_input(a, j, ex.block());
}

// Where this rank reads source j: HCM goes through a neighbour's relay
// slot where there is no direct link.
template <class T>
XC_HD const char *custom_source(const CustomArgs &a, const char *const *in, int j) {
  if (a.algo == kCustomHcm && j != a.rank && a.via[j] >= 0)
    return a.relay[a.via[j]] + static_cast<uint64_t>(j) * a.count * sizeof(T);
  return in[j];
}

template <xc_dtype_t D, xc_op_t O>
XC_KERNEL_FN void custom_reduce_body(const Exec &ex, const CustomArgs &a) {
  using T = typename reduce_table::Dtype<D>::type;
  constexpr reduce_table::Kind K = reduce_table::Dtype<D>::kind;
  using A = typename Acc<T, K>::type;
  if constexpr (!reduce_table::op_applies(K, O) || O == XC_AVG || K == reduce_table::Kind::kInt) {
    return;
  } else {
    const unsigned b = ex.block();
    const uint64_t start = ex.now_ns();
    const uint64_t base = a.pads[a.rank]->counter[b];
    uint64_t step = base;
    const uint64_t first = ex.first(), stride = ex.stride();
    const int n = a.n;
    const char *in[kCustomMaxRanks];
    custom_publish(ex, a);
    bool ok = custom_barrier(ex, a, ++step, start);
    if (ok) custom_inputs(ex, a, in);
    if (ok && a.mode == kCustomReduceScatter) {
      const uint64_t at = static_cast<uint64_t>(a.rank) * a.count;
      for (uint64_t i = first; i < a.count; i += stride) {
        A acc = load_acc<T, K>(in[0], at + i);
        for (int j = 1; j < n; ++j) acc = combine<O, false>(acc, load_acc<T, K>(in[j], at + i));
        if (a.avg_divisor > 0) acc = acc / static_cast<A>(a.avg_divisor);
        store_acc<T, K>(a.out, i, acc);
      }
      ok = custom_barrier(ex, a, ++step, start);
    } else if (ok && a.algo == kCustomTwoShot) {
      // Each rank reduces its slice into its own staged input (peers read
      // only their own slices from it), then every rank gathers the slices.
      const uint64_t chunk = (a.count + static_cast<uint64_t>(n) - 1) / static_cast<uint64_t>(n);
      const uint64_t lo = chunk * static_cast<uint64_t>(a.rank);
      const uint64_t hi = lo + chunk < a.count ? lo + chunk : a.count;
      for (uint64_t i = lo + first; i < hi; i += stride) {
        A acc = load_acc<T, K>(in[0], i);
        for (int j = 1; j < n; ++j) acc = combine<O, false>(acc, load_acc<T, K>(in[j], i));
        if (a.avg_divisor > 0) acc = acc / static_cast<A>(a.avg_divisor);
        store_acc<T, K>(a.data[a.rank], i, acc);
      }
      ok = custom_barrier(ex, a, ++step, start);
      for (int p = 0; ok && p < n; ++p) {
        const uint64_t plo = chunk * static_cast<uint64_t>(p);
        const uint64_t phi = plo + chunk < a.count ? plo + chunk : a.count;
        const T *src = reinterpret_cast<const T *>(a.data[p]);
        T *dst = static_cast<T *>(a.out);
        for (uint64_t i = plo + first; i < phi; i += stride) dst[i] = src[i];
      }
      ok = ok && custom_barrier(ex, a, ++step, start);
    } else if (ok) {
      if (a.algo == kCustomHcm) {
        // Forward the sources a neighbour cannot read over its own links.
        for (int j = 0; j < n; ++j) {
          if (!a.forward[j]) continue;
          const T *src = reinterpret_cast<const T *>(in[j]);
          T *dst = reinterpret_cast<T *>(a.relay[a.rank] + static_cast<uint64_t>(j) * a.count * sizeof(T));
          for (uint64_t i = first; i < a.count; i += stride) dst[i] = src[i];
        }
        ok = custom_barrier(ex, a, ++step, start);
      }
      for (uint64_t i = first; ok && i < a.count; i += stride) {
        A acc = load_acc<T, K>(custom_source<T>(a, in, 0), i);
        for (int j = 1; j < n; ++j) acc = combine<O, false>(acc, load_acc<T, K>(custom_source<T>(a, in, j), i));
        if (a.avg_divisor > 0) acc = acc / static_cast<A>(a.avg_divisor);
        store_acc<T, K>(a.out, i, acc);
      }
      ok = ok && custom_barrier(ex, a, ++step, start);
    }
    ex.sync_block();
    if (ex.thread() == 0) a.pads[a.rank]->counter[b] = base + custom_barriers(a);
  }
}

// Two-shot's second half on its own: every rank's block of count bytes,
// in rank order, into out.
XC_KERNEL_FN void custom_gather_body(const Exec &ex, const CustomArgs &a) {
  const unsigned b = ex.block();
  const uint64_t start = ex.now_ns();
  const uint64_t base = a.pads[a.rank]->counter[b];
  const char *in[kCustomMaxRanks];
  custom_publish(ex, a);
  bool ok = custom_barrier(ex, a, base + 1, start);
  if (ok) custom_inputs(ex, a, in);
  char *out = static_cast<char *>(a.out);
  for (int p = 0; ok && p < a.n; ++p) {
    const char *src = in[p];
    char *dst = out + static_cast<uint64_t>(p) * a.count;
    for (uint64_t i = ex.first(); i < a.count; i += ex.stride()) dst[i] = src[i];
  }
  ok = ok && custom_barrier(ex, a, base + 2, start);
  ex.sync_block();
  if (ex.thread() == 0) a.pads[a.rank]->counter[b] = base + 2;
}

}  // namespace xc::kernels
