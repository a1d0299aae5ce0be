/* The table of collectives (coll_ops.h) and what their steps share. */
#include "coll_ops.h"

#include <stdlib.h>
#include <string.h>

#define CT_OP(name, flags) {#name, flags, name##_prepare, name##_start, name##_check}
const ct_op ct_ops[] = {
    CT_OP(barrier, CT_NO_DATA),
    CT_OP(broadcast, CT_ROOTED | CT_ONE_BUFFER),
    CT_OP(reduce, CT_REDUCES | CT_ROOTED),
    CT_OP(allreduce, CT_REDUCES),
    CT_OP(allgather, 0),
    CT_OP(allgatherv, 0),
    CT_OP(gather, CT_ROOTED),
    CT_OP(gatherv, CT_ROOTED),
    CT_OP(scatter, CT_ROOTED),
    CT_OP(scatterv, CT_ROOTED),
    CT_OP(reduce_scatter, CT_REDUCES),
    CT_OP(reduce_scatterv, CT_REDUCES),
    CT_OP(alltoall, 0),
    CT_OP(alltoallv, 0),
    CT_OP(scan, CT_REDUCES),
    CT_OP(exscan, CT_REDUCES),
};
const size_t ct_num_ops = sizeof ct_ops / sizeof ct_ops[0];

const ct_op *ct_find_op(const char *name) {
  size_t i;
  for (i = 0; i < ct_num_ops; ++i)
    if (strcmp(ct_ops[i].name, name) == 0) return &ct_ops[i];
  return NULL;
}

void ct_snapshot_send(ct_run *r) {
  size_t bytes = r->send_n * r->c.dt->size;
  r->send_copy = malloc(bytes ? bytes : 1);
  MP_ASSERT(r->send_copy != NULL, "out of memory");
  if (bytes) memcpy(r->send_copy, r->send, bytes);
}

void ct_check_send_unchanged(ct_run *r) {
  if (r->send && r->send_copy) ct_check_unchanged(&r->c, "sendbuf (an input)", r->send, r->send_copy, r->send_n * r->c.dt->size);
}

void ct_free_run(ct_run *r) {
  if (r->send) ct_check_poison(&r->c, "sendbuf (past its end)", r->send, r->send_n, r->send_n + CT_GUARD);
  if (r->recv) ct_check_poison(&r->c, "recvbuf (past its end)", r->recv, r->recv_n, r->recv_n + CT_GUARD);
  free(r->send);
  free(r->recv);
  free(r->send_copy);
  free(r->scounts);
  free(r->sdispls);
  free(r->rcounts);
  free(r->rdispls);
  r->send = r->recv = r->send_copy = NULL;
  r->scounts = r->sdispls = r->rcounts = r->rdispls = NULL;
}

size_t *ct_counts_array(int n) {
  size_t *a = (size_t *)calloc((size_t)n, sizeof(size_t));
  MP_ASSERT(a != NULL, "out of memory");
  return a;
}
