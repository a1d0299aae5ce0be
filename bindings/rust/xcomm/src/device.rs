//! Device memory and streams: `xc_stream_*`, `xc_mem_alloc_device`,
//! `xc_buffer_register` / `xc_buffer_deregister`.
//!
//! Device-memory ops are stream-ordered, as NCCL's: a call enqueues the op on
//! the stream bound to it ([`Comm::bind_stream`]) and returns; the op runs
//! after the work enqueued on that stream before it.
//! [`Stream::synchronize`] waits for it. See `include/xcomm.h`.
//!
//! Device memory is not host memory, so [`DeviceMemory`] does not deref to a
//! slice: its address goes to the C calls ([`sys`](crate::sys)) or to a CUDA
//! library. On the emulated device (`XC_DEVICE=emulated`, a test facility)
//! the memory is host memory, which a test may read through
//! [`DeviceMemory::as_ptr`].

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr;

use xcomm_sys as sys;

use crate::comm::{enter, locked, Comm};
use crate::error::{check, Error, Result};

/// An ordered queue of device work (`xc_stream_t`): made on a
/// communicator's device ([`Stream::new`]) or wrapping the application's
/// CUDA stream ([`Stream::wrap`]). Dropping it calls `xc_stream_destroy`,
/// which waits for the work xcomm enqueued on it, unbinds it from every
/// communicator and releases it ([`destroy`](Stream::destroy) does the same
/// and returns the stream's first error).
pub struct Stream {
    raw: sys::xc_stream_t,
    native: Option<usize>,
    /// Made on a `ThreadMode::Serialized` communicator: calls take the wrapper's lock.
    serialized: bool,
}

// SAFETY: the handle is owned by this Stream; the library's stream calls may
// be made from any thread. Not Sync: two threads would both wait on it, and
// nothing is gained by sharing it.
unsafe impl Send for Stream {}

impl Stream {
    /// A new stream on `comm`'s device (`xc_stream_create`). Without a
    /// device: `XC_ERR_UNSUPPORTED`.
    pub fn new(comm: &Comm) -> Result<Stream> {
        let mut raw = ptr::null_mut();
        check(locked(comm.serialized(), || unsafe {
            sys::xc_stream_create(comm.as_raw(), &mut raw)
        }))?;
        Ok(Stream {
            raw,
            native: None,
            serialized: comm.serialized(),
        })
    }

    /// Wrap a CUDA stream the application owns (`xc_stream_wrap`; a
    /// `cudaStream_t`, NULL for the legacy default stream). xcomm never
    /// destroys it; dropping the `Stream` releases only the wrapper. On the
    /// emulated device any value names an emulated stream of that value.
    ///
    /// # Safety
    ///
    /// `cuda_stream` must be NULL or a live CUDA stream of `comm`'s device,
    /// and must outlive the returned `Stream`.
    pub unsafe fn wrap(comm: &Comm, cuda_stream: *mut c_void) -> Result<Stream> {
        let mut raw = ptr::null_mut();
        check(locked(comm.serialized(), || unsafe {
            sys::xc_stream_wrap(comm.as_raw(), cuda_stream, &mut raw)
        }))?;
        Ok(Stream {
            raw,
            native: Some(cuda_stream as usize),
            serialized: comm.serialized(),
        })
    }

    /// The wrapped CUDA stream (as an address), `None` for a stream xcomm made.
    pub fn native(&self) -> Option<usize> {
        self.native
    }

    /// The C handle, for calling xcomm-sys directly. It stays owned by this
    /// `Stream`: do not destroy it.
    pub fn as_raw(&self) -> sys::xc_stream_t {
        self.raw
    }

    /// Block until every op xcomm enqueued on the stream has completed
    /// (`xc_stream_synchronize`); `Err` with the first error of those ops
    /// (which clears it).
    pub fn synchronize(&self) -> Result<()> {
        check(locked(self.serialized, || unsafe {
            sys::xc_stream_synchronize(self.raw)
        }))
    }

    /// Destroy it now and see the stream's first error, if any (dropping it
    /// does the same and ignores the result).
    pub fn destroy(self) -> Result<()> {
        let this = ManuallyDrop::new(self);
        // SAFETY: owned, destroyed exactly once (the drop is skipped).
        check(locked(this.serialized, || unsafe {
            sys::xc_stream_destroy(this.raw)
        }))
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("raw", &self.raw)
            .field("native", &self.native)
            .finish()
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let _g = enter(self.serialized);
        // SAFETY: owned, destroyed exactly once (destroy() skips the drop).
        unsafe {
            sys::xc_stream_destroy(self.raw);
        }
    }
}

/// What [`Comm::bind_stream`] routes to a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bind {
    /// The communicator's collectives (`XC_BIND_COLLECTIVES`).
    Collectives,
    /// Its point-to-point ops with this peer rank.
    Peer(i32),
}

impl Bind {
    fn raw(self) -> i32 {
        match self {
            Bind::Collectives => sys::XC_BIND_COLLECTIVES,
            Bind::Peer(rank) => rank,
        }
    }
}

impl Comm {
    /// Route this communicator's device-memory ops for `target` to `stream`
    /// (`xc_stream_bind`); `None` unbinds (back to the default stream).
    /// Local; changes only ops enqueued afterwards. Dropping the `Stream`
    /// unbinds it from every communicator.
    pub fn bind_stream(&self, stream: Option<&Stream>, target: Bind) -> Result<()> {
        if let Bind::Peer(rank) = target {
            if rank < 0 {
                return Err(Error::invalid_argument(format!(
                    "bind_stream: peer rank {rank} is negative"
                )));
            }
        }
        let raw = stream.map_or(ptr::null_mut(), |s| s.raw);
        check(locked(self.serialized(), || unsafe {
            sys::xc_stream_bind(self.as_raw(), raw, target.raw())
        }))
    }

    /// `bytes` of device memory on this communicator's device that peers on
    /// this host can map (`xc_mem_alloc_device`); see [`DeviceMemory`].
    /// Local; 0 bytes gives an empty `DeviceMemory`. Without a device:
    /// `XC_ERR_UNSUPPORTED`.
    pub fn mem_alloc_device(&self, bytes: usize) -> Result<DeviceMemory> {
        let mut p: *mut c_void = ptr::null_mut();
        check(locked(self.serialized(), || unsafe {
            sys::xc_mem_alloc_device(self.as_raw(), bytes, &mut p)
        }))?;
        if bytes > 0 && p.is_null() {
            return Err(Error::new(
                sys::XC_ERR_INTERNAL,
                format!("xc_mem_alloc_device({bytes} bytes) succeeded but returned NULL"),
            ));
        }
        Ok(DeviceMemory {
            ptr: if bytes == 0 { ptr::null_mut() } else { p },
            len: bytes,
        })
    }

    /// Register device memory used again and again (`xc_buffer_register`):
    /// its IPC handle is made once, and peers keep it open until the
    /// [`Registration`] is dropped (or [`deregister`](Registration::deregister)ed).
    /// The registration borrows the memory, which therefore stays allocated.
    /// Local.
    pub fn register_buffer<'m>(&self, mem: &'m DeviceMemory) -> Result<Registration<'m>> {
        // SAFETY: the borrow keeps mem allocated while the registration lives.
        unsafe { self.register_raw(mem.ptr, mem.len) }
    }

    /// [`register_buffer`](Comm::register_buffer) for device memory xcomm did
    /// not allocate (e.g. `cudaMalloc`'s). Host memory:
    /// `XC_ERR_INVALID_ARGUMENT`.
    ///
    /// # Safety
    ///
    /// `ptr .. ptr + bytes` must stay allocated until the returned
    /// `Registration` is dropped.
    pub unsafe fn register_raw<'m>(
        &self,
        ptr: *mut c_void,
        bytes: usize,
    ) -> Result<Registration<'m>> {
        let mut raw = ptr::null_mut();
        check(locked(self.serialized(), || unsafe {
            sys::xc_buffer_register(self.as_raw(), ptr, bytes, &mut raw)
        }))?;
        Ok(Registration {
            raw,
            _mem: PhantomData,
        })
    }
}

/// Device memory from [`Comm::mem_alloc_device`] (`xc_mem_alloc_device`).
/// It owns the allocation and frees it on `Drop` (`xc_mem_free`;
/// [`free`](DeviceMemory::free) does the same and returns the result); it
/// does not borrow the communicator. Its address goes to the C calls: it is
/// not host memory, so there is no slice of it.
pub struct DeviceMemory {
    /// NULL when `len` is 0.
    ptr: *mut c_void,
    len: usize,
}

// SAFETY: it owns its allocation exclusively and gives no access to the bytes
// from the host; xc_mem_free is thread safe and is called with a NULL comm.
unsafe impl Send for DeviceMemory {}
unsafe impl Sync for DeviceMemory {}

impl DeviceMemory {
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of the first byte (NULL when empty), for the C
    /// calls or a CUDA library. On the emulated device only, the host may
    /// read and write through it.
    pub fn as_ptr(&self) -> *const c_void {
        self.ptr
    }

    /// [`as_ptr`](DeviceMemory::as_ptr) as a `*mut`, for outputs of the C
    /// calls. It takes `&self`: Rust never reads these bytes (they are device
    /// memory), and a [`Registration`] borrows the memory while ops keep
    /// writing into it.
    pub fn device_ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// Give the memory back now and see whether that worked.
    pub fn free(self) -> Result<()> {
        let this = ManuallyDrop::new(self);
        // SAFETY: owned, freed exactly once (the drop is skipped); NULL is accepted.
        check(unsafe { sys::xc_mem_free(ptr::null_mut(), this.ptr) })
    }
}

impl fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceMemory")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        // SAFETY: owned, freed exactly once; comm NULL: the communicator may be gone.
        unsafe {
            sys::xc_mem_free(ptr::null_mut(), self.ptr);
        }
    }
}

/// A registered device buffer (`xc_buffer_t`), from
/// [`Comm::register_buffer`]. Dropping it deregisters (not frees) the memory.
pub struct Registration<'m> {
    raw: sys::xc_buffer_t,
    _mem: PhantomData<&'m DeviceMemory>,
}

// SAFETY: the handle is owned; xc_buffer_deregister may run on any thread.
unsafe impl Send for Registration<'_> {}

impl Registration<'_> {
    /// The C handle. It stays owned by this `Registration`.
    pub fn as_raw(&self) -> sys::xc_buffer_t {
        self.raw
    }

    /// Deregister now and see whether that worked (dropping does the same).
    pub fn deregister(self) -> Result<()> {
        let this = ManuallyDrop::new(self);
        // SAFETY: owned, released exactly once (the drop is skipped).
        check(unsafe { sys::xc_buffer_deregister(this.raw) })
    }
}

impl fmt::Debug for Registration<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("raw", &self.raw)
            .finish()
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        // SAFETY: owned, released exactly once (deregister() skips the drop).
        unsafe {
            sys::xc_buffer_deregister(self.raw);
        }
    }
}
