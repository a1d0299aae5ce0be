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

#include <string.h>

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

// A thread's unit of work: 16 bytes of T (one vector load or store where
// the address is aligned and the unit whole; element by element otherwise,
// so any count and any offset work). Units map to threads the same way on
// every rank, which is what keeps a block in step with its twins.
template <class T>
XC_HD constexpr uint64_t unit_elems() {
  return 16 / sizeof(T);
}

template <class T>
XC_HD void load_unit(const char *p, uint64_t i, uint64_t n, T *v) {
  const char *at = p + i * sizeof(T);
  if (n == unit_elems<T>() && (reinterpret_cast<uintptr_t>(at) & 15) == 0) {
#ifdef __CUDA_ARCH__
    *reinterpret_cast<uint4 *>(v) = *reinterpret_cast<const uint4 *>(at);
#else
    memcpy(v, at, 16);
#endif
    return;
  }
  for (uint64_t k = 0; k < n; ++k) v[k] = reinterpret_cast<const T *>(at)[k];
}

template <class T>
XC_HD void store_unit(char *p, uint64_t i, uint64_t n, const T *v) {
  char *at = p + i * sizeof(T);
  if (n == unit_elems<T>() && (reinterpret_cast<uintptr_t>(at) & 15) == 0) {
#ifdef __CUDA_ARCH__
    *reinterpret_cast<uint4 *>(at) = *reinterpret_cast<const uint4 *>(v);
#else
    memcpy(at, v, 16);
#endif
    return;
  }
  for (uint64_t k = 0; k < n; ++k) reinterpret_cast<T *>(at)[k] = v[k];
}

// out[oi + k] = src[0][i + k] op ... op src[nsrc - 1][i + k], k < n, in rank order.
template <class T, reduce_table::Kind K, xc_op_t O>
XC_HD void reduce_unit(const char *const *src, int nsrc, uint64_t i, uint64_t n, int avg_divisor, char *out,
                       uint64_t oi) {
  using A = typename Acc<T, K>::type;
  constexpr uint64_t V = unit_elems<T>();
  T v[V];
  A acc[V];
  load_unit<T>(src[0], i, n, v);
  for (uint64_t k = 0; k < n; ++k) acc[k] = load_acc<T, K>(v, k);
  for (int j = 1; j < nsrc; ++j) {
    load_unit<T>(src[j], i, n, v);
    for (uint64_t k = 0; k < n; ++k) acc[k] = combine<O, false>(acc[k], load_acc<T, K>(v, k));
  }
  for (uint64_t k = 0; k < n; ++k) {
    if (avg_divisor > 0) acc[k] = acc[k] / static_cast<A>(avg_divisor);
    store_acc<T, K>(v, k, acc[k]);
  }
  store_unit<T>(out, oi, n, v);
}

// out[i .. i + n) = src[i .. i + n), a unit at a time, for units u of [lo, hi) with u % stride == first.
template <class T>
XC_HD void copy_units(const char *src, char *out, uint64_t lo, uint64_t hi, uint64_t first, uint64_t stride) {
  constexpr uint64_t V = unit_elems<T>();
  T v[V];
  for (uint64_t i = lo + first * V; i < hi; i += stride * V) {
    uint64_t n = hi - i < V ? hi - i : V;
    load_unit<T>(src, i, n, v);
    store_unit<T>(out, i, n, v);
  }
}

template <xc_dtype_t D, xc_op_t O>
XC_KERNEL_FN void custom_reduce_body(const Exec &ex, const CustomArgs &a) {
  using T = typename reduce_table::Dtype<D>::type;
  constexpr reduce_table::Kind K = reduce_table::Dtype<D>::kind;
  if constexpr (!reduce_table::op_applies(K, O) || O == XC_AVG || K == reduce_table::Kind::kInt) {
    return;
  } else {
    constexpr uint64_t V = unit_elems<T>();
    const unsigned b = ex.block();
    const uint64_t start = ex.now_ns();
    const uint64_t base = a.pads[a.rank]->counter[b];
    uint64_t step = base;
    const uint64_t first = ex.first(), stride = ex.stride();
    const int n = a.n;
    char *out = static_cast<char *>(a.out);
    const char *in[kCustomMaxRanks];
    custom_publish(ex, a);
    bool ok = custom_barrier(ex, a, ++step, start);
    if (ok) custom_inputs(ex, a, in);
    if (ok && a.mode == kCustomReduceScatter) {
      const uint64_t at = static_cast<uint64_t>(a.rank) * a.count;
      for (uint64_t i = first * V; i < a.count; i += stride * V) {
        uint64_t m = a.count - i < V ? a.count - i : V;
        reduce_unit<T, K, O>(in, n, at + i, m, a.avg_divisor, out, i);
      }
      ok = custom_barrier(ex, a, ++step, start);
    } else if (ok && a.algo == kCustomTwoShot) {
      // Each rank reduces its slice into its own staged input (peers read
      // only their own slices from it), then every rank gathers the slices.
      // Slices start on whole units, so a slice's units map to threads the
      // same way on the rank that reduces it and on those that gather it.
      uint64_t chunk = (a.count + static_cast<uint64_t>(n) - 1) / static_cast<uint64_t>(n);
      chunk = (chunk + V - 1) / V * V;
      const uint64_t mine = chunk * static_cast<uint64_t>(a.rank);
      const uint64_t lo = mine < a.count ? mine : a.count;
      const uint64_t hi = lo + chunk < a.count ? lo + chunk : a.count;
      for (uint64_t i = lo + first * V; i < hi; i += stride * V) {
        uint64_t m = hi - i < V ? hi - i : V;
        reduce_unit<T, K, O>(in, n, i, m, a.avg_divisor, a.data[a.rank], i);
      }
      ok = custom_barrier(ex, a, ++step, start);
      for (int p = 0; ok && p < n; ++p) {
        const uint64_t plo = chunk * static_cast<uint64_t>(p) < a.count ? chunk * static_cast<uint64_t>(p) : a.count;
        const uint64_t phi = plo + chunk < a.count ? plo + chunk : a.count;
        copy_units<T>(a.data[p], out, plo, phi, first, stride);
      }
      ok = ok && custom_barrier(ex, a, ++step, start);
    } else if (ok) {
      if (a.algo == kCustomHcm) {
        // Forward the sources a neighbour cannot read over its own links.
        for (int j = 0; j < n; ++j)
          if (a.forward[j])
            copy_units<T>(in[j], a.relay[a.rank] + static_cast<uint64_t>(j) * a.count * sizeof(T), 0, a.count,
                          first, stride);
        ok = custom_barrier(ex, a, ++step, start);
      }
      const char *src[kCustomMaxRanks];
      for (int j = 0; j < n; ++j) src[j] = custom_source<T>(a, in, j);
      for (uint64_t i = first * V; ok && i < a.count; i += stride * V) {
        uint64_t m = a.count - i < V ? a.count - i : V;
        reduce_unit<T, K, O>(src, n, i, m, a.avg_divisor, out, i);
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
  for (int p = 0; ok && p < a.n; ++p)
    copy_units<char>(in[p], out + static_cast<uint64_t>(p) * a.count, 0, a.count, ex.first(), ex.stride());
  ok = ok && custom_barrier(ex, a, base + 2, start);
  ex.sync_block();
  if (ex.thread() == 0) a.pads[a.rank]->counter[b] = base + 2;
}

}  // namespace xc::kernels
