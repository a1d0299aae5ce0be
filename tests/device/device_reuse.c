/* A freed and reused device address is never served from a stale mapping:
   rank 0 allocates, broadcasts and frees a buffer again and again (the
   allocator hands back the same address most of the time), each time with
   other data; the peers must see the new data every time, also when the
   buffer is registered and deregistered around the op. */
#include <stdio.h>
#include <stdlib.h>

#include "dev_mem.h"

int main(void) {
  xc_comm_t w;
  int size;
  MP_CHECK(xc_init(NULL, &w));
  MP_CHECK(xc_comm_rank(w, &mp_rank));
  MP_CHECK(xc_comm_size(w, &size));
  dev_setup(w);
  xc_stream_t s = dev_stream(w);
  MP_CHECK(xc_stream_bind(w, s, XC_BIND_COLLECTIVES));
  const size_t n = 4099;
  uint32_t *host = malloc(n * 4), *want = malloc(n * 4);
  MP_ASSERT(host && want, "out of memory");
  uint64_t seed = mp_seed();
  int same_address = 0;
  void *last = NULL;
  for (int round = 0; round < 40; ++round) {
    void *buf = dev_alloc(w, n * 4);
    if (buf == last) ++same_address;
    last = buf;
    xc_buffer_t reg = NULL;
    if (round % 2) MP_CHECK(xc_buffer_register(w, buf, n * 4, &reg));
    mp_fill(want, n * 4, seed, 0, (uint64_t)round);
    if (mp_rank == 0) dev_put(buf, want, n * 4);
    MP_CHECK(xc_broadcast(buf, n, XC_UINT32, 0, w));
    MP_CHECK(xc_stream_synchronize(s));
    dev_get(host, buf, n * 4);
    for (size_t i = 0; i < n; ++i)
      MP_ASSERT(host[i] == want[i], "round %d element %zu: 0x%x, expected 0x%x (a stale mapping?)", round, i, host[i],
                want[i]);
    MP_CHECK(xc_buffer_deregister(reg));
    /* The peers must have read it before it goes. */
    MP_CHECK(xc_barrier(w));
    dev_free(w, buf);
  }
  if (mp_rank == 0) printf("device_reuse: %d ranks, 40 rounds, %d reused the previous address\n", size, same_address);
  MP_CHECK(xc_stream_destroy(s));
  free(host);
  free(want);
  MP_CHECK(xc_comm_free(w));
  return 0;
}
