//! Memory for communication: `xc_mem_alloc` / `xc_mem_free`.

use std::ffi::c_void;
use std::fmt;
use std::mem::{align_of, size_of, ManuallyDrop};
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};
use std::slice;

use xcomm_sys as sys;

use crate::comm::{locked, Comm};
use crate::dtype::Dtype;
use crate::error::{check, Error, Result};

/// Bytes that a communicator's ops move fastest ([`Comm::mem_alloc`],
/// `xc_mem_alloc`): host memory aligned to 2 MiB and, where the kernel offers
/// transparent huge pages, on 2 MiB pages. It starts zero-filled.
///
/// It owns the allocation like a `Box<[u8]>`: it derefs to `[u8]` (so
/// `&mem[..]` and `&mut mem[..]` are buffers for any op of element type
/// `u8`), [`as_slice_of`](Memory::as_slice_of) and
/// [`as_mut_slice_of`](Memory::as_mut_slice_of) view it as elements of any
/// [`Dtype`], and dropping it frees it (`xc_mem_free`; [`free`](Memory::free)
/// does the same and returns the result). It does not borrow the
/// communicator: the memory may outlive it. A 0-byte `Memory` is empty and
/// holds no allocation.
pub struct Memory {
    /// NULL when `len` is 0 (the library's answer to 0 bytes).
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the Memory owns its bytes exclusively (as a Box<[u8]> does); the
// library's xc_mem_free is thread safe and is called with a NULL comm.
unsafe impl Send for Memory {}
unsafe impl Sync for Memory {}

impl Comm {
    /// `bytes` of memory that this communicator's ops move fastest
    /// (`xc_mem_alloc`); see [`Memory`]. Local, not collective; 0 bytes gives
    /// an empty `Memory`.
    pub fn mem_alloc(&self, bytes: usize) -> Result<Memory> {
        let mut p: *mut c_void = ptr::null_mut();
        check(locked(self.serialized(), || unsafe {
            sys::xc_mem_alloc(self.as_raw(), bytes, &mut p)
        }))?;
        if bytes > 0 && p.is_null() {
            return Err(Error::new(
                sys::XC_ERR_INTERNAL,
                format!("xc_mem_alloc({bytes} bytes) succeeded but returned NULL"),
            ));
        }
        Ok(Memory {
            ptr: if bytes == 0 {
                ptr::null_mut()
            } else {
                p as *mut u8
            },
            len: bytes,
        })
    }
}

impl Memory {
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first byte (NULL when empty).
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// The address of the first byte (NULL when empty).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr holds len bytes owned by self (a dangling, aligned
        // pointer for the empty slice, since NULL is not allowed).
        unsafe { slice::from_raw_parts(self.data::<u8>(), self.len) }
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in as_slice, and &mut self makes the access unique.
        unsafe { slice::from_raw_parts_mut(self.data::<u8>(), self.len) }
    }

    /// The memory as `len() / size_of::<T>()` elements of `T` (trailing
    /// bytes that make no whole element are left out).
    pub fn as_slice_of<T: Dtype>(&self) -> &[T] {
        // SAFETY: every Dtype is plain data for which any bits are a value;
        // data() checked the alignment; the elements fit in len bytes.
        unsafe { slice::from_raw_parts(self.data::<T>(), self.len / size_of::<T>()) }
    }

    /// [`as_slice_of`](Memory::as_slice_of), writable.
    pub fn as_mut_slice_of<T: Dtype>(&mut self) -> &mut [T] {
        // SAFETY: as in as_slice_of, and &mut self makes the access unique.
        unsafe { slice::from_raw_parts_mut(self.data::<T>(), self.len / size_of::<T>()) }
    }

    /// Give the memory back now and see whether that worked (dropping it
    /// does the same and ignores the result).
    pub fn free(self) -> Result<()> {
        let this = ManuallyDrop::new(self);
        // SAFETY: the allocation is owned by this Memory and freed exactly
        // once (the drop is skipped); NULL (empty) is accepted.
        check(unsafe { sys::xc_mem_free(ptr::null_mut(), this.ptr as *mut c_void) })
    }

    /// The first element as a `*mut T`: dangling (but aligned) when empty.
    fn data<T>(&self) -> *mut T {
        if self.ptr.is_null() {
            return NonNull::<T>::dangling().as_ptr();
        }
        // The library promises 2 MiB; no Dtype needs more than 8 bytes.
        assert_eq!(
            self.ptr as usize % align_of::<T>(),
            0,
            "xc_mem_alloc returned {:p}, not aligned for {}",
            self.ptr,
            std::any::type_name::<T>()
        );
        self.ptr as *mut T
    }
}

impl Deref for Memory {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl DerefMut for Memory {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl AsRef<[u8]> for Memory {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsMut<[u8]> for Memory {
    fn as_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl fmt::Debug for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Memory")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: owned, freed exactly once (free() skips the drop). comm is
        // NULL: the communicator may be gone, which the header allows.
        unsafe {
            sys::xc_mem_free(ptr::null_mut(), self.ptr as *mut c_void);
        }
    }
}
