//! Raw declarations of xcomm's C API (`include/xcomm.h`), one for one.
//!
//! Names, types and values are the header's. Enums are `c_int` type aliases
//! with one constant per enumerator; handles are pointers to opaque structs.
//! Everything here is `unsafe` to call and follows the C contract described in
//! the header. The safe wrapper is the `xcomm` crate.
//!
//! The declarations are checked against the header by this crate's tests
//! (`tests/header.rs`): every `xc_*` function with its parameter and return
//! types, every enumerator and integer `#define` with its value, and the
//! layout of every struct. [`FUNCTIONS`] and [`CONSTANTS`] are generated from
//! the same macro input as the declarations, so the test sees exactly what
//! the crate declares.
#![no_std]
#![allow(non_camel_case_types)]

pub use core::ffi::{c_char, c_int, c_void};

/// One declared function: its name and its types as written in Rust
/// (`stringify!` of the declaration), for the header test.
#[derive(Debug, Clone, Copy)]
pub struct FnDecl {
    pub name: &'static str,
    pub params: &'static [&'static str],
    pub ret: &'static str,
}

/// One declared constant: the C enum type it belongs to (`"define"` for a
/// `#define`), its name and its value.
#[derive(Debug, Clone, Copy)]
pub struct ConstDecl {
    pub group: &'static str,
    pub name: &'static str,
    pub value: i64,
}

macro_rules! constants {
    ($( $group:literal : $ty:ty { $( $(#[$m:meta])* $name:ident = $value:expr ),* $(,)? } )*) => {
        $( $( $(#[$m])* pub const $name: $ty = $value; )* )*
        /// Every constant this crate declares, for the header test.
        pub const CONSTANTS: &[ConstDecl] = &[
            $( $( ConstDecl { group: $group, name: stringify!($name), value: $name as i64 }, )* )*
        ];
    };
}

macro_rules! functions {
    ($( $(#[$m:meta])* pub fn $name:ident ( $( $arg:ident : $ty:ty ),* $(,)? ) -> $ret:ty ; )*) => {
        unsafe extern "C" {
            $( $(#[$m])* pub fn $name( $( $arg: $ty ),* ) -> $ret; )*
        }
        /// Every function this crate declares, for the header test.
        pub const FUNCTIONS: &[FnDecl] = &[
            $( FnDecl { name: stringify!($name), params: &[ $( stringify!($ty) ),* ], ret: stringify!($ret) }, )*
        ];
        /// The address of every declared function, resolved by the linker
        /// (a missing symbol fails the link of whatever calls this).
        pub fn function_addresses() -> [(&'static str, usize); FUNCTIONS.len()] {
            [ $( (stringify!($name), $name as *const () as usize) ),* ]
        }
    };
}

// ---- enums (C enums are int-sized here: every value fits an int) ----------
pub type xc_result_t = c_int;
pub type xc_dtype_t = c_int;
pub type xc_op_t = c_int;
pub type xc_thread_mode_t = c_int;
pub type xc_debug_level_t = c_int;
pub type xc_placement_kind_t = c_int;
pub type xc_order_t = c_int;

constants! {
    "define": c_int {
        XC_VERSION_MAJOR = 0,
        XC_VERSION_MINOR = 2,
        XC_VERSION_PATCH = 0,
        /// = the soname's major version.
        XC_ABI_VERSION = 1,
        XC_CONFIG_VERSION = 1,
        /// Local rank modulo the number of devices.
        XC_DEVICE_AUTO = -1,
        /// Host memory only.
        XC_DEVICE_NONE = -2,
        /// Split color: join no group; the output becomes NULL.
        XC_UNDEFINED = -32766,
        XC_ANY_SOURCE = -1,
        XC_ANY_TAG = -1,
        /// Tags are 0 ..= XC_TAG_MAX.
        XC_TAG_MAX = 0x7FFFFFFF,
        /// `xc_stream_bind` target: the communicator's collectives (else a peer rank).
        XC_BIND_COLLECTIVES = -1,
        /// Most dimensions of a redistributed array.
        XC_LAYOUT_MAX_DIMS = 8,
        /// The tag of a plan's point-to-point messages on the layouts' communicator.
        XC_REDIST_TAG = 0x7FFF5EDD,
        XC_REDIST_CONFIG_VERSION = 1,
        /// `xc_redist_config_t::flags`: never use collectives.
        XC_REDIST_P2P_ONLY = 1,
        /// `xc_plan_info_t::step_kinds` bits.
        XC_REDIST_STEP_COPY = 1,
        XC_REDIST_STEP_P2P = 2,
        XC_REDIST_STEP_ALLGATHER = 4,
        XC_REDIST_STEP_ALLTOALL = 8,
        XC_REDIST_STEP_REDUCE_SCATTER = 16,
        XC_REDIST_STEP_ALLREDUCE = 32,
        XC_REDIST_STEP_FILL = 64,
        XC_PLAN_INFO_VERSION = 1,
    }
    "xc_result": xc_result_t {
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
        XC_RESULT_FORCE_32BIT = 0x7FFFFFFF,
    }
    "xc_dtype": xc_dtype_t {
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
        XC_DTYPE_FORCE_32BIT = 0x7FFFFFFF,
    }
    "xc_op": xc_op_t {
        XC_SUM = 0,
        XC_PROD = 1,
        XC_MIN = 2,
        XC_MAX = 3,
        XC_AVG = 4,
        /// Bitwise ops: integer dtypes only.
        XC_BAND = 5,
        XC_BOR = 6,
        XC_BXOR = 7,
        XC_OP_FORCE_32BIT = 0x7FFFFFFF,
    }
    "xc_thread_mode": xc_thread_mode_t {
        /// = XC_THREAD_MULTIPLE.
        XC_THREAD_DEFAULT = 0,
        /// The caller never enters xcomm from two threads at once.
        XC_THREAD_SERIALIZED = 1,
        /// Any thread, any time.
        XC_THREAD_MULTIPLE = 2,
        XC_THREAD_MODE_FORCE_32BIT = 0x7FFFFFFF,
    }
    "xc_debug_level": xc_debug_level_t {
        /// Take XC_DEBUG from the environment.
        XC_DEBUG_DEFAULT = 0,
        XC_DEBUG_NONE = 1,
        XC_DEBUG_WARN = 2,
        XC_DEBUG_INFO = 3,
        XC_DEBUG_TRACE = 4,
        XC_DEBUG_LEVEL_FORCE_32BIT = 0x7FFFFFFF,
    }
    "xc_placement_kind": xc_placement_kind_t {
        XC_PLACEMENT_REPLICATE = 0,
        XC_PLACEMENT_SHARD = 1,
        XC_PLACEMENT_PARTIAL = 2,
        XC_PLACEMENT_KIND_FORCE_32BIT = 0x7FFFFFFF,
    }
    "xc_order": xc_order_t {
        XC_ORDER_ROW_MAJOR = 0,
        XC_ORDER_COL_MAJOR = 1,
        XC_ORDER_FORCE_32BIT = 0x7FFFFFFF,
    }
}

/// `XC_IN_PLACE`: pass as `sendbuf` (as `recvbuf` at the root of a scatter).
pub const XC_IN_PLACE: *const c_void = 1 as *const c_void;

// ---- opaque handles -------------------------------------------------------
/// The struct behind [`xc_comm_t`]; never built or read from Rust.
#[repr(C)]
pub struct xc_comm_s {
    _opaque: [u8; 0],
    _not_send_sync_unpin: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
}
/// The struct behind [`xc_request_t`]; never built or read from Rust.
#[repr(C)]
pub struct xc_request_s {
    _opaque: [u8; 0],
    _not_send_sync_unpin: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
}
/// The struct behind [`xc_stream_t`]; never built or read from Rust.
#[repr(C)]
pub struct xc_stream_s {
    _opaque: [u8; 0],
    _not_send_sync_unpin: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
}
/// The struct behind [`xc_buffer_t`]; never built or read from Rust.
#[repr(C)]
pub struct xc_buffer_s {
    _opaque: [u8; 0],
    _not_send_sync_unpin: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
}
pub type xc_comm_t = *mut xc_comm_s;
pub type xc_request_t = *mut xc_request_s;
/// An ordered queue of device work.
pub type xc_stream_t = *mut xc_stream_s;
/// A registered device buffer.
pub type xc_buffer_t = *mut xc_buffer_s;
/// The struct behind [`xc_layout_t`]; never built or read from Rust.
#[repr(C)]
pub struct xc_layout_s {
    _opaque: [u8; 0],
    _not_send_sync_unpin: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
}
/// The struct behind [`xc_plan_t`]; never built or read from Rust.
#[repr(C)]
pub struct xc_plan_s {
    _opaque: [u8; 0],
    _not_send_sync_unpin: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
}
/// How a global array lies over a communicator's ranks.
pub type xc_layout_t = *mut xc_layout_s;
/// A redistribution plan.
pub type xc_plan_t = *mut xc_plan_s;

// ---- structs --------------------------------------------------------------
/// Options of a communicator. Start from [`xc_config_init`]; zero means
/// "default" in every field except `device` (default `XC_DEVICE_AUTO`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xc_config_t {
    /// `size_of::<xc_config_t>()`.
    pub size: usize,
    /// `XC_CONFIG_VERSION`.
    pub version: u32,
    /// `XC_DEVICE_AUTO`, `XC_DEVICE_NONE`, or a device index.
    pub device: i32,
    /// Deadline of every blocking wait; 0 = `XC_TIMEOUT` or 300000.
    pub timeout_ms: u64,
    /// An `xc_thread_mode_t`.
    pub thread_mode: i32,
    /// An `xc_debug_level_t` (process-wide).
    pub debug_level: i32,
    /// Shown in logs and errors; NULL = none; copied by the library.
    pub name: *const c_char,
    /// Non-zero: the NCCL communicator is made at the first device op, not
    /// at creation (appended after 0.2.0; docs/nccl.md).
    pub nccl_lazy: i32,
}

/// The rendezvous id of `xc_get_unique_id` / `xc_comm_init_rank`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct xc_unique_id_t {
    pub internal: [c_char; 128],
}

/// The status of a finished receive (or send).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct xc_status_t {
    /// Rank in the communicator.
    pub source: c_int,
    pub tag: c_int,
    /// The `xc_result_t` of this request.
    pub error: c_int,
    pub reserved: c_int,
    /// Bytes of the message (also when truncated).
    pub bytes: usize,
}

/// One placement of a mesh dimension (DTensor's Replicate, Shard, Partial).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct xc_placement_t {
    /// An `xc_placement_kind_t`.
    pub kind: i32,
    /// Array dimension, for a shard.
    pub dim: i32,
    /// An `xc_op_t`, for a partial.
    pub op: i32,
    pub reserved: i32,
}

/// Options of a redistribution plan; start from [`xc_redist_config_init`].
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct xc_redist_config_t {
    pub size: usize,
    pub version: u32,
    /// `XC_REDIST_*` flags.
    pub flags: u32,
}

/// What one run of a plan moves for this rank (`xc_plan_info`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct xc_plan_info_t {
    /// Set by the caller: `size_of::<xc_plan_info_t>()`.
    pub size: usize,
    pub version: u32,
    /// `XC_REDIST_STEP_*` bits.
    pub step_kinds: u32,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub bytes_copied: u64,
    pub lower_bound_bytes: u64,
    pub messages_sent: u64,
    pub messages_received: u64,
    pub collective_steps: u32,
    pub p2p_steps: u32,
}

// ---- functions ------------------------------------------------------------
functions! {
    /// Library version at run time. Any argument may be NULL.
    pub fn xc_get_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) -> xc_result_t;
    /// A static description of a result code; never NULL, lives forever.
    pub fn xc_strerror(result: xc_result_t) -> *const c_char;
    /// The detail of this thread's last error ("" after a success); valid
    /// until the next xc_ call on this thread.
    pub fn xc_last_error() -> *const c_char;
    /// Bytes of one element, or 0 for an unknown dtype.
    pub fn xc_dtype_size(dtype: xc_dtype_t) -> usize;
    /// Fill `*cfg` with the defaults; `size` is `size_of::<xc_config_t>()`.
    pub fn xc_config_init(cfg: *mut xc_config_t, size: usize) -> xc_result_t;
    /// The world communicator from the launcher's environment (a world of one
    /// without a launcher). Collective. `cfg` may be NULL.
    pub fn xc_init(cfg: *const xc_config_t, world: *mut xc_comm_t) -> xc_result_t;
    /// A new rendezvous id served by this process.
    pub fn xc_get_unique_id(id: *mut xc_unique_id_t) -> xc_result_t;
    /// Join the rendezvous `id` as `rank` of `nranks`. Collective.
    pub fn xc_comm_init_rank(nranks: c_int, id: *const xc_unique_id_t, rank: c_int, cfg: *const xc_config_t,
                             comm: *mut xc_comm_t) -> xc_result_t;
    /// Release a communicator. Collective; NULL is a no-op.
    pub fn xc_comm_free(comm: xc_comm_t) -> xc_result_t;
    /// Make every pending and later op on comm fail with XC_ERR_ABORTED. Local.
    pub fn xc_comm_abort(comm: xc_comm_t) -> xc_result_t;
    pub fn xc_comm_rank(comm: xc_comm_t, rank: *mut c_int) -> xc_result_t;
    pub fn xc_comm_size(comm: xc_comm_t, size: *mut c_int) -> xc_result_t;
    pub fn xc_comm_local_rank(comm: xc_comm_t, rank: *mut c_int) -> xc_result_t;
    pub fn xc_comm_local_size(comm: xc_comm_t, size: *mut c_int) -> xc_result_t;
    /// The first asynchronous error seen on comm, or XC_SUCCESS. Never blocks.
    pub fn xc_comm_get_async_error(comm: xc_comm_t, err: *mut xc_result_t) -> xc_result_t;
    /// Write comm's flight recorder to `path` (NULL: the file XC_TRACE_DIR names). Local.
    pub fn xc_comm_trace_dump(comm: xc_comm_t, path: *const c_char) -> xc_result_t;
    /// MPI_Comm_split. Collective over parent; `cfg` may be NULL.
    pub fn xc_comm_split(parent: xc_comm_t, color: c_int, key: c_int, cfg: *const xc_config_t,
                         out: *mut xc_comm_t) -> xc_result_t;
    /// Split into explicit groups (same lists on every rank). Collective.
    pub fn xc_comm_split_groups(parent: xc_comm_t, ngroups: c_int, group_sizes: *const c_int, ranks: *const c_int,
                                cfg: *const xc_config_t, out: *mut xc_comm_t) -> xc_result_t;
    /// A group made by its members alone (MPI_Comm_create_group): only the
    /// `n` listed parent ranks call it, with the same list and tag.
    pub fn xc_comm_create_group(parent: xc_comm_t, n: c_int, ranks: *const c_int, tag: c_int,
                                cfg: *const xc_config_t, out: *mut xc_comm_t) -> xc_result_t;
    /// Same ranks, separate message space. Collective.
    pub fn xc_comm_dup(comm: xc_comm_t, out: *mut xc_comm_t) -> xc_result_t;
    /// Fail every pending and later op of `comm` on every rank with XC_ERR_REVOKED. Local.
    pub fn xc_comm_revoke(comm: xc_comm_t) -> xc_result_t;
    /// Fault-tolerant AND of `*flag` over the live ranks; XC_ERR_PEER_FAILED
    /// (with `*flag` set) when they agree that some ranks failed.
    pub fn xc_comm_agree(comm: xc_comm_t, flag: *mut c_int) -> xc_result_t;
    /// `ranks` may be NULL, else holds `comm`'s size entries.
    pub fn xc_comm_get_failed(comm: xc_comm_t, n: *mut c_int, ranks: *mut c_int) -> xc_result_t;
    pub fn xc_comm_shrink(comm: xc_comm_t, cfg: *const xc_config_t, out: *mut xc_comm_t) -> xc_result_t;
    /// `id` is read on rank 0 of `comm` only (NULL elsewhere is fine).
    pub fn xc_comm_grow(comm: xc_comm_t, nnew: c_int, id: *const xc_unique_id_t, cfg: *const xc_config_t,
                        out: *mut xc_comm_t) -> xc_result_t;
    pub fn xc_send(buf: *const c_void, count: usize, dtype: xc_dtype_t, peer: c_int, tag: c_int,
                   comm: xc_comm_t) -> xc_result_t;
    /// `status` may be NULL; `peer` and `tag` may be XC_ANY_*.
    pub fn xc_recv(buf: *mut c_void, count: usize, dtype: xc_dtype_t, peer: c_int, tag: c_int, comm: xc_comm_t,
                   status: *mut xc_status_t) -> xc_result_t;
    pub fn xc_sendrecv(sendbuf: *const c_void, sendcount: usize, dest: c_int, sendtag: c_int, recvbuf: *mut c_void,
                       recvcount: usize, source: c_int, recvtag: c_int, dtype: xc_dtype_t, comm: xc_comm_t,
                       status: *mut xc_status_t) -> xc_result_t;
    pub fn xc_isend(buf: *const c_void, count: usize, dtype: xc_dtype_t, peer: c_int, tag: c_int, comm: xc_comm_t,
                    req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_irecv(buf: *mut c_void, count: usize, dtype: xc_dtype_t, peer: c_int, tag: c_int, comm: xc_comm_t,
                    req: *mut xc_request_t) -> xc_result_t;
    /// Wait, fill status (may be NULL), free the request and set *req = NULL.
    pub fn xc_wait(req: *mut xc_request_t, status: *mut xc_status_t) -> xc_result_t;
    /// *done = 1 and the request freed (as xc_wait) when complete.
    pub fn xc_test(req: *mut xc_request_t, done: *mut c_int, status: *mut xc_status_t) -> xc_result_t;
    /// Wait for all n; statuses may be NULL or hold n entries.
    pub fn xc_waitall(n: usize, reqs: *mut xc_request_t, statuses: *mut xc_status_t) -> xc_result_t;
    pub fn xc_barrier(comm: xc_comm_t) -> xc_result_t;
    pub fn xc_broadcast(buf: *mut c_void, count: usize, dtype: xc_dtype_t, root: c_int, comm: xc_comm_t) -> xc_result_t;
    /// `sendbuf` may be XC_IN_PLACE.
    pub fn xc_allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t, op: xc_op_t,
                        comm: xc_comm_t) -> xc_result_t;
    /// `recvbuf` holds size * sendcount elements; `sendbuf` may be XC_IN_PLACE.
    pub fn xc_allgather(sendbuf: *const c_void, recvbuf: *mut c_void, sendcount: usize, dtype: xc_dtype_t,
                        comm: xc_comm_t) -> xc_result_t;
    /// The rest of the MPI set (see the header for XC_IN_PLACE per op; scatter(v)
    /// takes it as `recvbuf` at the root). Count arrays have one entry per rank.
    pub fn xc_reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t, op: xc_op_t,
                     root: c_int, comm: xc_comm_t) -> xc_result_t;
    pub fn xc_allgatherv(sendbuf: *const c_void, sendcount: usize, recvbuf: *mut c_void, recvcounts: *const usize,
                         displs: *const usize, dtype: xc_dtype_t, comm: xc_comm_t) -> xc_result_t;
    pub fn xc_gather(sendbuf: *const c_void, recvbuf: *mut c_void, sendcount: usize, dtype: xc_dtype_t, root: c_int,
                     comm: xc_comm_t) -> xc_result_t;
    pub fn xc_gatherv(sendbuf: *const c_void, sendcount: usize, recvbuf: *mut c_void, recvcounts: *const usize,
                      displs: *const usize, dtype: xc_dtype_t, root: c_int, comm: xc_comm_t) -> xc_result_t;
    pub fn xc_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: usize, dtype: xc_dtype_t, root: c_int,
                      comm: xc_comm_t) -> xc_result_t;
    pub fn xc_scatterv(sendbuf: *const c_void, sendcounts: *const usize, displs: *const usize, recvbuf: *mut c_void,
                       recvcount: usize, dtype: xc_dtype_t, root: c_int, comm: xc_comm_t) -> xc_result_t;
    pub fn xc_reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: usize, dtype: xc_dtype_t,
                             op: xc_op_t, comm: xc_comm_t) -> xc_result_t;
    pub fn xc_reduce_scatterv(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const usize,
                              dtype: xc_dtype_t, op: xc_op_t, comm: xc_comm_t) -> xc_result_t;
    pub fn xc_alltoall(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t,
                       comm: xc_comm_t) -> xc_result_t;
    pub fn xc_alltoallv(sendbuf: *const c_void, sendcounts: *const usize, sdispls: *const usize, recvbuf: *mut c_void,
                        recvcounts: *const usize, rdispls: *const usize, dtype: xc_dtype_t,
                        comm: xc_comm_t) -> xc_result_t;
    pub fn xc_scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t, op: xc_op_t,
                   comm: xc_comm_t) -> xc_result_t;
    pub fn xc_exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t, op: xc_op_t,
                     comm: xc_comm_t) -> xc_result_t;
    /// Non-blocking twins: start the op, finish it with xc_wait/xc_test/xc_waitall.
    pub fn xc_ibarrier(comm: xc_comm_t, req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_ibroadcast(buf: *mut c_void, count: usize, dtype: xc_dtype_t, root: c_int, comm: xc_comm_t,
                         req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_ireduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t, op: xc_op_t,
                      root: c_int, comm: xc_comm_t, req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_iallreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t, op: xc_op_t,
                         comm: xc_comm_t, req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_iallgather(sendbuf: *const c_void, recvbuf: *mut c_void, sendcount: usize, dtype: xc_dtype_t,
                         comm: xc_comm_t, req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_iallgatherv(sendbuf: *const c_void, sendcount: usize, recvbuf: *mut c_void, recvcounts: *const usize,
                          displs: *const usize, dtype: xc_dtype_t, comm: xc_comm_t,
                          req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_igather(sendbuf: *const c_void, recvbuf: *mut c_void, sendcount: usize, dtype: xc_dtype_t, root: c_int,
                      comm: xc_comm_t, req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_igatherv(sendbuf: *const c_void, sendcount: usize, recvbuf: *mut c_void, recvcounts: *const usize,
                       displs: *const usize, dtype: xc_dtype_t, root: c_int, comm: xc_comm_t,
                       req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_iscatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: usize, dtype: xc_dtype_t, root: c_int,
                       comm: xc_comm_t, req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_iscatterv(sendbuf: *const c_void, sendcounts: *const usize, displs: *const usize, recvbuf: *mut c_void,
                        recvcount: usize, dtype: xc_dtype_t, root: c_int, comm: xc_comm_t,
                        req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_ireduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: usize, dtype: xc_dtype_t,
                              op: xc_op_t, comm: xc_comm_t, req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_ireduce_scatterv(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const usize,
                               dtype: xc_dtype_t, op: xc_op_t, comm: xc_comm_t,
                               req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_ialltoall(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t, comm: xc_comm_t,
                        req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_ialltoallv(sendbuf: *const c_void, sendcounts: *const usize, sdispls: *const usize, recvbuf: *mut c_void,
                         recvcounts: *const usize, rdispls: *const usize, dtype: xc_dtype_t, comm: xc_comm_t,
                         req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_iscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t, op: xc_op_t,
                    comm: xc_comm_t, req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_iexscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, dtype: xc_dtype_t, op: xc_op_t,
                      comm: xc_comm_t, req: *mut xc_request_t) -> xc_result_t;
    /// Between start and end, calls only start; xc_group_end waits for them all.
    pub fn xc_group_start() -> xc_result_t;
    pub fn xc_group_end() -> xc_result_t;
    /// Memory comm's ops move fastest: host memory aligned to 2 MiB (on 2 MiB
    /// pages where the kernel offers them), zero-filled. bytes 0: *ptr = NULL.
    /// Local, thread safe.
    pub fn xc_mem_alloc(comm: xc_comm_t, bytes: usize, ptr: *mut *mut c_void) -> xc_result_t;
    /// Free memory from xc_mem_alloc (comm may be NULL; ptr NULL: nothing to
    /// do). Another pointer, or one freed already, is XC_ERR_INVALID_ARGUMENT.
    pub fn xc_mem_free(comm: xc_comm_t, ptr: *mut c_void) -> xc_result_t;
    /// A stream on comm's device; release it with xc_stream_destroy. Without a
    /// device: XC_ERR_UNSUPPORTED.
    pub fn xc_stream_create(comm: xc_comm_t, out: *mut xc_stream_t) -> xc_result_t;
    /// Wrap the application's cudaStream_t (NULL: the legacy default stream);
    /// xcomm never destroys it, and it must outlive the wrapper.
    pub fn xc_stream_wrap(comm: xc_comm_t, cuda_stream: *mut c_void, out: *mut xc_stream_t) -> xc_result_t;
    /// Wait for xcomm's work on the stream, unbind it everywhere, release it;
    /// returns the stream's first error. NULL is a no-op.
    pub fn xc_stream_destroy(stream: xc_stream_t) -> xc_result_t;
    /// Block until xcomm's work on the stream completed; its first error (cleared).
    pub fn xc_stream_synchronize(stream: xc_stream_t) -> xc_result_t;
    /// Route comm's device ops to stream: collectives (XC_BIND_COLLECTIVES) or
    /// point to point with peer `target`. NULL unbinds. Local.
    pub fn xc_stream_bind(comm: xc_comm_t, stream: xc_stream_t, target: c_int) -> xc_result_t;
    /// IPC-capable device memory on comm's device; free it with xc_mem_free.
    /// bytes 0: *ptr = NULL. Without a device: XC_ERR_UNSUPPORTED.
    pub fn xc_mem_alloc_device(comm: xc_comm_t, bytes: usize, ptr: *mut *mut c_void) -> xc_result_t;
    /// Register a device buffer used again and again (its IPC handle made
    /// once). Host memory: XC_ERR_INVALID_ARGUMENT. Local.
    pub fn xc_buffer_register(comm: xc_comm_t, ptr: *mut c_void, bytes: usize, out: *mut xc_buffer_t) -> xc_result_t;
    /// Release a registration (not the memory). NULL is a no-op.
    pub fn xc_buffer_deregister(buf: xc_buffer_t) -> xc_result_t;
    /// General layout: boxes (offsets, extents per dimension) with owners.
    pub fn xc_layout_boxes(comm: xc_comm_t, ndim: c_int, global_shape: *const usize, nboxes: usize,
                           offsets: *const usize, extents: *const usize, owners: *const c_int,
                           out: *mut xc_layout_t) -> xc_result_t;
    /// DTensor-style layout: a mesh over the ranks, one placement per mesh dimension.
    pub fn xc_layout_mesh(comm: xc_comm_t, ndim: c_int, global_shape: *const usize, mesh_ndim: c_int,
                          mesh_shape: *const c_int, placements: *const xc_placement_t,
                          out: *mut xc_layout_t) -> xc_result_t;
    /// ScaLAPACK 2-D block-cyclic layout.
    pub fn xc_layout_block_cyclic(comm: xc_comm_t, rows: usize, cols: usize, mb: usize, nb: usize, nprow: c_int,
                                  npcol: c_int, rsrc: c_int, csrc: c_int, grid_order: xc_order_t,
                                  storage: xc_order_t, out: *mut xc_layout_t) -> xc_result_t;
    /// Elements of this rank's local buffer under the layout.
    pub fn xc_layout_local_count(layout: xc_layout_t, count: *mut usize) -> xc_result_t;
    pub fn xc_layout_free(layout: xc_layout_t) -> xc_result_t;
    pub fn xc_redist_config_init(cfg: *mut xc_redist_config_t, size: usize) -> xc_result_t;
    /// Collective: plan the move from src to dst.
    pub fn xc_redistribute_plan(src: xc_layout_t, dst: xc_layout_t, dtype: xc_dtype_t,
                                config: *const xc_redist_config_t, plan: *mut xc_plan_t) -> xc_result_t;
    /// Collective: run a plan.
    pub fn xc_redistribute(plan: xc_plan_t, sendbuf: *const c_void, recvbuf: *mut c_void) -> xc_result_t;
    pub fn xc_iredistribute(plan: xc_plan_t, sendbuf: *const c_void, recvbuf: *mut c_void,
                            req: *mut xc_request_t) -> xc_result_t;
    pub fn xc_plan_info(plan: xc_plan_t, info: *mut xc_plan_info_t) -> xc_result_t;
    /// COSTA's relabelling: perm (size entries) and the bytes it would save.
    pub fn xc_plan_relabel(plan: xc_plan_t, perm: *mut c_int, bytes_saved: *mut u64) -> xc_result_t;
    /// Collective: free a plan and its sub-communicators.
    pub fn xc_plan_free(plan: xc_plan_t) -> xc_result_t;
}
