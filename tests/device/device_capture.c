/* Device collectives captured into a graph and replayed, as CUDA graphs
   have it: the intra-node kernels need no host step, so the copy and the
   kernel an allreduce enqueues can be recorded once and run again and again,
   the flag barrier's epochs advancing on the device.

     device_capture      (under xcrun, 1-8 ranks)

   Every rank: an allreduce once (the kernels' set-up, on the host), then
   captures one allreduce of COUNT_SMALL floats (one-shot by size) and one
   of COUNT_MEDIUM (two-shot) on a wrapped stream, and replays each graph
   REPLAYS times, with new input before each replay, checking every
   element of every replay against the sum computed here. Also: an op that
   needs the host (a broadcast, the generic path) on a capturing stream is
   refused with XC_ERR_UNSUPPORTED and a message, and the stream stays
   usable after the capture. Under XC_NCCL=1 (tests/nccl/gpu_run.sh, one
   rank on a GPU) the ops go through NCCL, which captures all of them.

   On the emulated device the capture is the device layer's own
   (gpu/emulated_device.h, through capture_emulated.cc); under
   XC_DEVICE=cuda it is CUDA's (cudaStreamBeginCapture, relaxed mode;
   cudaGraphInstantiate, cudaGraphLaunch) from libcudart. */
#define _POSIX_C_SOURCE 200809L
#include "dev_mem.h"

enum { REPLAYS = 1000, COUNT_SMALL = 1001, COUNT_MEDIUM = 96 * 1024 };

/* capture_emulated.cc */
int test_capture_begin(void *native);
void *test_capture_end(void *native);
void test_graph_launch(void *graph, void *native);
void test_graph_destroy(void *graph);
void test_stream_synchronize(void *native);

typedef int (*cu_begin_fn)(void *stream, int mode);
typedef int (*cu_end_fn)(void *stream, void **graph);
typedef int (*cu_instantiate_fn)(void **exec, void *graph, unsigned long long flags);
typedef int (*cu_launch_fn)(void *exec, void *stream);
typedef int (*cu_destroy_fn)(void *);

static void *cu_sym(const char *name) {
  void *f = dlsym(dev_state.lib, name);
  if (!f) dev_skip("libcudart lacks the graph API");
  return f;
}

static void capture_begin(void *native) {
  if (!dev_state.cuda) {
    MP_ASSERT(test_capture_begin(native) == XC_SUCCESS, "emulated capture did not begin");
    return;
  }
  dev_cuda_check(((cu_begin_fn)cu_sym("cudaStreamBeginCapture"))(native, 2 /* relaxed */), "cudaStreamBeginCapture");
}

static void *capture_end(void *native) {
  void *graph = NULL, *exec = NULL;
  if (!dev_state.cuda) {
    graph = test_capture_end(native);
    MP_ASSERT(graph != NULL, "emulated capture did not end");
    return graph;
  }
  dev_cuda_check(((cu_end_fn)cu_sym("cudaStreamEndCapture"))(native, &graph), "cudaStreamEndCapture");
  dev_cuda_check(((cu_instantiate_fn)cu_sym("cudaGraphInstantiate"))(&exec, graph, 0), "cudaGraphInstantiate");
  dev_cuda_check(((cu_destroy_fn)cu_sym("cudaGraphDestroy"))(graph), "cudaGraphDestroy");
  return exec;
}

static void replay(void *graph, void *native) {
  if (!dev_state.cuda) {
    test_graph_launch(graph, native);
    test_stream_synchronize(native);
    return;
  }
  dev_cuda_check(((cu_launch_fn)cu_sym("cudaGraphLaunch"))(graph, native), "cudaGraphLaunch");
  dev_cuda_check(dev_state.stream_synchronize(native), "cudaStreamSynchronize");
}

static void graph_destroy(void *graph) {
  if (!dev_state.cuda)
    test_graph_destroy(graph);
  else
    dev_cuda_check(((cu_destroy_fn)cu_sym("cudaGraphExecDestroy"))(graph), "cudaGraphExecDestroy");
}

/* rank's input element i in replay it: small integers, so sums are exact. */
static float value(int rank, int it, size_t i) { return (float)((rank * 131 + it * 7 + (int)(i % 97)) % 64) - 32.0f; }

static size_t check_replays(xc_comm_t comm, void *native, size_t count, int rank, int n) {
  float *in = (float *)dev_alloc(comm, count * sizeof(float)), *out = (float *)dev_alloc(comm, count * sizeof(float));
  float *host = (float *)malloc(count * sizeof(float));
  void *graph;
  size_t i, wrong = 0;
  int it, r;
  MP_ASSERT(host != NULL, "out of memory");
  capture_begin(native);
  MP_CHECK(xc_allreduce(in, out, count, XC_FLOAT32, XC_SUM, comm));
  graph = capture_end(native);
  for (it = 0; it < REPLAYS; ++it) {
    for (i = 0; i < count; ++i) host[i] = value(rank, it, i);
    dev_put(in, host, count * sizeof(float));
    replay(graph, native);
    dev_get(host, out, count * sizeof(float));
    for (i = 0; i < count; ++i) {
      float want = 0;
      for (r = 0; r < n; ++r) want += value(r, it, i);
      if (host[i] != want && wrong++ < 5)
        fprintf(stderr, "[rank %d] FAIL replay %d of the %zu-float allreduce: element %zu is %g, expected %g\n", rank,
                it, count, i, host[i], want);
    }
  }
  graph_destroy(graph);
  free(host);
  dev_free(comm, in);
  dev_free(comm, out);
  return wrong;
}

int main(void) {
  xc_comm_t world;
  xc_stream_t s;
  void *native, *buf;
  int rank, n;
  double wrong;
  xc_result_t rc;
  const char *nccl_env = getenv("XC_NCCL");
  int nccl = nccl_env && strcmp(nccl_env, "1") == 0;
  MP_CHECK(xc_init(NULL, &world));
  MP_CHECK(xc_comm_rank(world, &rank));
  MP_CHECK(xc_comm_size(world, &n));
  mp_rank = rank;
  dev_setup(world);
  native = dev_native_stream_create();
  MP_CHECK(xc_stream_wrap(world, native, &s));
  MP_CHECK(xc_stream_bind(world, s, XC_BIND_COLLECTIVES));
  buf = dev_alloc(world, (size_t)COUNT_MEDIUM * sizeof(float));

  /* The kernels' set-up runs on the host, so it comes before any capture. */
  MP_CHECK(xc_allreduce(XC_IN_PLACE, buf, COUNT_SMALL, XC_FLOAT32, XC_SUM, world));
  MP_CHECK(xc_stream_synchronize(s));

  /* A host-coordinated op cannot be captured: refused, and the stream goes
     on. (Through NCCL, XC_NCCL=1, every op captures: nothing to refuse.) */
  capture_begin(native);
  rc = xc_broadcast(buf, COUNT_SMALL, XC_FLOAT32, 0, world);
  graph_destroy(capture_end(native));
  if (!nccl) {
    MP_ASSERT(rc == XC_ERR_UNSUPPORTED, "a broadcast on a capturing stream -> %s, expected XC_ERR_UNSUPPORTED",
              xc_strerror(rc));
    MP_ASSERT(strstr(xc_last_error(), "captured") != NULL, "the refusal does not say why: %s", xc_last_error());
  }
  MP_CHECK(xc_broadcast(buf, COUNT_SMALL, XC_FLOAT32, 0, world));
  MP_CHECK(xc_stream_synchronize(s));

  wrong = (double)check_replays(world, native, COUNT_SMALL, rank, n);
  wrong += (double)check_replays(world, native, COUNT_MEDIUM, rank, n);
  MP_CHECK(xc_stream_synchronize(s));
  MP_CHECK(xc_stream_destroy(s));
  dev_free(world, buf);
  /* Verdict over host memory, so every rank exits alike. */
  MP_CHECK(xc_allreduce(XC_IN_PLACE, &wrong, 1, XC_FLOAT64, XC_SUM, world));
  MP_CHECK(xc_comm_free(world));
  dev_native_stream_destroy(native);
  if (wrong > 0) {
    if (rank == 0) printf("device_capture: FAILED: %.0f wrong elements over all ranks\n", wrong);
    return 1;
  }
  if (rank == 0)
    printf("device_capture: %d ranks on the %s device: allreduces of %d and %d floats captured, "
           "replayed %d times each, all correct\n",
           n, dev_kind(), COUNT_SMALL, COUNT_MEDIUM, REPLAYS);
  return 0;
}
