/* The flight recorder under real ranks (trace.sh drives it under xcrun).

     trace behind EXPLICIT_DIR   (3 ranks; XC_TRACE_DIR and a small XC_TIMEOUT set)
     trace depth WANT FILE       (any ranks; XC_TRACE_DEPTH set by the script)
     trace kill                  (3 ranks under --keep-going; XC_TRACE_DIR set)

   behind: every rank runs 5 allreduces and dumps its recorder explicitly
   to EXPLICIT_DIR/r<rank>.jsonl (checked here: a header and 5 entries, all
   allreduce, done, in order). Ranks 0 and 1 then start a 6th allreduce,
   which rank 2 never enters: it sleeps past the deadline instead, so ranks
   0 and 1 must fail with XC_ERR_TIMEOUT, and their recorders are dumped to
   XC_TRACE_DIR on their own. Rank 2 then sends itself SIGUSR2: its dump
   must appear in XC_TRACE_DIR within 5 s (it polls). trace.sh runs xc-trace
   on XC_TRACE_DIR and checks the verdict names rank 2 and the 6th op.

   kill: 5 allreduces, then rank 2 SIGKILLs itself and ranks 0 and 1 start
   a 6th: it must fail with XC_ERR_PEER_FAILED, and the dump in
   XC_TRACE_DIR (reason "peer_failed") must hold it, failed, after the 5.

   depth: 5 allreduces, then xc_comm_trace_dump(FILE.r<rank>) must hold WANT
   entries; with XC_TRACE_DIR unset a NULL path must be
   XC_ERR_INVALID_ARGUMENT naming XC_TRACE_DIR, and a NULL handle
   XC_ERR_INVALID_ARGUMENT too. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "mp_test.h"

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void allreduces(xc_comm_t comm, int n) {
  int size;
  MP_CHECK(xc_comm_size(comm, &size));
  for (int i = 0; i < n; ++i) {
    int v = mp_rank + i, sum = 0;
    MP_CHECK(xc_allreduce(&v, &sum, 1, XC_INT32, XC_SUM, comm));
    MP_ASSERT(sum == size * (size - 1) / 2 + size * i, "allreduce %d gave %d", i, sum);
  }
}

/* The entries of a dump (lines after the header), checked to be allreduces
   in increasing order and, when state is not NULL, all in that state. */
static int count_entries(const char *path, const char *state) {
  FILE *f = fopen(path, "r");
  MP_ASSERT(f, "cannot open %s", path);
  char line[4096];
  MP_ASSERT(fgets(line, sizeof line, f) && strstr(line, "\"xcomm_trace\":1"), "%s: no header", path);
  MP_ASSERT(strstr(line, "\"comm\":\"world\""), "%s: header names another comm: %s", path, line);
  char want_rank[32];
  snprintf(want_rank, sizeof want_rank, "\"rank\":%d,", mp_rank);
  MP_ASSERT(strstr(line, want_rank), "%s: header has another rank: %s", path, line);
  int n = 0;
  long long last = -1;
  while (fgets(line, sizeof line, f)) {
    MP_ASSERT(strstr(line, "\"op\":\"allreduce\""), "%s: entry %d is not an allreduce: %s", path, n, line);
    MP_ASSERT(strstr(line, "\"count\":1,") && strstr(line, "\"dtype\":\"int32\"") && strstr(line, "\"bytes\":4,"),
              "%s: entry %d has the wrong count, dtype or bytes: %s", path, n, line);
    if (state) {
      char want[64];
      snprintf(want, sizeof want, "\"state\":\"%s\"", state);
      MP_ASSERT(strstr(line, want), "%s: entry %d is not %s: %s", path, n, state, line);
    }
    long long seq = atoll(strstr(line, "\"seq\":") + 6);
    MP_ASSERT(seq > last, "%s: entry %d (op #%lld) is not after op #%lld", path, n, seq, last);
    last = seq;
    ++n;
  }
  fclose(f);
  return n;
}

/* A file in dir whose name ends with suffix, or 0. */
static int find_file(const char *dir, const char *suffix, char *out, size_t size) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int found = 0;
  struct dirent *de;
  size_t ls = strlen(suffix);
  while ((de = readdir(d)) != NULL) {
    size_t n = strlen(de->d_name);
    if (n >= ls && strcmp(de->d_name + n - ls, suffix) == 0 && strncmp(de->d_name, "xcomm-trace.", 12) == 0) {
      snprintf(out, size, "%s/%s", dir, de->d_name);
      found = 1;
      break;
    }
  }
  closedir(d);
  return found;
}

static int behind(const char *explicit_dir) {
  xc_comm_t world;
  MP_CHECK(xc_init(NULL, &world));
  int size;
  MP_CHECK(xc_comm_rank(world, &mp_rank));
  MP_CHECK(xc_comm_size(world, &size));
  MP_ASSERT(size == 3, "run with 3 ranks, not %d", size);
  const char *trace_dir = getenv("XC_TRACE_DIR");
  MP_ASSERT(trace_dir && *trace_dir, "XC_TRACE_DIR is not set");
  const char *timeout = getenv("XC_TIMEOUT");
  int timeout_ms = timeout ? atoi(timeout) : 0;
  MP_ASSERT(timeout_ms > 0 && timeout_ms <= 10000, "set XC_TIMEOUT to a few seconds");

  allreduces(world, 5);
  char path[4096], suffix[64];
  snprintf(path, sizeof path, "%s/r%d.jsonl", explicit_dir, mp_rank);
  MP_CHECK(xc_comm_trace_dump(world, path));
  int n = count_entries(path, "done");
  MP_ASSERT(n == 5, "%s holds %d entries, want 5", path, n);
  snprintf(suffix, sizeof suffix, ".world.r%d.jsonl", mp_rank);
  MP_ASSERT(!find_file(trace_dir, suffix, path, sizeof path), "a dump in XC_TRACE_DIR before any failure: %s", path);

  if (mp_rank < 2) {
    int v = 1, sum = 0;
    long long t0 = now_ms();
    xc_result_t rc = xc_allreduce(&v, &sum, 1, XC_INT32, XC_SUM, world);
    MP_ASSERT(rc == XC_ERR_TIMEOUT, "the 6th allreduce returned %d (%s), want XC_ERR_TIMEOUT", (int)rc,
              xc_last_error());
    printf("rank %d: the 6th allreduce timed out after %lld ms: %s\n", mp_rank, now_ms() - t0, xc_last_error());
    /* Dumped before the call returned. */
    MP_ASSERT(find_file(trace_dir, suffix, path, sizeof path), "no dump ending in %s in %s after the timeout", suffix,
              trace_dir);
    n = count_entries(path, NULL);
    MP_ASSERT(n == 6, "%s holds %d entries, want 6", path, n);
    FILE *f = fopen(path, "r");
    char line[4096], last[4096] = "";
    while (fgets(line, sizeof line, f)) snprintf(last, sizeof last, "%s", line);
    fclose(f);
    MP_ASSERT(strstr(last, "\"state\":\"failed\"") && strstr(last, "\"status\":-5"),  /* XC_ERR_TIMEOUT */
              "the last entry is not the failed 6th allreduce: %s", last);
    MP_ASSERT(strstr(last, "\"reason\"") == NULL, "an entry with header fields: %s", last);
  } else {
    /* A deliberate absence: rank 2 is somewhere else while 0 and 1 wait. */
    sleep_ms(timeout_ms + 2000);
    MP_ASSERT(!find_file(trace_dir, suffix, path, sizeof path), "rank 2 dumped before the signal: %s", path);
    MP_ASSERT(kill(getpid(), SIGUSR2) == 0, "kill");
    long long until = now_ms() + 5000;
    while (!find_file(trace_dir, suffix, path, sizeof path)) {
      MP_ASSERT(now_ms() < until, "no dump ending in %s in %s 5 s after SIGUSR2", suffix, trace_dir);
      sleep_ms(10);
    }
    n = count_entries(path, "done");
    MP_ASSERT(n == 5, "%s holds %d entries, want 5", path, n);
    printf("rank 2: dumped on SIGUSR2 to %s\n", path);
    MP_CHECK(xc_comm_abort(world));  /* the others have left its ops */
  }
  xc_comm_free(world);  /* broken or aborted: no closing barrier */
  return 0;
}

static int killed(void) {
  xc_comm_t world;
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &mp_rank));
  const char *trace_dir = getenv("XC_TRACE_DIR");
  MP_ASSERT(trace_dir && *trace_dir, "XC_TRACE_DIR is not set");
  allreduces(world, 5);
  if (mp_rank == 2) raise(SIGKILL);
  int v = 1, sum = 0;
  xc_result_t rc = xc_allreduce(&v, &sum, 1, XC_INT32, XC_SUM, world);
  MP_ASSERT(rc == XC_ERR_PEER_FAILED, "the 6th allreduce returned %d (%s), want XC_ERR_PEER_FAILED", (int)rc,
            xc_last_error());
  char path[4096], suffix[64], line[4096];
  snprintf(suffix, sizeof suffix, ".world.r%d.jsonl", mp_rank);
  MP_ASSERT(find_file(trace_dir, suffix, path, sizeof path), "no dump ending in %s in %s after the peer failure",
            suffix, trace_dir);
  FILE *f = fopen(path, "r");
  MP_ASSERT(f && fgets(line, sizeof line, f) && strstr(line, "\"reason\":\"peer_failed\""),
            "%s: the header does not say peer_failed: %s", path, line);
  fclose(f);
  int n = count_entries(path, NULL);
  MP_ASSERT(n == 6, "%s holds %d entries, want 6", path, n);
  printf("rank %d: %s\n", mp_rank, xc_last_error());
  xc_comm_free(world);
  return 0;
}

static int depth(int want, const char *file) {
  xc_comm_t world;
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &mp_rank));
  allreduces(world, 5);
  char path[4096];
  snprintf(path, sizeof path, "%s.r%d", file, mp_rank);
  MP_CHECK(xc_comm_trace_dump(world, path));
  int n = count_entries(path, "done");
  MP_ASSERT(n == want, "%s holds %d entries, want %d", path, n, want);
  MP_EXPECT_ERR(xc_comm_trace_dump(NULL, path), XC_ERR_INVALID_ARGUMENT);
  if (!getenv("XC_TRACE_DIR")) {
    MP_EXPECT_ERR(xc_comm_trace_dump(world, NULL), XC_ERR_INVALID_ARGUMENT);
    MP_ASSERT(strstr(xc_last_error(), "XC_TRACE_DIR"), "the message does not name XC_TRACE_DIR: %s", xc_last_error());
  }
  MP_CHECK(xc_comm_free(world));
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 3 && strcmp(argv[1], "behind") == 0) return behind(argv[2]);
  if (argc == 4 && strcmp(argv[1], "depth") == 0) return depth(atoi(argv[2]), argv[3]);
  if (argc == 2 && strcmp(argv[1], "kill") == 0) return killed();
  fprintf(stderr, "usage: trace behind EXPLICIT_DIR | trace depth WANT FILE | trace kill\n");
  return 2;
}
