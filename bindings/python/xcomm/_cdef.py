"""The C declarations of include/xcomm.h, as cffi reads them (ABI mode).

A copy of the header's typedefs and prototypes without comments or
preprocessor lines. tests/bindings/python/test_header.py parses the header and
checks that every function, enum constant, struct field and #define here
matches it, so a change to the header that is not copied here fails a test.

This module has no imports and no side effects: the header test loads it by
path, without loading the library.
"""

CDEF = """
typedef enum xc_result {
  XC_SUCCESS = 0,
  XC_IN_PROGRESS = 1,
  XC_ERR_INVALID_ARGUMENT = -1,
  XC_ERR_INVALID_USAGE = -2,
  XC_ERR_NO_MEMORY = -3,
  XC_ERR_SYSTEM = -4,
  XC_ERR_TIMEOUT = -5,
  XC_ERR_PEER_FAILED = -6,
  XC_ERR_ABORTED = -7,
  XC_ERR_UNSUPPORTED = -8,
  XC_ERR_TRUNCATED = -9,
  XC_ERR_CUDA = -10,
  XC_ERR_NCCL = -11,
  XC_ERR_INTERNAL = -12,
  XC_ERR_REVOKED = -13,
  XC_RESULT_FORCE_32BIT = 0x7FFFFFFF
} xc_result_t;

xc_result_t xc_get_version(int *major, int *minor, int *patch);
const char *xc_strerror(xc_result_t result);
const char *xc_last_error(void);

typedef enum xc_dtype {
  XC_INT8 = 0,
  XC_UINT8 = 1,
  XC_INT32 = 2,
  XC_UINT32 = 3,
  XC_INT64 = 4,
  XC_UINT64 = 5,
  XC_FLOAT16 = 6,
  XC_BFLOAT16 = 7,
  XC_FLOAT32 = 8,
  XC_FLOAT64 = 9,
  XC_DTYPE_FORCE_32BIT = 0x7FFFFFFF
} xc_dtype_t;

typedef enum xc_op {
  XC_SUM = 0,
  XC_PROD = 1,
  XC_MIN = 2,
  XC_MAX = 3,
  XC_AVG = 4,
  XC_BAND = 5,
  XC_BOR = 6,
  XC_BXOR = 7,
  XC_OP_FORCE_32BIT = 0x7FFFFFFF
} xc_op_t;

size_t xc_dtype_size(xc_dtype_t dtype);

typedef struct xc_comm_s *xc_comm_t;
typedef struct xc_request_s *xc_request_t;
typedef struct xc_stream_s *xc_stream_t;
typedef struct xc_buffer_s *xc_buffer_t;

typedef enum xc_thread_mode {
  XC_THREAD_DEFAULT = 0,
  XC_THREAD_SERIALIZED = 1,
  XC_THREAD_MULTIPLE = 2,
  XC_THREAD_MODE_FORCE_32BIT = 0x7FFFFFFF
} xc_thread_mode_t;

typedef enum xc_debug_level {
  XC_DEBUG_DEFAULT = 0,
  XC_DEBUG_NONE = 1,
  XC_DEBUG_WARN = 2,
  XC_DEBUG_INFO = 3,
  XC_DEBUG_TRACE = 4,
  XC_DEBUG_LEVEL_FORCE_32BIT = 0x7FFFFFFF
} xc_debug_level_t;

typedef struct xc_config {
  size_t size;
  uint32_t version;
  int32_t device;
  uint64_t timeout_ms;
  int32_t thread_mode;
  int32_t debug_level;
  const char *name;
  int32_t nccl_lazy;
} xc_config_t;

xc_result_t xc_config_init(xc_config_t *cfg, size_t size);

xc_result_t xc_init(const xc_config_t *cfg, xc_comm_t *world);

typedef struct xc_unique_id {
  char internal[128];
} xc_unique_id_t;
xc_result_t xc_get_unique_id(xc_unique_id_t *id);
xc_result_t xc_comm_init_rank(int nranks, const xc_unique_id_t *id, int rank, const xc_config_t *cfg,
                              xc_comm_t *comm);
xc_result_t xc_comm_free(xc_comm_t comm);
xc_result_t xc_comm_abort(xc_comm_t comm);
xc_result_t xc_comm_rank(xc_comm_t comm, int *rank);
xc_result_t xc_comm_size(xc_comm_t comm, int *size);
xc_result_t xc_comm_local_rank(xc_comm_t comm, int *rank);
xc_result_t xc_comm_local_size(xc_comm_t comm, int *size);
xc_result_t xc_comm_get_async_error(xc_comm_t comm, xc_result_t *err);
xc_result_t xc_comm_trace_dump(xc_comm_t comm, const char *path);
xc_result_t xc_comm_split(xc_comm_t parent, int color, int key, const xc_config_t *cfg, xc_comm_t *out);
xc_result_t xc_comm_split_groups(xc_comm_t parent, int ngroups, const int *group_sizes, const int *ranks,
                                 const xc_config_t *cfg, xc_comm_t *out);
xc_result_t xc_comm_create_group(xc_comm_t parent, int n, const int *ranks, int tag, const xc_config_t *cfg,
                                 xc_comm_t *out);
xc_result_t xc_comm_dup(xc_comm_t comm, xc_comm_t *out);
xc_result_t xc_comm_revoke(xc_comm_t comm);
xc_result_t xc_comm_agree(xc_comm_t comm, int *flag);
xc_result_t xc_comm_get_failed(xc_comm_t comm, int *n, int *ranks);
xc_result_t xc_comm_shrink(xc_comm_t comm, const xc_config_t *cfg, xc_comm_t *out);
xc_result_t xc_comm_grow(xc_comm_t comm, int nnew, const xc_unique_id_t *id, const xc_config_t *cfg,
                         xc_comm_t *out);

typedef struct xc_status {
  int source;
  int tag;
  int error;
  int reserved;
  size_t bytes;
} xc_status_t;

xc_result_t xc_send(const void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm);
xc_result_t xc_recv(void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm,
                    xc_status_t *status);
xc_result_t xc_sendrecv(const void *sendbuf, size_t sendcount, int dest, int sendtag, void *recvbuf,
                        size_t recvcount, int source, int recvtag, xc_dtype_t dtype, xc_comm_t comm,
                        xc_status_t *status);
xc_result_t xc_isend(const void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm,
                     xc_request_t *req);
xc_result_t xc_irecv(void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm,
                     xc_request_t *req);
xc_result_t xc_wait(xc_request_t *req, xc_status_t *status);
xc_result_t xc_test(xc_request_t *req, int *done, xc_status_t *status);
xc_result_t xc_waitall(size_t n, xc_request_t *reqs, xc_status_t *statuses);

xc_result_t xc_barrier(xc_comm_t comm);
xc_result_t xc_broadcast(void *buf, size_t count, xc_dtype_t dtype, int root, xc_comm_t comm);
xc_result_t xc_allreduce(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                         xc_comm_t comm);
xc_result_t xc_allgather(const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype,
                         xc_comm_t comm);
xc_result_t xc_reduce(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, int root,
                      xc_comm_t comm);
xc_result_t xc_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                          const size_t *displs, xc_dtype_t dtype, xc_comm_t comm);
xc_result_t xc_gather(const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype, int root,
                      xc_comm_t comm);
xc_result_t xc_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                       const size_t *displs, xc_dtype_t dtype, int root, xc_comm_t comm);
xc_result_t xc_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, int root,
                       xc_comm_t comm);
xc_result_t xc_scatterv(const void *sendbuf, const size_t *sendcounts, const size_t *displs, void *recvbuf,
                        size_t recvcount, xc_dtype_t dtype, int root, xc_comm_t comm);
xc_result_t xc_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, xc_op_t op,
                              xc_comm_t comm);
xc_result_t xc_reduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *recvcounts, xc_dtype_t dtype,
                               xc_op_t op, xc_comm_t comm);
xc_result_t xc_alltoall(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_comm_t comm);
xc_result_t xc_alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                         const size_t *recvcounts, const size_t *rdispls, xc_dtype_t dtype, xc_comm_t comm);
xc_result_t xc_scan(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                    xc_comm_t comm);
xc_result_t xc_exscan(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                      xc_comm_t comm);
xc_result_t xc_ibarrier(xc_comm_t comm, xc_request_t *req);
xc_result_t xc_ibroadcast(void *buf, size_t count, xc_dtype_t dtype, int root, xc_comm_t comm, xc_request_t *req);
xc_result_t xc_ireduce(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, int root,
                       xc_comm_t comm, xc_request_t *req);
xc_result_t xc_iallreduce(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                          xc_comm_t comm, xc_request_t *req);
xc_result_t xc_iallgather(const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype, xc_comm_t comm,
                          xc_request_t *req);
xc_result_t xc_iallgatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                           const size_t *displs, xc_dtype_t dtype, xc_comm_t comm, xc_request_t *req);
xc_result_t xc_igather(const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype, int root,
                       xc_comm_t comm, xc_request_t *req);
xc_result_t xc_igatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                        const size_t *displs, xc_dtype_t dtype, int root, xc_comm_t comm, xc_request_t *req);
xc_result_t xc_iscatter(const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, int root,
                        xc_comm_t comm, xc_request_t *req);
xc_result_t xc_iscatterv(const void *sendbuf, const size_t *sendcounts, const size_t *displs, void *recvbuf,
                         size_t recvcount, xc_dtype_t dtype, int root, xc_comm_t comm, xc_request_t *req);
xc_result_t xc_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, xc_op_t op,
                               xc_comm_t comm, xc_request_t *req);
xc_result_t xc_ireduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *recvcounts, xc_dtype_t dtype,
                                xc_op_t op, xc_comm_t comm, xc_request_t *req);
xc_result_t xc_ialltoall(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_comm_t comm,
                         xc_request_t *req);
xc_result_t xc_ialltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                          const size_t *recvcounts, const size_t *rdispls, xc_dtype_t dtype, xc_comm_t comm,
                          xc_request_t *req);
xc_result_t xc_iscan(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                     xc_comm_t comm, xc_request_t *req);
xc_result_t xc_iexscan(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                       xc_comm_t comm, xc_request_t *req);
xc_result_t xc_group_start(void);
xc_result_t xc_group_end(void);
xc_result_t xc_mem_alloc(xc_comm_t comm, size_t bytes, void **ptr);
xc_result_t xc_mem_free(xc_comm_t comm, void *ptr);

xc_result_t xc_stream_create(xc_comm_t comm, xc_stream_t *out);
xc_result_t xc_stream_wrap(xc_comm_t comm, void *cuda_stream, xc_stream_t *out);
xc_result_t xc_stream_destroy(xc_stream_t stream);
xc_result_t xc_stream_synchronize(xc_stream_t stream);
xc_result_t xc_stream_bind(xc_comm_t comm, xc_stream_t stream, int target);
xc_result_t xc_mem_alloc_device(xc_comm_t comm, size_t bytes, void **ptr);
xc_result_t xc_buffer_register(xc_comm_t comm, void *ptr, size_t bytes, xc_buffer_t *out);
xc_result_t xc_buffer_deregister(xc_buffer_t buf);
typedef struct xc_layout_s *xc_layout_t;
typedef struct xc_plan_s *xc_plan_t;
xc_result_t xc_layout_boxes(xc_comm_t comm, int ndim, const size_t *global_shape, size_t nboxes,
                            const size_t *offsets, const size_t *extents, const int *owners, xc_layout_t *out);
typedef enum xc_placement_kind {
  XC_PLACEMENT_REPLICATE = 0,
  XC_PLACEMENT_SHARD = 1,
  XC_PLACEMENT_PARTIAL = 2,
  XC_PLACEMENT_KIND_FORCE_32BIT = 0x7FFFFFFF
} xc_placement_kind_t;
typedef struct xc_placement {
  int32_t kind;
  int32_t dim;
  int32_t op;
  int32_t reserved;
} xc_placement_t;
xc_result_t xc_layout_mesh(xc_comm_t comm, int ndim, const size_t *global_shape, int mesh_ndim,
                           const int *mesh_shape, const xc_placement_t *placements, xc_layout_t *out);
typedef enum xc_order {
  XC_ORDER_ROW_MAJOR = 0,
  XC_ORDER_COL_MAJOR = 1,
  XC_ORDER_FORCE_32BIT = 0x7FFFFFFF
} xc_order_t;
xc_result_t xc_layout_block_cyclic(xc_comm_t comm, size_t rows, size_t cols, size_t mb, size_t nb, int nprow,
                                   int npcol, int rsrc, int csrc, xc_order_t grid_order, xc_order_t storage,
                                   xc_layout_t *out);
xc_result_t xc_layout_local_count(xc_layout_t layout, size_t *count);
xc_result_t xc_layout_free(xc_layout_t layout);
typedef struct xc_redist_config {
  size_t size;
  uint32_t version;
  uint32_t flags;
} xc_redist_config_t;
xc_result_t xc_redist_config_init(xc_redist_config_t *cfg, size_t size);
xc_result_t xc_redistribute_plan(xc_layout_t src, xc_layout_t dst, xc_dtype_t dtype, const xc_redist_config_t *config,
                                 xc_plan_t *plan);
xc_result_t xc_redistribute(xc_plan_t plan, const void *sendbuf, void *recvbuf);
xc_result_t xc_iredistribute(xc_plan_t plan, const void *sendbuf, void *recvbuf, xc_request_t *req);
typedef struct xc_plan_info {
  size_t size;
  uint32_t version;
  uint32_t step_kinds;
  uint64_t bytes_sent;
  uint64_t bytes_received;
  uint64_t bytes_copied;
  uint64_t lower_bound_bytes;
  uint64_t messages_sent;
  uint64_t messages_received;
  uint32_t collective_steps;
  uint32_t p2p_steps;
} xc_plan_info_t;
xc_result_t xc_plan_info(xc_plan_t plan, xc_plan_info_t *info);
xc_result_t xc_plan_relabel(xc_plan_t plan, int *perm, uint64_t *bytes_saved);
xc_result_t xc_plan_free(xc_plan_t plan);
"""


# The header's #define constants the binding uses (checked against the header
# by the same test). XC_IN_PLACE is ((const void *)1): its integer value.
DEFINES = {
    "XC_VERSION_MAJOR": 0,
    "XC_VERSION_MINOR": 2,
    "XC_VERSION_PATCH": 0,
    "XC_ABI_VERSION": 1,
    "XC_CONFIG_VERSION": 1,
    "XC_DEVICE_AUTO": -1,
    "XC_DEVICE_NONE": -2,
    "XC_UNDEFINED": -32766,
    "XC_ANY_SOURCE": -1,
    "XC_ANY_TAG": -1,
    "XC_TAG_MAX": 0x7FFFFFFF,
    "XC_IN_PLACE": 1,
    "XC_BIND_COLLECTIVES": -1,
    "XC_LAYOUT_MAX_DIMS": 8,
    "XC_REDIST_TAG": 0x7FFF5EDD,
    "XC_REDIST_CONFIG_VERSION": 1,
    "XC_REDIST_P2P_ONLY": 1,
    "XC_REDIST_STEP_COPY": 1,
    "XC_REDIST_STEP_P2P": 2,
    "XC_REDIST_STEP_ALLGATHER": 4,
    "XC_REDIST_STEP_ALLTOALL": 8,
    "XC_REDIST_STEP_REDUCE_SCATTER": 16,
    "XC_REDIST_STEP_ALLREDUCE": 32,
    "XC_REDIST_STEP_FILL": 64,
    "XC_PLAN_INFO_VERSION": 1,
}
