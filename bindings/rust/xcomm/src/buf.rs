//! Slices as C buffer pointers.

use std::ffi::c_void;
use std::ptr;

// An empty slice's pointer is dangling: for one-byte types it is 1, which is
// XC_IN_PLACE. Empty slices go to C as NULL, which every call takes with 0
// elements.
pub(crate) fn cptr<T>(s: &[T]) -> *const c_void {
    if s.is_empty() { ptr::null() } else { s.as_ptr() as *const c_void }
}

pub(crate) fn mptr<T>(s: &mut [T]) -> *mut c_void {
    if s.is_empty() { ptr::null_mut() } else { s.as_mut_ptr() as *mut c_void }
}
