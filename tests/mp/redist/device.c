/* Device memory is not redistributed in this version: a plan run on
   device buffers fails with XC_ERR_UNSUPPORTED and a message, on every
   rank, and never hangs (run on the emulated device; exit 77 without one). */
#include "redist_util.h"

int main(void) {
  r_init();
  size_t shape[1] = {64};
  xc_placement_t s0 = {XC_PLACEMENT_SHARD, 0, 0, 0}, rep = {XC_PLACEMENT_REPLICATE, 0, 0, 0};
  xc_layout_t src, dst;
  MP_CHECK(xc_layout_mesh(r_world, 1, shape, 1, &r_size, &s0, &src));
  MP_CHECK(xc_layout_mesh(r_world, 1, shape, 1, &r_size, &rep, &dst));
  void *in = NULL, *out = NULL;
  xc_result_t rc = xc_mem_alloc_device(r_world, 64 * sizeof(float), &in);
  if (rc == XC_ERR_UNSUPPORTED) {
    if (r_rank == 0) printf("no device: skipped\n");
    return 77;
  }
  MP_CHECK(rc);
  MP_CHECK(xc_mem_alloc_device(r_world, 64 * sizeof(float), &out));
  xc_plan_t plan;
  MP_CHECK(xc_redistribute_plan(src, dst, XC_FLOAT32, NULL, &plan));
  rc = xc_redistribute(plan, in, out);
  MP_ASSERT(rc == XC_ERR_UNSUPPORTED && strstr(xc_last_error(), "host memory only"), "device run: %d (%s)", (int)rc,
            xc_last_error());
  xc_request_t req = NULL;
  rc = xc_iredistribute(plan, in, out, &req);
  MP_ASSERT(rc == XC_ERR_UNSUPPORTED && req == NULL, "non-blocking device run: %d", (int)rc);
  MP_CHECK(xc_plan_free(plan));
  MP_CHECK(xc_mem_free(r_world, in));
  MP_CHECK(xc_mem_free(r_world, out));
  MP_CHECK(xc_layout_free(src));
  MP_CHECK(xc_layout_free(dst));
  r_finish("redist_device");
  return 0;
}
