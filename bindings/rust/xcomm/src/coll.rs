//! The rest of the MPI collective set, blocking and non-blocking.
//!
//! Every op is written once (`*_on`): it checks the slices against the
//! counts (so the library never reads or writes past a slice), then issues
//! either the blocking C call or, given a [`Scope`], its non-blocking twin,
//! whose [`Request`] borrows the buffers for the scope. Count and
//! displacement slices need only live during the call.
//!
//! Arguments that matter only at the root (the receive side of a gather, the
//! send side of a scatter) are `Option`s: `None` elsewhere (ignored there).

use std::ptr;

use xcomm_sys as sys;

use crate::buf::{cptr, mptr};

use crate::comm::Comm;
use crate::dtype::{Dtype, Op};
use crate::error::{Error, Result};
use crate::request::{Request, Scope};

/// How an op is issued: the blocking C call, or the non-blocking one into
/// this request handle.
#[derive(Clone, Copy)]
enum Issue {
    Block,
    Start(*mut sys::xc_request_t),
}

/// `sys::$block(args)` or `sys::$start(args, req)`.
macro_rules! issue {
    ($how:expr, $block:ident, $start:ident, ($($arg:expr),* $(,)?)) => {
        match $how {
            // SAFETY (both arms): the callers checked every slice against the
            // counts; buffers outlive the call (blocking) or the scope.
            Issue::Block => unsafe { sys::$block($($arg),*) },
            Issue::Start(req) => unsafe { sys::$start($($arg,)* req) },
        }
    };
}

fn bad(msg: String) -> Error {
    Error::invalid_argument(msg)
}

/// Displacements (packed when `displs` is `None`) and the extent they reach,
/// after checking that there is one count (and displacement) per rank.
fn layout(op: &str, what: &str, counts: &[usize], displs: Option<&[usize]>, size: usize)
    -> Result<(Vec<usize>, usize)> {
    if counts.len() != size {
        return Err(bad(format!("{op}: {what}counts has {} entries, the communicator {size} ranks", counts.len())));
    }
    let displs = match displs {
        Some(d) if d.len() != size => {
            return Err(bad(format!("{op}: {what}displs has {} entries, the communicator {size} ranks", d.len())))
        }
        Some(d) => d.to_vec(),
        None => counts.iter().scan(0usize, |at, &c| { let d = *at; *at += c; Some(d) }).collect(),
    };
    let mut extent = 0usize;
    for (&c, &d) in counts.iter().zip(&displs) {
        let end = c.checked_add(d).ok_or_else(|| bad(format!("{op}: {what}counts + {what}displs overflow")))?;
        extent = extent.max(end);
    }
    Ok((displs, extent))
}

fn need_len(op: &str, what: &str, have: usize, want: usize) -> Result<()> {
    if have == want {
        Ok(())
    } else {
        Err(bad(format!("{op}: {what} holds {have} elements but must hold {want}")))
    }
}

fn need_at_least(op: &str, what: &str, have: usize, want: usize) -> Result<()> {
    if have >= want {
        Ok(())
    } else {
        Err(bad(format!("{op}: {what} holds {have} elements but the counts reach {want}")))
    }
}

fn root_buf<'a, T>(op: &str, what: &str, b: Option<&'a mut [T]>) -> Result<&'a mut [T]> {
    b.ok_or_else(|| bad(format!("{op}: the root needs {what}")))
}

impl Comm {
    fn usize_size(&self) -> usize {
        self.size() as usize
    }

    fn is_root(&self, root: i32) -> bool {
        self.rank() == root
    }

    /// Issue `f` blocking (no scope) or into a new request of `scope`.
    fn launch<'s>(
        &'s self,
        scope: Option<&'s Scope<'s, '_>>,
        f: impl FnOnce(Issue) -> sys::xc_result_t,
    ) -> Result<Option<Request<'s>>> {
        match scope {
            None => self.call(|| f(Issue::Block)).map(|()| None),
            Some(s) => Request::start(s, self.serialized(), |out| f(Issue::Start(out))).map(Some),
        }
    }

    // ---- barrier, broadcast, allreduce, allgather: the non-blocking twins ----

    /// Start a barrier; the request finishes once every rank entered it.
    pub fn ibarrier<'s>(&'s self, scope: &'s Scope<'s, '_>) -> Result<Request<'s>> {
        let raw = self.as_raw();
        Request::start(scope, self.serialized(), |out| unsafe { sys::xc_ibarrier(raw, out) })
    }

    /// Non-blocking [`broadcast`](Comm::broadcast).
    pub fn ibroadcast<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, buf: &'s mut [T], root: i32)
        -> Result<Request<'s>> {
        let raw = self.as_raw();
        Request::start(scope, self.serialized(), |out| unsafe {
            sys::xc_ibroadcast(mptr(buf), buf.len(), T::DTYPE, root, raw, out)
        })
    }

    /// Non-blocking [`allreduce`](Comm::allreduce).
    pub fn iallreduce<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T], recvbuf: &'s mut [T],
                                    op: Op) -> Result<Request<'s>> {
        need_len("iallreduce", "recvbuf", recvbuf.len(), sendbuf.len())?;
        let raw = self.as_raw();
        Request::start(scope, self.serialized(), |out| unsafe {
            sys::xc_iallreduce(cptr(sendbuf), mptr(recvbuf), sendbuf.len(), T::DTYPE, op.raw(), raw, out)
        })
    }

    /// Non-blocking [`allgather`](Comm::allgather).
    pub fn iallgather<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T], recvbuf: &'s mut [T])
        -> Result<Request<'s>> {
        let want = sendbuf.len().checked_mul(self.usize_size()).unwrap_or(usize::MAX);
        need_len("iallgather", "recvbuf", recvbuf.len(), want)?;
        let raw = self.as_raw();
        Request::start(scope, self.serialized(), |out| unsafe {
            sys::xc_iallgather(cptr(sendbuf), mptr(recvbuf), sendbuf.len(), T::DTYPE, raw, out)
        })
    }

    // ---- reduce ----------------------------------------------------------------

    fn reduce_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, sendbuf: &'s [T],
                               recvbuf: Option<&'s mut [T]>, op: Op, root: i32) -> Result<Option<Request<'s>>> {
        let recv = if self.is_root(root) {
            let r = root_buf("reduce", "recvbuf", recvbuf)?;
            need_len("reduce", "recvbuf", r.len(), sendbuf.len())?;
            mptr(r)
        } else {
            ptr::null_mut()
        };
        let raw = self.as_raw();
        self.launch(scope, |how| {
            issue!(how, xc_reduce, xc_ireduce, (cptr(sendbuf), recv, sendbuf.len(), T::DTYPE, op.raw(), root, raw))
        })
    }

    /// Reduce every rank's `sendbuf` into `recvbuf` of rank `root` (`Some`
    /// there, same length; `None` elsewhere).
    pub fn reduce<T: Dtype>(&self, sendbuf: &[T], recvbuf: Option<&mut [T]>, op: Op, root: i32) -> Result<()> {
        self.reduce_on(None, sendbuf, recvbuf, op, root).map(drop)
    }

    /// Non-blocking [`reduce`](Comm::reduce).
    pub fn ireduce<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T],
                                 recvbuf: Option<&'s mut [T]>, op: Op, root: i32) -> Result<Request<'s>> {
        self.reduce_on(Some(scope), sendbuf, recvbuf, op, root).map(Option::unwrap)
    }

    /// [`reduce`](Comm::reduce) where `buf` is the input everywhere and, at
    /// the root, also the output (`XC_IN_PLACE` there).
    pub fn reduce_in_place<T: Dtype>(&self, buf: &mut [T], op: Op, root: i32) -> Result<()> {
        let raw = self.as_raw();
        let (send, recv) = if self.is_root(root) {
            (sys::XC_IN_PLACE, mptr(buf))
        } else {
            (cptr(buf), ptr::null_mut())
        };
        self.call(|| unsafe { sys::xc_reduce(send, recv, buf.len(), T::DTYPE, op.raw(), root, raw) })
    }

    // ---- scan, exscan --------------------------------------------------------------

    fn scan_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, exclusive: bool, sendbuf: &'s [T],
                             recvbuf: &'s mut [T], op: Op) -> Result<Option<Request<'s>>> {
        need_len(if exclusive { "exscan" } else { "scan" }, "recvbuf", recvbuf.len(), sendbuf.len())?;
        let raw = self.as_raw();
        let (send, recv, n) = (cptr(sendbuf), mptr(recvbuf), sendbuf.len());
        self.launch(scope, |how| {
            if exclusive {
                issue!(how, xc_exscan, xc_iexscan, (send, recv, n, T::DTYPE, op.raw(), raw))
            } else {
                issue!(how, xc_scan, xc_iscan, (send, recv, n, T::DTYPE, op.raw(), raw))
            }
        })
    }

    /// Inclusive prefix reduction: rank `i` gets `op` over the `sendbuf`s of
    /// ranks `0..=i`.
    pub fn scan<T: Dtype>(&self, sendbuf: &[T], recvbuf: &mut [T], op: Op) -> Result<()> {
        self.scan_on(None, false, sendbuf, recvbuf, op).map(drop)
    }

    /// Non-blocking [`scan`](Comm::scan).
    pub fn iscan<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T], recvbuf: &'s mut [T], op: Op)
        -> Result<Request<'s>> {
        self.scan_on(Some(scope), false, sendbuf, recvbuf, op).map(Option::unwrap)
    }

    /// [`scan`](Comm::scan) with `buf` as input and output.
    pub fn scan_in_place<T: Dtype>(&self, buf: &mut [T], op: Op) -> Result<()> {
        let raw = self.as_raw();
        self.call(|| unsafe { sys::xc_scan(sys::XC_IN_PLACE, mptr(buf), buf.len(), T::DTYPE, op.raw(), raw) })
    }

    /// Exclusive prefix reduction: rank `i` gets `op` over ranks `0..i`;
    /// `recvbuf` of rank 0 is left untouched.
    pub fn exscan<T: Dtype>(&self, sendbuf: &[T], recvbuf: &mut [T], op: Op) -> Result<()> {
        self.scan_on(None, true, sendbuf, recvbuf, op).map(drop)
    }

    /// Non-blocking [`exscan`](Comm::exscan).
    pub fn iexscan<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T], recvbuf: &'s mut [T],
                                 op: Op) -> Result<Request<'s>> {
        self.scan_on(Some(scope), true, sendbuf, recvbuf, op).map(Option::unwrap)
    }

    /// [`exscan`](Comm::exscan) with `buf` as input and output (rank 0's
    /// `buf` is left as it was).
    pub fn exscan_in_place<T: Dtype>(&self, buf: &mut [T], op: Op) -> Result<()> {
        let raw = self.as_raw();
        self.call(|| unsafe { sys::xc_exscan(sys::XC_IN_PLACE, mptr(buf), buf.len(), T::DTYPE, op.raw(), raw) })
    }

    // ---- gathers ---------------------------------------------------------------------

    fn allgatherv_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, sendbuf: &'s [T],
                                   recvbuf: &'s mut [T], counts: &[usize], displs: Option<&[usize]>)
        -> Result<Option<Request<'s>>> {
        let (displs, extent) = layout("allgatherv", "", counts, displs, self.usize_size())?;
        need_len("allgatherv", "sendbuf", sendbuf.len(), counts[self.rank() as usize])?;
        need_at_least("allgatherv", "recvbuf", recvbuf.len(), extent)?;
        let raw = self.as_raw();
        let (send, recv) = (cptr(sendbuf), mptr(recvbuf));
        self.launch(scope, |how| {
            issue!(how, xc_allgatherv, xc_iallgatherv,
                   (send, sendbuf.len(), recv, counts.as_ptr(), displs.as_ptr(), T::DTYPE, raw))
        })
    }

    /// Gather rank `i`'s `sendbuf` (`counts[i]` elements) into `recvbuf` of
    /// every rank at `displs[i]` (`None`: packed, one after the other).
    pub fn allgatherv<T: Dtype>(&self, sendbuf: &[T], recvbuf: &mut [T], counts: &[usize],
                                displs: Option<&[usize]>) -> Result<()> {
        self.allgatherv_on(None, sendbuf, recvbuf, counts, displs).map(drop)
    }

    /// Non-blocking [`allgatherv`](Comm::allgatherv).
    pub fn iallgatherv<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T], recvbuf: &'s mut [T],
                                     counts: &[usize], displs: Option<&[usize]>) -> Result<Request<'s>> {
        self.allgatherv_on(Some(scope), sendbuf, recvbuf, counts, displs).map(Option::unwrap)
    }

    /// [`allgatherv`](Comm::allgatherv) where this rank's block is already
    /// in `buf` at its displacement.
    pub fn allgatherv_in_place<T: Dtype>(&self, buf: &mut [T], counts: &[usize], displs: Option<&[usize]>)
        -> Result<()> {
        let (displs, extent) = layout("allgatherv", "", counts, displs, self.usize_size())?;
        need_at_least("allgatherv", "buf", buf.len(), extent)?;
        let (raw, mine) = (self.as_raw(), counts[self.rank() as usize]);
        self.call(|| unsafe {
            sys::xc_allgatherv(sys::XC_IN_PLACE, mine, mptr(buf), counts.as_ptr(), displs.as_ptr(), T::DTYPE, raw)
        })
    }

    fn gather_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, sendbuf: &'s [T],
                               recvbuf: Option<&'s mut [T]>, root: i32) -> Result<Option<Request<'s>>> {
        let recv = if self.is_root(root) {
            let r = root_buf("gather", "recvbuf", recvbuf)?;
            let want = sendbuf.len().checked_mul(self.usize_size()).unwrap_or(usize::MAX);
            need_len("gather", "recvbuf", r.len(), want)?;
            mptr(r)
        } else {
            ptr::null_mut()
        };
        let raw = self.as_raw();
        self.launch(scope, |how| {
            issue!(how, xc_gather, xc_igather, (cptr(sendbuf), recv, sendbuf.len(), T::DTYPE, root, raw))
        })
    }

    /// Gather every rank's `sendbuf` into `recvbuf` of `root` (`size()`
    /// blocks, rank `i`'s at `i * sendbuf.len()`; `None` elsewhere).
    pub fn gather<T: Dtype>(&self, sendbuf: &[T], recvbuf: Option<&mut [T]>, root: i32) -> Result<()> {
        self.gather_on(None, sendbuf, recvbuf, root).map(drop)
    }

    /// Non-blocking [`gather`](Comm::gather).
    pub fn igather<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T], recvbuf: Option<&'s mut [T]>,
                                 root: i32) -> Result<Request<'s>> {
        self.gather_on(Some(scope), sendbuf, recvbuf, root).map(Option::unwrap)
    }

    #[allow(clippy::too_many_arguments)]
    fn gatherv_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, sendbuf: &'s [T],
                                recvbuf: Option<&'s mut [T]>, counts: &[usize], displs: Option<&[usize]>, root: i32)
        -> Result<Option<Request<'s>>> {
        let (recv, displs) = if self.is_root(root) {
            let (displs, extent) = layout("gatherv", "", counts, displs, self.usize_size())?;
            need_len("gatherv", "sendbuf", sendbuf.len(), counts[root as usize])?;
            let r = root_buf("gatherv", "recvbuf", recvbuf)?;
            need_at_least("gatherv", "recvbuf", r.len(), extent)?;
            (mptr(r), displs)
        } else {
            (ptr::null_mut(), Vec::new())
        };
        let (cp, dp) = if recv.is_null() { (ptr::null(), ptr::null()) } else { (counts.as_ptr(), displs.as_ptr()) };
        let raw = self.as_raw();
        self.launch(scope, |how| {
            issue!(how, xc_gatherv, xc_igatherv, (cptr(sendbuf), sendbuf.len(), recv, cp, dp, T::DTYPE, root, raw))
        })
    }

    /// Gather rank `i`'s `sendbuf` into `recvbuf` of `root` at `displs[i]`
    /// (`None`: packed). `counts` and `displs` matter at the root only.
    pub fn gatherv<T: Dtype>(&self, sendbuf: &[T], recvbuf: Option<&mut [T]>, counts: &[usize],
                             displs: Option<&[usize]>, root: i32) -> Result<()> {
        self.gatherv_on(None, sendbuf, recvbuf, counts, displs, root).map(drop)
    }

    /// Non-blocking [`gatherv`](Comm::gatherv).
    #[allow(clippy::too_many_arguments)]
    pub fn igatherv<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T],
                                  recvbuf: Option<&'s mut [T]>, counts: &[usize], displs: Option<&[usize]>, root: i32)
        -> Result<Request<'s>> {
        self.gatherv_on(Some(scope), sendbuf, recvbuf, counts, displs, root).map(Option::unwrap)
    }

    // ---- scatters --------------------------------------------------------------------

    fn scatter_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, sendbuf: Option<&'s [T]>,
                                recvbuf: &'s mut [T], root: i32) -> Result<Option<Request<'s>>> {
        let send = if self.is_root(root) {
            let s = sendbuf.ok_or_else(|| bad("scatter: the root needs sendbuf".into()))?;
            let want = recvbuf.len().checked_mul(self.usize_size()).unwrap_or(usize::MAX);
            need_len("scatter", "sendbuf", s.len(), want)?;
            cptr(s)
        } else {
            ptr::null()
        };
        let raw = self.as_raw();
        self.launch(scope, |how| {
            issue!(how, xc_scatter, xc_iscatter, (send, mptr(recvbuf), recvbuf.len(), T::DTYPE, root, raw))
        })
    }

    /// Send block `i` of `root`'s `sendbuf` (`size()` blocks of
    /// `recvbuf.len()`) to rank `i`'s `recvbuf`; `sendbuf` is `None` elsewhere.
    pub fn scatter<T: Dtype>(&self, sendbuf: Option<&[T]>, recvbuf: &mut [T], root: i32) -> Result<()> {
        self.scatter_on(None, sendbuf, recvbuf, root).map(drop)
    }

    /// Non-blocking [`scatter`](Comm::scatter).
    pub fn iscatter<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: Option<&'s [T]>,
                                  recvbuf: &'s mut [T], root: i32) -> Result<Request<'s>> {
        self.scatter_on(Some(scope), sendbuf, recvbuf, root).map(Option::unwrap)
    }

    #[allow(clippy::too_many_arguments)]
    fn scatterv_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, sendbuf: Option<&'s [T]>,
                                 counts: &[usize], displs: Option<&[usize]>, recvbuf: &'s mut [T], root: i32)
        -> Result<Option<Request<'s>>> {
        let (send, displs) = if self.is_root(root) {
            let (displs, extent) = layout("scatterv", "", counts, displs, self.usize_size())?;
            let s = sendbuf.ok_or_else(|| bad("scatterv: the root needs sendbuf".into()))?;
            need_at_least("scatterv", "sendbuf", s.len(), extent)?;
            need_len("scatterv", "recvbuf", recvbuf.len(), counts[root as usize])?;
            (cptr(s), displs)
        } else {
            (ptr::null(), Vec::new())
        };
        let (cp, dp) = if send.is_null() { (ptr::null(), ptr::null()) } else { (counts.as_ptr(), displs.as_ptr()) };
        let raw = self.as_raw();
        self.launch(scope, |how| {
            issue!(how, xc_scatterv, xc_iscatterv, (send, cp, dp, mptr(recvbuf), recvbuf.len(), T::DTYPE, root, raw))
        })
    }

    /// Send `counts[i]` elements at `displs[i]` (`None`: packed) of `root`'s
    /// `sendbuf` to rank `i`'s `recvbuf` (which holds exactly its count).
    /// `sendbuf`, `counts` and `displs` matter at the root only.
    pub fn scatterv<T: Dtype>(&self, sendbuf: Option<&[T]>, counts: &[usize], displs: Option<&[usize]>,
                              recvbuf: &mut [T], root: i32) -> Result<()> {
        self.scatterv_on(None, sendbuf, counts, displs, recvbuf, root).map(drop)
    }

    /// Non-blocking [`scatterv`](Comm::scatterv).
    #[allow(clippy::too_many_arguments)]
    pub fn iscatterv<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: Option<&'s [T]>, counts: &[usize],
                                   displs: Option<&[usize]>, recvbuf: &'s mut [T], root: i32) -> Result<Request<'s>> {
        self.scatterv_on(Some(scope), sendbuf, counts, displs, recvbuf, root).map(Option::unwrap)
    }

    // ---- reduce_scatter --------------------------------------------------------------

    fn reduce_scatter_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, sendbuf: &'s [T],
                                       recvbuf: &'s mut [T], counts: Option<&[usize]>, op: Op)
        -> Result<Option<Request<'s>>> {
        let raw = self.as_raw();
        let (send, recv) = (cptr(sendbuf), mptr(recvbuf));
        match counts {
            None => {
                let want = recvbuf.len().checked_mul(self.usize_size()).unwrap_or(usize::MAX);
                need_len("reduce_scatter", "sendbuf", sendbuf.len(), want)?;
                let n = recvbuf.len();
                self.launch(scope, |how| {
                    issue!(how, xc_reduce_scatter, xc_ireduce_scatter, (send, recv, n, T::DTYPE, op.raw(), raw))
                })
            }
            Some(counts) => {
                let (_, total) = layout("reduce_scatterv", "recv", counts, None, self.usize_size())?;
                need_len("reduce_scatterv", "sendbuf", sendbuf.len(), total)?;
                need_len("reduce_scatterv", "recvbuf", recvbuf.len(), counts[self.rank() as usize])?;
                self.launch(scope, |how| {
                    issue!(how, xc_reduce_scatterv, xc_ireduce_scatterv,
                           (send, recv, counts.as_ptr(), T::DTYPE, op.raw(), raw))
                })
            }
        }
    }

    /// Reduce `sendbuf` (`size()` blocks of `recvbuf.len()`) over the ranks;
    /// rank `i` gets the reduction of block `i`.
    pub fn reduce_scatter<T: Dtype>(&self, sendbuf: &[T], recvbuf: &mut [T], op: Op) -> Result<()> {
        self.reduce_scatter_on(None, sendbuf, recvbuf, None, op).map(drop)
    }

    /// Non-blocking [`reduce_scatter`](Comm::reduce_scatter).
    pub fn ireduce_scatter<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T],
                                         recvbuf: &'s mut [T], op: Op) -> Result<Request<'s>> {
        self.reduce_scatter_on(Some(scope), sendbuf, recvbuf, None, op).map(Option::unwrap)
    }

    /// Reduce `sendbuf` (`sum(counts)` elements) over the ranks; rank `i`
    /// gets `counts[i]` elements from `counts[0] + .. + counts[i-1]` on.
    pub fn reduce_scatterv<T: Dtype>(&self, sendbuf: &[T], recvbuf: &mut [T], counts: &[usize], op: Op)
        -> Result<()> {
        self.reduce_scatter_on(None, sendbuf, recvbuf, Some(counts), op).map(drop)
    }

    /// Non-blocking [`reduce_scatterv`](Comm::reduce_scatterv).
    pub fn ireduce_scatterv<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T],
                                          recvbuf: &'s mut [T], counts: &[usize], op: Op) -> Result<Request<'s>> {
        self.reduce_scatter_on(Some(scope), sendbuf, recvbuf, Some(counts), op).map(Option::unwrap)
    }

    // ---- all to all --------------------------------------------------------------------

    fn alltoall_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, sendbuf: &'s [T],
                                 recvbuf: &'s mut [T]) -> Result<Option<Request<'s>>> {
        need_len("alltoall", "recvbuf", recvbuf.len(), sendbuf.len())?;
        if sendbuf.len() % self.usize_size() != 0 {
            return Err(bad(format!("alltoall: buffers of {} elements are not {} equal blocks", sendbuf.len(),
                                   self.size())));
        }
        let (raw, n) = (self.as_raw(), sendbuf.len() / self.usize_size());
        self.launch(scope, |how| issue!(how, xc_alltoall, xc_ialltoall, (cptr(sendbuf), mptr(recvbuf), n, T::DTYPE, raw)))
    }

    /// Block `i` of `sendbuf` (`size()` equal blocks) goes to rank `i`; block
    /// `j` of `recvbuf` comes from rank `j`.
    pub fn alltoall<T: Dtype>(&self, sendbuf: &[T], recvbuf: &mut [T]) -> Result<()> {
        self.alltoall_on(None, sendbuf, recvbuf).map(drop)
    }

    /// Non-blocking [`alltoall`](Comm::alltoall).
    pub fn ialltoall<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T], recvbuf: &'s mut [T])
        -> Result<Request<'s>> {
        self.alltoall_on(Some(scope), sendbuf, recvbuf).map(Option::unwrap)
    }

    /// [`alltoall`](Comm::alltoall) with `buf` as input and output.
    pub fn alltoall_in_place<T: Dtype>(&self, buf: &mut [T]) -> Result<()> {
        if buf.len() % self.usize_size() != 0 {
            return Err(bad(format!("alltoall_in_place: buf of {} elements is not {} equal blocks", buf.len(),
                                   self.size())));
        }
        let (raw, n) = (self.as_raw(), buf.len() / self.usize_size());
        self.call(|| unsafe { sys::xc_alltoall(sys::XC_IN_PLACE, mptr(buf), n, T::DTYPE, raw) })
    }

    #[allow(clippy::too_many_arguments)]
    fn alltoallv_on<'s, T: Dtype>(&'s self, scope: Option<&'s Scope<'s, '_>>, sendbuf: &'s [T],
                                  sendcounts: &[usize], sdispls: Option<&[usize]>, recvbuf: &'s mut [T],
                                  recvcounts: &[usize], rdispls: Option<&[usize]>) -> Result<Option<Request<'s>>> {
        let size = self.usize_size();
        let (sdispls, s_extent) = layout("alltoallv", "send", sendcounts, sdispls, size)?;
        let (rdispls, r_extent) = layout("alltoallv", "recv", recvcounts, rdispls, size)?;
        need_at_least("alltoallv", "sendbuf", sendbuf.len(), s_extent)?;
        need_at_least("alltoallv", "recvbuf", recvbuf.len(), r_extent)?;
        let raw = self.as_raw();
        self.launch(scope, |how| {
            issue!(how, xc_alltoallv, xc_ialltoallv,
                   (cptr(sendbuf), sendcounts.as_ptr(), sdispls.as_ptr(), mptr(recvbuf), recvcounts.as_ptr(),
                    rdispls.as_ptr(), T::DTYPE, raw))
        })
    }

    /// `sendcounts[i]` elements at `sdispls[i]` of `sendbuf` go to rank `i`;
    /// `recvcounts[j]` elements from rank `j` land at `rdispls[j]` of
    /// `recvbuf` (displacements `None`: packed).
    #[allow(clippy::too_many_arguments)]
    pub fn alltoallv<T: Dtype>(&self, sendbuf: &[T], sendcounts: &[usize], sdispls: Option<&[usize]>,
                               recvbuf: &mut [T], recvcounts: &[usize], rdispls: Option<&[usize]>) -> Result<()> {
        self.alltoallv_on(None, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls).map(drop)
    }

    /// Non-blocking [`alltoallv`](Comm::alltoallv).
    #[allow(clippy::too_many_arguments)]
    pub fn ialltoallv<'s, T: Dtype>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T], sendcounts: &[usize],
                                    sdispls: Option<&[usize]>, recvbuf: &'s mut [T], recvcounts: &[usize],
                                    rdispls: Option<&[usize]>) -> Result<Request<'s>> {
        self.alltoallv_on(Some(scope), sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls)
            .map(Option::unwrap)
    }
}
