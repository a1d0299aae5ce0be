//! Safe Rust bindings of xcomm, a communication library for processes on
//! CPUs and NVIDIA GPUs (MPI-style point to point and collectives).
//!
//! ```no_run
//! use xcomm::Op;
//!
//! fn main() -> xcomm::Result<()> {
//!     let world = xcomm::init()?; // a world of one without a launcher
//!     let mut v = vec![world.rank() as f64; 1024];
//!     world.allreduce_in_place(&mut v, Op::Sum)?;
//!     let n = world.size() as f64;
//!     assert_eq!(v[0], n * (n - 1.0) / 2.0);
//!     Ok(())
//! } // `world` is freed here (collectively)
//! ```
//!
//! Run `N` ranks with the launcher: `xcrun -n N target/debug/my_program`.
//!
//! * [`Comm`] owns a communicator; dropping it frees it (a collective call).
//! * Every call returns [`Result`]; an [`Error`] carries the C result code,
//!   its name and the library's message (`xc_last_error`).
//! * Buffers are slices of a [`Dtype`]: `i8`, `u8`, `i32`, `u32`, `i64`,
//!   `u64`, `f32`, `f64`, [`F16`], [`BF16`].
//! * Non-blocking operations live in a [`scope`] (see [`Request`] for why).
//! * [`Comm::mem_alloc`] gives [`Memory`] that the ops move fastest (2 MiB
//!   aligned); it derefs to `[u8]` and frees itself on `Drop`.
//! * Device memory ([`Comm::mem_alloc_device`], [`DeviceMemory`]) and the
//!   streams its ops are ordered on ([`Stream`], [`Comm::bind_stream`]);
//!   device ops themselves are made through [`sys`] with
//!   [`DeviceMemory::as_ptr`].
//! * The raw C API is re-exported as [`sys`] (the `xcomm-sys` crate).
//!
//! Every function of `include/xcomm.h` has a safe counterpart here:
//! `xc_get_version` [`version`], `xc_strerror` [`Error::description`],
//! `xc_last_error` [`Error::message`], `xc_dtype_size` [`dtype_size`],
//! `xc_config_init` [`Config::new`], `xc_init` [`init`]/[`init_with`],
//! `xc_get_unique_id` [`UniqueId::new`], `xc_comm_init_rank`
//! [`Comm::init_rank`], `xc_comm_free` `Drop`/[`Comm::free`], `xc_comm_abort`
//! [`Comm::abort`], `xc_comm_rank`/`size`/`local_rank`/`local_size`
//! [`Comm::rank`] ..., `xc_comm_get_async_error` [`Comm::async_error`],
//! `xc_comm_trace_dump` [`Comm::trace_dump`],
//! `xc_comm_split` [`Comm::split`], `xc_comm_split_groups`
//! [`Comm::split_groups`], `xc_comm_create_group` [`Comm::create_group`],
//! `xc_comm_dup` [`Comm::dup`], `xc_comm_revoke` [`Comm::revoke`],
//! `xc_comm_agree` [`Comm::agree`], `xc_comm_get_failed`
//! [`Comm::failed_ranks`], `xc_comm_shrink` [`Comm::shrink`],
//! `xc_comm_grow` [`Comm::grow`], `xc_send`
//! [`Comm::send`], `xc_recv` [`Comm::recv`], `xc_sendrecv`
//! [`Comm::sendrecv`], `xc_isend` [`Comm::isend`], `xc_irecv`
//! [`Comm::irecv`], `xc_wait` [`Request::wait`], `xc_test`
//! [`Request::test`], `xc_waitall` [`wait_all`], `xc_barrier`
//! [`Comm::barrier`], `xc_broadcast` [`Comm::broadcast`], `xc_allreduce`
//! [`Comm::allreduce`]/[`Comm::allreduce_in_place`], `xc_allgather`
//! [`Comm::allgather`]/[`Comm::allgather_in_place`], `xc_reduce`
//! [`Comm::reduce`]/[`Comm::reduce_in_place`], `xc_allgatherv`
//! [`Comm::allgatherv`]/[`Comm::allgatherv_in_place`], `xc_gather`
//! [`Comm::gather`], `xc_gatherv` [`Comm::gatherv`], `xc_scatter`
//! [`Comm::scatter`], `xc_scatterv` [`Comm::scatterv`], `xc_reduce_scatter`
//! [`Comm::reduce_scatter`], `xc_reduce_scatterv` [`Comm::reduce_scatterv`],
//! `xc_alltoall` [`Comm::alltoall`]/[`Comm::alltoall_in_place`],
//! `xc_alltoallv` [`Comm::alltoallv`], `xc_scan`
//! [`Comm::scan`]/[`Comm::scan_in_place`], `xc_exscan`
//! [`Comm::exscan`]/[`Comm::exscan_in_place`]; every `xc_i<op>` is
//! `Comm::i<op>` inside a [`scope`] ([`Comm::ibarrier`], [`Comm::iallreduce`],
//! ...); `xc_group_start`/`xc_group_end` are [`group`]; `xc_mem_alloc`
//! [`Comm::mem_alloc`], `xc_mem_free` `Drop`/[`Memory::free`] (and
//! [`DeviceMemory::free`]); `xc_stream_create` [`Stream::new`],
//! `xc_stream_wrap` [`Stream::wrap`], `xc_stream_destroy`
//! `Drop`/[`Stream::destroy`], `xc_stream_synchronize`
//! [`Stream::synchronize`], `xc_stream_bind` [`Comm::bind_stream`],
//! `xc_mem_alloc_device` [`Comm::mem_alloc_device`], `xc_buffer_register`
//! [`Comm::register_buffer`]/[`Comm::register_raw`], `xc_buffer_deregister`
//! `Drop`/[`Registration::deregister`]; `xc_layout_mesh`
//! [`Comm::layout_mesh`], `xc_layout_boxes` [`Comm::layout_boxes`],
//! `xc_layout_block_cyclic` [`Comm::layout_block_cyclic`],
//! `xc_layout_local_count` [`Layout::local_count`], `xc_layout_free` `Drop`,
//! `xc_redist_config_init` and `xc_redistribute_plan`
//! [`Comm::redistribute_plan`], `xc_redistribute` [`Plan::run`],
//! `xc_iredistribute` [`Plan::start`], `xc_plan_info` [`Plan::info`],
//! `xc_plan_relabel` [`Plan::relabel`], `xc_plan_free` `Drop`/[`Plan::free`].

pub use xcomm_sys as sys;

mod buf;
mod coll;
mod comm;
mod config;
mod device;
mod dtype;
mod error;
mod group;
mod mem;
mod redist;
mod request;

pub use comm::{init, init_with, Comm, Source, Status, Tag, UniqueId, TAG_MAX, UNDEFINED};
pub use config::{Config, DebugLevel, Device, ThreadMode};
pub use device::{Bind, DeviceMemory, Registration, Stream};
pub use dtype::{dtype_size, Dtype, Op, BF16, F16};
pub use error::{code_name, description, Error, Result};
pub use group::{group, Group};
pub use mem::Memory;
pub use redist::{BlockCyclic, Layout, Placement, Plan, PlanInfo};
pub use request::{scope, wait_all, Request, Scope};

/// The library's version at run time (`xc_get_version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: i32,
    pub minor: i32,
    pub patch: i32,
}

/// The version of the libxcomm this program runs with (`xc_get_version`).
pub fn version() -> Version {
    let mut v = Version {
        major: 0,
        minor: 0,
        patch: 0,
    };
    // SAFETY: three valid out-pointers; the call cannot fail.
    let rc = unsafe { sys::xc_get_version(&mut v.major, &mut v.minor, &mut v.patch) };
    debug_assert_eq!(rc, sys::XC_SUCCESS);
    v
}

/// The version of the header these bindings were written against.
pub const HEADER_VERSION: Version = Version {
    major: sys::XC_VERSION_MAJOR,
    minor: sys::XC_VERSION_MINOR,
    patch: sys::XC_VERSION_PATCH,
};

#[cfg(doctest)]
mod compile_fail {
    //! Misuse the type system must reject.
    //!
    //! A receive buffer cannot be read while its request may still write it:
    //! ```compile_fail,E0503
    //! let world = xcomm::init().unwrap();
    //! let mut buf = [0u8; 4];
    //! xcomm::scope(|s| {
    //!     let r = world.irecv(s, &mut buf, 0, 0).unwrap();
    //!     let _peek = buf[0];
    //!     r.wait().unwrap();
    //! });
    //! ```
    //!
    //! A request cannot be shared between threads (it is `Send`, not `Sync`):
    //! ```compile_fail,E0277
    //! fn shared<T: Sync>(_: &T) {}
    //! let world = xcomm::init().unwrap();
    //! let buf = [0u8; 4];
    //! xcomm::scope(|s| {
    //!     let r = world.isend(s, &buf, 0, 0).unwrap();
    //!     shared(&r);
    //! });
    //! ```
    //!
    //! A buffer must outlive the scope (a leaked request is waited for only
    //! when the scope ends):
    //! ```compile_fail,E0597
    //! let world = xcomm::init().unwrap();
    //! xcomm::scope(|s| {
    //!     let buf = [0u8; 4];
    //!     world.isend(s, &buf, 0, 0).unwrap().wait().unwrap();
    //! });
    //! ```
    //!
    //! A request cannot leave its scope:
    //! ```compile_fail
    //! let world = xcomm::init().unwrap();
    //! let buf = [0u8; 4];
    //! let r = xcomm::scope(|s| world.isend(s, &buf, 0, 0).unwrap());
    //! ```
}
