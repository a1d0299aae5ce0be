/* NCCL underneath (docs/nccl.md), through the fake libnccl of this folder
   (fake_nccl.cc: moves data between the ranks' processes and logs every call
   to $FAKE_NCCL_LOG.<rank>), on the emulated device. run.sh sets the
   environment (XC_DEVICE=emulated, XC_NCCL_LIBRARY, FAKE_NCCL_DIR/LOG) and
   puts ranks on different "hosts" (XC_HOST_ID) where the build can reach
   them (UCX), else forces NCCL on one host (XC_NCCL=1).

     nccl_test ops      every collective, send/recv, on device memory vs a
                        host reference computed here (int32 sum/min/max,
                        float64 avg/prod), in place and not.
     nccl_test splits   one xc_comm_split_groups into 4 groups = exactly one
                        ncclCommSplit per rank (color = group, key = new rank;
                        a rank in no group: NCCL_SPLIT_NOCOLOR); an allreduce
                        on each child goes to the child's NCCL communicator.
     nccl_test lazy     config.nccl_lazy: no NCCL communicator at xc_init nor
                        at a split, until the first device op.
     nccl_test p2p      send/recv on the parent's NCCL communicator (no new
                        one); on a second bound stream one child by
                        ncclCommSplit (color 0, key = rank), made once, reused.
     nccl_test abort    xc_comm_abort while a device op hangs in NCCL: returns
                        at once, calls ncclCommAbort; the op fails.
     nccl_test async    rank 1's allreduce fails asynchronously: every rank's
                        op fails within the deadline.
     nccl_test hang     rank 0's allreduce never completes: XC_ERR_TIMEOUT
                        within the deadline there, an error everywhere, no hang.
     nccl_test algo     one host, XC_ALGO=allreduce=nccl (run.sh mode algo): the
                        allreduce goes to NCCL, an allgather on the same
                        stream stays on xcomm's IPC path; both correct.
     nccl_test kill     the last rank is SIGKILLed before an allreduce the others
                        wait for in NCCL: XC_ERR_PEER_FAILED on each survivor
                        well within the deadline (xcomm's engine sees the death;
                        NCCL would wait). run.sh mode kill checks the survivors.
     nccl_test missing  XC_NCCL_LIBRARY names no file: device ops are
                        XC_ERR_UNSUPPORTED naming it.
     nccl_test old      the library reports NCCL 2.17: XC_ERR_UNSUPPORTED
                        naming the version.
   Exit status: 0 passed, 1 failed, 77 skipped. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "dev_mem.h"

static xc_comm_t world;
static int me, n;

#define CALL(call)                                                                                         \
  do {                                                                                                     \
    xc_result_t rc_ = (call);                                                                              \
    if (rc_ != XC_SUCCESS) {                                                                               \
      fprintf(stderr, "[rank %d] %s:%d: %s -> %s (%s)\n", me, __FILE__, __LINE__, #call, xc_strerror(rc_), \
              xc_last_error());                                                                            \
      exit(1);                                                                                             \
    }                                                                                                      \
  } while (0)

#define CHECK(cond, ...)                                                 \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "[rank %d] FAIL %s:%d: ", me, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                      \
      fputc('\n', stderr);                                               \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

/* Checks of the fake's log; without one (a real NCCL on a GPU: gpu_run.sh)
   the data checks stay and these are skipped. */
static int have_log;
#define LOGCHECK(cond, ...)                 \
  do {                                      \
    if (have_log) CHECK(cond, __VA_ARGS__); \
  } while (0)

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- the fake's log ---- */

static char *read_log(void) {
  char path[512];
  const char *prefix = getenv("FAKE_NCCL_LOG");
  const char *rank = getenv("XC_RANK");
  FILE *f;
  long len;
  char *buf;
  CHECK(prefix && rank, "FAKE_NCCL_LOG and XC_RANK must be set");
  snprintf(path, sizeof path, "%s.%s", prefix, rank);
  f = fopen(path, "rb");
  if (!f) return calloc(1, 1);
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = calloc(1, (size_t)len + 1);
  if (fread(buf, 1, (size_t)len, f) != (size_t)len) len = 0;
  fclose(f);
  return buf;
}

/* Lines that start with word and contain every one of the (up to 2) parts. */
static int log_count(const char *word, const char *part, const char *part2) {
  char *log = read_log(), *line = log, *next;
  int count = 0;
  size_t w = strlen(word);
  for (; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    if (strncmp(line, word, w) != 0 || line[w] != ' ') continue;
    if (part && !strstr(line, part)) continue;
    if (part2 && !strstr(line, part2)) continue;
    ++count;
  }
  free(log);
  return count;
}

/* The value of key=... on the last line starting with word (static buffer). */
static const char *log_last(const char *word, const char *key) {
  static char value[256];
  char *log = read_log(), *line = log, *next;
  size_t w = strlen(word);
  value[0] = '\0';
  for (; line && *line; line = next) {
    char *at;
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    if (strncmp(line, word, w) != 0 || line[w] != ' ') continue;
    at = strstr(line, key);
    if (at) {
      size_t k = 0;
      at += strlen(key);
      while (at[k] && at[k] != ' ' && k + 1 < sizeof value) ++k;
      memcpy(value, at, k);
      value[k] = '\0';
    }
  }
  free(log);
  return value;
}

/* ---- data ---- */

static int32_t ival(int rank, int salt, size_t i) {
  return (int32_t)((rank * 7919 + salt * 104729 + (int)i * 31) % 2001) - 1000;
}
static double dval(int rank, int salt, size_t i) { return (double)((rank * 3 + salt + (int)i) % 7) - 3.0; }

static void *dev_of(const void *host, size_t bytes) {
  void *d = dev_alloc(world, bytes ? bytes : 8);
  dev_put(d, host, bytes);
  return d;
}

static xc_stream_t coll_stream;

static void sync_all(void) { CALL(xc_stream_synchronize(coll_stream)); }

static void expect_i32(const void *dev, const int32_t *want, size_t count, const char *what) {
  int32_t *got = malloc(count * 4 + 4);
  size_t i;
  dev_get(got, dev, count * 4);
  for (i = 0; i < count; ++i)
    CHECK(got[i] == want[i], "%s: element %zu is %d, expected %d (n=%d)", what, i, got[i], want[i], n);
  free(got);
}

static void expect_f64(const void *dev, const double *want, size_t count, const char *what) {
  double *got = malloc(count * 8 + 8);
  size_t i;
  dev_get(got, dev, count * 8);
  for (i = 0; i < count; ++i)
    CHECK(got[i] == want[i], "%s: element %zu is %g, expected %g (n=%d)", what, i, got[i], want[i], n);
  free(got);
}

static int32_t red_i32(int32_t a, int32_t b, xc_op_t op) {
  switch (op) {
    case XC_MIN:
      return a < b ? a : b;
    case XC_MAX:
      return a > b ? a : b;
    default:
      return a + b;
  }
}

/* Small integers as float16 / bfloat16 (exact: no rounding needed). */
static uint16_t f2bf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return (uint16_t)(x >> 16);
}
static uint16_t f2h(float f) {
  uint32_t x, sign, man;
  int exp;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  if ((x & 0x7fffffffu) == 0) return (uint16_t)sign;
  exp = (int)((x >> 23) & 0xff) - 127 + 15;
  man = x & 0x7fffffu;
  return (uint16_t)(sign | ((uint32_t)exp << 10) | (man >> 13));
}

static size_t vcount(int j) { return (size_t)(j % 3) + 2; }

static void test_ops(void) {
  const size_t C = 1001;
  size_t i;
  int j, inplace;
  const xc_op_t iops[] = {XC_SUM, XC_MIN, XC_MAX};
  int32_t *h = malloc(C * 4 * (size_t)n * 2), *want = malloc(C * 4 * (size_t)n * 2);
  double *hd = malloc(C * 8), *wd = malloc(C * 8);
  void *din, *dout;

  /* allreduce int32 sum/min/max, both placements */
  for (j = 0; j < 3; ++j)
    for (inplace = 0; inplace < 2; ++inplace) {
      int r;
      for (i = 0; i < C; ++i) h[i] = ival(me, j, i);
      for (i = 0; i < C; ++i) {
        want[i] = ival(0, j, i);
        for (r = 1; r < n; ++r) want[i] = red_i32(want[i], ival(r, j, i), iops[j]);
      }
      din = dev_of(h, C * 4);
      dout = inplace ? din : dev_alloc(world, C * 4);
      CALL(xc_allreduce(inplace ? XC_IN_PLACE : din, dout, C, XC_INT32, iops[j], world));
      sync_all();
      expect_i32(dout, want, C, "allreduce int32");
      if (!inplace) dev_free(world, dout);
      dev_free(world, din);
    }
  /* allreduce float64 avg and prod */
  {
    int r;
    xc_op_t ops[] = {XC_AVG, XC_PROD};
    for (j = 0; j < 2; ++j) {
      for (i = 0; i < C; ++i) hd[i] = dval(me, j, i);
      for (i = 0; i < C; ++i) {
        wd[i] = dval(0, j, i);
        for (r = 1; r < n; ++r) wd[i] = ops[j] == XC_AVG ? wd[i] + dval(r, j, i) : wd[i] * dval(r, j, i);
        if (ops[j] == XC_AVG) wd[i] /= n;
      }
      din = dev_of(hd, C * 8);
      dout = dev_alloc(world, C * 8);
      CALL(xc_allreduce(din, dout, C, XC_FLOAT64, ops[j], world));
      sync_all();
      expect_f64(dout, wd, C, ops[j] == XC_AVG ? "allreduce float64 avg" : "allreduce float64 prod");
      dev_free(world, din);
      dev_free(world, dout);
    }
  }
  /* float16 and bfloat16 (NCCL numbers them 6 and 9, xcomm 6 and 7): small
     integers, exact in both, summed */
  {
    int r, k;
    for (k = 0; k < 2; ++k) {
      xc_dtype_t t = k ? XC_BFLOAT16 : XC_FLOAT16;
      uint16_t *in16 = malloc(C * 2), *want16 = malloc(C * 2);
      for (i = 0; i < C; ++i) {
        float v = (float)dval(me, 3, i), s = 0;
        in16[i] = k ? f2bf(v) : f2h(v);
        for (r = 0; r < n; ++r) s += (float)dval(r, 3, i);
        want16[i] = k ? f2bf(s) : f2h(s);
      }
      din = dev_of(in16, C * 2);
      CALL(xc_allreduce(XC_IN_PLACE, din, C, t, XC_SUM, world));
      sync_all();
      {
        uint16_t *got = malloc(C * 2);
        dev_get(got, din, C * 2);
        for (i = 0; i < C; ++i)
          CHECK(got[i] == want16[i], "allreduce %s: element %zu is 0x%04x, expected 0x%04x", k ? "bfloat16" : "float16",
                i, got[i], want16[i]);
        free(got);
      }
      dev_free(world, din);
      free(in16);
      free(want16);
    }
    LOGCHECK(log_count("coll", "dtype=6 ", NULL) == 1 && log_count("coll", "dtype=9 ", NULL) == 1,
             "float16/bfloat16 did not reach NCCL as ncclFloat16 (6) / ncclBfloat16 (9)");
  }
  /* non-blocking: xc_iallreduce completes through xc_wait; a count of 0 */
  {
    int r;
    xc_request_t req = NULL;
    for (i = 0; i < C; ++i) h[i] = ival(me, 4, i);
    for (i = 0; i < C; ++i) {
      want[i] = 0;
      for (r = 0; r < n; ++r) want[i] += ival(r, 4, i);
    }
    din = dev_of(h, C * 4);
    CALL(xc_iallreduce(XC_IN_PLACE, din, C, XC_INT32, XC_SUM, world, &req));
    CALL(xc_wait(&req, NULL));
    expect_i32(din, want, C, "iallreduce");
    CALL(xc_allreduce(XC_IN_PLACE, din, 0, XC_INT32, XC_SUM, world));
    sync_all();
    expect_i32(din, want, C, "allreduce of 0 elements leaves the buffer");
    dev_free(world, din);
  }
  /* broadcast from the last rank */
  for (i = 0; i < C; ++i) h[i] = me == n - 1 ? ival(me, 5, i) : 0;
  for (i = 0; i < C; ++i) want[i] = ival(n - 1, 5, i);
  din = dev_of(h, C * 4);
  CALL(xc_broadcast(din, C, XC_INT32, n - 1, world));
  sync_all();
  expect_i32(din, want, C, "broadcast");
  dev_free(world, din);
  /* reduce to rank 1 % n, in place at the root */
  {
    int root = 1 % n, r;
    for (i = 0; i < C; ++i) h[i] = ival(me, 6, i);
    for (i = 0; i < C; ++i) {
      want[i] = 0;
      for (r = 0; r < n; ++r) want[i] += ival(r, 6, i);
    }
    din = dev_of(h, C * 4);
    CALL(xc_reduce(me == root ? XC_IN_PLACE : din, me == root ? din : NULL, C, XC_INT32, XC_SUM, root, world));
    sync_all();
    if (me == root) expect_i32(din, want, C, "reduce");
    dev_free(world, din);
  }
  /* allgather, both placements */
  for (inplace = 0; inplace < 2; ++inplace) {
    int r;
    for (i = 0; i < C; ++i) h[i] = ival(me, 7, i);
    for (r = 0; r < n; ++r)
      for (i = 0; i < C; ++i) want[(size_t)r * C + i] = ival(r, 7, i);
    dout = dev_alloc(world, C * 4 * (size_t)n);
    din = dev_of(h, C * 4);
    if (inplace) dev_put((char *)dout + (size_t)me * C * 4, h, C * 4);
    CALL(xc_allgather(inplace ? XC_IN_PLACE : din, dout, C, XC_INT32, world));
    sync_all();
    expect_i32(dout, want, C * (size_t)n, "allgather");
    dev_free(world, din);
    dev_free(world, dout);
  }
  /* reduce_scatter, both placements */
  for (inplace = 0; inplace < 2; ++inplace) {
    int r;
    for (i = 0; i < C * (size_t)n; ++i) h[i] = ival(me, 8, i);
    for (i = 0; i < C; ++i) {
      want[i] = 0;
      for (r = 0; r < n; ++r) want[i] += ival(r, 8, (size_t)me * C + i);
    }
    din = dev_of(h, C * 4 * (size_t)n);
    dout = inplace ? din : dev_alloc(world, C * 4);
    CALL(xc_reduce_scatter(inplace ? XC_IN_PLACE : din, dout, C, XC_INT32, XC_SUM, world));
    sync_all();
    expect_i32(dout, want, C, "reduce_scatter");
    if (!inplace) dev_free(world, dout);
    dev_free(world, din);
  }
  /* gather / scatter at root 0 */
  {
    int r;
    for (i = 0; i < C; ++i) h[i] = ival(me, 9, i);
    din = dev_of(h, C * 4);
    dout = dev_alloc(world, C * 4 * (size_t)n);
    CALL(xc_gather(din, me == 0 ? dout : NULL, C, XC_INT32, 0, world));
    sync_all();
    for (r = 0; r < n; ++r)
      for (i = 0; i < C; ++i) want[(size_t)r * C + i] = ival(r, 9, i);
    if (me == 0) expect_i32(dout, want, C * (size_t)n, "gather");
    /* scatter back what rank 0 gathered: each gets its own block */
    CALL(xc_scatter(me == 0 ? dout : NULL, din, C, XC_INT32, 0, world));
    sync_all();
    expect_i32(din, want + (size_t)me * C, C, "scatter");
    dev_free(world, din);
    dev_free(world, dout);
  }
  /* gatherv, allgatherv, scatterv: rank j has vcount(j) elements at displs with gaps */
  {
    size_t counts[64], displs[64], total = 0;
    int r;
    for (r = 0; r < n; ++r) {
      counts[r] = vcount(r);
      displs[r] = total + 1;
      total += counts[r] + 1;
    }
    for (i = 0; i < vcount(me); ++i) h[i] = ival(me, 10, i);
    for (i = 0; i < total; ++i) want[i] = -7;
    for (r = 0; r < n; ++r)
      for (i = 0; i < counts[r]; ++i) want[displs[r] + i] = ival(r, 10, i);
    din = dev_of(h, vcount(me) * 4);
    {
      int32_t *fill = malloc(total * 4);
      for (i = 0; i < total; ++i) fill[i] = -7;
      dout = dev_of(fill, total * 4);
      free(fill);
    }
    CALL(xc_gatherv(din, vcount(me), me == 0 ? dout : NULL, counts, displs, XC_INT32, 0, world));
    sync_all();
    if (me == 0) expect_i32(dout, want, total, "gatherv");
    CALL(xc_allgatherv(din, vcount(me), dout, counts, displs, XC_INT32, world));
    sync_all();
    expect_i32(dout, want, total, "allgatherv");
    {
      void *dr = dev_alloc(world, vcount(me) * 4);
      CALL(xc_scatterv(me == 0 ? dout : NULL, counts, displs, dr, vcount(me), XC_INT32, 0, world));
      sync_all();
      expect_i32(dr, want + displs[me], vcount(me), "scatterv");
      dev_free(world, dr);
    }
    dev_free(world, din);
    dev_free(world, dout);
    /* reduce_scatterv: rank j gets counts[j] elements */
    {
      size_t sum = 0, off = 0;
      for (r = 0; r < n; ++r) sum += counts[r];
      for (r = 0; r < me; ++r) off += counts[r];
      for (i = 0; i < sum; ++i) h[i] = ival(me, 11, i);
      for (i = 0; i < counts[me]; ++i) {
        want[i] = 0;
        for (r = 0; r < n; ++r) want[i] += ival(r, 11, off + i);
      }
      din = dev_of(h, sum * 4);
      dout = dev_alloc(world, counts[me] * 4);
      CALL(xc_reduce_scatterv(din, dout, counts, XC_INT32, XC_SUM, world));
      sync_all();
      expect_i32(dout, want, counts[me], "reduce_scatterv");
      dev_free(world, din);
      dev_free(world, dout);
    }
  }
  /* alltoall, both placements */
  for (inplace = 0; inplace < 2; ++inplace) {
    int r;
    const size_t B = 37;
    for (i = 0; i < B * (size_t)n; ++i) h[i] = ival(me, 12, i);
    for (r = 0; r < n; ++r)
      for (i = 0; i < B; ++i) want[(size_t)r * B + i] = ival(r, 12, (size_t)me * B + i);
    din = dev_of(h, B * 4 * (size_t)n);
    dout = inplace ? din : dev_alloc(world, B * 4 * (size_t)n);
    CALL(xc_alltoall(inplace ? XC_IN_PLACE : din, dout, B, XC_INT32, world));
    sync_all();
    expect_i32(dout, want, B * (size_t)n, "alltoall");
    if (!inplace) dev_free(world, dout);
    dev_free(world, din);
  }
  /* alltoallv: me sends (me + 2j) % 4 + 1 elements to j */
  {
    size_t sc[64], sd[64], rc[64], rd[64], st = 0, rt = 0;
    int r;
    for (r = 0; r < n; ++r) {
      sc[r] = (size_t)((me + 2 * r) % 4 + 1);
      sd[r] = st;
      st += sc[r];
      rc[r] = (size_t)((r + 2 * me) % 4 + 1);
      rd[r] = rt;
      rt += rc[r];
    }
    for (i = 0; i < st; ++i) h[i] = ival(me, 13, i);
    for (r = 0; r < n; ++r) {
      /* rank r's block for me starts at the sum of its counts to ranks before me */
      size_t off = 0;
      int q;
      for (q = 0; q < me; ++q) off += (size_t)((r + 2 * q) % 4 + 1);
      for (i = 0; i < rc[r]; ++i) want[rd[r] + i] = ival(r, 13, off + i);
    }
    din = dev_of(h, st * 4);
    dout = dev_alloc(world, rt * 4);
    CALL(xc_alltoallv(din, sc, sd, dout, rc, rd, XC_INT32, world));
    sync_all();
    expect_i32(dout, want, rt, "alltoallv");
    dev_free(world, din);
    dev_free(world, dout);
  }
  /* scan and exscan (int32 sum; scan float64 avg) */
  {
    int r;
    for (i = 0; i < C; ++i) h[i] = ival(me, 14, i);
    for (i = 0; i < C; ++i) {
      want[i] = 0;
      for (r = 0; r <= me; ++r) want[i] += ival(r, 14, i);
    }
    din = dev_of(h, C * 4);
    dout = dev_alloc(world, C * 4);
    CALL(xc_scan(din, dout, C, XC_INT32, XC_SUM, world));
    sync_all();
    expect_i32(dout, want, C, "scan");
    for (i = 0; i < C; ++i) want[i] -= ival(me, 14, i);
    if (me == 0)
      for (i = 0; i < C; ++i) want[i] = 4242;
    {
      int32_t *fill = malloc(C * 4);
      for (i = 0; i < C; ++i) fill[i] = 4242;
      dev_put(dout, fill, C * 4);
      free(fill);
    }
    CALL(xc_exscan(din, dout, C, XC_INT32, XC_SUM, world));
    sync_all();
    expect_i32(dout, want, C, "exscan");
    dev_free(world, din);
    dev_free(world, dout);
    for (i = 0; i < C; ++i) hd[i] = dval(me, 15, i);
    for (i = 0; i < C; ++i) {
      wd[i] = 0;
      for (r = 0; r <= me; ++r) wd[i] += dval(r, 15, i);
      wd[i] /= me + 1;
    }
    din = dev_of(hd, C * 8);
    CALL(xc_scan(XC_IN_PLACE, din, C, XC_FLOAT64, XC_AVG, world));
    sync_all();
    expect_f64(din, wd, C, "scan float64 avg in place");
    dev_free(world, din);
  }
  /* barrier */
  CALL(xc_barrier(world));
  sync_all();
  /* send/recv in a ring, in a group */
  if (n > 1) {
    int to = (me + 1) % n, from = (me + n - 1) % n;
    for (i = 0; i < C; ++i) h[i] = ival(me, 16, i);
    for (i = 0; i < C; ++i) want[i] = ival(from, 16, i);
    din = dev_of(h, C * 4);
    dout = dev_alloc(world, C * 4);
    CALL(xc_group_start());
    CALL(xc_send(din, C, XC_INT32, to, 3, world));
    CALL(xc_recv(dout, C, XC_INT32, from, 3, world, NULL));
    CALL(xc_group_end());
    {
      xc_stream_t def = NULL; /* unbound peers: the default stream, the parent's NCCL communicator */
      CALL(xc_stream_wrap(world, NULL, &def));
      CALL(xc_stream_synchronize(def));
      CALL(xc_stream_destroy(def));
    }
    expect_i32(dout, want, C, "send/recv ring");
    dev_free(world, din);
    dev_free(world, dout);
  }
  /* bitwise: NCCL has none */
  din = dev_alloc(world, 64);
  MP_EXPECT_ERR(xc_allreduce(XC_IN_PLACE, din, 4, XC_INT32, XC_BAND, world), XC_ERR_UNSUPPORTED);
  /* any-source receive across NCCL: a clear unsupported */
  MP_EXPECT_ERR(xc_recv(din, 4, XC_INT32, XC_ANY_SOURCE, 0, world, NULL), XC_ERR_UNSUPPORTED);
  CHECK(strstr(xc_last_error(), "XC_ANY_SOURCE") != NULL, "any-source message: %s", xc_last_error());
  dev_free(world, din);
  /* the log: one NCCL communicator (made at xc_init), every op on it, on the bound stream */
  LOGCHECK(log_count("init", NULL, NULL) == 1, "expected 1 NCCL init, log has %d", log_count("init", NULL, NULL));
  LOGCHECK(log_count("init", "blocking=0", "config_version=22800") == 1,
           "the init was not non-blocking with a v22800 config");
  LOGCHECK(log_count("coll", "op=allreduce", NULL) >= 8, "allreduce calls missing in the log");
  {
    char stream[64];
    snprintf(stream, sizeof stream, "stream=%s", log_last("coll", "stream="));
    LOGCHECK(log_count("coll", stream, NULL) == log_count("coll", NULL, NULL), "collectives on several streams");
  }
  free(h);
  free(want);
  free(hd);
  free(wd);
}

/* ---- splits ---- */

static void test_splits(void) {
  int sizes[4], ranks[64], g, i, k = 0, group = -1, grank = -1, expect_nccl_splits, child_nccl;
  const char *mode = getenv("XC_NCCL");
  int forced = mode && !strcmp(mode, "1");
  xc_comm_t child = NULL;
  char key[64];
  /* 4 groups: rank r in group r % 4, listed in reverse order within each group */
  for (g = 0; g < 4; ++g) {
    int r;
    sizes[g] = 0;
    for (r = n - 1; r >= 0; --r)
      if (r % 4 == g) {
        if (r == me) {
          group = g;
          grank = sizes[g];
        }
        ranks[k++] = r;
        ++sizes[g];
      }
  }
  CALL(xc_comm_split_groups(world, 4, sizes, ranks, NULL, &child));
  CHECK(child != NULL, "no child");
  expect_nccl_splits = 1;
  LOGCHECK(log_count("split", NULL, NULL) == expect_nccl_splits, "expected one ncclCommSplit, log has %d",
           log_count("split", NULL, NULL));
  /* Forced (XC_NCCL=1) every child uses NCCL; between hosts (run.sh's
     hosts mode, a host per rank) a child on one host does not (its device
     ops take the IPC path) and passes NCCL_SPLIT_NOCOLOR. */
  {
    int size = 0;
    CALL(xc_comm_size(child, &size));
    child_nccl = forced || size > 1;
  }
  snprintf(key, sizeof key, "color=%d key=%d ", child_nccl ? group : -1, grank);
  LOGCHECK(log_count("split", key, NULL) == 1, "the split's color/key is not %s (child %s)", key,
           log_last("split", "child="));
  /* an allreduce on the child goes to the child's NCCL communicator */
  {
    char comm[300];
    int32_t v = me + 1, want = 0, r;
    void *d = dev_of(&v, 4);
    xc_stream_t s = dev_stream(child);
    for (r = 0; r < n; ++r)
      if (r % 4 == group) want += r + 1;
    CALL(xc_stream_bind(child, s, XC_BIND_COLLECTIVES));
    CALL(xc_allreduce(XC_IN_PLACE, d, 1, XC_INT32, XC_SUM, child));
    CALL(xc_stream_synchronize(s));
    expect_i32(d, &want, 1, "allreduce on a split child");
    snprintf(comm, sizeof comm, "comm=%s ", log_last("split", "child="));
    if (child_nccl)
      LOGCHECK(log_count("coll", "op=allreduce", comm) == 1, "the child's allreduce is not on its NCCL communicator");
    else
      LOGCHECK(log_count("coll", NULL, NULL) == 0, "a child on one host used NCCL");
    CALL(xc_stream_destroy(s));
    dev_free(world, d);
  }
  /* A split where the last rank is in no group: it passes NCCL_SPLIT_NOCOLOR */
  if (n > 1) {
    xc_comm_t c2 = NULL;
    int sz[2] = {0, 0}, rk[64], kk = 0;
    for (i = 0; i < n - 1; ++i) {
      rk[kk++] = i;
      ++sz[i % 2 == 0 ? 0 : 0];
    }
    sz[0] = n - 1;
    CALL(xc_comm_split_groups(world, 2, sz, rk, NULL, &c2));
    LOGCHECK(log_count("split", NULL, NULL) == 2, "expected two ncclCommSplit calls, log has %d",
             log_count("split", NULL, NULL));
    if (me == n - 1) {
      CHECK(c2 == NULL, "rank in no group got a communicator");
      LOGCHECK(log_count("split", "index=1 color=-1 ", NULL) == 1, "no NCCL_SPLIT_NOCOLOR for a rank in no group");
    } else {
      LOGCHECK(log_count("split", "index=1 color=0 ", NULL) == 1, "second split: color 0 expected");
      CALL(xc_comm_free(c2));
    }
  }
  /* xc_comm_split: one more ncclCommSplit, color from the group index */
  {
    xc_comm_t c3 = NULL;
    CALL(xc_comm_split(world, me % 2, -me, NULL, &c3));
    LOGCHECK(log_count("split", NULL, NULL) == (n > 1 ? 3 : 2), "xc_comm_split made no single ncclCommSplit");
    CALL(xc_comm_free(c3));
  }
  CALL(xc_comm_free(child));
  LOGCHECK(log_count("init", NULL, NULL) == 1, "a split made an NCCL communicator from a unique id");
}

/* ---- lazy ---- */

static void test_lazy(void) {
  /* world was made with nccl_lazy = 1 (main) */
  int32_t v = 1, want = n;
  void *d;
  xc_comm_t child = NULL;
  xc_config_t cfg = XC_CONFIG_INIT;
  LOGCHECK(log_count("init", NULL, NULL) == 0, "a lazy world made an NCCL communicator at xc_init");
  cfg.nccl_lazy = 1;
  CALL(xc_comm_split(world, 0, me, &cfg, &child));
  LOGCHECK(log_count("split", NULL, NULL) == 0 && log_count("init", NULL, NULL) == 0, "a lazy split called NCCL");
  d = dev_of(&v, 4);
  CALL(xc_allreduce(XC_IN_PLACE, d, 1, XC_INT32, XC_SUM, world));
  CALL(xc_stream_synchronize(coll_stream));
  expect_i32(d, &want, 1, "lazy world allreduce");
  LOGCHECK(log_count("init", NULL, NULL) == 1, "the first device op made %d NCCL communicators",
           log_count("init", NULL, NULL));
  {
    xc_stream_t s = dev_stream(child);
    CALL(xc_stream_bind(child, s, XC_BIND_COLLECTIVES));
    v = 1;
    dev_put(d, &v, 4);
    CALL(xc_allreduce(XC_IN_PLACE, d, 1, XC_INT32, XC_SUM, child));
    CALL(xc_stream_synchronize(s));
    expect_i32(d, &want, 1, "lazy child allreduce");
    LOGCHECK(log_count("init", NULL, NULL) == 2, "the child's first device op made no NCCL communicator");
    CALL(xc_stream_destroy(s));
  }
  CALL(xc_comm_free(child));
  dev_free(world, d);
}

/* ---- p2p ---- */

static void test_p2p(void) {
  const size_t C = 513;
  int32_t h[513], want[513];
  size_t i;
  int to = (me + 1) % n, from = (me + n - 1) % n, round;
  void *din = dev_alloc(world, C * 4), *dout = dev_alloc(world, C * 4);
  xc_stream_t second = dev_stream(world);
  char parent[300];
  if (n < 2) return;
  /* the peers on the collectives' stream: the parent's NCCL communicator */
  CALL(xc_stream_bind(world, coll_stream, to));
  CALL(xc_stream_bind(world, coll_stream, from));
  for (round = 0; round < 3; ++round) {
    for (i = 0; i < C; ++i) h[i] = ival(me, 20 + round, i);
    for (i = 0; i < C; ++i) want[i] = ival(from, 20 + round, i);
    dev_put(din, h, C * 4);
    CALL(xc_sendrecv(din, C, to, 1, dout, C, from, 1, XC_INT32, world, NULL));
    CALL(xc_stream_synchronize(coll_stream));
    expect_i32(dout, want, C, "sendrecv on the parent");
  }
  snprintf(parent, sizeof parent, "comm=%s ", log_last("init", "comm="));
  LOGCHECK(log_count("split", NULL, NULL) == 0 && log_count("init", NULL, NULL) == 1,
           "point-to-point on the collectives' stream made a communicator");
  LOGCHECK(log_count("send", parent, NULL) == 3 && log_count("recv", parent, NULL) == 3,
           "point-to-point is not on the parent's NCCL communicator");
  /* the peers on a second stream: one child, made once */
  CALL(xc_stream_bind(world, second, to));
  CALL(xc_stream_bind(world, second, from));
  for (round = 0; round < 3; ++round) {
    for (i = 0; i < C; ++i) h[i] = ival(me, 30 + round, i);
    for (i = 0; i < C; ++i) want[i] = ival(from, 30 + round, i);
    dev_put(din, h, C * 4);
    CALL(xc_sendrecv(din, C, to, 1, dout, C, from, 1, XC_INT32, world, NULL));
    CALL(xc_stream_synchronize(second));
    expect_i32(dout, want, C, "sendrecv on a second stream");
  }
  LOGCHECK(log_count("split", "color=0 ", NULL) == 1,
           "expected one ncclCommSplit (color 0) for the second stream, got %d", log_count("split", NULL, NULL));
  {
    char key[32], child[300];
    snprintf(key, sizeof key, "key=%d ", me);
    LOGCHECK(log_count("split", key, NULL) == 1, "the stream child's key is not the rank");
    snprintf(child, sizeof child, "comm=%s ", log_last("split", "child="));
    LOGCHECK(log_count("send", child, NULL) == 3, "sends on the second stream are not on the child");
  }
  CALL(xc_stream_bind(world, NULL, to));
  CALL(xc_stream_bind(world, NULL, from));
  CALL(xc_stream_destroy(second));
  dev_free(world, din);
  dev_free(world, dout);
}

/* ---- failures ---- */

struct pending {
  void *buf;
  xc_result_t rc;
  double ms;
};

static void *run_allreduce(void *arg) {
  struct pending *p = arg;
  double t0 = now_ms();
  p->rc = xc_allreduce(XC_IN_PLACE, p->buf, 16, XC_INT32, XC_SUM, world);
  if (p->rc == XC_SUCCESS) p->rc = xc_stream_synchronize(coll_stream);
  p->ms = now_ms() - t0;
  return NULL;
}

static void test_abort(void) {
  /* every rank's 2nd allreduce hangs in the fake (main set FAKE_NCCL_FAIL) */
  struct pending p = {0};
  pthread_t t;
  double t0, took;
  p.buf = dev_alloc(world, 64);
  CALL(xc_allreduce(XC_IN_PLACE, p.buf, 16, XC_INT32, XC_SUM, world));
  CALL(xc_stream_synchronize(coll_stream));
  if (!have_log) {
    /* a real NCCL (gpu_run.sh): nothing hangs on demand; abort after an op, then ops fail */
    t0 = now_ms();
    CALL(xc_comm_abort(world));
    took = now_ms() - t0;
    CHECK(took < 100, "xc_comm_abort took %.1f ms", took);
    MP_EXPECT_ERR(xc_allreduce(XC_IN_PLACE, p.buf, 16, XC_INT32, XC_SUM, world), XC_ERR_ABORTED);
    printf("[rank %d] abort returned in %.2f ms\n", me, took);
    return;
  }
  pthread_create(&t, NULL, run_allreduce, &p);
  {
    struct timespec ts = {0, 300000000L};
    nanosleep(&ts, NULL);
  }
  t0 = now_ms();
  CALL(xc_comm_abort(world));
  took = now_ms() - t0;
  pthread_join(t, NULL);
  CHECK(took < 100, "xc_comm_abort took %.1f ms", took);
  CHECK(p.rc != XC_SUCCESS, "the hung allreduce succeeded");
  LOGCHECK(log_count("abort", NULL, NULL) >= 1, "no ncclCommAbort in the log");
  printf("[rank %d] abort returned in %.2f ms; the pending op: %s after %.0f ms\n", me, took, xc_strerror(p.rc), p.ms);
}

static void test_failure(int hang) {
  struct pending p = {0};
  int64_t timeout = 3000;
  p.buf = dev_alloc(world, 64);
  CALL(xc_allreduce(XC_IN_PLACE, p.buf, 16, XC_INT32, XC_SUM, world));
  CALL(xc_stream_synchronize(coll_stream));
  run_allreduce(&p);
  printf("[rank %d] %s: %s after %.0f ms (%s)\n", me, hang ? "hang" : "async", xc_strerror(p.rc), p.ms,
         xc_last_error());
  CHECK(p.rc != XC_SUCCESS, "the op succeeded");
  CHECK(p.ms < timeout + 2000, "the error came after %.0f ms (deadline %lld ms)", p.ms, (long long)timeout);
  if (hang && me == 0) CHECK(p.rc == XC_ERR_TIMEOUT, "the hung rank got %s, not XC_ERR_TIMEOUT", xc_strerror(p.rc));
  if (!hang && me == 1) CHECK(p.rc == XC_ERR_NCCL, "the failing rank got %s, not XC_ERR_NCCL", xc_strerror(p.rc));
  if (hang && me == 0) LOGCHECK(log_count("abort", NULL, NULL) >= 1, "the timed-out NCCL communicator was not aborted");
  {
    xc_result_t async = XC_SUCCESS;
    CALL(xc_comm_get_async_error(world, &async));
    CHECK(async != XC_SUCCESS, "xc_comm_get_async_error says nothing failed");
  }
}

static void test_kill(void) {
  struct pending p = {0};
  p.buf = dev_alloc(world, 64);
  CALL(xc_allreduce(XC_IN_PLACE, p.buf, 16, XC_INT32, XC_SUM, world));
  CALL(xc_stream_synchronize(coll_stream));
  if (me == n - 1) raise(SIGKILL);
  run_allreduce(&p);
  printf("[rank %d] kill: %s after %.0f ms (%s)\n", me, xc_strerror(p.rc), p.ms, xc_last_error());
  CHECK(p.rc == XC_ERR_PEER_FAILED, "a survivor got %s, not XC_ERR_PEER_FAILED", xc_strerror(p.rc));
  CHECK(p.ms < 2000, "the failure came after %.0f ms (deadline 3000 ms)", p.ms);
  {
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/survived.%d", getenv("FAKE_NCCL_DIR"), me);
    f = fopen(path, "w");
    if (f) fclose(f);
  }
}

static void test_unavailable(const char *needle) {
  void *d = dev_alloc(world, 64);
  MP_EXPECT_ERR(xc_allreduce(XC_IN_PLACE, d, 4, XC_INT32, XC_SUM, world), XC_ERR_UNSUPPORTED);
  CHECK(strstr(xc_last_error(), needle) != NULL, "the message does not name %s: %s", needle, xc_last_error());
  if (me == 0) printf("  %s\n", xc_last_error());
  /* host memory still works */
  {
    int32_t v = 1;
    CALL(xc_allreduce(XC_IN_PLACE, &v, 1, XC_INT32, XC_SUM, world));
    CHECK(v == n, "host allreduce");
  }
  dev_free(world, d);
}

/* ---- XC_ALGO=allreduce=nccl on one host ---- */

static void test_algo(void) {
  const size_t C = 257;
  int32_t h[257], want[257 * 64];
  size_t i;
  int r, round;
  void *d = dev_alloc(world, C * 4), *g = dev_alloc(world, C * 4 * (size_t)n);
  for (round = 0; round < 3; ++round) {
    for (i = 0; i < C; ++i) h[i] = ival(me, 40 + round, i);
    dev_put(d, h, C * 4);
    CALL(xc_allgather(d, g, C, XC_INT32, world));                   /* IPC */
    CALL(xc_allreduce(XC_IN_PLACE, d, C, XC_INT32, XC_SUM, world)); /* NCCL, after it on the stream */
    sync_all();
    for (i = 0; i < C; ++i) {
      want[i] = 0;
      for (r = 0; r < n; ++r) want[i] += ival(r, 40 + round, i);
    }
    expect_i32(d, want, C, "allreduce through NCCL");
    for (r = 0; r < n; ++r)
      for (i = 0; i < C; ++i) want[(size_t)r * C + i] = ival(r, 40 + round, i);
    expect_i32(g, want, C * (size_t)n, "allgather on the IPC path");
  }
  LOGCHECK(log_count("coll", "op=allreduce", NULL) == 3, "expected 3 allreduces on NCCL");
  LOGCHECK(log_count("coll", "op=allgather", NULL) == 0, "the allgather went to NCCL");
  dev_free(world, d);
  dev_free(world, g);
}

/* ---- timing (a GPU with a real NCCL: gpu_run.sh) ---- */

static double init_ms;

static void test_timing(void) {
  int sizes[4] = {0, 0, 0, 0}, ranks[64], r;
  xc_comm_t child = NULL;
  double t0, split_ms, p2p_ms, again_ms;
  void *a = dev_alloc(world, 4096), *b = dev_alloc(world, 4096);
  xc_stream_t s = dev_stream(world);
  for (r = 0; r < n; ++r) {
    ranks[r] = r;
    ++sizes[r % 4];
  }
  {
    int k = 0, g;
    for (g = 0; g < 4; ++g)
      for (r = 0; r < n; ++r)
        if (r % 4 == g) ranks[k++] = r;
  }
  t0 = now_ms();
  CALL(xc_comm_split_groups(world, 4, sizes, ranks, NULL, &child));
  split_ms = now_ms() - t0;
  /* point-to-point with the neighbours (oneself at one rank) on a stream of their own: a child */
  CALL(xc_stream_bind(world, s, (me + 1) % n));
  CALL(xc_stream_bind(world, s, (me + n - 1) % n));
  t0 = now_ms();
  CALL(xc_sendrecv(a, 1024, (me + 1) % n, 0, b, 1024, (me + n - 1) % n, 0, XC_INT32, world, NULL));
  CALL(xc_stream_synchronize(s));
  p2p_ms = now_ms() - t0;
  t0 = now_ms();
  CALL(xc_sendrecv(a, 1024, (me + 1) % n, 0, b, 1024, (me + n - 1) % n, 0, XC_INT32, world, NULL));
  CALL(xc_stream_synchronize(s));
  again_ms = now_ms() - t0;
  printf(
      "[rank %d] timing (%s, %d ranks): xc_init with its NCCL communicator %.1f ms; split_groups into 4 groups "
      "(one ncclCommSplit) %.1f ms; first P2P on a new stream (makes the child) %.1f ms, the next %.2f ms\n",
      me, dev_kind(), n, init_ms, split_ms, p2p_ms, again_ms);
  CALL(xc_stream_bind(world, NULL, (me + 1) % n));
  CALL(xc_stream_bind(world, NULL, (me + n - 1) % n));
  CALL(xc_stream_destroy(s));
  CALL(xc_comm_free(child));
  dev_free(world, a);
  dev_free(world, b);
}

int main(int argc, char **argv) {
  const char *c = argc > 1 ? argv[1] : "ops";
  const char *rank = getenv("XC_RANK");
  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.timeout_ms = 3000;
  if (!strcmp(c, "lazy")) cfg.nccl_lazy = 1;
  if (!strcmp(c, "abort")) setenv("FAKE_NCCL_FAIL", "ncclAllReduce:2:hang", 1);
  if (!strcmp(c, "async") && rank && atoi(rank) == 1) setenv("FAKE_NCCL_FAIL", "ncclAllReduce:2:async", 1);
  if (!strcmp(c, "hang") && rank && atoi(rank) == 0) setenv("FAKE_NCCL_FAIL", "ncclAllReduce:2:hang", 1);
  if (!strcmp(c, "missing")) setenv("XC_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  if (!strcmp(c, "old")) setenv("FAKE_NCCL_VERSION", "21703", 1);
  if (!strcmp(c, "ops") || !strcmp(c, "splits") || !strcmp(c, "lazy") || !strcmp(c, "p2p") || !strcmp(c, "algo"))
    cfg.timeout_ms = 20000;
  have_log = getenv("FAKE_NCCL_LOG") != NULL;
  {
    double t0 = now_ms();
    CALL(xc_init(&cfg, &world));
    init_ms = now_ms() - t0;
  }
  CALL(xc_comm_rank(world, &me));
  CALL(xc_comm_size(world, &n));
  mp_rank = me;
  dev_setup(world);
  coll_stream = dev_stream(world);
  CALL(xc_stream_bind(world, coll_stream, XC_BIND_COLLECTIVES));
  if (!strcmp(c, "ops"))
    test_ops();
  else if (!strcmp(c, "splits"))
    test_splits();
  else if (!strcmp(c, "lazy"))
    test_lazy();
  else if (!strcmp(c, "p2p"))
    test_p2p();
  else if (!strcmp(c, "abort"))
    test_abort();
  else if (!strcmp(c, "async"))
    test_failure(0);
  else if (!strcmp(c, "hang"))
    test_failure(1);
  else if (!strcmp(c, "missing"))
    test_unavailable("/nonexistent/libnccl.so.2");
  else if (!strcmp(c, "old"))
    test_unavailable("2.17.3");
  else if (!strcmp(c, "timing"))
    test_timing();
  else if (!strcmp(c, "algo"))
    test_algo();
  else if (!strcmp(c, "kill"))
    test_kill();
  else {
    fprintf(stderr, "unknown case %s\n", c);
    return 2;
  }
  if (!strcmp(c, "abort") || !strcmp(c, "async") || !strcmp(c, "hang") || !strcmp(c, "kill")) {
    /* the communicator is broken: release it without the closing barrier */
    xc_comm_abort(world);
    xc_stream_destroy(coll_stream);
    xc_comm_free(world);
  } else {
    CALL(xc_stream_bind(world, NULL, XC_BIND_COLLECTIVES));
    CALL(xc_stream_destroy(coll_stream));
    CALL(xc_comm_free(world));
  }
  if (me == 0) printf("nccl_test %s: passed at %d ranks\n", c, n);
  return 0;
}
