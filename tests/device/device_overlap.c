/* On a GPU only (XC_DEVICE=cuda; else exit 77): point-to-point to two peers
   on two bound streams and an allreduce on a third run at the same time.
   Rank 0 brackets each op with CUDA events on its stream; the three
   intervals must overlap pairwise (each op takes about a millisecond: 512
   MiB moved or reduced). Three ranks: 1 and 2 receive from rank 0. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_test.h"

typedef int (*stream_create_fn)(void **);
typedef int (*event_create_fn)(void **);
typedef int (*event_record_fn)(void *, void *);
typedef int (*event_sync_fn)(void *);
typedef int (*elapsed_fn)(float *, void *, void *);

static void *cudart(void) {
  const char *names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12"};
  for (size_t i = 0; i < 3; ++i) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
    if (h) return h;
  }
  return NULL;
}

#define SYM(h, type, name) ((type)dlsym(h, name))

int main(void) {
  const char *dev = getenv("XC_DEVICE");
  if (!dev || strcmp(dev, "cuda") != 0) return 77; /* CUDA events: a GPU only */
  void *h = cudart();
  if (!h) return 77;
  stream_create_fn stream_create = SYM(h, stream_create_fn, "cudaStreamCreate");
  event_create_fn event_create = SYM(h, event_create_fn, "cudaEventCreate");
  event_record_fn event_record = SYM(h, event_record_fn, "cudaEventRecord");
  event_sync_fn event_sync = SYM(h, event_sync_fn, "cudaEventSynchronize");
  elapsed_fn elapsed = SYM(h, elapsed_fn, "cudaEventElapsedTime");
  MP_ASSERT(stream_create && event_create && event_record && event_sync && elapsed, "cudart lacks an entry point");

  xc_comm_t w;
  int size;
  MP_CHECK(xc_init(NULL, &w));
  MP_CHECK(xc_comm_rank(w, &mp_rank));
  MP_CHECK(xc_comm_size(w, &size));
  MP_ASSERT(size == 3, "run at 3 ranks (got %d)", size);
  const size_t bytes = (size_t)512 << 20, count = bytes / 4;
  void *p2p[2], *coll;
  for (int i = 0; i < 2; ++i) {
    xc_result_t rc = xc_mem_alloc_device(w, bytes, &p2p[i]);
    if (rc == XC_ERR_UNSUPPORTED) return 77;
    MP_CHECK(rc);
  }
  MP_CHECK(xc_mem_alloc_device(w, bytes, &coll));

  /* Streams: A for peer 1 (or 0), B for peer 2, C for the collectives. */
  void *cs[3];
  xc_stream_t xs[3];
  for (int i = 0; i < 3; ++i) {
    MP_ASSERT(stream_create(&cs[i]) == 0, "cudaStreamCreate failed");
    MP_CHECK(xc_stream_wrap(w, cs[i], &xs[i]));
  }
  MP_CHECK(xc_stream_bind(w, xs[2], XC_BIND_COLLECTIVES));
  if (mp_rank == 0) {
    MP_CHECK(xc_stream_bind(w, xs[0], 1));
    MP_CHECK(xc_stream_bind(w, xs[1], 2));
  } else {
    MP_CHECK(xc_stream_bind(w, xs[0], 0));
  }
  void *ev[3][2];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 2; ++k) MP_ASSERT(event_create(&ev[i][k]) == 0, "cudaEventCreate failed");

  MP_CHECK(xc_barrier(w));
  for (int i = 0; i < 3; ++i) MP_ASSERT(event_record(ev[i][0], cs[i]) == 0, "cudaEventRecord failed");
  if (mp_rank == 0) {
    MP_CHECK(xc_send(p2p[0], count, XC_FLOAT32, 1, 1, w));
    MP_CHECK(xc_send(p2p[1], count, XC_FLOAT32, 2, 2, w));
  } else {
    MP_CHECK(xc_recv(p2p[0], count, XC_FLOAT32, 0, mp_rank, w, NULL));
  }
  MP_CHECK(xc_allreduce(XC_IN_PLACE, coll, count, XC_FLOAT32, XC_SUM, w));
  for (int i = 0; i < 3; ++i) MP_ASSERT(event_record(ev[i][1], cs[i]) == 0, "cudaEventRecord failed");
  for (int i = 0; i < 3; ++i) MP_CHECK(xc_stream_synchronize(xs[i]));
  for (int i = 0; i < 3; ++i) MP_ASSERT(event_sync(ev[i][1]) == 0, "cudaEventSynchronize failed");

  if (mp_rank == 0) {
    float start[3], end[3];
    for (int i = 0; i < 3; ++i) {
      MP_ASSERT(elapsed(&start[i], ev[0][0], ev[i][0]) == 0 && elapsed(&end[i], ev[0][0], ev[i][1]) == 0,
                "cudaEventElapsedTime failed");
      printf("stream %c (%s): %.3f .. %.3f ms\n", "ABC"[i], i == 2 ? "allreduce" : i == 0 ? "send to 1" : "send to 2",
             start[i], end[i]);
    }
    for (int i = 0; i < 3; ++i)
      for (int j = i + 1; j < 3; ++j) {
        float lo = start[i] > start[j] ? start[i] : start[j];
        float hi = end[i] < end[j] ? end[i] : end[j];
        MP_ASSERT(lo < hi, "streams %c and %c did not overlap ([%.3f, %.3f] and [%.3f, %.3f] ms)", "ABC"[i], "ABC"[j],
                  start[i], end[i], start[j], end[j]);
      }
  }
  for (int i = 0; i < 3; ++i) MP_CHECK(xc_stream_destroy(xs[i]));
  for (int i = 0; i < 2; ++i) MP_CHECK(xc_mem_free(w, p2p[i]));
  MP_CHECK(xc_mem_free(w, coll));
  MP_CHECK(xc_comm_free(w));
  return 0;
}
