/*
 * xcomm.h — the public C API of xcomm, a communication library for processes
 * on CPUs and NVIDIA GPUs.
 *
 * This is the only header users include. It is C99, pedantic-clean, and the
 * ABI it describes is stable within a soname (libxcomm.so.XC_ABI_VERSION):
 * enum values never change, option structs start with their size and version
 * and only grow at the end, handles are opaque.
 *
 * Conventions for every function:
 *  - It returns an xc_result_t: XC_SUCCESS (0), XC_IN_PROGRESS (1), or a
 *    negative error. After an error, xc_last_error() says what went wrong.
 *  - Output arguments come last and are left untouched on failure.
 *  - Counts are size_t and in elements of the dtype; ranks and tags are int.
 *  - Thread safety: unless a function says otherwise, it may be called from
 *    any thread, concurrently with other calls, when the communicator was
 *    created with XC_THREAD_MULTIPLE (the default). With XC_THREAD_SERIALIZED
 *    the caller guarantees no two threads are inside xcomm at once.
 */
#ifndef XCOMM_H
#define XCOMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions ------------------------------------------------------------ */
#define XC_VERSION_MAJOR 0
#define XC_VERSION_MINOR 2
#define XC_VERSION_PATCH 0
#define XC_ABI_VERSION 1 /* = soname major */

/* ---- status -------------------------------------------------------------- */
typedef enum xc_result {
  XC_SUCCESS = 0,
  XC_IN_PROGRESS = 1,
  XC_ERR_INVALID_ARGUMENT = -1, /* NULL, out of range, overflow */
  XC_ERR_INVALID_USAGE = -2,    /* wrong order, freed handle, ranks disagree */
  XC_ERR_NO_MEMORY = -3,
  XC_ERR_SYSTEM = -4, /* an OS call failed (errno text in the message) */
  XC_ERR_TIMEOUT = -5,
  XC_ERR_PEER_FAILED = -6,
  XC_ERR_ABORTED = -7,
  XC_ERR_UNSUPPORTED = -8,
  XC_ERR_TRUNCATED = -9,
  XC_ERR_CUDA = -10,
  XC_ERR_NCCL = -11,
  XC_ERR_INTERNAL = -12,
  XC_ERR_REVOKED = -13, /* the communicator was revoked (xc_comm_revoke) by some rank */
  XC_RESULT_FORCE_32BIT = 0x7FFFFFFF
} xc_result_t;

/* Library version at run time. Any argument may be NULL.
   Thread safety: safe. */
xc_result_t xc_get_version(int *major, int *minor, int *patch);

/* A static description of a result code. Never NULL; the string is owned by
   the library and lives forever. Thread safety: safe. */
const char *xc_strerror(xc_result_t result);

/* The detail of the last error on this thread (which argument, which rank,
   which op), or "" when the last call succeeded. Never NULL; owned by the
   library, valid until the next xc_ call on this thread. */
const char *xc_last_error(void);

/* ---- data types and reductions ------------------------------------------ */
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
  XC_BAND = 5, /* bitwise ops: integer dtypes only */
  XC_BOR = 6,
  XC_BXOR = 7,
  XC_OP_FORCE_32BIT = 0x7FFFFFFF
} xc_op_t;

/* Bytes of one element, or 0 for an unknown dtype. Thread safety: safe. */
size_t xc_dtype_size(xc_dtype_t dtype);

/* ---- opaque handles ------------------------------------------------------ */
typedef struct xc_comm_s *xc_comm_t;
typedef struct xc_request_s *xc_request_t;
typedef struct xc_stream_s *xc_stream_t;  /* an ordered queue of device work (below) */
typedef struct xc_buffer_s *xc_buffer_t;  /* a registered device buffer (below) */

/* ---- configuration ------------------------------------------------------- */
#define XC_CONFIG_VERSION 1
#define XC_DEVICE_AUTO (-1) /* local rank modulo the number of devices */
#define XC_DEVICE_NONE (-2) /* host memory only */

typedef enum xc_thread_mode {
  XC_THREAD_DEFAULT = 0,    /* = XC_THREAD_MULTIPLE */
  XC_THREAD_SERIALIZED = 1, /* the caller never enters xcomm from two threads at once */
  XC_THREAD_MULTIPLE = 2,   /* any thread, any time */
  XC_THREAD_MODE_FORCE_32BIT = 0x7FFFFFFF
} xc_thread_mode_t;

typedef enum xc_debug_level {
  XC_DEBUG_DEFAULT = 0, /* take XC_DEBUG from the environment */
  XC_DEBUG_NONE = 1,
  XC_DEBUG_WARN = 2,
  XC_DEBUG_INFO = 3,
  XC_DEBUG_TRACE = 4,
  XC_DEBUG_LEVEL_FORCE_32BIT = 0x7FFFFFFF
} xc_debug_level_t;

/* Options of a communicator. Start from XC_CONFIG_INIT or xc_config_init().
   Zero means "default" in every field except device, whose default is
   XC_DEVICE_AUTO. The library copies what it needs; the caller keeps
   ownership of the struct and of name. Fields are only ever appended:
   a larger size (a newer header) is accepted up to 4096 bytes when the
   bytes this library does not know are zero (else XC_ERR_UNSUPPORTED); a
   size above 4096 is XC_ERR_INVALID_ARGUMENT and nothing past the first
   4096 bytes is ever read. */
typedef struct xc_config {
  size_t size;          /* sizeof(xc_config_t) */
  uint32_t version;     /* XC_CONFIG_VERSION */
  int32_t device;       /* XC_DEVICE_AUTO, XC_DEVICE_NONE, or a device index */
  uint64_t timeout_ms;  /* deadline of every blocking wait; 0 = XC_TIMEOUT or 300000; over 100 years = none */
  int32_t thread_mode;  /* xc_thread_mode_t; fixed by the first communicator of a job */
  int32_t debug_level;  /* xc_debug_level_t; process-wide */
  const char *name;     /* shown in logs and errors; NULL = none; copied */
  /* Appended after 0.2.0 (a caller built against an older header passes a
     smaller size and gets 0). Non-zero: a communicator that carries device
     memory through NCCL (ranks on several hosts, or XC_NCCL=1) makes its NCCL
     communicator at its first device op instead of at creation (xc_init,
     xc_comm_init_rank, xc_comm_split, xc_comm_split_groups). That first
     device op is then collective over the communicator. All ranks of a
     split must pass the same value (a split is lazy only when every rank
     asks); NULL cfg in a split inherits the parent's. docs/nccl.md. */
  int32_t nccl_lazy;
} xc_config_t;

#define XC_CONFIG_INIT \
  { sizeof(xc_config_t), XC_CONFIG_VERSION, XC_DEVICE_AUTO, 0, XC_THREAD_DEFAULT, XC_DEBUG_DEFAULT, NULL, 0 }

/* Fill *cfg with the defaults; size is sizeof the caller's xc_config_t (for
   bindings that cannot use the macro), at most 4096 as above; the whole of
   it is written. Thread safety: safe. */
xc_result_t xc_config_init(xc_config_t *cfg, size_t size);

/* ---- starting and communicators ------------------------------------------ */

/* Build the world communicator from the launcher's environment: xcrun,
   torchrun, Slurm, Open MPI or MPICH/Hydra. With no launcher, a world of one.
   Collective over all ranks of the job. cfg may be NULL (defaults). *world is
   owned by the caller and released with xc_comm_free. Once per process: a
   call with a valid config returns XC_ERR_INVALID_USAGE (even if the
   first one failed later, in the rendezvous). */
xc_result_t xc_init(const xc_config_t *cfg, xc_comm_t *world);

/* An id that names one rendezvous: the address of a bootstrap store served by
   this process (it serves until the communicators made with the id are freed)
   and a random token. Give it to every rank (your own launcher), then call
   xc_comm_init_rank. */
typedef struct xc_unique_id {
  char internal[128];
} xc_unique_id_t;
xc_result_t xc_get_unique_id(xc_unique_id_t *id);

/* Join the rendezvous named by id as rank of nranks. Collective over the
   nranks callers. */
xc_result_t xc_comm_init_rank(int nranks, const xc_unique_id_t *id, int rank, const xc_config_t *cfg,
                              xc_comm_t *comm);

/* Release a communicator. Collective over its ranks (every rank calls it);
   NULL is a no-op. Pending requests on comm complete with XC_ERR_ABORTED.
   The closing barrier waits for the other ranks (not after xc_comm_abort or
   a known peer failure): if it times out (a rank never frees comm) or a
   peer dies meanwhile, the result is XC_ERR_TIMEOUT or XC_ERR_PEER_FAILED.
   comm is released in every case and must not be used or freed again. */
xc_result_t xc_comm_free(xc_comm_t comm);

/* Make every pending and later op on comm fail with XC_ERR_ABORTED. Local;
   never blocks. The handle must still be released with xc_comm_free (which
   then does not synchronise). */
xc_result_t xc_comm_abort(xc_comm_t comm);

xc_result_t xc_comm_rank(xc_comm_t comm, int *rank);
xc_result_t xc_comm_size(xc_comm_t comm, int *size);
/* Rank among the ranks of comm on this host, and how many there are. */
xc_result_t xc_comm_local_rank(xc_comm_t comm, int *rank);
xc_result_t xc_comm_local_size(xc_comm_t comm, int *size);

/* The first asynchronous error seen on comm (peer failure, abort), or
   XC_SUCCESS. Never blocks. */
xc_result_t xc_comm_get_async_error(xc_comm_t comm, xc_result_t *err);

/* Write comm's flight recorder to the file path: its last XC_TRACE_DEPTH
   collectives (default 64) with sequence number ("op #N" of error
   messages), op, count, dtype, reduction op, root, bytes, state (enqueued,
   running, done, failed), start and end times and, for a failed one, its
   status and the first 120 characters of its message; one JSON object per
   line after a header line (job, rank, communicator, host, pid, clocks).
   xc-trace reads such files from every rank and says who is behind. path
   NULL: XC_TRACE_DIR/xcomm-trace.<job>.<comm name>.r<rank>.jsonl (the
   name of the dumps written on a timeout or a peer failure and on
   SIGUSR2); XC_ERR_INVALID_ARGUMENT when XC_TRACE_DIR is not set either.
   The file is written under a temporary name and renamed. Local; never
   waits for other ranks; works on an aborted or revoked communicator.
   Thread safety: safe, also while other threads run ops on comm. */
xc_result_t xc_comm_trace_dump(xc_comm_t comm, const char *path);

#define XC_UNDEFINED (-32766) /* color: join no group; *out becomes NULL */

/* MPI_Comm_split: ranks with the same color form a communicator, ordered by
   key, then by parent rank. Collective over parent. cfg may be NULL
   (inherit parent's). No new connections are made. */
xc_result_t xc_comm_split(xc_comm_t parent, int color, int key, const xc_config_t *cfg, xc_comm_t *out);

/* Every rank of parent calls once with the same lists: group g holds the
   parent ranks ranks[off_g .. off_g + group_sizes[g]) in that order (new rank
   = index), off_g = sum of the earlier group_sizes. Groups must not overlap,
   and their sizes sum to at most parent's size. ngroups is at most parent's
   size or 1024, whichever is larger (the groups beyond the ranks can only be
   empty): a larger one is XC_ERR_INVALID_ARGUMENT, with nothing read.
   A rank in no group gets *out = NULL. Collective over parent. */
xc_result_t xc_comm_split_groups(xc_comm_t parent, int ngroups, const int *group_sizes, const int *ranks,
                                 const xc_config_t *cfg, xc_comm_t *out);

/* MPI_Comm_create_group: a communicator of the n parent ranks listed in
   ranks (new rank = index in ranks), made by those ranks alone. Collective
   over the listed ranks only: the other ranks of parent do not call it and
   are not disturbed (frameworks such as torch.distributed create a group on
   its members only). No new connections. cfg may be NULL (inherit
   parent's). The listed ranks must be distinct, and the caller among them.
   Every member passes the same n, ranks and tag (0 .. XC_TAG_MAX); two
   members that pass different lists fail with XC_ERR_INVALID_USAGE, and
   so, told by them, do the other members of their lists; a member that a
   differing list leaves out and no one tells waits until the deadline
   (XC_ERR_TIMEOUT). Members on hosts that no transport connects meet
   through the bootstrap store, where different lists just time out.
   The child's context is derived from parent's, the list and the tag, so
   groups over the same ranks must differ in their tag while they are
   alive: a process that holds a live group made from parent with the same
   ranks and tag gets XC_ERR_INVALID_USAGE (once that group is freed, the
   tag may be used again). After a failed call, use a fresh tag on that
   parent: messages of the failed exchange may linger. Every wait has the
   parent's deadline. *out is owned by the caller and released with
   xc_comm_free (collective over its members). Thread safety: calls on one
   parent from several threads at once must use different tags. */
xc_result_t xc_comm_create_group(xc_comm_t parent, int n, const int *ranks, int tag, const xc_config_t *cfg,
                                 xc_comm_t *out);

/* A communicator with the same ranks whose messages never match comm's.
   Collective over comm. */
xc_result_t xc_comm_dup(xc_comm_t comm, xc_comm_t *out);

/* ---- fault tolerance: revoke, agree, shrink, grow -------------------------
   A peer that dies becomes XC_ERR_PEER_FAILED on every survivor; these calls
   let the survivors carry on without restarting the job (ULFM's revoke,
   agree and shrink; NCCL's ncclCommShrink; docs/fault-tolerance.md). The
   usual recovery, on every survivor:
     xc_comm_revoke(comm);                  (any op failed: get everyone out)
     xc_comm_shrink(comm, NULL, &child);    (the survivors, renumbered)
     xc_comm_free(comm);                    (does not synchronise once revoked)
   and to check that an op succeeded everywhere before trusting its result:
     int ok = rc == XC_SUCCESS;  rc = xc_comm_agree(comm, &ok);
     if (rc != XC_SUCCESS || !ok) ... revoke and shrink. */

/* Make every pending and later op on comm fail with XC_ERR_REVOKED on every
   rank of comm, whatever op each is in: the call tells every member, and
   every member passes the news on once, so it reaches everyone even if this
   rank dies right after. Local; never blocks; calling it again (or on a rank
   that was told already) does nothing. Only xc_comm_agree, xc_comm_shrink,
   xc_comm_get_failed, the queries and xc_comm_free still work on a revoked
   communicator (xc_comm_free no longer synchronises). Thread safety: safe,
   also while other threads are blocked in ops on comm. */
xc_result_t xc_comm_revoke(xc_comm_t comm);

/* A fault-tolerant agreement among the live ranks of comm: *flag becomes
   the bitwise AND of the flags of every rank that took part, the same value
   on every survivor, and the survivors agree on a set of failed ranks (at
   least those every rank knew of when it called). It completes when ranks
   fail during it, and works on a revoked communicator. Returns XC_SUCCESS
   when the agreed failed set is empty and XC_ERR_PEER_FAILED when it is not
   (the same on every survivor; *flag is set in both cases; the message names
   the failed ranks, and xc_comm_get_failed includes them afterwards); any
   other error (XC_ERR_TIMEOUT: a live rank never called it) leaves *flag
   untouched; a NULL flag is XC_ERR_INVALID_ARGUMENT after taking part as 0,
   so the others do not hang. Collective over the live ranks of comm; every
   wait has comm's deadline. Thread safety: agreements (and shrinks) on one
   communicator must not overlap; other threads may use other ones. */
xc_result_t xc_comm_agree(xc_comm_t comm, int *flag);

/* The ranks of comm this process knows have failed: the failures its
   transports have seen, and those agreed on by xc_comm_agree or
   xc_comm_shrink. *n becomes their number; ranks, when not NULL, must hold
   comm's size entries and receives them in increasing order. Local; never
   blocks (it asks the transports once). Thread safety: safe. */
xc_result_t xc_comm_get_failed(xc_comm_t comm, int *n, int *ranks);

/* A communicator of the survivors of comm: the live ranks agree (as in
   xc_comm_agree) on the set of failed ranks, and the child holds every
   other rank, renumbered in order of their rank in comm. It reuses comm's
   connections (no new rendezvous), like a split, and has its own context,
   so nothing of comm's pending ops reaches it. Works on any communicator,
   revoked or not, and again on a child after a later failure; a rank that
   dies during the call is left out if the survivors learn of it in time, or
   else shows as XC_ERR_PEER_FAILED in the child's first op (then shrink the
   child). Collective over the live ranks of comm. cfg may be NULL (inherit
   comm's). *out is owned by the caller and released with xc_comm_free.
   Thread safety: as xc_comm_agree. */
xc_result_t xc_comm_shrink(xc_comm_t comm, const xc_config_t *cfg, xc_comm_t *out);

/* Grow comm by nnew ranks started elsewhere (elastic training): the grown
   communicator holds comm's ranks as ranks 0 .. size - 1 (in their order)
   and the new processes as size .. size + nnew - 1. It lives on a NEW set of
   connections among old and new processes, made through the rendezvous that
   id names (as xc_comm_init_rank does); comm itself is unchanged and stays
   usable. Passing the id: rank 0 of comm makes it with xc_get_unique_id and
   passes it here (the other ranks of comm may pass NULL: rank 0's is sent to
   them); the new processes get the same id by any means of the application
   (a file, a key-value store, their command line) and call
     xc_comm_init_rank(size + nnew, &id, size + i, cfg, &grown)   (i = 0 .. nnew - 1).
   Every process of the grown communicator shares rank 0's XC_JOB_ID for its
   shared-memory names, so the new processes may come from another launch.
   nnew >= 0 (0: a copy of comm on new connections). Collective over comm's
   ranks and the new processes; waits up to the deadline of cfg (NULL:
   comm's) for the new processes. comm must have no failed ranks (shrink it
   first). *out is owned by the caller and released with xc_comm_free.
   Thread safety: as xc_comm_split. */
xc_result_t xc_comm_grow(xc_comm_t comm, int nnew, const xc_unique_id_t *id, const xc_config_t *cfg,
                         xc_comm_t *out);

/* ---- point to point ------------------------------------------------------ */
#define XC_ANY_SOURCE (-1)
#define XC_ANY_TAG (-1)
#define XC_TAG_MAX 0x7FFFFFFF /* tags are 0 .. XC_TAG_MAX */

typedef struct xc_status {
  int source;   /* rank in the communicator */
  int tag;
  int error;    /* xc_result_t of this request */
  int reserved;
  size_t bytes; /* bytes of the message (also when truncated) */
} xc_status_t;

/* Messages between one pair of ranks on one communicator are matched in the
   order they were sent (MPI's non-overtaking rule). A message larger than the
   receive buffer completes the receive with XC_ERR_TRUNCATED and writes
   nothing into it. The caller keeps ownership of buffers; for non-blocking
   calls the buffer must stay valid and untouched until the request completes. */
xc_result_t xc_send(const void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm);
xc_result_t xc_recv(void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm,
                    xc_status_t *status); /* status may be NULL; peer and tag may be XC_ANY_* */
xc_result_t xc_sendrecv(const void *sendbuf, size_t sendcount, int dest, int sendtag, void *recvbuf,
                        size_t recvcount, int source, int recvtag, xc_dtype_t dtype, xc_comm_t comm,
                        xc_status_t *status);
xc_result_t xc_isend(const void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm,
                     xc_request_t *req);
xc_result_t xc_irecv(void *buf, size_t count, xc_dtype_t dtype, int peer, int tag, xc_comm_t comm,
                     xc_request_t *req);

/* Wait for a request, fill status (may be NULL), free it and set *req = NULL.
   A NULL *req returns at once with an empty status (source XC_ANY_SOURCE,
   tag XC_ANY_TAG, error 0, bytes 0). Returns the request's own result. */
xc_result_t xc_wait(xc_request_t *req, xc_status_t *status);
/* *done = 1 and the request freed (as xc_wait) when complete; else *done = 0. */
xc_result_t xc_test(xc_request_t *req, int *done, xc_status_t *status);
/* Wait for all n; statuses may be NULL or hold n entries (each .error set).
   Returns the first error, or XC_SUCCESS. Every request is freed. An n no
   array can hold (over PTRDIFF_MAX bytes of reqs or statuses) is
   XC_ERR_INVALID_ARGUMENT. */
xc_result_t xc_waitall(size_t n, xc_request_t *reqs, xc_status_t *statuses);

/* ---- collectives (MPI argument order) ------------------------------------ */
#define XC_IN_PLACE ((const void *)1)

xc_result_t xc_barrier(xc_comm_t comm);
xc_result_t xc_broadcast(void *buf, size_t count, xc_dtype_t dtype, int root, xc_comm_t comm);
/* sendbuf may be XC_IN_PLACE (the input is read from recvbuf). Every rank gets
   the bit-identical result. */
xc_result_t xc_allreduce(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                         xc_comm_t comm);
/* recvbuf holds size * sendcount elements, rank i's block at i * sendcount.
   sendbuf may be XC_IN_PLACE (this rank's block is already in recvbuf). */
xc_result_t xc_allgather(const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype,
                         xc_comm_t comm);

/* The rest of the MPI collective set. Counts and displacements are in
   elements of dtype; arrays of counts have one entry per rank and need only
   be valid during the call (also for the non-blocking forms). Arguments that
   matter only at the root (recv side of gather, send side of scatter) may be
   NULL elsewhere. Reductions give the bit-identical result wherever the same
   element is delivered to several ranks; float16/bfloat16 accumulate in
   float32; XC_AVG divides the sum by the number of ranks.
   XC_IN_PLACE, where allowed, is passed as sendbuf:
     reduce:          at the root (input read from recvbuf)
     allgatherv:      this rank's block is already at recvbuf + displs[rank]
     gather(v):       at the root (its block is already in place)
     scatter(v):      as recvbuf at the root (its block stays in sendbuf)
     reduce_scatter:  input of size * recvcount elements read from recvbuf,
                      this rank's result written at its start
     reduce_scatterv: input of sum(recvcounts) elements read from recvbuf,
                      this rank's result written at its start
     alltoall(v):     input read from recvbuf (alltoallv: recvcounts/rdispls;
                      recvcounts[j] at rank i must equal recvcounts[i] at
                      rank j, else XC_ERR_INVALID_USAGE where it shows)
     scan, exscan:    input read from recvbuf
   exscan leaves recvbuf of rank 0 untouched. With XC_AVG, scan and exscan
   divide by the number of ranks in the prefix (rank + 1, and rank).
   allreduce, allgather(v) and alltoall(v) take XC_IN_PLACE at every rank or
   at none, as in MPI: a mix fails as mismatched arguments
   (XC_ERR_INVALID_USAGE). */
xc_result_t xc_reduce(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op, int root,
                      xc_comm_t comm);
xc_result_t xc_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                          const size_t *displs, xc_dtype_t dtype, xc_comm_t comm);
/* recvbuf (root) holds size * sendcount elements, rank i's block at i * sendcount. */
xc_result_t xc_gather(const void *sendbuf, void *recvbuf, size_t sendcount, xc_dtype_t dtype, int root,
                      xc_comm_t comm);
xc_result_t xc_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                       const size_t *displs, xc_dtype_t dtype, int root, xc_comm_t comm);
/* sendbuf (root) holds size * recvcount elements, rank i's block at i * recvcount. */
xc_result_t xc_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, int root,
                       xc_comm_t comm);
xc_result_t xc_scatterv(const void *sendbuf, const size_t *sendcounts, const size_t *displs, void *recvbuf,
                        size_t recvcount, xc_dtype_t dtype, int root, xc_comm_t comm);
/* Input of size * recvcount elements; rank i gets the reduction of block i. */
xc_result_t xc_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, xc_dtype_t dtype, xc_op_t op,
                              xc_comm_t comm);
/* Input of sum(recvcounts) elements; rank i gets recvcounts[i] elements
   starting at element recvcounts[0] + ... + recvcounts[i-1]. */
xc_result_t xc_reduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *recvcounts, xc_dtype_t dtype,
                               xc_op_t op, xc_comm_t comm);
/* count elements to and from every rank; block i of sendbuf goes to rank i. */
xc_result_t xc_alltoall(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_comm_t comm);
xc_result_t xc_alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                         const size_t *recvcounts, const size_t *rdispls, xc_dtype_t dtype, xc_comm_t comm);
/* Inclusive (scan) and exclusive (exscan) prefix reductions in rank order. */
xc_result_t xc_scan(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                    xc_comm_t comm);
xc_result_t xc_exscan(const void *sendbuf, void *recvbuf, size_t count, xc_dtype_t dtype, xc_op_t op,
                      xc_comm_t comm);

/* ---- non-blocking collectives ---------------------------------------------
   Each collective has a twin that starts it and returns a request at once
   (finish it with xc_wait/xc_test/xc_waitall). Buffers stay the caller's to
   keep untouched until then. Collectives on one communicator are matched in
   the order each rank starts them, blocking and non-blocking alike. */
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

/* ---- groups ---------------------------------------------------------------
   Between xc_group_start and xc_group_end (per thread, nestable) point-to-
   point calls and collectives only start; xc_group_end waits for all of
   them, so a batch of sends and receives completes whatever order the ranks
   list them in. xc_recv/xc_sendrecv statuses are filled at xc_group_end.
   Waiting on a request inside a group is XC_ERR_INVALID_USAGE. xc_group_end
   returns the first error of the batch (its message names the op). */
xc_result_t xc_group_start(void);
xc_result_t xc_group_end(void);

/* ---- memory for communication ------------------------------------------- */
/* Allocate bytes that comm's ops move fastest; any buffer works, this one
   is quicker to move. Host memory: aligned to 2 MiB and, where the kernel
   offers transparent huge pages, on 2 MiB pages, so the kernel's
   cross-process copies pin and walk one page per 2 MiB instead of 512
   (64 MiB alltoall: about 20 % less time); a large op whose every rank's
   buffers come from here may run an algorithm that is faster only on
   them. Its pages are mapped on first touch
   (on the touching thread's NUMA node); contents start at zero. Local, not
   collective; thread safe. bytes 0: *ptr = NULL. */
xc_result_t xc_mem_alloc(xc_comm_t comm, size_t bytes, void **ptr);
/* Free memory from xc_mem_alloc. comm may be NULL (the memory outlives the
   communicator it came from); ptr NULL: nothing to do. A pointer that
   xc_mem_alloc did not return (or that is freed already) is
   XC_ERR_INVALID_ARGUMENT and frees nothing. */
xc_result_t xc_mem_free(xc_comm_t comm, void *ptr);

/* ---- device memory and streams ---------------------------------------------
   Every op takes host or device memory; the memory kind is found from each
   pointer. Device memory is what the device layer allocated or maps: with
   CUDA, cudaMalloc/cuMemAlloc/xc_mem_alloc_device memory; with the emulated
   device (XC_DEVICE=emulated, a test facility: "device memory" is host memory
   the library tags as device, see docs/device.md), xc_mem_alloc_device
   memory. In a build without CUDA, or on a machine without a device, a
   device pointer is XC_ERR_UNSUPPORTED with a message, never a crash; so is
   an op that mixes host and device buffers.

   Device memory on a communicator whose ranks span hosts goes through
   NCCL (2.18 or later, loaded at run time: libnccl.so.2 or XC_NCCL_LIBRARY;
   docs/nccl.md); without a usable NCCL such an op is XC_ERR_UNSUPPORTED
   with a message naming what was found. XC_NCCL=1 sends every device op to
   NCCL also on one host, XC_ALGO=<op>=nccl one op. On NCCL: a receive must
   name its source (XC_ANY_SOURCE is XC_ERR_UNSUPPORTED: NCCL matches by
   peer only), tags are not matched (messages between two ranks pair in
   order, as in NCCL), a receive's capacity must equal the send's size, and
   bitwise reductions are XC_ERR_UNSUPPORTED. Point-to-point on a stream
   other than the collectives' runs on a child NCCL communicator of the same
   members made by ncclCommSplit at the first such op (collective over the
   communicator: every member makes its first op on that stream binding)
   and kept. NCCL failures are XC_ERR_NCCL with NCCL's message, or
   XC_ERR_PEER_FAILED when a member is known dead; a call NCCL does not
   complete within the deadline is XC_ERR_TIMEOUT and the NCCL communicator
   is aborted; xc_comm_abort aborts it (ncclCommAbort) without blocking.

   Device-memory ops are stream-ordered, as in NCCL: the call checks its
   arguments, enqueues the op on the stream bound to it (xc_stream_bind; if
   none, the device's default stream: CUDA's legacy stream 0, which
   xc_stream_wrap(comm, NULL) also names) and returns; the op runs after
   the work enqueued on that stream before it, and work enqueued after it
   waits for it. An error found while it runs fails that op; the stream's
   xc_stream_synchronize returns it, as does xc_comm_get_async_error.
   Point-to-point on device memory pairs device sends with device receives
   (host and device messages never match each other, so a mismatched pair
   fails at the deadline); a send completes when its receiver has read it,
   so two ranks that each send to the other before receiving on one stream
   must put both calls in an xc_group_start/xc_group_end (as with NCCL);
   xc_sendrecv does that by itself. An XC_ANY_SOURCE receive goes to the
   default stream. xc_recv on device memory fills *status at enqueue with
   the peer, tag and capacity it was given; xc_irecv and xc_wait give the
   matched source, tag and size. Non-blocking forms (xc_i*) enqueue alike
   and return a request that completes when the op has completed. Inside a
   group, device collectives are enqueued when called, and the device
   point-to-point ops at xc_group_end, as one batch per stream whose sends
   and receives progress together. Host-memory ops keep their semantics.

   On one host, allreduce, reduce_scatter and allgather of device memory on
   2 to 8 ranks (up to 10 MiB; allreduce and reduce_scatter in float32,
   float16 and bfloat16 with XC_SUM, XC_MIN, XC_MAX or XC_AVG) run as one
   copy and one kernel on the stream, with no host step
   (docs/device-kernels.md; XC_ALGO=dev_generic turns this off). Such an op
   may be captured into a CUDA graph and replayed, once the communicator has
   run one such op outside capture (its first sets the kernels up on the
   host); any other device op on a capturing stream is XC_ERR_UNSUPPORTED.
   A buffer registered with xc_buffer_register is read in place by the
   peers' kernels once they have mapped it (from the op after its first);
   others are copied into the communicator's workspace. */

#define XC_BIND_COLLECTIVES (-1) /* xc_stream_bind target: the communicator's collectives */

/* Make a stream on comm's device. *out is owned by the caller; release it
   with xc_stream_destroy. A build or machine without a device:
   XC_ERR_UNSUPPORTED. Thread safety: safe. */
xc_result_t xc_stream_create(xc_comm_t comm, xc_stream_t *out);
/* Wrap a stream the application owns (a cudaStream_t; NULL for the legacy
   default stream). xcomm never destroys it; xc_stream_destroy releases only
   the wrapper, and the CUDA stream must outlive it. On the emulated device
   any value names an emulated stream of that value. Wrapping one stream
   twice gives two handles of one queue (ops keep one order). Without a
   device: XC_ERR_UNSUPPORTED. Thread safety: safe. */
xc_result_t xc_stream_wrap(xc_comm_t comm, void *cuda_stream, xc_stream_t *out);
/* Wait (under the communicator's deadline) for the work xcomm enqueued on the
   stream, and release the handle; once the last handle of a stream is
   gone, communicators that had it bound go back to their default stream.
   NULL is a no-op; a destroyed handle is XC_ERR_INVALID_USAGE. Returns the
   stream's first error, if any. Not concurrently with other calls on the
   same handle. */
xc_result_t xc_stream_destroy(xc_stream_t stream);
/* Block until every op xcomm enqueued on the stream has completed, under the
   deadline of the communicators it serves. Returns the first error of those
   ops (and clears it), XC_SUCCESS when all went well. Thread safety: safe
   (with enqueueing from other threads: it waits for what was enqueued
   when it was called). */
xc_result_t xc_stream_synchronize(xc_stream_t stream);
/* Route comm's device-memory ops to stream: its collectives (target
   XC_BIND_COLLECTIVES) or its point-to-point ops with peer rank target.
   Ops on different streams run concurrently, with no new communicator and no
   new connection. stream NULL unbinds (back to comm's default stream).
   Local; binding changes only ops enqueued afterwards. A stream may be bound
   on several communicators and for several targets; the communicator keeps
   a reference, so the stream lives while bound. Without a device:
   XC_ERR_UNSUPPORTED. Thread safety: safe. */
xc_result_t xc_stream_bind(xc_comm_t comm, xc_stream_t stream, int target);

/* Allocate device memory on comm's device that peers on this host can map
   (IPC-capable, like ncclMemAlloc); free it with xc_mem_free. Local, thread
   safe. bytes 0: *ptr = NULL. Without a device: XC_ERR_UNSUPPORTED. */
xc_result_t xc_mem_alloc_device(xc_comm_t comm, size_t bytes, void **ptr);

/* Register a device buffer used again and again: its IPC handle is made once
   here (not per op). Peers map its allocation on first use and keep it
   mapped while they use it (up to 256 allocations per process, least
   recently used first out). Local, not collective; thread safe; the buffer
   must stay allocated until xc_buffer_deregister. Without a device:
   XC_ERR_UNSUPPORTED. ptr must be device memory (else
   XC_ERR_INVALID_ARGUMENT). */
xc_result_t xc_buffer_register(xc_comm_t comm, void *ptr, size_t bytes, xc_buffer_t *out);
/* Release a registration (not the memory). NULL is a no-op. */
xc_result_t xc_buffer_deregister(xc_buffer_t buf);

/* ---- redistribution of sharded arrays --------------------------------------
   A layout says how a global N-dimensional array (row-major, one dtype, at
   most XC_LAYOUT_MAX_DIMS dimensions) lies over the ranks of a
   communicator; a plan moves an array from one layout to another with the
   least data (docs/redistribution.md): every element goes straight from a
   rank that holds it to each rank that needs it, pieces a rank holds already
   are copied locally, and where a mesh dimension's change is exactly a
   collective (allgather, alltoall, reduce_scatter, allreduce) that
   collective runs on a sub-communicator of that mesh dimension made once
   when the plan is made; the rest goes as one batch of point-to-point
   messages on the layouts' communicator with tag XC_REDIST_TAG.

   Layout constructors are local (not collective) and deterministic: every
   rank must build the same layouts from the same arguments, and a bad
   layout (overlapping boxes, gaps, a rank out of range) fails alike on
   every rank that passes it. A layout handle refers to its communicator,
   which must outlive it. Layouts are immutable: they may be used by
   several plans and threads at once. Free with xc_layout_free (NULL is a
   no-op).

   Device memory: sendbuf and recvbuf both device memory (one of each is
   XC_ERR_UNSUPPORTED) makes a run stream-ordered like every device op: it
   is enqueued on the stream bound to the communicator's collectives
   (xc_stream_bind with XC_BIND_COLLECTIVES, else the default stream), after
   the application's earlier work there and before its later work. It is
   staged through host memory the plan keeps: the local src bytes are
   copied to the host, the plan runs there as it does on host memory, and
   the result is copied back (a device-native executor is future work). */
typedef struct xc_layout_s *xc_layout_t;
typedef struct xc_plan_s *xc_plan_t;

#define XC_LAYOUT_MAX_DIMS 8
/* The tag of a plan's point-to-point messages on the layouts' communicator.
   Messages of the application with this tag, in flight while a plan runs,
   may be matched by the plan: use other tags. */
#define XC_REDIST_TAG 0x7FFF5EDD

/* General layout: nboxes boxes, box b covering global indices
   [offsets[b*ndim + d], offsets[b*ndim + d] + extents[b*ndim + d]) in each
   dimension d, held by rank owners[b]. The boxes must cover the array
   exactly once (no overlap, no gap; empty boxes are allowed and hold
   nothing). A rank's local buffer holds its boxes in list order, each
   row-major and packed, one after the other. The arrays are copied. */
xc_result_t xc_layout_boxes(xc_comm_t comm, int ndim, const size_t *global_shape, size_t nboxes,
                            const size_t *offsets, const size_t *extents, const int *owners, xc_layout_t *out);

typedef enum xc_placement_kind {
  XC_PLACEMENT_REPLICATE = 0, /* every rank along the mesh dimension holds the same data */
  XC_PLACEMENT_SHARD = 1,     /* the array dimension `dim` is split along the mesh dimension */
  XC_PLACEMENT_PARTIAL = 2,   /* each rank holds a partial value; the array is their reduction by `op` */
  XC_PLACEMENT_KIND_FORCE_32BIT = 0x7FFFFFFF
} xc_placement_kind_t;

/* One placement per mesh dimension, as PyTorch DTensor's Replicate(),
   Shard(dim) and Partial(op). dim is read for XC_PLACEMENT_SHARD only, op
   (an xc_op_t) for XC_PLACEMENT_PARTIAL only; reserved must be 0. */
typedef struct xc_placement {
  int32_t kind; /* xc_placement_kind_t */
  int32_t dim;  /* array dimension, for XC_PLACEMENT_SHARD */
  int32_t op;   /* xc_op_t, for XC_PLACEMENT_PARTIAL */
  int32_t reserved;
} xc_placement_t;

/* DTensor-style layout: a device mesh of shape mesh_shape[0..mesh_ndim)
   whose product is the communicator's size, over the ranks in row-major
   order (rank = linear index of its mesh coordinate), and one placement per
   mesh dimension. Shards follow DTensor (torch.chunk): a dimension of n
   elements split k ways gives pieces of ceil(n/k) elements, the last ones
   smaller or empty; several mesh dimensions sharding one array dimension
   split it in mesh-dimension order. Each rank's local buffer holds its one
   box, row-major. A destination Partial(op) is made as a DTensor would read
   it, without division: with XC_SUM, XC_PROD and XC_BXOR the ranks at
   coordinate 0 of that mesh dimension hold the value and the others the
   op's identity (0, 1, 0); with the other ops every rank holds the value.
   Arrays are copied. */
xc_result_t xc_layout_mesh(xc_comm_t comm, int ndim, const size_t *global_shape, int mesh_ndim,
                           const int *mesh_shape, const xc_placement_t *placements, xc_layout_t *out);

typedef enum xc_order {
  XC_ORDER_ROW_MAJOR = 0,
  XC_ORDER_COL_MAJOR = 1,
  XC_ORDER_FORCE_32BIT = 0x7FFFFFFF
} xc_order_t;

/* ScaLAPACK-style 2-D block-cyclic layout of a rows x cols matrix (the
   global array is 2-D, row-major as every layout's): blocks of mb x nb over
   an nprow x npcol process grid whose first block sits on process row
   rsrc, column csrc (the descriptor's RSRC, CSRC). grid_order: the rank of
   grid process (p, q) is p * npcol + q (XC_ORDER_ROW_MAJOR, BLACS' default
   'Row') or q * nprow + p (XC_ORDER_COL_MAJOR). nprow * npcol may be less
   than the communicator's size: the other ranks hold nothing. storage: the
   local matrix of LOCr x LOCc elements (ScaLAPACK's numroc) is column-major
   with leading dimension LOCr (XC_ORDER_COL_MAJOR, as ScaLAPACK stores it)
   or row-major with leading dimension LOCc (XC_ORDER_ROW_MAJOR). */
xc_result_t xc_layout_block_cyclic(xc_comm_t comm, size_t rows, size_t cols, size_t mb, size_t nb, int nprow,
                                   int npcol, int rsrc, int csrc, xc_order_t grid_order, xc_order_t storage,
                                   xc_layout_t *out);

/* Elements of this rank's local buffer under layout. */
xc_result_t xc_layout_local_count(xc_layout_t layout, size_t *count);
xc_result_t xc_layout_free(xc_layout_t layout);

#define XC_REDIST_CONFIG_VERSION 1
#define XC_REDIST_P2P_ONLY 1 /* flags: never use collectives (measurements, tests) */

/* Options of a plan; NULL or zeros mean defaults. Same size rules as
   xc_config_t. */
typedef struct xc_redist_config {
  size_t size;      /* sizeof(xc_redist_config_t) */
  uint32_t version; /* XC_REDIST_CONFIG_VERSION */
  uint32_t flags;   /* XC_REDIST_* */
} xc_redist_config_t;
#define XC_REDIST_CONFIG_INIT { sizeof(xc_redist_config_t), XC_REDIST_CONFIG_VERSION, 0 }
xc_result_t xc_redist_config_init(xc_redist_config_t *cfg, size_t size);

/* Plan the move of an array of dtype from layout src to layout dst (same
   communicator, same global shape). Collective over the communicator: the
   ranks check together that they passed the same layouts and dtype
   (XC_ERR_INVALID_USAGE on every rank otherwise) and make the
   sub-communicators the collective steps need. *plan is owned by the
   caller; free it with xc_plan_free (collective: it frees those
   sub-communicators). A plan holds staging buffers and may be run any
   number of times, but not by two calls at once. */
xc_result_t xc_redistribute_plan(xc_layout_t src, xc_layout_t dst, xc_dtype_t dtype, const xc_redist_config_t *config,
                                 xc_plan_t *plan);
/* Run the plan: sendbuf holds this rank's local buffer under src,
   recvbuf receives it under dst (disjoint; either may be NULL when it
   holds 0 elements). Collective over the communicator. On host memory it
   returns when done. On device memory (see above) it returns once the run
   is enqueued on the collectives' stream; its errors come from
   xc_stream_synchronize on that stream and xc_comm_get_async_error, and
   the plan counts as running (a second run or xc_plan_free is
   XC_ERR_INVALID_USAGE) until the stream has done it. */
xc_result_t xc_redistribute(xc_plan_t plan, const void *sendbuf, void *recvbuf);
/* Start the plan and return at once; on host memory it runs on a thread of
   its own, on device memory on the collectives' stream as xc_redistribute
   does (either way the communicator must be XC_THREAD_MULTIPLE), and *req
   completes with xc_wait/xc_test when the run is done. The buffers and the
   plan stay untouched until then. */
xc_result_t xc_iredistribute(xc_plan_t plan, const void *sendbuf, void *recvbuf, xc_request_t *req);

/* Kinds of step in xc_plan_info_t.step_kinds (bits). */
#define XC_REDIST_STEP_COPY 1           /* local copies */
#define XC_REDIST_STEP_P2P 2            /* grouped point-to-point */
#define XC_REDIST_STEP_ALLGATHER 4      /* allgatherv on a mesh dimension */
#define XC_REDIST_STEP_ALLTOALL 8       /* alltoallv on a mesh dimension */
#define XC_REDIST_STEP_REDUCE_SCATTER 16
#define XC_REDIST_STEP_ALLREDUCE 32
#define XC_REDIST_STEP_FILL 64          /* the identity written for a destination Partial */

/* What one run of a plan moves for this rank. Bytes are the array data
   this rank sends to and receives from other ranks (the payload, not the
   wire traffic of a collective's algorithm: an allgather of m chunks counts
   m - 1 chunks received); lower_bound_bytes is what this rank needs and does
   not hold (for a reduction: the m - 1 other partial contributions to the
   part it keeps). Equal to bytes_received for every plan this version makes. */
typedef struct xc_plan_info {
  size_t size;      /* set by the caller: sizeof(xc_plan_info_t) */
  uint32_t version; /* written: XC_PLAN_INFO_VERSION */
  uint32_t step_kinds; /* XC_REDIST_STEP_* bits of the steps this rank runs */
  uint64_t bytes_sent;
  uint64_t bytes_received;
  uint64_t bytes_copied; /* local pieces copied, not sent */
  uint64_t lower_bound_bytes;
  uint64_t messages_sent; /* point-to-point messages, and peers of collectives with data */
  uint64_t messages_received;
  uint32_t collective_steps;
  uint32_t p2p_steps;
} xc_plan_info_t;
#define XC_PLAN_INFO_VERSION 1
/* Fill min(info->size, sizeof(xc_plan_info_t)) bytes of *info. Local. */
xc_result_t xc_plan_info(xc_plan_t plan, xc_plan_info_t *info);

/* COSTA's relabelling: perm (the communicator's size entries) receives, for
   each rank j, the rank that should take rank j's part of dst so that the
   least data moves (a greedy matching on the bytes each rank already holds
   of each destination part: no data moves when dst differs from src by a
   renumbering of the ranks). *bytes_saved (may be NULL) is how many fewer
   bytes all ranks together would receive under it. Using it (a layout with
   renumbered owners) is the caller's choice. Local (from the plan). */
xc_result_t xc_plan_relabel(xc_plan_t plan, int *perm, uint64_t *bytes_saved);
/* Free a plan and its sub-communicators. Collective over the communicator
   (every rank made the same plan). NULL is a no-op. */
xc_result_t xc_plan_free(xc_plan_t plan);

#ifdef __cplusplus
}
#endif

#endif /* XCOMM_H */
