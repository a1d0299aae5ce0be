/* Communicator constructors called concurrently from two threads (the
   default thread mode is XC_THREAD_MULTIPLE): each thread dups, splits or
   split_groups its own parent; the two parents are dups of the world, so
   they have the same ranks in the same order. The two children must be
   distinct communicators whose messages never match each other's (the same
   tag on both, received in the opposite order), and both must work. The
   parents' timeout is 2 s (inherited by the children), so crossed messages
   fail the checks instead of hanging the test. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>

#include "comm_util.h"

enum { OP_DUP, OP_SPLIT, OP_GROUPS, NOPS };
static const char *const op_names[NOPS] = {"xc_comm_dup", "xc_comm_split", "xc_comm_split_groups"};

typedef struct job {
  xc_comm_t parent, child;
  int op;
  int *go; /* both threads spin on it, so their calls overlap */
  xc_result_t rc;
  char msg[256];
} job_t;

static int g_ranks[CU_MAXR], g_size1[1];

static void *job_main(void *arg) {
  job_t *j = (job_t *)arg;
  while (!__atomic_load_n(j->go, __ATOMIC_ACQUIRE)) {
  }
  switch (j->op) {
    case OP_DUP: j->rc = xc_comm_dup(j->parent, &j->child); break;
    case OP_SPLIT: j->rc = xc_comm_split(j->parent, 0, mp_rank, NULL, &j->child); break;
    default: j->rc = xc_comm_split_groups(j->parent, 1, g_size1, g_ranks, NULL, &j->child); break;
  }
  snprintf(j->msg, sizeof j->msg, "%s", xc_last_error());
  return NULL;
}

int main(void) {
  cu_view_t w;
  cu_init("split_threads", &w);
  const int n = w.size;
  g_size1[0] = n;
  for (int r = 0; r < n; ++r) g_ranks[r] = r;
  xc_config_t cfg = XC_CONFIG_INIT;
  cfg.timeout_ms = 2000;

  for (int it = 0; it < 300; ++it) {
    int op = it % NOPS;
    job_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    int go = 0;
    a.go = b.go = &go;
    a.op = b.op = op;
    MP_CHECK(xc_comm_split(w.comm, 0, w.rank, &cfg, &a.parent));
    MP_CHECK(xc_comm_split(w.comm, 0, w.rank, &cfg, &b.parent));
    pthread_t ta, tb;
    MP_ASSERT(pthread_create(&ta, NULL, job_main, &a) == 0, "pthread_create failed");
    MP_ASSERT(pthread_create(&tb, NULL, job_main, &b) == 0, "pthread_create failed");
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    MP_ASSERT(pthread_join(ta, NULL) == 0 && pthread_join(tb, NULL) == 0, "pthread_join failed");
    MP_ASSERT(a.rc == XC_SUCCESS && b.rc == XC_SUCCESS, "iteration %d: concurrent %s returned %d (%s) and %d (%s)", it,
              op_names[op], (int)a.rc, a.msg, (int)b.rc, b.msg);
    MP_ASSERT(a.child != NULL && b.child != NULL && a.child != b.child, "iteration %d: %s gave %p and %p", it,
              op_names[op], (void *)a.child, (void *)b.child);
    char what[96];
    snprintf(what, sizeof what, "iteration %d: children of concurrent %s", it, op_names[op]);
    cu_isolation(&w, a.child, b.child, 3, what);
    cu_isolation(&w, b.child, a.child, 4, what);
    cu_view_t v = w;
    v.comm = a.child;
    cu_check(&v, 1, what);
    v.comm = b.child;
    cu_check(&v, 2, what);
    MP_CHECK(xc_comm_free(a.child));
    MP_CHECK(xc_comm_free(b.child));
    MP_CHECK(xc_comm_free(a.parent));
    MP_CHECK(xc_comm_free(b.parent));
  }
  cu_check(&w, 3, "world at the end");
  MP_CHECK(xc_comm_free(w.comm));
  if (w.rank == 0) printf("split_threads: OK\n");
  return 0;
}
