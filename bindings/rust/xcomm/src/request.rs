//! Non-blocking sends, receives and collectives.
//!
//! A [`Request`] borrows its buffer (and its communicator) for as long as the
//! C library may use them. Borrowing alone is not enough in Rust, since a
//! value may be leaked (`std::mem::forget`) without its `Drop` running, which
//! would end the borrow while the transfer goes on. So requests live in a
//! [`Scope`], as threads do in `std::thread::scope`: buffers are borrowed for
//! the whole scope, and when the scope ends it waits for every request that
//! is still in flight, leaked ones included. Inside the scope, dropping an
//! unfinished `Request` waits for it.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr;
use std::sync::Mutex;

use xcomm_sys as sys;

use crate::buf::{cptr, mptr};

use crate::comm::{locked, Comm, Source, Status, Tag};
use crate::dtype::Dtype;
use crate::error::{check, Result};

/// Run `f` with a [`Scope`] for non-blocking operations; when `f` returns (or
/// panics), wait for every request of the scope that has not finished.
///
/// Buffers given to requests must live outside the closure (they are
/// borrowed for the whole scope), so read a receive buffer after `scope`
/// returns:
///
/// ```no_run
/// # let world = xcomm::init()?;
/// let (right, left) = ((world.rank() + 1) % world.size(), (world.rank() + world.size() - 1) % world.size());
/// let out = [world.rank(); 4];
/// let mut inbox = [0i32; 4];
/// xcomm::scope(|s| {
///     let r = world.irecv(s, &mut inbox, left, 0)?;
///     let w = world.isend(s, &out, right, 0)?;
///     xcomm::wait_all(vec![r, w]).map(drop)
/// })?;
/// assert_eq!(inbox, [left; 4]);
/// # Ok::<(), xcomm::Error>(())
/// ```
pub fn scope<'env, F, R>(f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    let scope = Scope {
        slots: Slots::default(),
        _scope: PhantomData,
        _env: PhantomData,
    };
    f(&scope)
    // `scope` drops here (also when f panics) and waits for what is left.
}

/// The requests of one [`scope`]. See the module documentation.
pub struct Scope<'scope, 'env: 'scope> {
    slots: Slots,
    // Invariant in both lifetimes, as std::thread::Scope.
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// The C handles of a scope's unfinished requests. A request reads and
/// writes only its own slot; the scope's drop reads them all, after every
/// live `Request` is gone.
#[derive(Default)]
struct Slots(Mutex<SlotTable>);

#[derive(Default)]
struct SlotTable {
    handles: Vec<(sys::xc_request_t, bool)>, // (handle or NULL, serialized)
    free: Vec<usize>,
}

// SAFETY: request handles may be waited on from any thread (the C library is
// thread-safe in the default mode; serialized communicators' calls take the
// wrapper's lock).
unsafe impl Send for SlotTable {}

impl Slots {
    fn table(&self) -> std::sync::MutexGuard<'_, SlotTable> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn add(&self, h: sys::xc_request_t, serialized: bool) -> usize {
        let mut t = self.table();
        match t.free.pop() {
            Some(i) => {
                t.handles[i] = (h, serialized);
                i
            }
            None => {
                t.handles.push((h, serialized));
                t.handles.len() - 1
            }
        }
    }
    fn take(&self, i: usize) -> sys::xc_request_t {
        std::mem::replace(&mut self.table().handles[i].0, ptr::null_mut())
    }
    fn put_back(&self, i: usize, h: sys::xc_request_t) {
        self.table().handles[i].0 = h;
    }
    fn release(&self, i: usize) {
        let mut t = self.table();
        t.handles[i].0 = ptr::null_mut();
        t.free.push(i);
    }
}

// The scope's end (Scope itself has no Drop: that would keep its invariant
// lifetime borrowed while it drops).
impl Drop for Slots {
    fn drop(&mut self) {
        // Only leaked requests are left here: every other one was dropped
        // (and waited for) before the scope ends.
        let left: Vec<_> = self
            .table()
            .handles
            .iter_mut()
            .filter(|(h, _)| !h.is_null())
            .map(|e| {
                let out = *e;
                e.0 = ptr::null_mut();
                out
            })
            .collect();
        for (mut h, serialized) in left {
            locked(serialized, || unsafe {
                sys::xc_wait(&mut h, ptr::null_mut())
            });
        }
    }
}

/// An unfinished non-blocking operation: [`Comm::isend`], [`Comm::irecv`]
/// or a non-blocking collective ([`Comm::iallreduce`], ...).
///
/// Finish it with [`wait`](Request::wait), [`test`](Request::test) or
/// [`wait_all`]. **Dropping an unfinished request waits for it** (up to the
/// communicator's timeout): the buffer is never released while the library
/// may still use it. The error of a request finished by a drop is lost; wait
/// to see it.
///
/// `Send` (it may be finished on another thread) but not `Sync`.
pub struct Request<'scope> {
    slots: &'scope Slots,
    slot: usize,
    serialized: bool,
    done: bool,
    _not_sync: PhantomData<Cell<()>>,
}

impl<'scope> Request<'scope> {
    pub(crate) fn start(
        scope: &'scope Scope<'scope, '_>,
        serialized: bool,
        f: impl FnOnce(*mut sys::xc_request_t) -> sys::xc_result_t,
    ) -> Result<Request<'scope>> {
        if crate::group::active() {
            // Its scope could end (and wait, which a group refuses) inside the group.
            return Err(crate::group::refuse("starting a request"));
        }
        let mut h: sys::xc_request_t = ptr::null_mut();
        check(locked(serialized, || f(&mut h)))?;
        let slot = scope.slots.add(h, serialized);
        Ok(Request {
            slots: &scope.slots,
            slot,
            serialized,
            done: false,
            _not_sync: PhantomData,
        })
    }

    /// True once the request finished (by `test`).
    pub fn is_complete(&self) -> bool {
        self.done
    }

    /// Wait for the request; the receive's status, or the request's error.
    /// After [`test`](Request::test) finished it, an empty status (source
    /// and tag `-1`, no bytes).
    pub fn wait(mut self) -> Result<Status> {
        self.finish()
    }

    fn finish(&mut self) -> Result<Status> {
        if self.done {
            return Ok(Status::empty());
        }
        let mut st = sys::xc_status_t::default();
        let mut h = self.slots.take(self.slot);
        let rc = locked(self.serialized, || unsafe { sys::xc_wait(&mut h, &mut st) });
        self.settle(h);
        check(rc)?;
        Ok(Status::from_raw(&st))
    }

    /// After a C call that may have finished the handle: free the slot if it
    /// did, else keep the handle for later.
    fn settle(&mut self, h: sys::xc_request_t) {
        if h.is_null() {
            self.slots.release(self.slot);
            self.done = true;
        } else {
            self.slots.put_back(self.slot, h);
        }
    }

    /// One progress pass: `Some(status)` when the request finished (after
    /// which `wait` returns at once), `None` while it is in flight.
    pub fn test(&mut self) -> Result<Option<Status>> {
        if self.done {
            return Ok(Some(Status::empty()));
        }
        let mut st = sys::xc_status_t::default();
        let mut h = self.slots.take(self.slot);
        let mut flag = 0;
        let rc = locked(self.serialized, || unsafe {
            sys::xc_test(&mut h, &mut flag, &mut st)
        });
        self.settle(h);
        check(rc)?;
        Ok((flag != 0).then(|| Status::from_raw(&st)))
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.finish();
        }
    }
}

/// Wait for every request (`xc_waitall`); their statuses in order, or the
/// first error (its message names the request's index). Every request is
/// finished either way.
pub fn wait_all<'scope>(
    requests: impl IntoIterator<Item = Request<'scope>>,
) -> Result<Vec<Status>> {
    let mut reqs: Vec<Request<'scope>> = requests.into_iter().collect();
    let mut handles: Vec<sys::xc_request_t> = reqs
        .iter()
        .map(|r| {
            if r.done {
                ptr::null_mut()
            } else {
                r.slots.take(r.slot)
            }
        })
        .collect();
    let mut sts = vec![sys::xc_status_t::default(); reqs.len()];
    let serialized = reqs.iter().any(|r| r.serialized);
    let rc = locked(serialized, || unsafe {
        sys::xc_waitall(handles.len(), handles.as_mut_ptr(), sts.as_mut_ptr())
    });
    for (r, h) in reqs.iter_mut().zip(handles) {
        if !r.done {
            r.settle(h);
        }
    }
    check(rc)?;
    Ok(sts.iter().map(Status::from_raw).collect())
}

impl Comm {
    /// Start sending `buf` to `dest` with `tag`; `buf` stays borrowed until
    /// the scope ends. See [`scope`].
    pub fn isend<'scope, T: Dtype>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        buf: &'scope [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'scope>> {
        let raw = self.as_raw();
        Request::start(scope, self.serialized(), |out| unsafe {
            sys::xc_isend(
                cptr(buf),
                buf.len(),
                T::DTYPE,
                dest,
                tag,
                raw,
                out,
            )
        })
    }

    /// Start receiving into `buf` from `source` with `tag`; `buf` stays
    /// (mutably) borrowed until the scope ends. See [`scope`].
    pub fn irecv<'scope, T: Dtype>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        buf: &'scope mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Request<'scope>> {
        let raw = self.as_raw();
        let (source, tag) = (source.into().raw(), tag.into().raw());
        Request::start(scope, self.serialized(), |out| unsafe {
            sys::xc_irecv(
                mptr(buf),
                buf.len(),
                T::DTYPE,
                source,
                tag,
                raw,
                out,
            )
        })
    }
}
