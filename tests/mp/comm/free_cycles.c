/* Freeing a communicator returns what it held: 2000 cycles, alternately
   xc_comm_dup and xc_comm_split (by parity), each with a 1 MiB allreduce
   (the shared-memory backend maps its segment and takes its scratch) and
   xc_comm_free. A freed communicator keeps its 336-byte struct
   (docs/design.md). Before comm_free dropped the backends, every freed one
   kept a mapping and ~4 MiB (the 4-rank segment, populated, and scratch);
   before it dropped the executor, ~1.2 KB. RSS (/proc/self/statm) and the
   number of mappings (/proc/self/maps) are read after 50 warm-up cycles
   and at the end: RSS may grow by 1 MiB of allocator noise plus 400 bytes
   a cycle (the struct and malloc's header: 352), mappings by at most 4.
   Time: a cycle is mostly the backend's set-up (each rank populates the
   whole 3.6 MiB segment). On the 2-core development machine, shared with
   other builds, 4 ranks took 17 s at load 3 and 23-48 s at load 7-17
   (16 s of CPU in all), 2 ranks 6-24 s: over the 20 s wanted while the
   machine is busy, but 2000 cycles are kept (meson's timeout is 180 s).
   argv[1] sets the number of cycles. */
#include <unistd.h>

#include "mp_test.h"

#define COUNT (1u << 18) /* float32: 1 MiB */
#define WARMUP 50
#define RSS_NOISE (1u << 20)
#define RSS_PER_CYCLE 400
#define MAX_MAPS_GROWTH 4

static float buf[COUNT];

static size_t rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  MP_ASSERT(f != NULL, "cannot open /proc/self/statm");
  unsigned long size = 0, resident = 0;
  MP_ASSERT(fscanf(f, "%lu %lu", &size, &resident) == 2, "cannot read /proc/self/statm");
  fclose(f);
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

static int mappings(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  MP_ASSERT(f != NULL, "cannot open /proc/self/maps");
  int lines = 0, c;
  while ((c = fgetc(f)) != EOF)
    if (c == '\n') ++lines;
  fclose(f);
  return lines;
}

/* One cycle: a child (dup, or split by parity), a checked allreduce, free. */
static void cycle(xc_comm_t w, int me, int n, int split) {
  xc_comm_t c = NULL;
  if (split)
    MP_CHECK(xc_comm_split(w, me % 2, me, NULL, &c));
  else
    MP_CHECK(xc_comm_dup(w, &c));
  int cn = 0;
  MP_CHECK(xc_comm_size(c, &cn));
  for (size_t i = 0; i < COUNT; i += 4096) buf[i] = (float)(me + 1);
  buf[COUNT - 1] = (float)(me + 1);
  MP_CHECK(xc_allreduce(XC_IN_PLACE, buf, COUNT, XC_FLOAT32, XC_MAX, c));
  /* my group's largest rank + 1: the last of my parity (split) or n (dup) */
  int top = split ? (n - 1 - ((n - 1 - me) % 2)) + 1 : n;
  MP_ASSERT(buf[0] == (float)top && buf[COUNT - 1] == (float)top, "allreduce max %g, expected %d (%d ranks)",
            (double)buf[0], top, cn);
  MP_CHECK(xc_comm_free(c));
}

int main(int argc, char **argv) {
  int cycles = argc > 1 ? atoi(argv[1]) : 2000;
  xc_comm_t w = NULL;
  int me = 0, n = 0;
  MP_CHECK(xc_init(NULL, &w));
  MP_CHECK(xc_comm_rank(w, &me));
  MP_CHECK(xc_comm_size(w, &n));
  mp_rank = me;
  MP_ASSERT(cycles > WARMUP, "cycles %d must exceed the %d warm-up cycles", cycles, WARMUP);
  size_t rss0 = 0;
  int maps0 = 0;
  for (int i = 0; i < cycles; ++i) {
    if (i == WARMUP) {
      rss0 = rss_bytes();
      maps0 = mappings();
    }
    cycle(w, me, n, i % 2);
  }
  size_t rss1 = rss_bytes();
  int maps1 = mappings();
  long long grew = (long long)rss1 - (long long)rss0, most = RSS_NOISE + (long long)RSS_PER_CYCLE * (cycles - WARMUP);
  printf("[%d] %d dup/split cycles: RSS %zu -> %zu KiB (%+lld, at most %+lld), mappings %d -> %d\n", me, cycles,
         rss0 >> 10, rss1 >> 10, grew / 1024, most / 1024, maps0, maps1);
  MP_ASSERT(grew <= most, "RSS grew by %lld KiB over %d cycles (at most %lld KiB)", grew / 1024, cycles - WARMUP,
            most / 1024);
  MP_ASSERT(maps1 - maps0 <= MAX_MAPS_GROWTH, "mappings grew from %d to %d over %d cycles", maps0, maps1,
            cycles - WARMUP);
  MP_CHECK(xc_comm_free(w));
  return 0;
}
