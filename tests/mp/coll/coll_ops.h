/* Every collective of xcomm.h as three steps, so one table drives the
   blocking matrix, the non-blocking runs (start several, wait in reverse
   order) and the grouped runs alike:
     prepare  allocate, fill this rank's input, poison every output
     start    the call: blocking when req is NULL, else its non-blocking twin
     check    compare every output element (and the gaps and inputs that must
              stay untouched) with the reference; then free the buffers */
#ifndef XCOMM_COLL_OPS_H
#define XCOMM_COLL_OPS_H

#include "coll_check.h"

typedef struct {
  ct_case c;
  xc_comm_t comm;
  void *send, *recv;        /* as allocated (never XC_IN_PLACE) */
  void *send_copy;          /* what send held before the call, to check it is untouched */
  size_t send_n, recv_n;    /* elements allocated */
  size_t *scounts, *sdispls, *rcounts, *rdispls; /* v-ops: one entry per rank */
} ct_run;

enum {
  CT_REDUCES = 1u << 0, /* takes a reduction op */
  CT_ROOTED = 1u << 1,  /* takes a root */
  CT_NO_DATA = 1u << 2, /* barrier */
  CT_ONE_BUFFER = 1u << 3, /* broadcast: no out-of-place form */
};

typedef struct {
  const char *name;
  unsigned flags;
  void (*prepare)(ct_run *r);
  xc_result_t (*start)(ct_run *r, xc_request_t *req);
  void (*check)(ct_run *r);
} ct_op;

extern const ct_op ct_ops[];
extern const size_t ct_num_ops;
const ct_op *ct_find_op(const char *name);

/* Shared by the op files: the send snapshot and freeing. */
void ct_snapshot_send(ct_run *r);
void ct_check_send_unchanged(ct_run *r);
void ct_free_run(ct_run *r);
size_t *ct_counts_array(int n);

/* The ops (coll_ops_move.c and coll_ops_reduce.c). */
#define CT_DECLARE_OP(name)                                  \
  void name##_prepare(ct_run *r);                            \
  xc_result_t name##_start(ct_run *r, xc_request_t *req);    \
  void name##_check(ct_run *r);
CT_DECLARE_OP(barrier)
CT_DECLARE_OP(broadcast)
CT_DECLARE_OP(allgather)
CT_DECLARE_OP(allgatherv)
CT_DECLARE_OP(gather)
CT_DECLARE_OP(gatherv)
CT_DECLARE_OP(scatter)
CT_DECLARE_OP(scatterv)
CT_DECLARE_OP(alltoall)
CT_DECLARE_OP(alltoallv)
CT_DECLARE_OP(reduce)
CT_DECLARE_OP(allreduce)
CT_DECLARE_OP(reduce_scatter)
CT_DECLARE_OP(reduce_scatterv)
CT_DECLARE_OP(scan)
CT_DECLARE_OP(exscan)

#endif
