//! Groups (`xc_group_start` / `xc_group_end`): a batch of sends and
//! receives that only start inside the group and all complete at its end, so
//! they finish whatever order the ranks list them in.
//!
//! Inside a group the library keeps using a buffer after the call that took
//! it returned, so buffers are borrowed for the whole group, as a
//! [`Scope`](crate::Scope) borrows them for its requests: operations go
//! through the [`Group`] handed to the closure. The `Comm` methods that take
//! buffers (and starting requests) refuse to run inside a group
//! (`XC_ERR_INVALID_USAGE`): they could not keep their buffers alive.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr;

use xcomm_sys as sys;

use crate::buf::{cptr, mptr};

use crate::comm::{locked, Comm, Source, Tag};
use crate::dtype::Dtype;
use crate::error::{check, Error, Result};

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// True while this thread is inside [`group`].
pub(crate) fn active() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// The error of a `Comm` call that cannot run inside a group.
pub(crate) fn refuse(what: &str) -> Error {
    Error::new(
        sys::XC_ERR_INVALID_USAGE,
        format!("{what} inside xcomm::group: use the Group's methods (the group borrows their buffers)"),
    )
}

/// Run `f` inside a group; when it returns (or panics), end the group, which
/// waits for every operation `f` started. The result is `f`'s error, else
/// the group's (the first error of the batch), else `f`'s value.
///
/// ```no_run
/// # let world = xcomm::init()?;
/// let (rank, size) = (world.rank(), world.size());
/// let out = vec![rank as f64; 1 << 20];
/// let mut inbox = vec![vec![0.0f64; 1 << 20]; size as usize];
/// xcomm::group(|g| {
///     for peer in (0..size).filter(|&p| p != rank) {
///         g.send(&world, &out, peer, 0)?;         // sends first everywhere: fine in a group
///     }
///     for (peer, buf) in inbox.iter_mut().enumerate().filter(|(p, _)| *p as i32 != rank) {
///         g.recv(&world, buf, peer as i32, 0)?;
///     }
///     Ok(())
/// })?;
/// # Ok::<(), xcomm::Error>(())
/// ```
pub fn group<'env, F, R>(f: F) -> Result<R>
where
    F: for<'g> FnOnce(&'g Group<'g, 'env>) -> Result<R>,
{
    check(locked(true, || unsafe { sys::xc_group_start() }))?;
    DEPTH.with(|d| d.set(d.get() + 1));
    let g = Group {
        end: Ender(Cell::new(false)),
        _group: PhantomData,
        _env: PhantomData,
    };
    let value = f(&g);
    let ended = g.end.finish();
    let value = value?;
    ended?;
    Ok(value)
}

/// Ends the group exactly once: by `finish`, or by its drop while a panic
/// unwinds out of the closure (the library must not keep using buffers the
/// unwinding frees).
struct Ender(Cell<bool>);

impl Ender {
    fn finish(&self) -> Result<()> {
        self.0.set(true);
        end_group()
    }
}

impl Drop for Ender {
    fn drop(&mut self) {
        if !self.0.get() {
            let _ = end_group();
        }
    }
}

fn end_group() -> Result<()> {
    DEPTH.with(|d| d.set(d.get() - 1));
    check(locked(true, || unsafe { sys::xc_group_end() }))
}

/// The operations of one [`group`]. Buffers are borrowed until the group ends.
pub struct Group<'g, 'env: 'g> {
    end: Ender,
    // Invariant in both lifetimes, as Scope.
    _group: PhantomData<&'g mut &'g ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl<'g> Group<'g, '_> {
    /// Start sending `buf` to `dest` on `comm`; done when the group ends.
    pub fn send<T: Dtype>(&'g self, comm: &'g Comm, buf: &'g [T], dest: i32, tag: i32) -> Result<()> {
        let raw = comm.as_raw();
        check(locked(comm.serialized(), || unsafe {
            sys::xc_send(cptr(buf), buf.len(), T::DTYPE, dest, tag, raw)
        }))
    }

    /// Start receiving into `buf` from `source` on `comm`; `buf` holds the
    /// message once the group ends (its status is not kept).
    pub fn recv<T: Dtype>(&'g self, comm: &'g Comm, buf: &'g mut [T], source: impl Into<Source>,
                          tag: impl Into<Tag>) -> Result<()> {
        let (raw, source, tag) = (comm.as_raw(), source.into().raw(), tag.into().raw());
        check(locked(comm.serialized(), || unsafe {
            sys::xc_recv(mptr(buf), buf.len(), T::DTYPE, source, tag, raw, ptr::null_mut())
        }))
    }
}
