/*
 * ompi_bench.c — the MPI twin of xc-bench's collective subcommands (every
 * collective of xcomm.h: allreduce, broadcast, reduce, allgather(v), gather(v),
 * scatter(v), reduce_scatter(v), alltoall(v), scan, exscan, barrier), for
 * comparing xcomm with an MPI library (Open MPI here) on the same machine.
 *
 *   mpicc -O2 -o ompi_bench docs/bench/ompi_bench.c
 *   mpirun -np 4 ./ompi_bench allreduce -b 8 -e 64M -f 4 -d float32 -o sum -n 20 -w 5 -c 1
 *
 * Same options, sizes, iteration scheme, check, columns and bus-bandwidth
 * formulas as xc-bench (src/tools/xc_bench/coll.cc), so the two outputs can
 * be read side by side (docs/bench/compare.sh does that):
 *  - a row: WARMUP untimed calls, MPI_Barrier, ITERS calls back to back; time =
 *    the slowest rank's average per call (MPI_Allreduce MAX), in microseconds;
 *  - the timed calls alternate between two pre-filled inputs and rewrite one
 *    input element before each call;
 *  - with -c 1 one more call on fresh input into a poisoned output, every result
 *    element compared bit for bit with the value computed locally (the same
 *    input pattern as xc-bench's coll_data.cc); #wrong summed over ranks;
 *  - size = the largest buffer a rank holds (allgather, gather: what the
 *    receiver holds, at least one element from each rank; scatter,
 *    reduce_scatter: the n blocks sent; alltoall: the n blocks each way);
 *    algbw = size / time in GB/s; busbw = algbw * 2(n-1)/n (allreduce),
 *    (n-1)/n (allgather, gather, scatter, reduce_scatter, alltoall and their
 *    v forms), 1 (broadcast, reduce, scan, exscan); barrier: time only;
 *  - the v forms run with equal counts, packed in rank order;
 *  - in place: MPI_IN_PLACE where MPI has it, at the root only for reduce,
 *    gather(v) and scatter(v) (as recvbuf for scatter), the other ranks
 *    calling the out-of-place form; exscan's rank 0 result is not checked.
 * MPI_Bcast has one buffer, so broadcast fills the in-place columns only, as
 * in xc-bench. What MPI lacks is left out, with a '#' line saying so: the avg
 * reduction, and reductions on float16/bfloat16 (no standard MPI type;
 * broadcast and allgather move them as 16-bit integers).
 *
 * -H 1 puts the buffers on 2 MiB pages (2 MiB-aligned, madvise
 * MADV_HUGEPAGE): the memory xc-bench -H 1 gets from xc_mem_alloc, so the two
 * can be compared on the same kind of buffers.
 *
 * Plain C99 + MPI-3 (+ madvise); no xcomm needed. Exit status 1 when #wrong > 0.
 */
#define _DEFAULT_SOURCE /* madvise */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ---- data types and ops --------------------------------------------------- */

enum { T_I8, T_U8, T_I32, T_U32, T_I64, T_U64, T_F16, T_BF16, T_F32, T_F64 };
typedef struct {
  const char *name;
  int kind; /* T_* */
  size_t size;
  int is_int, is_signed;
} dtype_t;
static const dtype_t kDtypes[] = {
    {"int8", T_I8, 1, 1, 1},       {"uint8", T_U8, 1, 1, 0},        {"int32", T_I32, 4, 1, 1},
    {"uint32", T_U32, 4, 1, 0},    {"int64", T_I64, 8, 1, 1},       {"uint64", T_U64, 8, 1, 0},
    {"float16", T_F16, 2, 0, 1},   {"bfloat16", T_BF16, 2, 0, 1},   {"float32", T_F32, 4, 0, 1},
    {"float64", T_F64, 8, 0, 1},
};
#define NUM_DTYPES ((int)(sizeof kDtypes / sizeof kDtypes[0]))

static MPI_Datatype mpi_type(const dtype_t *d) {
  switch (d->kind) {
    case T_I8: return MPI_INT8_T;
    case T_U8: return MPI_UINT8_T;
    case T_I32: return MPI_INT32_T;
    case T_U32: return MPI_UINT32_T;
    case T_I64: return MPI_INT64_T;
    case T_U64: return MPI_UINT64_T;
    case T_F16: case T_BF16: return MPI_UINT16_T; /* data movement only */
    case T_F32: return MPI_FLOAT;
    default: return MPI_DOUBLE;
  }
}

/* The same codes as xcomm's xc_op_t, so the input pattern matches xc-bench's. */
enum { OP_COPY = -1, OP_SUM = 0, OP_PROD = 1, OP_MIN = 2, OP_MAX = 3, OP_AVG = 4, OP_BAND = 5, OP_BOR = 6, OP_BXOR = 7 };
typedef struct {
  const char *name;
  int op;
  int int_only;
} redop_t;
static const redop_t kRedops[] = {
    {"sum", OP_SUM, 0}, {"prod", OP_PROD, 0}, {"min", OP_MIN, 0}, {"max", OP_MAX, 0},
    {"avg", OP_AVG, 0}, {"band", OP_BAND, 1}, {"bor", OP_BOR, 1}, {"bxor", OP_BXOR, 1},
};
#define NUM_REDOPS ((int)(sizeof kRedops / sizeof kRedops[0]))

static MPI_Op mpi_op(int op) {
  switch (op) {
    case OP_SUM: return MPI_SUM;
    case OP_PROD: return MPI_PROD;
    case OP_MIN: return MPI_MIN;
    case OP_MAX: return MPI_MAX;
    case OP_BAND: return MPI_BAND;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    default: return MPI_OP_NULL;
  }
}

static const char *op_name(int op) {
  int i;
  for (i = 0; i < NUM_REDOPS; ++i)
    if (kRedops[i].op == op) return kRedops[i].name;
  return "none";
}

/* ---- the input pattern (as xc-bench's coll_data.cc) ----------------------- */

#define POISON 0xA5

static uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static int64_t input_value(int op, int is_signed, int nranks, int rank, size_t i, int variant) {
  uint64_t h = mix((uint64_t)i * 0x9e3779b97f4a7c15ull ^ ((uint64_t)rank + 1) << 40 ^ (uint64_t)variant << 62);
  switch (op) {
    case OP_SUM:
    case OP_AVG: {
      int64_t m = 100 / (nranks > 1 ? nranks : 1) + 1;
      if (m < 2) m = 2;
      if (m > 16) m = 16;
      return ((int64_t)(mix(h ^ 1) % (uint64_t)m) + variant) % m;
    }
    case OP_PROD: return rank < 6 && (i + (size_t)rank + (size_t)variant) % 3 == 0 ? 2 : 1;
    case OP_MIN:
    case OP_MAX: return (int64_t)(h % 100) - (is_signed ? 50 : 0);
    case OP_BAND: return (int64_t)((h | mix(h)) | 2u);
    case OP_BOR:
    case OP_BXOR: return (int64_t)((h & ~(uint64_t)2) | (rank == 0 ? 2u : 0u));
    default: return (int64_t)(h % 128);
  }
}

static uint16_t float_to_half(float f) {
  uint32_t bits, abs;
  uint16_t sign;
  memcpy(&bits, &f, 4);
  sign = (uint16_t)((bits >> 16) & 0x8000u);
  abs = bits & 0x7fffffffu;
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (abs < 0x38800000u) {
    uint32_t exp, mant, shift, half_mant, rem, halfway;
    if (abs < 0x33000000u) return sign;
    exp = abs >> 23;
    mant = (abs & 0x7fffffu) | 0x800000u;
    shift = 126 - exp;
    half_mant = mant >> shift;
    rem = mant & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return (uint16_t)(sign | half_mant);
  }
  return (uint16_t)(sign | ((abs + 0xfffu + ((abs >> 13) & 1u) - 0x38000000u) >> 13));
}

static uint16_t float_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

/* buf[i] = v (integers wrap; floats from the exact real value `real`). */
static void put(const dtype_t *d, void *buf, size_t i, double real, int64_t v) {
  char *p = (char *)buf + i * d->size;
  switch (d->kind) {
    case T_I8: case T_U8: { uint8_t x = (uint8_t)(uint64_t)v; memcpy(p, &x, 1); break; }
    case T_I32: case T_U32: { uint32_t x = (uint32_t)(uint64_t)v; memcpy(p, &x, 4); break; }
    case T_I64: case T_U64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    case T_F16: { uint16_t x = float_to_half((float)real); memcpy(p, &x, 2); break; }
    case T_BF16: { uint16_t x = float_to_bf16((float)real); memcpy(p, &x, 2); break; }
    case T_F32: { float x = (float)real; memcpy(p, &x, 4); break; }
    default: memcpy(p, &real, 8); break;
  }
}
static void store_value(const dtype_t *d, void *buf, size_t i, int64_t v) { put(d, buf, i, (double)v, v); }

static void fill_input(const dtype_t *d, int op, int nranks, int rank, int variant, void *buf, size_t count) {
  size_t k;
  for (k = 0; k < count; ++k) store_value(d, buf, k, input_value(op, d->is_signed, nranks, rank, k, variant));
}

/* An integer element read back as the dtype sees it (sign-extended when signed). */
static int64_t get_int(const dtype_t *d, const void *p) {
  switch (d->kind) {
    case T_I8: { int8_t x; memcpy(&x, p, 1); return x; }
    case T_U8: { uint8_t x; memcpy(&x, p, 1); return x; }
    case T_I32: { int32_t x; memcpy(&x, p, 4); return x; }
    case T_U32: { uint32_t x; memcpy(&x, p, 4); return x; }
    default: { int64_t x; memcpy(&x, p, 8); return x; }
  }
}

/* The reduction by op over ranks [lo, hi) of input element j, into out. */
static void expected_value(const dtype_t *d, int op, int nranks, int lo, int hi, size_t j, int variant, void *out) {
  int r;
  if (op == OP_COPY || hi == lo + 1) {
    store_value(d, out, 0, input_value(op, d->is_signed, nranks, lo, j, variant));
  } else if (d->is_int) {
    /* Sum and product wrap the same way in 64 bits and in the dtype; min and
       max compare values read back in the dtype. */
    unsigned char acc[8], v[8];
    for (r = lo; r < hi; ++r) {
      store_value(d, r == lo ? acc : v, 0, input_value(op, d->is_signed, nranks, r, j, variant));
      if (r == lo) continue;
      {
        int64_t a = get_int(d, acc), b = get_int(d, v), c = a;
        uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
        int less = d->is_signed || d->size < 8 ? b < a : ub < ua;
        switch (op) {
          case OP_SUM: c = (int64_t)(ua + ub); break;
          case OP_PROD: c = (int64_t)(ua * ub); break;
          case OP_MIN: c = less ? b : a; break;
          case OP_MAX: c = (!less && b != a) ? b : a; break;
          case OP_BAND: c = (int64_t)(ua & ub); break;
          case OP_BOR: c = (int64_t)(ua | ub); break;
          case OP_BXOR: c = (int64_t)(ua ^ ub); break;
          default: break;
        }
        store_value(d, acc, 0, c);
      }
    }
    memcpy(out, acc, d->size);
  } else {
    double acc = 0;
    for (r = lo; r < hi; ++r) {
      double v = (double)input_value(op, d->is_signed, nranks, r, j, variant);
      if (r == lo) acc = v;
      else if (op == OP_SUM) acc += v;
      else if (op == OP_PROD) acc *= v;
      else if (op == OP_MIN) acc = v < acc ? v : acc;
      else if (op == OP_MAX) acc = v > acc ? v : acc;
    }
    put(d, out, 0, acc, 0);
  }
}

/* ---- the collectives ------------------------------------------------------ */

typedef struct {
  const dtype_t *dtype;
  int op, root, rank, nranks;
  size_t send_count, recv_count;
  int in_place; /* this rank calls the in-place form */
  int *counts, *displs; /* v-ops: equal blocks, packed in rank order (set per row) */
} args_t;

typedef struct {
  int lo, hi;
  size_t j;
} source_t;

enum {
  F_DATA = 1, F_REDOP = 2, F_ROOT = 4, F_OUT_OF_PLACE = 8, F_IN_PLACE = 16,
  F_IN_PLACE_AT_ROOT = 32, /* only the root calls the in-place form; the others out of place */
  F_IN_PLACE_IN_SEND = 64, /* in place the input stays in sendbuf (scatter: recvbuf is MPI_IN_PLACE) */
  F_VECTOR = 128           /* a v-op */
};

typedef struct {
  const char *name;
  unsigned flags;
  void (*counts)(size_t count, int nranks, size_t *s, size_t *r);
  double (*bus_factor)(int nranks);
  int (*has_input)(const args_t *);           /* NULL: every rank */
  size_t (*in_place_offset)(const args_t *);  /* NULL: 0 */
  size_t (*checked)(const args_t *);          /* NULL: recv_count */
  source_t (*source)(const args_t *, size_t i);
  int (*call)(const args_t *, const void *send, void *recv); /* send MPI_IN_PLACE in place */
} coll_t;

static void counts_same(size_t count, int n, size_t *s, size_t *r) { (void)n; *s = *r = count; }
static void counts_gather(size_t count, int n, size_t *s, size_t *r) {
  *s = count / (size_t)n > 0 ? count / (size_t)n : 1;
  *r = *s * (size_t)n;
}
static void counts_scatter(size_t count, int n, size_t *s, size_t *r) { counts_gather(count, n, r, s); }
static void counts_alltoall(size_t count, int n, size_t *s, size_t *r) {
  *s = *r = (count / (size_t)n > 0 ? count / (size_t)n : 1) * (size_t)n;
}
static void counts_none(size_t count, int n, size_t *s, size_t *r) { (void)count; (void)n; *s = *r = 0; }
static double bus_allreduce(int n) { return 2.0 * (n - 1) / n; }
static double bus_n1_n(int n) { return (double)(n - 1) / n; }
static double bus_one(int n) { (void)n; return 1.0; }
static double bus_none(int n) { (void)n; return 0.0; }
static int root_only(const args_t *a) { return a->rank == a->root; }
static size_t own_block(const args_t *a) { return (size_t)a->rank * a->send_count; }
static size_t all_at_root(const args_t *a) { return a->rank == a->root ? a->recv_count : 0; }
static size_t scatter_checked(const args_t *a) { return a->in_place && a->rank == a->root ? 0 : a->recv_count; }
static size_t exscan_checked(const args_t *a) { return a->rank == 0 ? 0 : a->recv_count; }
static source_t src(int lo, int hi, size_t j) { source_t s; s.lo = lo; s.hi = hi; s.j = j; return s; }
static source_t from_all(const args_t *a, size_t i) { return src(0, a->nranks, i); }
static source_t from_root(const args_t *a, size_t i) { return src(a->root, a->root + 1, i); }
static source_t from_owner(const args_t *a, size_t i) {
  int owner = (int)(i / a->send_count);
  return src(owner, owner + 1, i % a->send_count);
}
static source_t from_root_my_block(const args_t *a, size_t i) {
  return src(a->root, a->root + 1, (size_t)a->rank * a->recv_count + i);
}
static source_t reduced_my_block(const args_t *a, size_t i) { return src(0, a->nranks, (size_t)a->rank * a->recv_count + i); }
static source_t from_peer_block(const args_t *a, size_t i) {
  size_t per_peer = a->recv_count / (size_t)a->nranks;
  int peer = (int)(i / per_peer);
  return src(peer, peer + 1, (size_t)a->rank * per_peer + i % per_peer);
}
static source_t prefix_inclusive(const args_t *a, size_t i) { return src(0, a->rank + 1, i); }
static source_t prefix_exclusive(const args_t *a, size_t i) { return src(0, a->rank, i); }

#define T(a) mpi_type((a)->dtype)
#define W MPI_COMM_WORLD
static void *scatter_recv(const args_t *a, void *r) { return a->in_place ? MPI_IN_PLACE : r; }
static int call_barrier(const args_t *a, const void *s, void *r) { (void)a; (void)s; (void)r; return MPI_Barrier(W); }
static int call_bcast(const args_t *a, const void *s, void *r) {
  (void)s;
  return MPI_Bcast(r, (int)a->recv_count, T(a), a->root, W);
}
static int call_reduce(const args_t *a, const void *s, void *r) {
  return MPI_Reduce(s, r, (int)a->recv_count, T(a), mpi_op(a->op), a->root, W);
}
static int call_allreduce(const args_t *a, const void *s, void *r) {
  return MPI_Allreduce(s, r, (int)a->recv_count, T(a), mpi_op(a->op), W);
}
static int call_allgather(const args_t *a, const void *s, void *r) {
  return MPI_Allgather(s, (int)a->send_count, T(a), r, (int)a->send_count, T(a), W);
}
static int call_allgatherv(const args_t *a, const void *s, void *r) {
  return MPI_Allgatherv(s, (int)a->send_count, T(a), r, a->counts, a->displs, T(a), W);
}
static int call_gather(const args_t *a, const void *s, void *r) {
  return MPI_Gather(s, (int)a->send_count, T(a), r, (int)a->send_count, T(a), a->root, W);
}
static int call_gatherv(const args_t *a, const void *s, void *r) {
  return MPI_Gatherv(s, (int)a->send_count, T(a), r, a->counts, a->displs, T(a), a->root, W);
}
static int call_scatter(const args_t *a, const void *s, void *r) {
  return MPI_Scatter(s, (int)a->recv_count, T(a), scatter_recv(a, r), (int)a->recv_count, T(a), a->root, W);
}
static int call_scatterv(const args_t *a, const void *s, void *r) {
  return MPI_Scatterv(s, a->counts, a->displs, T(a), scatter_recv(a, r), (int)a->recv_count, T(a), a->root, W);
}
static int call_reduce_scatter(const args_t *a, const void *s, void *r) {
  return MPI_Reduce_scatter_block(s, r, (int)a->recv_count, T(a), mpi_op(a->op), W);
}
static int call_reduce_scatterv(const args_t *a, const void *s, void *r) {
  return MPI_Reduce_scatter(s, r, a->counts, T(a), mpi_op(a->op), W);
}
static int call_alltoall(const args_t *a, const void *s, void *r) {
  int per_peer = (int)(a->recv_count / (size_t)a->nranks);
  return MPI_Alltoall(s, per_peer, T(a), r, per_peer, T(a), W);
}
static int call_alltoallv(const args_t *a, const void *s, void *r) {
  return MPI_Alltoallv(s, a->counts, a->displs, T(a), r, a->counts, a->displs, T(a), W);
}
static int call_scan(const args_t *a, const void *s, void *r) {
  return MPI_Scan(s, r, (int)a->recv_count, T(a), mpi_op(a->op), W);
}
static int call_exscan(const args_t *a, const void *s, void *r) {
  return MPI_Exscan(s, r, (int)a->recv_count, T(a), mpi_op(a->op), W);
}
#undef T
#undef W

#define BOTH (F_OUT_OF_PLACE | F_IN_PLACE)
#define REDUCTION (F_DATA | F_REDOP | BOTH)
/* The same entries, in the same order, as xc-bench's (src/tools/xc_bench/coll_table.cc). */
static const coll_t kColls[] = {
    {"allreduce", REDUCTION, counts_same, bus_allreduce, NULL, NULL, NULL, from_all, call_allreduce},
    {"broadcast", F_DATA | F_ROOT | F_IN_PLACE, counts_same, bus_one, root_only, NULL, NULL, from_root, call_bcast},
    {"reduce", REDUCTION | F_ROOT | F_IN_PLACE_AT_ROOT, counts_same, bus_one, NULL, NULL, all_at_root, from_all,
     call_reduce},
    {"allgather", F_DATA | BOTH, counts_gather, bus_n1_n, NULL, own_block, NULL, from_owner, call_allgather},
    {"allgatherv", F_DATA | BOTH | F_VECTOR, counts_gather, bus_n1_n, NULL, own_block, NULL, from_owner,
     call_allgatherv},
    {"gather", F_DATA | F_ROOT | BOTH | F_IN_PLACE_AT_ROOT, counts_gather, bus_n1_n, NULL, own_block, all_at_root,
     from_owner, call_gather},
    {"gatherv", F_DATA | F_ROOT | BOTH | F_IN_PLACE_AT_ROOT | F_VECTOR, counts_gather, bus_n1_n, NULL, own_block,
     all_at_root, from_owner, call_gatherv},
    {"scatter", F_DATA | F_ROOT | BOTH | F_IN_PLACE_AT_ROOT | F_IN_PLACE_IN_SEND, counts_scatter, bus_n1_n,
     root_only, NULL, scatter_checked, from_root_my_block, call_scatter},
    {"scatterv", F_DATA | F_ROOT | BOTH | F_IN_PLACE_AT_ROOT | F_IN_PLACE_IN_SEND | F_VECTOR, counts_scatter,
     bus_n1_n, root_only, NULL, scatter_checked, from_root_my_block, call_scatterv},
    {"reduce_scatter", REDUCTION, counts_scatter, bus_n1_n, NULL, NULL, NULL, reduced_my_block,
     call_reduce_scatter},
    {"reduce_scatterv", REDUCTION | F_VECTOR, counts_scatter, bus_n1_n, NULL, NULL, NULL, reduced_my_block,
     call_reduce_scatterv},
    {"alltoall", F_DATA | BOTH, counts_alltoall, bus_n1_n, NULL, NULL, NULL, from_peer_block, call_alltoall},
    {"alltoallv", F_DATA | BOTH | F_VECTOR, counts_alltoall, bus_n1_n, NULL, NULL, NULL, from_peer_block,
     call_alltoallv},
    {"scan", REDUCTION, counts_same, bus_one, NULL, NULL, NULL, prefix_inclusive, call_scan},
    {"exscan", REDUCTION, counts_same, bus_one, NULL, NULL, exscan_checked, prefix_exclusive, call_exscan},
    {"barrier", F_OUT_OF_PLACE, counts_none, bus_none, NULL, NULL, NULL, NULL, call_barrier},
};
#define NUM_COLLS ((int)(sizeof kColls / sizeof kColls[0]))

/* ---- measuring ------------------------------------------------------------ */

static int g_rank;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void check_mpi(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "ompi_bench: rank %d: %s failed: %s\n", g_rank, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

typedef struct {
  size_t min_bytes, max_bytes;
  int factor, iters, warmup, check, root, hugepages;
} opts_t;

typedef struct {
  int done;
  double us, wrong; /* wrong < 0: not checked */
} half_t;

static unsigned char *alloc_block(size_t bytes, int hugepages) {
  size_t page = hugepages ? (size_t)2 << 20 : 4096, rounded = (bytes + page - 1) / page * page;
  unsigned char *p;
  if (bytes == 0) return NULL;
  if (posix_memalign((void **)&p, page, rounded) != 0) {
    fprintf(stderr, "ompi_bench: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (hugepages) (void)madvise(p, rounded, MADV_HUGEPAGE);
  memset(p, POISON, rounded);
  return p;
}

static double verify(const coll_t *c, const args_t *a, const unsigned char *got, int in_place, size_t row_bytes) {
  size_t i, wrong = 0, es = a->dtype->size;
  unsigned char want[8];
  size_t n = c->checked ? c->checked(a) : a->recv_count;
  for (i = 0; i < n; ++i) {
    source_t s = c->source(a, i);
    expected_value(a->dtype, a->op, a->nranks, s.lo, s.hi, s.j, 0, want);
    if (memcmp(want, got + i * es, es) != 0) {
      if (wrong == 0) {
        unsigned long long w = 0, g = 0;
        memcpy(&w, want, es);
        memcpy(&g, got + i * es, es);
        fprintf(stderr, "ompi_bench: rank %d: %s %s %s %zu B %s: first wrong element %zu: 0x%llx, expected 0x%llx\n",
                a->rank, c->name, a->dtype->name, op_name(a->op), row_bytes, in_place ? "in-place" : "out-of-place",
                i, g, w);
      }
      ++wrong;
    }
  }
  return (double)wrong;
}

static half_t measure(const coll_t *c, const args_t *row, const opts_t *o, int in_place, unsigned char *sendb[2],
                      unsigned char *recvb[2], size_t row_bytes) {
  half_t h;
  args_t mine = *row, *a = &mine;
  int data = (c->flags & F_DATA) != 0, k, w, i, input, in_recv;
  size_t es = data ? row->dtype->size : 1, off;
  /* Whether THIS rank calls the in-place form (F_IN_PLACE_AT_ROOT). */
  mine.in_place = in_place && (!(c->flags & F_IN_PLACE_AT_ROOT) || mine.rank == mine.root);
  input = data && (c->has_input ? c->has_input(a) : 1) && a->send_count > 0;
  in_recv = a->in_place && !(c->flags & F_IN_PLACE_IN_SEND); /* the input lives in recvbuf */
  off = in_recv && c->in_place_offset ? c->in_place_offset(a) : 0;
  const void *send[2] = {NULL, NULL};
  unsigned char *recv[2] = {NULL, NULL}, *in[2] = {NULL, NULL};
  long it = 0;
  double t0, local;
  h.done = 1;
  h.wrong = -1;
  for (k = 0; k < 2 && data; ++k) {
    recv[k] = in_place ? recvb[k] : recvb[0];
    send[k] = in_recv ? MPI_IN_PLACE : sendb[k];
    in[k] = in_recv ? recv[k] + off * es : sendb[k];
    if (input) fill_input(a->dtype, a->op, a->nranks, a->rank, k, in[k], a->send_count);
  }
#define STEP()                                                                                   \
  do {                                                                                           \
    int k_ = (int)(it & 1);                                                                      \
    if (input) store_value(a->dtype, in[k_], (size_t)it % a->send_count, 1 + it % 61);           \
    check_mpi(c->call(a, send[k_], recv[k_]), c->name);                                          \
    ++it;                                                                                        \
  } while (0)
  for (w = 0; w < o->warmup; ++w) STEP();
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  t0 = now_us();
  for (i = 0; i < o->iters; ++i) STEP();
#undef STEP
  local = (now_us() - t0) / o->iters;
  check_mpi(MPI_Allreduce(&local, &h.us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  if (o->check && data) {
    double wrong;
    memset(recv[0], POISON, a->recv_count * es);
    if (input) fill_input(a->dtype, a->op, a->nranks, a->rank, 0, in[0], a->send_count);
    check_mpi(c->call(a, send[0], recv[0]), c->name);
    wrong = verify(c, a, recv[0], in_place, row_bytes);
    check_mpi(MPI_Allreduce(&wrong, &h.wrong, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  }
  return h;
}

/* nccl-tests' getFloatStr. */
static void fmt_num(char *buf, size_t len, double value, int width) {
  int power = 0;
  double v = 1;
  while (value >= v && power < 30) {
    ++power;
    v *= 10;
  }
  if (power < width - 2) snprintf(buf, len, "%*.2f", width, value);
  else if (power < width - 1) snprintf(buf, len, "%*.1f", width, value);
  else if (power < width + 1) snprintf(buf, len, "%*.0f", width, value);
  else snprintf(buf, len, "%*.1e", width, value);
}

static void print_half(const half_t *h, int data, double bytes, double factor, double *bw_sum, int *bw_count) {
  char t[32], ab[32], bb[32], wr[32] = "N/A";
  if (!h->done) {
    printf("  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    return;
  }
  if (h->wrong >= 0) snprintf(wr, sizeof wr, "%g", h->wrong);
  fmt_num(t, sizeof t, h->us, 7);
  if (!data) { /* no bandwidth (barrier) */
    printf("  %7s  %6s  %6s  %6s", t, "N/A", "N/A", wr);
    return;
  }
  fmt_num(ab, sizeof ab, bytes / h->us * 1e-3, 6);
  fmt_num(bb, sizeof bb, bytes / h->us * 1e-3 * factor, 6);
  *bw_sum += bytes / h->us * 1e-3 * factor;
  ++*bw_count;
  printf("  %7s  %6s  %6s  %6s", t, ab, bb, wr);
}

/* ---- command line --------------------------------------------------------- */

static int parse_bytes(const char *s, size_t *out) {
  char *end;
  unsigned long long v;
  if (!s || !*s || *s == '-') return 0;
  v = strtoull(s, &end, 10);
  if (end == s) return 0;
  if (*end == 'K' || *end == 'k') v <<= 10, ++end;
  else if (*end == 'M' || *end == 'm') v <<= 20, ++end;
  else if (*end == 'G' || *end == 'g') v <<= 30, ++end;
  if (*end) return 0;
  *out = (size_t)v;
  return 1;
}

static int parse_int(const char *s, int min, int *out) {
  char *end;
  long v;
  if (!s || !*s) return 0;
  v = strtol(s, &end, 10);
  if (*end || v < min || v > 1000000) return 0;
  *out = (int)v;
  return 1;
}

static const dtype_t *dtype_by_name(const char *n) {
  int i;
  if (!strcmp(n, "float")) n = "float32";
  if (!strcmp(n, "double")) n = "float64";
  if (!strcmp(n, "half")) n = "float16";
  for (i = 0; i < NUM_DTYPES; ++i)
    if (!strcmp(n, kDtypes[i].name)) return &kDtypes[i];
  return NULL;
}

static void usage(FILE *to) {
  fprintf(to,
          "usage: ompi_bench COLLECTIVE [-b MINBYTES] [-e MAXBYTES] [-f FACTOR]\n"
          "       [-d DTYPE|all] [-o OP|all] [-r ROOT] [-n ITERS] [-w WARMUP] [-c 0|1] [-H 0|1]\n"
          "COLLECTIVE: allreduce broadcast reduce allgather allgatherv gather gatherv scatter\n"
          "scatterv reduce_scatter reduce_scatterv alltoall alltoallv scan exscan barrier.\n"
          "Same options, defaults and columns as xc-bench's collective subcommands.\n");
}

int main(int argc, char **argv) {
  opts_t o = {8, 32u << 20, 2, 20, 5, 1, 0, 0};
  const coll_t *c = NULL;
  const char *dtype_arg = "float32", *op_arg = "sum";
  int nranks, i, di, oi, bw_count = 0, skipped_avg = 0, skipped_half = 0, skipped_bitwise = 0;
  double bw_sum = 0, total_wrong = 0;
  unsigned char *sendb[2] = {NULL, NULL}, *recvb[2] = {NULL, NULL};
  int *vcounts, *vdispls;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  vcounts = (int *)calloc((size_t)nranks, sizeof(int));
  vdispls = (int *)calloc((size_t)nranks, sizeof(int));
  if (argc >= 2)
    for (i = 0; i < NUM_COLLS; ++i)
      if (!strcmp(argv[1], kColls[i].name)) c = &kColls[i];
  if (!c) {
    if (g_rank == 0) usage(stderr);
    MPI_Finalize();
    return 2;
  }
  for (i = 2; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 0;
    if (a[0] == '-' && a[1] && !a[2] && v) {
      ++i;
      switch (a[1]) {
        case 'b': ok = parse_bytes(v, &o.min_bytes); break;
        case 'e': ok = parse_bytes(v, &o.max_bytes); break;
        case 'f': ok = parse_int(v, 2, &o.factor); break;
        case 'd': dtype_arg = v; ok = 1; break;
        case 'o': op_arg = v; ok = 1; break;
        case 'r': ok = parse_int(v, 0, &o.root); break;
        case 'n': ok = parse_int(v, 1, &o.iters); break;
        case 'w': ok = parse_int(v, 0, &o.warmup); break;
        case 'c': ok = parse_int(v, 0, &o.check); break;
        case 'H': ok = parse_int(v, 0, &o.hugepages) && o.hugepages <= 1; break;
        default: break;
      }
    }
    if (!ok) {
      if (g_rank == 0) {
        fprintf(stderr, "ompi_bench: bad argument '%s'\n", a);
        usage(stderr);
      }
      MPI_Finalize();
      return 2;
    }
  }
  if (o.min_bytes == 0 || o.min_bytes > o.max_bytes || ((c->flags & F_ROOT) && o.root >= nranks) ||
      (strcmp(dtype_arg, "all") && !dtype_by_name(dtype_arg))) {
    if (g_rank == 0) fprintf(stderr, "ompi_bench: bad sizes, root or dtype\n");
    MPI_Finalize();
    return 2;
  }

  /* Buffers for the largest row of any dtype (as xc-bench). */
  if (c->flags & F_DATA) {
    size_t send_max = 0, recv_max = 0, s, r;
    for (di = 0; di < NUM_DTYPES; ++di) {
      const dtype_t *d = &kDtypes[di];
      if (strcmp(dtype_arg, "all") && d != dtype_by_name(dtype_arg)) continue;
      c->counts(o.max_bytes / d->size > 0 ? o.max_bytes / d->size : 1, nranks, &s, &r);
      if (s * d->size > send_max) send_max = s * d->size;
      if (r * d->size > recv_max) recv_max = r * d->size;
    }
    if (c->flags & F_OUT_OF_PLACE) sendb[0] = alloc_block(send_max, o.hugepages), sendb[1] = alloc_block(send_max, o.hugepages);
    /* In place the input lives in recvbuf, and can be the larger side (reduce_scatter). */
    if ((c->flags & F_IN_PLACE) && !(c->flags & F_IN_PLACE_IN_SEND) && send_max > recv_max) recv_max = send_max;
    recvb[0] = alloc_block(recv_max, o.hugepages);
    if (c->flags & F_IN_PLACE) recvb[1] = alloc_block(recv_max, o.hugepages);
  }

  if (g_rank == 0) {
    int len = 0, v, sv;
    char host[MPI_MAX_PROCESSOR_NAME];
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_version(&v, &sv);
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = 0;
    MPI_Get_processor_name(host, &len);
    if (c->flags & F_DATA)
      printf("# ompi_bench %s: nranks %d minBytes %zu maxBytes %zu step: %d(factor) warmup iters: %d iters: %d "
             "validation: %d\n",
             c->name, nranks, o.min_bytes, o.max_bytes, o.factor, o.warmup, o.iters, o.check ? 1 : 0);
    else
      printf("# ompi_bench %s: nranks %d warmup iters: %d iters: %d (no data: one row, time only)\n", c->name, nranks,
             o.warmup, o.iters);
    printf("# %s (MPI %d.%d) on %s\n#\n", lib, v, sv, host);
    if (o.hugepages) printf("# Buffers on 2 MiB pages (madvise MADV_HUGEPAGE)\n#\n");
    printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "", "",
           "", "");
    printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type", "redop",
           "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "", "", "",
           "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    fflush(stdout);
  }

  for (di = 0; di < NUM_DTYPES; ++di) {
    const dtype_t *d = &kDtypes[di];
    if (!(c->flags & F_DATA)) { if (di > 0) break; }
    else if (strcmp(dtype_arg, "all") && d != dtype_by_name(dtype_arg)) continue;
    for (oi = 0; oi < NUM_REDOPS; ++oi) {
      args_t a;
      size_t bytes;
      int op = OP_COPY;
      if (c->flags & F_REDOP) {
        if (strcmp(op_arg, "all") && strcmp(op_arg, kRedops[oi].name)) continue;
        op = kRedops[oi].op;
        if (op == OP_AVG) { skipped_avg = 1; continue; }
        if (kRedops[oi].int_only && !d->is_int) { skipped_bitwise = 1; continue; }
        if (d->kind == T_F16 || d->kind == T_BF16) { skipped_half = 1; continue; }
      } else if (oi > 0) {
        break;
      }
      memset(&a, 0, sizeof a);
      a.counts = vcounts;
      a.displs = vdispls;
      a.dtype = (c->flags & F_DATA) ? d : NULL;
      a.op = op;
      a.root = (c->flags & F_ROOT) ? o.root : -1;
      a.rank = g_rank;
      a.nranks = nranks;
      for (bytes = o.min_bytes;; bytes *= (size_t)o.factor) {
        size_t count = a.dtype ? bytes / d->size : 0;
        if (!a.dtype || count > 0) {
          size_t elems, row_bytes;
          half_t out = {0, 0, -1}, in = {0, 0, -1};
          c->counts(count, nranks, &a.send_count, &a.recv_count);
          if (c->flags & F_VECTOR) { /* equal blocks, packed in rank order */
            size_t block = a.send_count == a.recv_count ? a.send_count / (size_t)nranks
                                                        : (a.send_count < a.recv_count ? a.send_count : a.recv_count);
            for (i = 0; i < nranks; ++i) {
              vcounts[i] = (int)block;
              vdispls[i] = (int)(block * (size_t)i);
            }
          }
          elems = a.send_count > a.recv_count ? a.send_count : a.recv_count;
          row_bytes = elems * (a.dtype ? d->size : 0);
          if (c->flags & F_OUT_OF_PLACE) out = measure(c, &a, &o, 0, sendb, recvb, row_bytes);
          if (c->flags & F_IN_PLACE) in = measure(c, &a, &o, 1, sendb, recvb, row_bytes);
          if (out.wrong > 0) total_wrong += out.wrong;
          if (in.wrong > 0) total_wrong += in.wrong;
          if (g_rank == 0) {
            printf("%12zu  %12zu  %8s  %6s  %6d", row_bytes, elems, a.dtype ? d->name : "none", op_name(op), a.root);
            print_half(&out, a.dtype != NULL, (double)row_bytes, c->bus_factor(nranks), &bw_sum, &bw_count);
            print_half(&in, a.dtype != NULL, (double)row_bytes, c->bus_factor(nranks), &bw_sum, &bw_count);
            printf("\n");
            fflush(stdout);
          }
        }
        if (!a.dtype || bytes > o.max_bytes / (size_t)o.factor) break;
      }
    }
  }
  if (g_rank == 0) {
    if (skipped_avg) printf("# avg: no such MPI reduction, left out\n");
    if (skipped_half) printf("# float16/bfloat16 reductions: no standard MPI type, left out\n");
    if (skipped_bitwise) printf("# band, bor and bxor are for integer types: left out for float types\n");
    printf("# Out of bounds values : %.0f %s\n", total_wrong, total_wrong > 0 ? "FAILED" : "OK");
    if (bw_count > 0) printf("# Avg bus bandwidth    : %g \n", bw_sum / bw_count);
    else printf("# Avg bus bandwidth    : N/A \n");
    printf("#\n");
    fflush(stdout);
  }
  for (i = 0; i < 2; ++i) {
    free(sendb[i]);
    free(recvb[i]);
  }
  free(vcounts);
  free(vdispls);
  MPI_Finalize();
  return total_wrong > 0 ? 1 : 0;
}
