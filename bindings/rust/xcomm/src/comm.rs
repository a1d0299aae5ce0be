use std::fmt;
use std::mem::{size_of, ManuallyDrop};
use std::ptr;
use std::sync::{Mutex, MutexGuard};

use xcomm_sys as sys;

use crate::buf::{cptr, mptr};

use crate::config::Config;
use crate::dtype::{Dtype, Op};
use crate::error::{check, Error, Result};

/// Colour of [`Comm::split`] that joins no group (`XC_UNDEFINED`): that rank
/// gets `None`.
pub const UNDEFINED: i32 = sys::XC_UNDEFINED;
/// The largest tag (`XC_TAG_MAX`); tags are `0..=TAG_MAX`.
pub const TAG_MAX: i32 = sys::XC_TAG_MAX;

// The lock of communicators made with `ThreadMode::Serialized`: the library
// takes no locks of its own there, so the wrapper keeps two threads from
// entering it at once (which `Comm: Sync` would otherwise allow).
static SERIAL: Mutex<()> = Mutex::new(());

pub(crate) fn enter(serialized: bool) -> Option<MutexGuard<'static, ()>> {
    serialized.then(|| {
        SERIAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    })
}

/// Run one C call, under the lock when `serialized`. The lock is released
/// before the result is looked at (the last error is thread-local), so no
/// drop that takes it again runs while it is held.
pub(crate) fn locked<R>(serialized: bool, f: impl FnOnce() -> R) -> R {
    let _g = enter(serialized);
    f()
}

/// Where a receive takes its message from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// Any rank (`XC_ANY_SOURCE`); [`Status::source`] says which.
    Any,
    /// This rank of the communicator.
    Rank(i32),
}

/// Which tag a receive matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tag {
    /// Any tag (`XC_ANY_TAG`); [`Status::tag`] says which.
    Any,
    /// This tag, `0..=TAG_MAX`.
    Value(i32),
}

impl From<i32> for Source {
    fn from(rank: i32) -> Source {
        Source::Rank(rank)
    }
}
impl From<i32> for Tag {
    fn from(tag: i32) -> Tag {
        Tag::Value(tag)
    }
}
impl Source {
    pub(crate) fn raw(self) -> i32 {
        match self {
            Source::Any => sys::XC_ANY_SOURCE,
            Source::Rank(r) => r,
        }
    }
}
impl Tag {
    pub(crate) fn raw(self) -> i32 {
        match self {
            Tag::Any => sys::XC_ANY_TAG,
            Tag::Value(t) => t,
        }
    }
}

/// What a finished receive (or send) reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Status {
    /// The sender's rank in the communicator.
    pub source: i32,
    pub tag: i32,
    /// The request's own result code (0 on success).
    pub error: i32,
    /// Bytes of the message (also when it was truncated).
    pub bytes: usize,
}

impl Status {
    pub(crate) fn from_raw(s: &sys::xc_status_t) -> Status {
        Status {
            source: s.source,
            tag: s.tag,
            error: s.error,
            bytes: s.bytes,
        }
    }

    /// What a request that already finished reports again (as `xc_wait` on
    /// a NULL request): any source, any tag, no error, no bytes.
    pub(crate) fn empty() -> Status {
        Status {
            source: sys::XC_ANY_SOURCE,
            tag: sys::XC_ANY_TAG,
            error: sys::XC_SUCCESS,
            bytes: 0,
        }
    }

    /// The message's length in elements of `T`.
    pub fn count<T: Dtype>(&self) -> usize {
        self.bytes / size_of::<T>()
    }
}

/// A rendezvous id for [`Comm::init_rank`]: made by one process (which then
/// serves the rendezvous for the rest of its life), handed to every rank by
/// the application's own means (its bytes are plain data).
#[derive(Clone, Copy)]
pub struct UniqueId(sys::xc_unique_id_t);

impl UniqueId {
    /// `xc_get_unique_id`: starts serving a new rendezvous in this process.
    pub fn new() -> Result<UniqueId> {
        let mut id = sys::xc_unique_id_t { internal: [0; 128] };
        check(unsafe { sys::xc_get_unique_id(&mut id) })?;
        Ok(UniqueId(id))
    }

    pub fn as_bytes(&self) -> &[u8; 128] {
        // SAFETY: [c_char; 128] and [u8; 128] have the same layout.
        unsafe { &*(self.0.internal.as_ptr() as *const [u8; 128]) }
    }

    pub fn from_bytes(bytes: &[u8; 128]) -> UniqueId {
        let mut id = sys::xc_unique_id_t { internal: [0; 128] };
        for (d, s) in id.internal.iter_mut().zip(bytes) {
            *d = *s as sys::c_char;
        }
        UniqueId(id)
    }
}

impl fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UniqueId(..)")
    }
}

/// A communicator: a group of ranks with its own message space.
///
/// Dropping it calls `xc_comm_free`, which is **collective**: every rank of
/// the communicator must drop (or [`free`](Comm::free)) it. While a thread
/// panics, the drop aborts the communicator first, so the panicking rank
/// does not wait in the closing barrier for peers that will never join.
///
/// # Threads
///
/// `Comm` is `Send` and `Sync`. Under the default thread mode
/// (`XC_THREAD_MULTIPLE`) every xcomm function may be called from any thread,
/// concurrently with others, so sharing `&Comm` between threads is sound.
/// With [`ThreadMode::Serialized`](crate::ThreadMode::Serialized) the library
/// relies on the caller never entering it from two threads at once; the
/// wrapper then takes a process-wide lock around each call on such a
/// communicator and its requests, which keeps it sound (at the price that a
/// thread blocked in a call blocks the others).
///
/// As in MPI, collectives on one communicator must be called in the same
/// order on every rank: two threads running collectives on the same
/// communicator at once make the order arbitrary. Give each thread its own
/// communicator ([`dup`](Comm::dup)).
pub struct Comm {
    raw: sys::xc_comm_t,
    rank: i32,
    size: i32,
    local_rank: i32,
    local_size: i32,
    serialized: bool,
}

// SAFETY: see "Threads" above: the C library is thread-safe for every call in
// the default mode, and the wrapper serialises calls in the serialized mode.
unsafe impl Send for Comm {}
unsafe impl Sync for Comm {}

impl fmt::Debug for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Comm")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("local_rank", &self.local_rank)
            .field("local_size", &self.local_size)
            .finish()
    }
}

fn query(
    raw: sys::xc_comm_t,
    f: unsafe extern "C" fn(sys::xc_comm_t, *mut i32) -> sys::xc_result_t,
) -> Result<i32> {
    let mut v = 0;
    check(unsafe { f(raw, &mut v) })?;
    Ok(v)
}

fn to_c_int(n: usize, what: &str) -> Result<i32> {
    i32::try_from(n)
        .map_err(|_| Error::invalid_argument(format!("{what} {n} does not fit a C int")))
}

/// The C config of an optional Config (NULL: defaults / inherit).
fn cfg_ptr(cfg: Option<&sys::xc_config_t>) -> *const sys::xc_config_t {
    cfg.map_or(ptr::null(), |c| c as *const _)
}

/// The world: every rank of the job, from the launcher's environment (xcrun,
/// torchrun, Slurm, Open MPI, MPICH/Hydra); without a launcher, a world of
/// one. Collective over the job.
///
/// Once per process: a second call (after a success or a failure in the
/// rendezvous) returns `XC_ERR_INVALID_USAGE`. Make more communicators with
/// [`Comm::dup`], [`Comm::split`], or [`UniqueId`] and [`Comm::init_rank`].
pub fn init() -> Result<Comm> {
    let mut raw = ptr::null_mut();
    check(unsafe { sys::xc_init(ptr::null(), &mut raw) })?;
    Comm::from_raw(raw, false)
}

/// [`init`] with options (also once per process, counting [`init`]).
pub fn init_with(cfg: &Config) -> Result<Comm> {
    let c = cfg.raw()?;
    let mut raw = ptr::null_mut();
    check(locked(cfg.serialized(), || unsafe {
        sys::xc_init(&c, &mut raw)
    }))?;
    Comm::from_raw(raw, cfg.serialized())
}

impl Comm {
    fn from_raw(raw: sys::xc_comm_t, serialized: bool) -> Result<Comm> {
        // Own it first, so an error below still frees it.
        let mut comm = Comm {
            raw,
            rank: 0,
            size: 0,
            local_rank: 0,
            local_size: 0,
            serialized,
        };
        comm.rank = query(raw, sys::xc_comm_rank)?;
        comm.size = query(raw, sys::xc_comm_size)?;
        comm.local_rank = query(raw, sys::xc_comm_local_rank)?;
        comm.local_size = query(raw, sys::xc_comm_local_size)?;
        Ok(comm)
    }

    /// A child handle (NULL: this rank is in no group).
    fn child(&self, raw: sys::xc_comm_t) -> Result<Option<Comm>> {
        if raw.is_null() {
            Ok(None)
        } else {
            Comm::from_raw(raw, self.serialized).map(Some)
        }
    }

    /// Join the rendezvous `id` as `rank` of `nranks` (`xc_comm_init_rank`).
    /// Collective over the `nranks` callers.
    pub fn init_rank(nranks: i32, id: &UniqueId, rank: i32) -> Result<Comm> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::xc_comm_init_rank(nranks, &id.0, rank, ptr::null(), &mut raw) })?;
        Comm::from_raw(raw, false)
    }

    /// [`init_rank`](Comm::init_rank) with options.
    pub fn init_rank_with(nranks: i32, id: &UniqueId, rank: i32, cfg: &Config) -> Result<Comm> {
        let c = cfg.raw()?;
        let mut raw = ptr::null_mut();
        check(locked(cfg.serialized(), || unsafe {
            sys::xc_comm_init_rank(nranks, &id.0, rank, &c, &mut raw)
        }))?;
        Comm::from_raw(raw, cfg.serialized())
    }

    /// The C handle, for calling xcomm-sys directly. It stays owned by this
    /// `Comm`: do not free it.
    pub fn as_raw(&self) -> sys::xc_comm_t {
        self.raw
    }

    /// This rank, `0..size()`.
    pub fn rank(&self) -> i32 {
        self.rank
    }
    /// The number of ranks.
    pub fn size(&self) -> i32 {
        self.size
    }
    /// This rank among the ranks of this communicator on this host.
    pub fn local_rank(&self) -> i32 {
        self.local_rank
    }
    /// The number of ranks of this communicator on this host.
    pub fn local_size(&self) -> i32 {
        self.local_size
    }

    /// Free the communicator now and see whether that worked (dropping it
    /// does the same and ignores the result). Collective.
    pub fn free(self) -> Result<()> {
        let this = ManuallyDrop::new(self);
        let _g = enter(this.serialized);
        check(unsafe { sys::xc_comm_free(this.raw) })
    }

    /// Make every pending and later op on this communicator fail with
    /// `XC_ERR_ABORTED`, here only (other ranks see it as a failure when they
    /// talk to this one). Never blocks. The drop then frees without
    /// synchronising.
    pub fn abort(&self) -> Result<()> {
        self.call(|| unsafe { sys::xc_comm_abort(self.raw) })
    }

    /// The first asynchronous error seen on this communicator (a peer failed,
    /// an abort), if any. Never blocks.
    pub fn async_error(&self) -> Result<Option<Error>> {
        let mut err = sys::XC_SUCCESS;
        self.call(|| unsafe { sys::xc_comm_get_async_error(self.raw, &mut err) })?;
        Ok((err != sys::XC_SUCCESS).then(|| Error::new(err, "")))
    }

    /// Write this communicator's flight recorder (its last `XC_TRACE_DEPTH`
    /// collectives; docs/design.md "Flight recorder") to `path`; `None`: the
    /// file `XC_TRACE_DIR` names (`XC_ERR_INVALID_ARGUMENT` when that is not
    /// set either, or when `path` holds a NUL byte). `xc-trace` reads such
    /// files from every rank. Local, never waits for other ranks; works on an
    /// aborted or revoked communicator.
    pub fn trace_dump(&self, path: Option<&std::path::Path>) -> Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let c = match path {
            Some(p) => Some(std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| {
                Error::new(sys::XC_ERR_INVALID_ARGUMENT, "the trace path holds a NUL byte")
            })?),
            None => None,
        };
        let p = c.as_ref().map_or(ptr::null(), |c| c.as_ptr());
        // Not through call(): it may be called inside a group too.
        check(locked(self.serialized, || unsafe { sys::xc_comm_trace_dump(self.raw, p) }))
    }

    fn split_impl(&self, color: i32, key: i32, cfg: Option<&Config>) -> Result<Option<Comm>> {
        let c = cfg.map(Config::raw).transpose()?;
        let mut out = ptr::null_mut();
        self.call(|| unsafe {
            sys::xc_comm_split(self.raw, color, key, cfg_ptr(c.as_ref()), &mut out)
        })?;
        self.child(out)
    }

    /// `MPI_Comm_split`: ranks passing the same `color` (>= 0) form a new
    /// communicator, ordered by `key`, then by rank here. A rank passing
    /// [`UNDEFINED`] joins none and gets `None`. Collective.
    pub fn split(&self, color: i32, key: i32) -> Result<Option<Comm>> {
        self.split_impl(color, key, None)
    }

    /// [`split`](Comm::split) with options for the child (its timeout and
    /// name; the thread mode is the parent's).
    pub fn split_with(&self, color: i32, key: i32, cfg: &Config) -> Result<Option<Comm>> {
        self.split_impl(color, key, Some(cfg))
    }

    fn split_groups_impl(&self, groups: &[&[i32]], cfg: Option<&Config>) -> Result<Option<Comm>> {
        let c = cfg.map(Config::raw).transpose()?;
        let ngroups = to_c_int(groups.len(), "the number of groups")?;
        let sizes = groups
            .iter()
            .map(|g| to_c_int(g.len(), "a group's size"))
            .collect::<Result<Vec<i32>>>()?;
        let ranks: Vec<i32> = groups.iter().flat_map(|g| g.iter().copied()).collect();
        let mut out = ptr::null_mut();
        self.call(|| unsafe {
            sys::xc_comm_split_groups(
                self.raw,
                ngroups,
                sizes.as_ptr(),
                ranks.as_ptr(),
                cfg_ptr(c.as_ref()),
                &mut out,
            )
        })?;
        self.child(out)
    }

    /// Split into explicit groups: `groups[g]` lists the ranks (here) of group
    /// `g`, in their new order. Every rank passes the same lists; groups must
    /// not overlap; a rank in no group gets `None`. Collective.
    pub fn split_groups(&self, groups: &[&[i32]]) -> Result<Option<Comm>> {
        self.split_groups_impl(groups, None)
    }

    /// [`split_groups`](Comm::split_groups) with options for the child.
    pub fn split_groups_with(&self, groups: &[&[i32]], cfg: &Config) -> Result<Option<Comm>> {
        self.split_groups_impl(groups, Some(cfg))
    }

    fn create_group_impl(&self, ranks: &[i32], tag: i32, cfg: Option<&Config>) -> Result<Comm> {
        let c = cfg.map(Config::raw).transpose()?;
        let n = to_c_int(ranks.len(), "the number of ranks")?;
        let mut out = ptr::null_mut();
        self.call(|| unsafe {
            sys::xc_comm_create_group(self.raw, n, ranks.as_ptr(), tag, cfg_ptr(c.as_ref()), &mut out)
        })?;
        Comm::from_raw(out, self.serialized)
    }

    /// A communicator of the listed ranks (here), new rank = index in
    /// `ranks`, made by those ranks alone (`MPI_Comm_create_group`): only
    /// they call it, each with the same list and `tag`. Live groups over the
    /// same ranks need different tags. Collective over the listed ranks.
    pub fn create_group(&self, ranks: &[i32], tag: i32) -> Result<Comm> {
        self.create_group_impl(ranks, tag, None)
    }

    /// [`create_group`](Comm::create_group) with options for the child.
    pub fn create_group_with(&self, ranks: &[i32], tag: i32, cfg: &Config) -> Result<Comm> {
        self.create_group_impl(ranks, tag, Some(cfg))
    }

    /// The same ranks in a separate message space. Collective.
    pub fn dup(&self) -> Result<Comm> {
        let mut out = ptr::null_mut();
        self.call(|| unsafe { sys::xc_comm_dup(self.raw, &mut out) })?;
        Comm::from_raw(out, self.serialized)
    }

    // ---- fault tolerance (docs/fault-tolerance.md) -------------------------

    /// Make every pending and later op on this communicator fail with
    /// `XC_ERR_REVOKED` on every rank, whatever op each is in. Local, never
    /// blocks; [`agree`](Comm::agree), [`shrink`](Comm::shrink),
    /// [`failed_ranks`](Comm::failed_ranks) and the drop still work.
    pub fn revoke(&self) -> Result<()> {
        // Not through call(): it may be called inside a group too.
        check(locked(self.serialized, || unsafe { sys::xc_comm_revoke(self.raw) }))
    }

    /// A fault-tolerant agreement among the live ranks: the bitwise AND of
    /// every rank's `flag`, the same on every survivor, and whether they
    /// agreed that no rank failed (`true`) or that some did (`false`; then
    /// [`failed_ranks`](Comm::failed_ranks) includes them). Collective over
    /// the live ranks; works on a revoked communicator.
    pub fn agree(&self, flag: i32) -> Result<(i32, bool)> {
        if crate::group::active() {
            return Err(crate::group::refuse("a blocking call on a Comm"));
        }
        let mut f = flag;
        let rc = locked(self.serialized, || unsafe { sys::xc_comm_agree(self.raw, &mut f) });
        if rc == sys::XC_ERR_PEER_FAILED {
            return Ok((f, false));
        }
        check(rc)?;
        Ok((f, true))
    }

    /// The ranks of this communicator this process knows have failed (seen
    /// by its transports or agreed on), in order. Local.
    pub fn failed_ranks(&self) -> Result<Vec<i32>> {
        let mut ranks = vec![0i32; self.size.max(1) as usize];
        let mut n = 0;
        check(locked(self.serialized, || unsafe { sys::xc_comm_get_failed(self.raw, &mut n, ranks.as_mut_ptr()) }))?;
        ranks.truncate(n as usize);
        Ok(ranks)
    }

    fn shrink_impl(&self, cfg: Option<&Config>) -> Result<Comm> {
        let c = cfg.map(Config::raw).transpose()?;
        let mut out = ptr::null_mut();
        self.call(|| unsafe { sys::xc_comm_shrink(self.raw, cfg_ptr(c.as_ref()), &mut out) })?;
        Comm::from_raw(out, self.serialized)
    }

    /// A communicator of the survivors: the live ranks agree on who failed,
    /// and the new one holds every other rank, renumbered in order. No new
    /// connections. Collective over the live ranks; works on a revoked
    /// communicator.
    pub fn shrink(&self) -> Result<Comm> {
        self.shrink_impl(None)
    }

    /// [`shrink`](Comm::shrink) with options for the child.
    pub fn shrink_with(&self, cfg: &Config) -> Result<Comm> {
        self.shrink_impl(Some(cfg))
    }

    fn grow_impl(&self, nnew: i32, id: Option<&UniqueId>, cfg: Option<&Config>) -> Result<Comm> {
        let c = cfg.map(Config::raw).transpose()?;
        let id_ptr = id.map_or(ptr::null(), |u| &u.0 as *const sys::xc_unique_id_t);
        let mut out = ptr::null_mut();
        self.call(|| unsafe { sys::xc_comm_grow(self.raw, nnew, id_ptr, cfg_ptr(c.as_ref()), &mut out) })?;
        Comm::from_raw(out, self.serialized)
    }

    /// This communicator's ranks (`0..size()`) and `nnew` new processes
    /// (`size()..size() + nnew`) in a new communicator on new connections,
    /// made through the rendezvous `id` names. Rank 0 passes the id (from
    /// [`UniqueId::new`]); the other ranks may pass `None`. The new
    /// processes call [`Comm::init_rank`]`(size() + nnew, &id, size() + i)`.
    /// Collective over this communicator and the new processes.
    pub fn grow(&self, nnew: i32, id: Option<&UniqueId>) -> Result<Comm> {
        self.grow_impl(nnew, id, None)
    }

    /// [`grow`](Comm::grow) with options for the grown communicator.
    pub fn grow_with(&self, nnew: i32, id: Option<&UniqueId>, cfg: &Config) -> Result<Comm> {
        self.grow_impl(nnew, id, Some(cfg))
    }

    pub(crate) fn serialized(&self) -> bool {
        self.serialized
    }

    /// One C call on this communicator; `Err` with the last error on failure.
    /// Refused inside [`group`](crate::group), where the call would only
    /// start and its buffers could be freed before the group ends.
    pub(crate) fn call(&self, f: impl FnOnce() -> sys::xc_result_t) -> Result<()> {
        if crate::group::active() {
            return Err(crate::group::refuse("a blocking call on a Comm"));
        }
        check(locked(self.serialized, f))
    }

    // ---- point to point ----------------------------------------------------

    /// Send `buf` to rank `dest` with `tag` (`0..=TAG_MAX`); returns once the
    /// buffer may be reused. Messages between two ranks on one communicator
    /// are received in the order they were sent.
    pub fn send<T: Dtype>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.call(|| unsafe {
            sys::xc_send(
                cptr(buf),
                buf.len(),
                T::DTYPE,
                dest,
                tag,
                self.raw,
            )
        })
    }

    /// Receive into `buf` from `source` (a rank or [`Source::Any`]) with `tag`
    /// (a value or [`Tag::Any`]). A longer message fails with
    /// `XC_ERR_TRUNCATED` and leaves `buf` untouched.
    pub fn recv<T: Dtype>(
        &self,
        buf: &mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Status> {
        let mut st = sys::xc_status_t::default();
        self.call(|| unsafe {
            sys::xc_recv(
                mptr(buf),
                buf.len(),
                T::DTYPE,
                source.into().raw(),
                tag.into().raw(),
                self.raw,
                &mut st,
            )
        })?;
        Ok(Status::from_raw(&st))
    }

    /// Send `sendbuf` to `dest` and receive into `recvbuf` at once (no
    /// deadlock when every rank of a ring does it).
    #[allow(clippy::too_many_arguments)]
    pub fn sendrecv<T: Dtype>(
        &self,
        sendbuf: &[T],
        dest: i32,
        sendtag: i32,
        recvbuf: &mut [T],
        source: impl Into<Source>,
        recvtag: impl Into<Tag>,
    ) -> Result<Status> {
        let mut st = sys::xc_status_t::default();
        self.call(|| unsafe {
            sys::xc_sendrecv(
                cptr(sendbuf),
                sendbuf.len(),
                dest,
                sendtag,
                mptr(recvbuf),
                recvbuf.len(),
                source.into().raw(),
                recvtag.into().raw(),
                T::DTYPE,
                self.raw,
                &mut st,
            )
        })?;
        Ok(Status::from_raw(&st))
    }

    // ---- collectives -------------------------------------------------------

    /// Wait until every rank has entered the barrier.
    pub fn barrier(&self) -> Result<()> {
        self.call(|| unsafe { sys::xc_barrier(self.raw) })
    }

    /// Copy `buf` of rank `root` into `buf` of every rank (same length
    /// everywhere).
    pub fn broadcast<T: Dtype>(&self, buf: &mut [T], root: i32) -> Result<()> {
        self.call(|| unsafe {
            sys::xc_broadcast(
                mptr(buf),
                buf.len(),
                T::DTYPE,
                root,
                self.raw,
            )
        })
    }

    /// `recvbuf[i] = op over the ranks of sendbuf[i]`; every rank gets the
    /// same bits. The slices must have the same length.
    pub fn allreduce<T: Dtype>(&self, sendbuf: &[T], recvbuf: &mut [T], op: Op) -> Result<()> {
        if sendbuf.len() != recvbuf.len() {
            return Err(Error::invalid_argument(format!(
                "allreduce: sendbuf holds {} elements but recvbuf {}; they must be equal",
                sendbuf.len(),
                recvbuf.len()
            )));
        }
        self.call(|| unsafe {
            sys::xc_allreduce(
                cptr(sendbuf),
                mptr(recvbuf),
                recvbuf.len(),
                T::DTYPE,
                op.raw(),
                self.raw,
            )
        })
    }

    /// [`allreduce`](Comm::allreduce) with `buf` as both input and output.
    pub fn allreduce_in_place<T: Dtype>(&self, buf: &mut [T], op: Op) -> Result<()> {
        self.call(|| unsafe {
            sys::xc_allreduce(
                sys::XC_IN_PLACE,
                mptr(buf),
                buf.len(),
                T::DTYPE,
                op.raw(),
                self.raw,
            )
        })
    }

    /// Gather every rank's `sendbuf` into `recvbuf`, rank `i`'s at
    /// `i * sendbuf.len()`. `recvbuf.len()` must be `size() * sendbuf.len()`.
    pub fn allgather<T: Dtype>(&self, sendbuf: &[T], recvbuf: &mut [T]) -> Result<()> {
        let want = sendbuf.len().checked_mul(self.size as usize);
        if want != Some(recvbuf.len()) {
            return Err(Error::invalid_argument(format!(
                "allgather: recvbuf holds {} elements but must hold size {} x sendbuf {}",
                recvbuf.len(),
                self.size,
                sendbuf.len()
            )));
        }
        self.call(|| unsafe {
            sys::xc_allgather(
                cptr(sendbuf),
                mptr(recvbuf),
                sendbuf.len(),
                T::DTYPE,
                self.raw,
            )
        })
    }

    /// [`allgather`](Comm::allgather) where this rank's block is already in
    /// place: `buf` holds `size()` blocks of equal length.
    pub fn allgather_in_place<T: Dtype>(&self, buf: &mut [T]) -> Result<()> {
        if buf.len() % self.size as usize != 0 {
            return Err(Error::invalid_argument(format!(
                "allgather_in_place: buf holds {} elements, not a multiple of size {}",
                buf.len(),
                self.size
            )));
        }
        let block = buf.len() / self.size as usize;
        self.call(|| unsafe {
            sys::xc_allgather(
                sys::XC_IN_PLACE,
                mptr(buf),
                block,
                T::DTYPE,
                self.raw,
            )
        })
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        let _g = enter(self.serialized);
        // SAFETY: the handle is owned by this Comm and freed exactly once
        // (`free` skips the drop); no Request outlives its borrow of it.
        unsafe {
            if std::thread::panicking() {
                sys::xc_comm_abort(self.raw);
            }
            sys::xc_comm_free(self.raw);
        }
    }
}
