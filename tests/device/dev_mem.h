/* Device memory for the device tests: allocation through xcomm
   (xc_mem_alloc_device), and moving bytes in and out of it without linking
   CUDA.

   XC_DEVICE=emulated   the library's emulated device: device memory is host
                        memory it tags as device, so memcpy moves it;
   XC_DEVICE=cuda       a GPU: cudaMemcpy from libcudart, loaded with dlopen
                        (libcudart.so, .so.13, .so.12), so the test binary
                        never links CUDA.

   Any other value (or none) is not a device these tests can check: exit 77
   (meson's "skipped"); the suite's wrapper sets emulated unless the caller
   chose. Under cuda, a machine without a usable GPU (xc_mem_alloc_device or
   xc_stream_create answering XC_ERR_UNSUPPORTED, or no libcudart) also exits
   77. Under emulated the same answers are failures: the emulated device
   exists wherever xcomm is built.

   Every function exits the process (1, or 77 as above) when something it
   needs fails, after printing which rank and which call. */
#ifndef XCOMM_DEV_MEM_H
#define XCOMM_DEV_MEM_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_test.h"

#define DEV_SKIP 77

typedef int (*dev_cuda_memcpy_fn)(void *dst, const void *src, size_t bytes, int kind);
typedef int (*dev_cuda_int_fn)(int);
typedef int (*dev_cuda_intp_fn)(int *);
typedef int (*dev_cuda_streamp_fn)(void **);
typedef int (*dev_cuda_stream_fn)(void *);
typedef const char *(*dev_cuda_errstr_fn)(int);

static struct {
  int ready;
  int cuda; /* 1: XC_DEVICE=cuda, 0: emulated */
  void *lib;
  dev_cuda_memcpy_fn memcpy_;
  dev_cuda_int_fn set_device;
  dev_cuda_intp_fn device_count;
  dev_cuda_streamp_fn stream_create;
  dev_cuda_stream_fn stream_destroy;
  dev_cuda_stream_fn stream_synchronize;
  dev_cuda_errstr_fn error_string;
  uintptr_t next_fake_stream;
} dev_state;

enum { DEV_CUDA_MEMCPY_DEFAULT = 4 }; /* cudaMemcpyDefault: direction from the pointers (UVA) */

/* "emulated" or "cuda". */
static inline const char *dev_kind(void) { return dev_state.cuda ? "cuda" : "emulated"; }

static inline void dev_skip(const char *why) {
  fprintf(stderr, "[rank %d] skipped (exit 77): %s\n", mp_rank, why);
  fflush(stdout);
  exit(DEV_SKIP);
}

static inline void dev_cuda_check(int err, const char *call) {
  if (err == 0) return;
  fprintf(stderr, "[rank %d] %s failed: CUDA error %d (%s)\n", mp_rank, call, err,
          dev_state.error_string ? dev_state.error_string(err) : "?");
  exit(1);
}

/* Read XC_DEVICE and, under cuda, load libcudart and make this rank's device
   (local rank modulo the device count, as xcomm's XC_DEVICE_AUTO) current, so
   cudaMemcpy and native streams live where xcomm's memory does. Call after
   xc_init (mp_rank set). */
static inline void dev_setup(xc_comm_t comm) {
  static const char *const names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12"};
  const char *kind = getenv("XC_DEVICE");
  size_t i;
  if (dev_state.ready) return;
  if (!kind || (strcmp(kind, "emulated") != 0 && strcmp(kind, "cuda") != 0))
    dev_skip("the device tests run with XC_DEVICE=emulated or XC_DEVICE=cuda");
  dev_state.ready = 1;
  dev_state.next_fake_stream = 0x57000;
  if (strcmp(kind, "cuda") != 0) return;
  dev_state.cuda = 1;
  for (i = 0; i < sizeof names / sizeof names[0] && !dev_state.lib; ++i)
    dev_state.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!dev_state.lib) dev_skip("XC_DEVICE=cuda but no libcudart.so(.13/.12) to load");
  dev_state.memcpy_ = (dev_cuda_memcpy_fn)dlsym(dev_state.lib, "cudaMemcpy");
  dev_state.set_device = (dev_cuda_int_fn)dlsym(dev_state.lib, "cudaSetDevice");
  dev_state.device_count = (dev_cuda_intp_fn)dlsym(dev_state.lib, "cudaGetDeviceCount");
  dev_state.stream_create = (dev_cuda_streamp_fn)dlsym(dev_state.lib, "cudaStreamCreate");
  dev_state.stream_destroy = (dev_cuda_stream_fn)dlsym(dev_state.lib, "cudaStreamDestroy");
  dev_state.stream_synchronize = (dev_cuda_stream_fn)dlsym(dev_state.lib, "cudaStreamSynchronize");
  dev_state.error_string = (dev_cuda_errstr_fn)dlsym(dev_state.lib, "cudaGetErrorString");
  if (!dev_state.memcpy_ || !dev_state.set_device || !dev_state.device_count || !dev_state.stream_create ||
      !dev_state.stream_destroy || !dev_state.stream_synchronize)
    dev_skip("libcudart lacks cudaMemcpy/cudaSetDevice/cudaGetDeviceCount/cudaStreamCreate/cudaStreamDestroy/"
             "cudaStreamSynchronize");
  {
    int count = 0, local = 0;
    if (dev_state.device_count(&count) != 0 || count <= 0) dev_skip("XC_DEVICE=cuda but no CUDA device");
    MP_CHECK(xc_comm_local_rank(comm, &local));
    dev_cuda_check(dev_state.set_device(local % count), "cudaSetDevice");
  }
}

/* bytes of device memory on comm's device (bytes > 0). */
static inline void *dev_alloc(xc_comm_t comm, size_t bytes) {
  void *p = NULL;
  xc_result_t rc = xc_mem_alloc_device(comm, bytes, &p);
  if (rc == XC_ERR_UNSUPPORTED && dev_state.cuda) dev_skip("xc_mem_alloc_device: no usable GPU");
  if (rc != XC_SUCCESS || (bytes > 0 && p == NULL)) {
    fprintf(stderr, "[rank %d] xc_mem_alloc_device(%zu bytes) on the %s device -> %s (%s), ptr %p\n", mp_rank, bytes,
            dev_kind(), xc_strerror(rc), xc_last_error(), p);
    exit(1);
  }
  return p;
}

static inline void dev_free(xc_comm_t comm, void *p) {
  xc_result_t rc = xc_mem_free(comm, p);
  if (rc != XC_SUCCESS) {
    fprintf(stderr, "[rank %d] xc_mem_free(device %p) -> %s (%s)\n", mp_rank, p, xc_strerror(rc), xc_last_error());
    exit(1);
  }
}

/* A stream on comm's device (xc_stream_create). */
static inline xc_stream_t dev_stream(xc_comm_t comm) {
  xc_stream_t s = NULL;
  xc_result_t rc = xc_stream_create(comm, &s);
  if (rc == XC_ERR_UNSUPPORTED && dev_state.cuda) dev_skip("xc_stream_create: no usable GPU");
  if (rc != XC_SUCCESS || s == NULL) {
    fprintf(stderr, "[rank %d] xc_stream_create on the %s device -> %s (%s)\n", mp_rank, dev_kind(), xc_strerror(rc),
            xc_last_error());
    exit(1);
  }
  return s;
}

/* host -> device and device -> host (synchronous; the streams of xcomm are
   not involved: synchronise them first). cudaMemcpy from pageable host
   memory returns once the bytes are staged, before they land: the legacy
   stream is synchronised after it, or an op on a non-blocking stream could
   run before the data arrives (and peers read the previous case's bytes). */
static inline void dev_put(void *dev, const void *host, size_t bytes) {
  if (bytes == 0) return;
  if (dev_state.cuda) {
    dev_cuda_check(dev_state.memcpy_(dev, host, bytes, DEV_CUDA_MEMCPY_DEFAULT), "cudaMemcpy(to device)");
    dev_cuda_check(dev_state.stream_synchronize(NULL), "cudaStreamSynchronize(legacy stream)");
  } else
    memcpy(dev, host, bytes);
}

static inline void dev_get(void *host, const void *dev, size_t bytes) {
  if (bytes == 0) return;
  if (dev_state.cuda)
    dev_cuda_check(dev_state.memcpy_(host, dev, bytes, DEV_CUDA_MEMCPY_DEFAULT), "cudaMemcpy(from device)");
  else
    memcpy(host, dev, bytes);
}

/* bytes of device memory set to byte value v. */
static inline void dev_fill(void *dev, int v, size_t bytes) {
  void *tmp;
  if (bytes == 0) return;
  tmp = malloc(bytes);
  MP_ASSERT(tmp != NULL, "out of memory (%zu bytes)", bytes);
  memset(tmp, v, bytes);
  dev_put(dev, tmp, bytes);
  free(tmp);
}

/* A native stream for xc_stream_wrap: a cudaStream_t under cuda; under
   emulated a distinct made-up value (any value names an emulated stream). */
static inline void *dev_native_stream_create(void) {
  void *s = NULL;
  if (!dev_state.cuda) {
    dev_state.next_fake_stream += 0x100;
    return (void *)dev_state.next_fake_stream;
  }
  dev_cuda_check(dev_state.stream_create(&s), "cudaStreamCreate");
  return s;
}

static inline void dev_native_stream_destroy(void *s) {
  if (dev_state.cuda) dev_cuda_check(dev_state.stream_destroy(s), "cudaStreamDestroy");
}

#endif
