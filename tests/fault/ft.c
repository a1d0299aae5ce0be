/* Communicators that survive a failure: revoke, agree, shrink, grow.
   Run under `xcrun --keep-going` by ft.sh (grow: ft_grow.sh), which checks
   what every rank left in DIR: rank<r>.ok (its report), rank<r>.fail (a
   check failed: why), killed<r>.time (it was the victim).

     ft DIR kill VICTIM     VICTIM is SIGKILLed mid-op (an iteration picked
                            from the seed); the survivors revoke, shrink,
                            check the survivor set and run the collective
                            matrix on the child
     ft DIR twice           the same twice in a row: n -> n-1 -> n-2 (the last
                            world rank, then world rank 1)
     ft DIR during_shrink   the last rank dies mid-op, and world rank 1 dies
                            at a random moment of the shrink that follows
     ft DIR revoke_blocked  rank 0 revokes the world while the others are
                            blocked in an allreduce it never joins (and, the
                            last rank, in a receive from any source); then
                            agree and shrink on the revoked world
     ft DIR agree VICTIM    every rank agrees on a flag (rank r clears bit r);
                            VICTIM dies at a random moment of the agreement
     ft DIR chaos           a random rank dies at a random moment of mixed
                            ops; the survivors recover and check
     ft DIR grow NNEW       rank 0 writes DIR/id; the world grows by NNEW
                            processes that ft_grow.sh starts:
     ft DIR join NOLD NNEW I   (not under xcrun) the I-th new process
   Every blocking op has a 20 s deadline; XC_TEST_SEED picks the moments. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ft_util.h"
#include "mp_test.h"

enum { TIMEOUT_MS = 20000, PROMPT_MS = 3000, ITERS = 1000000, LARGE = 1 << 16 };

static int g_size;
static uint64_t g_seed;
static xc_config_t g_cfg = XC_CONFIG_INIT;

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static uint64_t rnd(uint64_t salt) {
  uint64_t s = g_seed ^ (salt * 0x9e3779b97f4a7c15ULL);
  return mp_next(&s);
}

/* The barrier after xc_init, in the modes where a rank dies: the victim may
   die as soon as it is out of it while others are still in it (a rank
   leaves a barrier once all arrived, not once all left); for them the
   barrier is the op that fails, which the first work() reports. */
static xc_result_t g_started = XC_SUCCESS;

/* Mixed ops on comm until one fails (its error), the victim (a world rank)
   dying at iteration kill_iter (-1: never). */
static xc_result_t work(xc_comm_t comm, int victim, int kill_iter) {
  static char big_out[LARGE], big_in[LARGE];
  int rank, n, it;
  if (g_started != XC_SUCCESS) {
    xc_result_t rc = g_started;
    g_started = XC_SUCCESS;
    FT_EXPECT(rc == XC_ERR_PEER_FAILED || rc == XC_ERR_REVOKED, "the first barrier: %s (%s), want a failed peer or a revoke",
              xc_strerror(rc), xc_last_error());
    verdict_report("error in the first barrier: %s (%s)", xc_strerror(rc), xc_last_error());
    return rc;
  }
  FT_CHECK(xc_comm_rank(comm, &rank));
  FT_CHECK(xc_comm_size(comm, &n));
  for (it = 0; it < ITERS; ++it) {
    xc_result_t rc;
    float v[64];
    int i;
    if (verdict_rank == victim && it == kill_iter) ft_die();
    switch (it % 3) {
      case 0:
        for (i = 0; i < 64; ++i) v[i] = (float)(rank + i);
        rc = xc_allreduce(XC_IN_PLACE, v, 64, XC_FLOAT32, XC_SUM, comm);
        break;
      case 1:  /* a rendezvous-sized exchange around the ring */
        rc = xc_sendrecv(big_out, LARGE, (rank + 1) % n, 5, big_in, LARGE, (rank + n - 1) % n, 5, XC_UINT8, comm, NULL);
        break;
      default:
        rc = xc_broadcast(v, 64, XC_FLOAT32, it % n, comm);
        break;
    }
    if (rc != XC_SUCCESS) {
      FT_EXPECT(rc == XC_ERR_PEER_FAILED || rc == XC_ERR_REVOKED, "iteration %d: %s (%s), want a failed peer or a revoke",
                it, xc_strerror(rc), xc_last_error());
      verdict_report("error at iteration %d: %s (%s)", it, xc_strerror(rc), xc_last_error());
      return rc;
    }
  }
  verdict_fail("%d iterations passed although a rank died", ITERS);
  return XC_SUCCESS;
}

/* The survivors' part of one failure: the op's error, recovery, checks. */
static xc_comm_t survive(xc_comm_t comm, int victim, const int *dead, int matrix) {
  int64_t t_err = verdict_now_ns(), t_ok, death;
  int shrinks = 0, n;
  xc_comm_t child = ft_recover(comm, &shrinks);
  t_ok = verdict_now_ns();
  FT_CHECK(xc_comm_size(child, &n));
  ft_check_survivors(child, dead, g_size);
  death = ft_death_time(victim);
  verdict_report("victim=%d detect_ms=%.1f recover_ms=%.1f shrinks=%d size=%d", victim,
            death ? (double)(t_err - death) / 1e6 : -1.0, (double)(t_ok - t_err) / 1e6, shrinks, n);
  if (matrix) verdict_report("matrix: %zu cases passed on %d ranks", ft_matrix(child, g_seed), n);
  return child;
}

static void mode_kill(xc_comm_t world, int victim) {
  int dead[4096] = {0};
  xc_comm_t child;
  FT_EXPECT(victim >= 0 && victim < g_size, "victim %d is not a rank", victim);
  dead[victim] = 1;
  work(world, victim, (int)(rnd(1) % 40));
  child = survive(world, victim, dead, 1);
  FT_CHECK(xc_comm_free(child));
}

static void mode_twice(xc_comm_t world) {
  int dead[4096] = {0};
  xc_comm_t one, two;
  FT_EXPECT(g_size >= 3, "twice needs 3 ranks or more");
  dead[g_size - 1] = 1;
  work(world, g_size - 1, (int)(rnd(1) % 40));
  one = survive(world, g_size - 1, dead, 1);
  dead[1] = 1;
  work(one, 1, (int)(rnd(2) % 40));
  two = survive(one, 1, dead, 1);
  FT_CHECK(xc_comm_free(one));
  FT_CHECK(xc_comm_free(two));
}

static void *die_later(void *arg) {
  sleep_us((long)(intptr_t)arg);
  ft_die();
  return NULL;
}

/* Start a thread that kills this process after us microseconds. */
static void die_in(long us) {
  pthread_t t;
  pthread_create(&t, NULL, die_later, (void *)(intptr_t)us);
}

/* Rank 1 of during_shrink: revoke, start the shrink in a thread, and die
   us microseconds later (fault injection: a random moment), or as soon as
   the shrink returns if that comes first, so it never joins a child that
   the survivors verify. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_shrunk;

static void *shrink_thread(void *arg) {
  xc_comm_t child = NULL;
  (void)xc_comm_shrink((xc_comm_t)arg, NULL, &child);
  pthread_mutex_lock(&g_mu);
  g_shrunk = 1;
  pthread_cond_signal(&g_cv);
  pthread_mutex_unlock(&g_mu);
  return NULL;
}

static void shrink_and_die(xc_comm_t world, long us) {
  pthread_t t;
  struct timespec until;
  FT_CHECK(xc_comm_revoke(world));
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += us * 1000L;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  pthread_create(&t, NULL, shrink_thread, world);
  pthread_mutex_lock(&g_mu);
  while (!g_shrunk)
    if (pthread_cond_timedwait(&g_cv, &g_mu, &until) != 0) break;
  ft_die();
}

static void mode_during_shrink(xc_comm_t world) {
  int dead[4096] = {0}, shrinks = 0;
  xc_comm_t child;
  FT_EXPECT(g_size >= 4, "during_shrink needs 4 ranks or more");
  dead[g_size - 1] = dead[1] = 1;
  work(world, g_size - 1, (int)(rnd(1) % 40));
  if (verdict_rank == 1) shrink_and_die(world, (long)(rnd(2) % 4000));
  child = ft_recover(world, &shrinks);
  ft_check_survivors(child, dead, g_size);
  verdict_report("rank 1 was killed during the recovery; shrinks=%d", shrinks);
  verdict_report("matrix: %zu cases passed", ft_matrix(child, g_seed));
  FT_CHECK(xc_comm_free(child));
}

static void mode_revoke_blocked(xc_comm_t world) {
  xc_result_t rc, async;
  int flag = 1, dead[4096] = {0}, shrinks = 0;
  float v[8] = {0};
  xc_comm_t child;
  FT_EXPECT(g_size >= 3, "revoke_blocked needs 3 ranks or more");
  /* Rank 0 may leave this barrier long before another rank does (the first
     op between hosts sets up their connections): the revoke may then meet
     that rank still in the barrier, which is an op blocked by the revoke
     as good as the next one. */
  rc = xc_barrier(world);
  FT_EXPECT(rc == XC_SUCCESS || (rc == XC_ERR_REVOKED && verdict_rank != 0), "the first barrier: %s (%s)",
            xc_strerror(rc), xc_last_error());
  if (verdict_rank == 0) {
    /* Let the others block first (the checks hold either way: an op that
       starts after the revoke fails at once too). */
    sleep_us(200000);
    verdict_write_file("revoke.time", "%lld\n", (long long)verdict_now_ns());
    FT_CHECK(xc_comm_revoke(world));
    FT_CHECK(xc_comm_revoke(world));  /* again: nothing more happens */
  } else {
    int64_t t0 = verdict_now_ns(), t_rev;
    FILE *f;
    long long t = 0;
    char path[4096];
    if (rc == XC_ERR_REVOKED)
      verdict_report("the revoke came during the first barrier");
    else if (verdict_rank == g_size - 1)
      rc = xc_recv(v, 8, XC_FLOAT32, XC_ANY_SOURCE, 3, world, NULL);
    else
      rc = xc_allreduce(XC_IN_PLACE, v, 8, XC_FLOAT32, XC_SUM, world);
    FT_EXPECT(rc == XC_ERR_REVOKED, "the blocked op returned %s (%s), want XC_ERR_REVOKED", xc_strerror(rc),
              xc_last_error());
    FT_EXPECT(strstr(xc_last_error(), "rank 0") != NULL, "the message does not name rank 0: %s", xc_last_error());
    snprintf(path, sizeof path, "%s/revoke.time", verdict_dir);
    f = fopen(path, "r");
    FT_EXPECT(f && fscanf(f, "%lld", &t) == 1, "revoke.time was not written before the revoke");
    fclose(f);
    t_rev = verdict_now_ns();
    FT_EXPECT((t_rev - t) / 1000000 < PROMPT_MS, "the blocked op ended %lld ms after the revoke",
              (long long)((t_rev - t) / 1000000));
    verdict_report("blocked %.1f ms, out %.2f ms after the revoke: %s", (double)(t_rev - t0) / 1e6,
              (double)(t_rev - t) / 1e6, xc_last_error());
  }
  FT_CHECK(xc_comm_get_async_error(world, &async));
  FT_EXPECT(async == XC_ERR_REVOKED, "xc_comm_get_async_error: %s, want XC_ERR_REVOKED", xc_strerror(async));
  rc = xc_barrier(world);
  FT_EXPECT(rc == XC_ERR_REVOKED, "a barrier after the revoke: %s", xc_strerror(rc));
  rc = xc_comm_agree(world, &flag);
  FT_EXPECT(rc == XC_SUCCESS && flag == 1, "agree on the revoked world: %s, flag %d (%s)", xc_strerror(rc), flag,
            xc_last_error());
  child = ft_recover(world, &shrinks);  /* its allreduce checks the child */
  ft_check_survivors(child, dead, g_size);
  FT_CHECK(xc_comm_free(child));
}

struct agree_call {
  xc_comm_t comm;
  int flag;
  xc_result_t rc;
};

static void *agree_thread(void *arg) {
  struct agree_call *a = (struct agree_call *)arg;
  a->rc = xc_comm_agree(a->comm, &a->flag);
  return NULL;
}

static void mode_agree(xc_comm_t world, int victim) {
  const int all = 0x7fffffff;
  struct agree_call a = {world, all & ~(1 << (verdict_rank % 31)), XC_SUCCESS};
  int i, dead[4096] = {0}, got[2 * 4096], n;
  xc_comm_t child;
  FT_EXPECT(victim >= 0 && victim < g_size && g_size <= 31, "victim %d, %d ranks", victim, g_size);
  dead[victim] = 1;
  if (verdict_rank == victim) {
    pthread_t t;
    pthread_create(&t, NULL, agree_thread, &a);
    sleep_us((long)(rnd(3) % 1500));  /* fault injection: a random moment of the agreement (~1 ms at 4 ranks) */
    ft_die();
  }
  agree_thread(&a);
  FT_EXPECT(a.rc == XC_SUCCESS || a.rc == XC_ERR_PEER_FAILED, "agree: %s (%s)", xc_strerror(a.rc), xc_last_error());
  for (i = 0; i < g_size; ++i)
    if (i != victim) FT_EXPECT(!(a.flag & (1 << i)), "flag 0x%x: rank %d's cleared bit is missing", a.flag, i);
  verdict_report("agree: %s flag=0x%x, the victim's flag %s (%s)", xc_strerror(a.rc), a.flag,
            a.flag & (1 << victim) ? "left out" : "counted", a.rc ? xc_last_error() : "");
  FT_CHECK(xc_comm_shrink(world, NULL, &child));
  /* The survivors' outcomes must be the same. */
  FT_CHECK(xc_comm_size(child, &n));
  {
    int mine[2] = {a.flag, (int)a.rc};
    FT_CHECK(xc_allgather(mine, got, 2, XC_INT32, child));
  }
  for (i = 1; i < n; ++i)
    FT_EXPECT(got[2 * i] == got[0] && got[2 * i + 1] == got[1], "rank %d of the child agreed flag 0x%x (%d), rank 0 0x%x (%d)",
              i, got[2 * i], got[2 * i + 1], got[0], got[1]);
  ft_check_survivors(child, dead, g_size);
  FT_CHECK(xc_comm_free(child));
}

static void mode_chaos(xc_comm_t world) {
  int victim = (int)(rnd(4) % (uint64_t)g_size), dead[4096] = {0};
  xc_comm_t child;
  dead[victim] = 1;
  if (verdict_rank == victim) die_in((long)(rnd(5) % 30000));  /* within the first 30 ms of work */
  work(world, -1, -1);
  child = survive(world, victim, dead, 0);
  FT_CHECK(xc_comm_free(child));
}

static void mode_grow(xc_comm_t world, int nnew) {
  xc_unique_id_t id;
  xc_comm_t grown;
  int n, rank, members[4096], i;
  if (verdict_rank == 0) {
    FT_CHECK(xc_get_unique_id(&id));
    {
      char path[4096], tmp[4200];
      FILE *f;
      snprintf(path, sizeof path, "%s/id", verdict_dir);
      snprintf(tmp, sizeof tmp, "%s.tmp", path);
      f = fopen(tmp, "wb");
      FT_EXPECT(f && fwrite(&id, sizeof id, 1, f) == 1, "cannot write %s", tmp);
      fclose(f);
      rename(tmp, path);
    }
  }
  FT_CHECK(xc_comm_grow(world, nnew, verdict_rank == 0 ? &id : NULL, &g_cfg, &grown));
  FT_CHECK(xc_comm_size(grown, &n));
  FT_CHECK(xc_comm_rank(grown, &rank));
  FT_EXPECT(n == g_size + nnew && rank == verdict_rank, "grown: rank %d of %d, want %d of %d", rank, n, verdict_rank,
            g_size + nnew);
  ft_members(grown, members, n);
  for (i = 0; i < n; ++i) FT_EXPECT(members[i] == i, "rank %d of the grown communicator says it is %d", i, members[i]);
  verdict_report("grown to %d ranks; matrix: %zu cases passed", n, ft_matrix(grown, g_seed));
  FT_CHECK(xc_comm_free(grown));
  /* The world is unchanged and still works. */
  FT_EXPECT(ft_allreduce_ok(world, 77), "the world after the grow");
}

static void mode_join(int nold, int nnew, int index) {
  xc_unique_id_t id;
  xc_comm_t grown;
  int n, rank, members[4096];
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s/id", verdict_dir);
  f = fopen(path, "rb");
  FT_EXPECT(f && fread(&id, sizeof id, 1, f) == 1, "cannot read %s", path);
  fclose(f);
  FT_CHECK(xc_comm_init_rank(nold + nnew, &id, nold + index, &g_cfg, &grown));
  FT_CHECK(xc_comm_size(grown, &n));
  FT_CHECK(xc_comm_rank(grown, &rank));
  FT_EXPECT(n == nold + nnew && rank == nold + index, "joined as rank %d of %d", rank, n);
  ft_members(grown, members, n);
  verdict_report("joined as rank %d of %d; matrix: %zu cases passed", rank, n, ft_matrix(grown, g_seed));
  FT_CHECK(xc_comm_free(grown));
}

int main(int argc, char **argv) {
  xc_comm_t world;
  const char *mode;
  if (argc < 3) {
    fprintf(stderr, "usage: ft DIR MODE [ARGS]\n");
    return 2;
  }
  verdict_dir = argv[1];
  mode = argv[2];
  g_seed = mp_seed();
  g_cfg.timeout_ms = TIMEOUT_MS;
  if (strcmp(mode, "join") == 0) {
    FT_EXPECT(argc == 6, "join NOLD NNEW I");
    verdict_rank = atoi(argv[3]) + atoi(argv[5]);
    mode_join(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    verdict_pass();
    return 0;
  }
  FT_CHECK(xc_init(&g_cfg, &world));
  FT_CHECK(xc_comm_rank(world, &verdict_rank));
  FT_CHECK(xc_comm_size(world, &g_size));
  mp_rank = verdict_rank;
  /* xc_init returns on a rank once it is set up, while others may still be
     reading the bootstrap store that rank 0 serves: no rank dies before
     every rank is in (start-up is not what these tests are about). */
  g_started = xc_barrier(world);
  if (strcmp(mode, "kill") != 0 && strcmp(mode, "twice") != 0 && strcmp(mode, "chaos") != 0) FT_CHECK(g_started);
  if (strcmp(mode, "kill") == 0 && argc == 4)
    mode_kill(world, atoi(argv[3]));
  else if (strcmp(mode, "twice") == 0)
    mode_twice(world);
  else if (strcmp(mode, "during_shrink") == 0)
    mode_during_shrink(world);
  else if (strcmp(mode, "revoke_blocked") == 0)
    mode_revoke_blocked(world);
  else if (strcmp(mode, "agree") == 0 && argc == 4)
    mode_agree(world, atoi(argv[3]));
  else if (strcmp(mode, "chaos") == 0)
    mode_chaos(world);
  else if (strcmp(mode, "grow") == 0 && argc == 4)
    mode_grow(world, atoi(argv[3]));
  else
    verdict_fail("unknown mode or arguments: %s", mode);
  FT_CHECK(xc_comm_free(world));
  verdict_pass();
  return 0;
}
