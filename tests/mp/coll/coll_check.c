/* Inputs, references and result checks of the collective tests (coll_check.h). */
#include "coll_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const ct_dtype ct_dtypes[] = {
    {"int8", XC_INT8, 1, 1, 1},       {"uint8", XC_UINT8, 1, 1, 0},       {"int32", XC_INT32, 4, 1, 1},
    {"uint32", XC_UINT32, 4, 1, 0},   {"int64", XC_INT64, 8, 1, 1},       {"uint64", XC_UINT64, 8, 1, 0},
    {"float16", XC_FLOAT16, 2, 0, 1}, {"bfloat16", XC_BFLOAT16, 2, 0, 1}, {"float32", XC_FLOAT32, 4, 0, 1},
    {"float64", XC_FLOAT64, 8, 0, 1},
};
const size_t ct_num_dtypes = sizeof ct_dtypes / sizeof ct_dtypes[0];

const int ct_redops[] = {XC_SUM, XC_PROD, XC_MIN, XC_MAX, XC_AVG, XC_BAND, XC_BOR, XC_BXOR};
const size_t ct_num_redops = sizeof ct_redops / sizeof ct_redops[0];

size_t ct_failures = 0;

const char *ct_redop_name(int redop) {
  static const char *const names[] = {"sum", "prod", "min", "max", "avg", "band", "bor", "bxor"};
  return redop >= 0 && redop < 8 ? names[redop] : "copy";
}

int ct_redop_valid(int redop, const ct_dtype *d) { return d->is_int || redop < XC_BAND; }

static uint64_t mix(uint64_t x) { /* splitmix64's finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static uint64_t case_hash(const ct_case *c, int rank, uint64_t idx) {
  return mix(c->seed ^ mix(c->salt + 0x9e3779b97f4a7c15ULL * (uint64_t)(rank + 1)) ^ mix(idx + 0x632be59bd9b4e019ULL));
}

int64_t ct_value(const ct_case *c, int rank, uint64_t idx) {
  uint64_t h = case_hash(c, rank, idx);
  if (c->redop == CT_COPY || (c->dt->is_int && (c->redop != XC_AVG || c->rank_order))) return (int64_t)h;
  switch (c->redop) {
    case XC_SUM: return (int64_t)(h % 17) - 8;
    case XC_AVG: return (int64_t)(h % 16);
    case XC_PROD: { static const int64_t v[] = {-2, -1, 1, 2}; return v[h % 4]; }
    default: return (int64_t)(h % 201) - 100; /* min, max */
  }
}

/* float -> IEEE binary16 / bfloat16, round to nearest even (finite inputs). */
static uint16_t to_half(float f) {
  uint32_t x, sign, absx;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  absx = x & 0x7fffffffu;
  if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (absx < 0x38800000u) { /* subnormal half: scale so the rounding happens in float */
    float a = f < 0 ? -f : f;
    float scaled = a * 16777216.0f; /* 2^24: half subnormal unit becomes 1 */
    uint32_t m = (uint32_t)scaled;
    float rest = scaled - (float)m;
    if (rest > 0.5f || (rest == 0.5f && (m & 1u))) ++m;
    return (uint16_t)(sign | m);
  }
  return (uint16_t)(sign | ((absx + 0xfffu + ((absx >> 13) & 1u) - 0x38000000u) >> 13));
}

static uint16_t to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
  float f;
  if (exp == 0) { /* zero or subnormal: mant * 2^-24, exact */
    f = (float)mant * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  x = exp == 0x1f ? (sign | 0x7f800000u | (mant << 13)) : (sign | ((exp + 112u) << 23) | (mant << 13));
  memcpy(&f, &x, 4);
  return f;
}

static float bf16_to_float(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* rank_order and a 16-bit float reduction: fractional inputs (coll_check.h). */
static int ordered_half(const ct_case *c) {
  return c->rank_order && c->redop != CT_COPY && !c->dt->is_int && c->dt->size == 2;
}

/* Such an input as the dtype holds it, widened to float32 (what the kernel reads). */
static float ordered_input(const ct_case *c, int rank, uint64_t idx) {
  uint64_t h = case_hash(c, rank, idx);
  float v;
  int half = c->dt->dtype == XC_FLOAT16;
  if (c->redop == XC_PROD) {
    v = 1.0f + (float)(h % 1024) / 1024.0f;
    if ((h >> 10) & 1) v *= 0.5f;
    if ((h >> 11) & 1) v = -v;
  } else if ((c->redop == XC_SUM || c->redop == XC_AVG) && c->nranks >= 3 && idx % 4 == 3) {
    /* Cancellation: +B at rank 0, -B at rank 1, tiny values elsewhere. In
       rank order B - B = 0 comes first and the tiny values survive; in any
       order that adds a tiny value to B first, float32 drops it. */
    float big = (half ? 2048.0f : 65536.0f) * (1.0f + (float)(h % 8) / 8.0f);
    if (rank == 0) v = big;
    else if (rank == 1) v = -big;
    else v = 6.103515625e-05f * (1.0f + (float)((h >> 3) % 1024) / 1024.0f) * (((h >> 13) & 1) ? -1.0f : 1.0f);
  } else {
    v = (float)((int64_t)(h % 4097) - 2048) / 256.0f;
  }
  return half ? half_to_float(to_half(v)) : bf16_to_float(to_bf16(v));
}

/* One element from an exact real (floats) or an integer (wrapped to the width). */
static void store(const ct_dtype *d, void *buf, size_t i, double real, int64_t integer) {
  char *p = (char *)buf + i * d->size;
  if (d->is_int) {
    memcpy(p, &integer, d->size); /* little endian: the low bytes */
    return;
  }
  switch (d->dtype) {
    case XC_FLOAT16: { uint16_t h = to_half((float)real); memcpy(p, &h, 2); break; }
    case XC_BFLOAT16: { uint16_t h = to_bf16((float)real); memcpy(p, &h, 2); break; }
    case XC_FLOAT32: { float f = (float)real; memcpy(p, &f, 4); break; }
    default: memcpy(p, &real, 8); break;
  }
}

void ct_put(const ct_case *c, void *buf, size_t i, int rank, uint64_t idx) {
  int64_t v;
  if (ordered_half(c)) {
    store(c->dt, buf, i, (double)ordered_input(c, rank, idx), 0);
    return;
  }
  v = ct_value(c, rank, idx);
  if (c->redop == CT_COPY) memcpy((char *)buf + i * c->dt->size, &v, c->dt->size); /* raw bits, floats too */
  else store(c->dt, buf, i, (double)v, v);
}

/* An integer as the dtype sees it: truncated, then sign- or zero-extended. */
static int64_t as_dtype(const ct_dtype *d, int64_t v) {
  if (d->size == 8) return v;
  {
    int bits = (int)d->size * 8;
    uint64_t mask = (1ULL << bits) - 1, u = (uint64_t)v & mask;
    if (d->is_signed && (u >> (bits - 1))) u |= ~mask;
    return (int64_t)u;
  }
}

static int int_less(const ct_dtype *d, int64_t a, int64_t b) {
  return d->is_signed ? a < b : (uint64_t)a < (uint64_t)b;
}

void ct_expect(const ct_case *c, int lo, int hi, uint64_t idx, void *out) {
  const ct_dtype *d = c->dt;
  int r;
  if (c->redop == CT_COPY) {
    ct_put(c, out, 0, lo, idx);
    return;
  }
  if (d->is_int) {
    int64_t acc = 0;
    for (r = lo; r < hi; ++r) {
      int64_t v = as_dtype(d, ct_value(c, r, idx));
      if (r == lo) { acc = v; continue; }
      switch (c->redop) {
        case XC_SUM: case XC_AVG: acc = (int64_t)((uint64_t)acc + (uint64_t)v); break;
        case XC_PROD: acc = (int64_t)((uint64_t)acc * (uint64_t)v); break;
        case XC_MIN: if (int_less(d, v, acc)) acc = v; break;
        case XC_MAX: if (int_less(d, acc, v)) acc = v; break;
        case XC_BAND: acc &= v; break;
        case XC_BOR: acc |= v; break;
        default: acc ^= v; break;
      }
      acc = as_dtype(d, acc);
    }
    /* The wrapped sum divided, truncating, in the dtype's signedness. */
    if (c->redop == XC_AVG) acc = d->is_signed ? acc / (hi - lo) : (int64_t)((uint64_t)acc / (uint64_t)(hi - lo));
    store(d, out, 0, 0, acc);
  } else if (ordered_half(c)) {
    /* float32 in rank order, as the kernel (acc op next, never reassociated), rounded once. */
    float acc = 0;
    for (r = lo; r < hi; ++r) {
      float v = ordered_input(c, r, idx);
      if (r == lo) { acc = v; continue; }
      switch (c->redop) {
        case XC_SUM: case XC_AVG: acc = acc + v; break;
        case XC_PROD: acc = acc * v; break;
        case XC_MIN: acc = v < acc ? v : acc; break;
        default: acc = v > acc ? v : acc; break;
      }
    }
    if (c->redop == XC_AVG) acc = acc / (float)(hi - lo);
    store(d, out, 0, (double)acc, 0);
  } else {
    double acc = 0;
    for (r = lo; r < hi; ++r) {
      double v = (double)ct_value(c, r, idx);
      if (r == lo) { acc = v; continue; }
      switch (c->redop) {
        case XC_SUM: case XC_AVG: acc += v; break;
        case XC_PROD: acc *= v; break;
        case XC_MIN: if (v < acc) acc = v; break;
        default: if (v > acc) acc = v; break;
      }
    }
    /* Rounded once here (via float for the 16-bit types: exact enough that
       the double rounding cannot differ from one rounding of sum / n). */
    if (c->redop == XC_AVG) acc /= (double)(hi - lo);
    store(d, out, 0, acc, 0);
  }
}

void ct_describe(const ct_case *c, char *out, size_t len) {
  int n = snprintf(out, len, "%s %s", c->op, c->dt ? c->dt->name : "-");
  if (c->redop != CT_COPY) n += snprintf(out + n, len - (size_t)n, " %s", ct_redop_name(c->redop));
  if (ordered_half(c)) n += snprintf(out + n, len - (size_t)n, " (fractional, float32 in rank order)");
  else if (c->rank_order && c->dt && c->dt->is_int && c->redop == XC_AVG) n += snprintf(out + n, len - (size_t)n, " (raw bits)");
  n += snprintf(out + n, len - (size_t)n, " %s", c->in_place ? "in-place" : "out-of-place");
  if (c->root >= 0) n += snprintf(out + n, len - (size_t)n, " root %d", c->root);
  snprintf(out + n, len - (size_t)n, " count %zu", c->count);
}

enum { kMaxReports = 8 };

static void report(const ct_case *c, const char *what, size_t i, const void *got, const void *want) {
  char desc[160];
  unsigned long long g = 0, w = 0;
  if (ct_failures++ >= kMaxReports) return;
  ct_describe(c, desc, sizeof desc);
  memcpy(&g, got, c->dt->size);
  memcpy(&w, want, c->dt->size);
  fprintf(stderr, "[rank %d] FAIL %s (of %d ranks, seed 0x%llx): %s element %zu is 0x%llx, expected 0x%llx\n",
          c->rank, desc, c->nranks, (unsigned long long)c->seed, what, i, g, w);
}

void ct_check_elem(const ct_case *c, const char *what, const void *buf, size_t i, const void *want) {
  const char *got = (const char *)buf + i * c->dt->size;
  if (memcmp(got, want, c->dt->size) != 0) report(c, what, i, got, want);
}

void ct_check_poison(const ct_case *c, const char *what, const void *buf, size_t from, size_t to) {
  unsigned char poison[8];
  size_t i;
  memset(poison, CT_POISON, sizeof poison);
  for (i = from; i < to; ++i) ct_check_elem(c, what, buf, i, poison);
}

void ct_check_unchanged(const ct_case *c, const char *what, const void *buf, const void *before, size_t bytes) {
  size_t es = c->dt->size, i;
  if (bytes == 0 || memcmp(buf, before, bytes) == 0) return;
  for (i = 0; i < bytes / es; ++i) ct_check_elem(c, what, buf, i, (const char *)before + i * es);
}

void ct_fail_call(const ct_case *c, const char *call, xc_result_t rc) {
  char desc[160];
  ct_describe(c, desc, sizeof desc);
  fprintf(stderr, "[rank %d] FAIL %s (of %d ranks): %s -> %s (%s)\n", c->rank, desc, c->nranks, call,
          xc_strerror(rc), xc_last_error());
  exit(1);
}

void *ct_alloc(const ct_case *c, size_t n) {
  size_t bytes = (n + CT_GUARD) * c->dt->size;
  void *p = malloc(bytes);
  if (!p) {
    fprintf(stderr, "[rank %d] out of memory (%zu bytes)\n", c->rank, bytes);
    exit(1);
  }
  memset(p, CT_POISON, bytes);
  return p;
}

size_t ct_vcount(size_t base, int rank) { return rank % 3 == 1 ? 0 : base + (size_t)(rank * 7 % 5); }

size_t ct_pair_count(size_t base, int s, int d) { return (s + d) % 3 == 2 ? 0 : base + (size_t)((s + d) % 4); }

size_t ct_layout(const size_t *counts, int n, size_t *displs) {
  size_t pos = 0;
  int r;
  for (r = n - 1; r >= 0; --r) {
    displs[r] = pos + 1;
    pos = displs[r] + counts[r];
  }
  return pos + 1;
}

void ct_fill_random_floats(void *buf, size_t n, xc_dtype_t dtype, uint64_t seed, int rank) {
  uint64_t s = seed ^ (0x1000193ULL * (uint64_t)(rank + 7));
  size_t i;
  for (i = 0; i < n; ++i) {
    uint64_t h = mp_next(&s), e = (h >> 56) % 9; /* exponent offset -4 .. 4 */
    switch (dtype) {
      case XC_FLOAT16: { uint16_t v = (uint16_t)(((h >> 63) << 15) | ((15 - 4 + e) << 10) | (h & 0x3ff)); memcpy((char *)buf + 2 * i, &v, 2); break; }
      case XC_BFLOAT16: { uint16_t v = (uint16_t)(((h >> 63) << 15) | ((127 - 4 + e) << 7) | (h & 0x7f)); memcpy((char *)buf + 2 * i, &v, 2); break; }
      case XC_FLOAT32: { uint32_t v = (uint32_t)(((h >> 63) << 31) | ((127 - 4 + e) << 23) | (h & 0x7fffff)); memcpy((char *)buf + 4 * i, &v, 4); break; }
      default: { uint64_t v = ((h >> 63) << 63) | ((1023 - 4 + e) << 52) | (h & 0xfffffffffffffULL); memcpy((char *)buf + 8 * i, &v, 8); break; }
    }
  }
}

uint64_t ct_hash(const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i;
  for (i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

int ct_not_built(xc_result_t rc) {
  return rc == XC_ERR_UNSUPPORTED && strstr(xc_last_error(), "not built") != NULL;
}
