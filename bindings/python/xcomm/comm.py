"""Comm: a communicator (xc_comm_t) and the functions that make one."""

import operator
import os
import threading

from ._cdef import DEFINES
from ._ffi import ffi, lib
from .buffers import resolve
from .collectives import Collectives
from .config import make_config
from .device import DeviceMemory, RegisteredBuffer
from .errors import Error, check, error_for, strerror
from .memory import Memory
from .p2p import PointToPoint
from .redist import Redistribution
from .stream import BIND_COLLECTIVES, Stream

UNDEFINED = DEFINES["XC_UNDEFINED"]
UNIQUE_ID_BYTES = ffi.sizeof("xc_unique_id_t")


class UniqueId(bytes):
    """The 128-byte name of one rendezvous (xc_unique_id_t). It is bytes: send
    it to the other ranks any way you like (broadcast a bytearray of it,
    pickle, a file) and rebuild it with UniqueId(data)."""

    def __new__(cls, data):
        data = bytes(data)
        if len(data) != UNIQUE_ID_BYTES:
            raise ValueError("a unique id is %d bytes, not %d" % (UNIQUE_ID_BYTES, len(data)))
        return super().__new__(cls, data)

    def __repr__(self):
        return "xcomm.UniqueId(%s...)" % self[:8].hex()


class Comm(PointToPoint, Collectives, Redistribution):
    """A communicator. Made by xcomm.init(), xcomm.init_rank(), split(),
    split_groups() and dup(); released with free() (collective), or by using
    it as a context manager. It is not freed by the garbage collector, since
    freeing is collective."""

    def __init__(self, handle):
        self._handle = handle  # an xc_comm_t, or None once freed
        self._bound = {}  # stream binding target -> the Stream bound there (bind_stream)
        self._device_lock = threading.RLock()  # device ops and bindings (see ops.py)
        self._device_state = None  # (rc, message) of the "has a device" probe, once made

    @classmethod
    def _create(cls, fn, *args):
        """Call a constructor whose last argument is xc_comm_t *out."""
        out = ffi.new("xc_comm_t *")
        check(fn(*args, out))
        return None if out[0] == ffi.NULL else cls(out[0])

    def _h(self):
        if self._handle is None:
            raise Error(lib.XC_ERR_INVALID_USAGE, "the communicator was already freed")
        return self._handle

    @property
    def handle(self):
        """The xc_comm_t (a cffi pointer), e.g. to pass to other cffi code."""
        return self._h()

    def _query(self, fn):
        out = ffi.new("int *")
        check(fn(self._h(), out))
        return out[0]

    @property
    def rank(self):
        return self._query(lib.xc_comm_rank)

    @property
    def size(self):
        return self._query(lib.xc_comm_size)

    @property
    def local_rank(self):
        """Rank among this communicator's ranks on this host."""
        return self._query(lib.xc_comm_local_rank)

    @property
    def local_size(self):
        """Number of this communicator's ranks on this host."""
        return self._query(lib.xc_comm_local_size)

    @property
    def freed(self):
        return self._handle is None

    def split(self, color, key=None, *, config=None, **options):
        """MPI_Comm_split: ranks with the same color form a new communicator,
        ordered by key (default: keep this communicator's order). Returns None
        for color=xcomm.UNDEFINED. Options (timeout_ms, name, ...) default to
        this communicator's. Collective."""
        cfg, _name = make_config(config, **options)
        return Comm._create(lib.xc_comm_split, self._h(), color, 0 if key is None else key, cfg)

    def split_groups(self, groups, *, config=None, **options):
        """Split into the given groups of ranks, e.g. [[0, 1], [2, 3]]: group
        members are numbered in list order. Every rank passes the same groups;
        a rank in none gets None. Collective."""
        groups = [list(g) for g in groups]
        sizes = ffi.new("int[]", [len(g) for g in groups] or [0])
        ranks = ffi.new("int[]", [r for g in groups for r in g] or [0])
        cfg, _name = make_config(config, **options)
        return Comm._create(lib.xc_comm_split_groups, self._h(), len(groups), sizes, ranks, cfg)

    def create_group(self, ranks, tag=0, *, config=None, **options):
        """A communicator of the listed ranks of this one (new rank = index
        in ranks), made by those ranks alone (xc_comm_create_group, like
        MPI_Comm_create_group): only the listed ranks call it, each with the
        same ranks and tag. Live groups over the same ranks need different
        tags. Options default to this communicator's. Collective over the
        listed ranks."""
        ranks = [operator.index(r) for r in ranks]
        c_ranks = ffi.new("int[]", ranks or [0])
        cfg, _name = make_config(config, **options)
        return Comm._create(lib.xc_comm_create_group, self._h(), len(ranks), c_ranks, operator.index(tag), cfg)

    def dup(self):
        """A communicator with the same ranks whose messages never match
        this one's. Collective."""
        return Comm._create(lib.xc_comm_dup, self._h())

    def free(self):
        """Release the communicator (collective; every rank calls it). Pending
        requests complete with XC_ERR_ABORTED. A second call does nothing.
        Streams bound to it stay alive (destroy them yourself)."""
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        for stream in set(self._bound.values()):
            stream._comms.discard(self)
        self._bound.clear()
        check(lib.xc_comm_free(handle))

    def abort(self):
        """Make every pending and later op fail with XC_ERR_ABORTED. Local,
        never blocks; free() is still needed (and then does not synchronise)."""
        check(lib.xc_comm_abort(self._h()))

    def async_error(self):
        """The first asynchronous error seen (peer failure, abort) as an
        xcomm.Error (not raised), or None. Never blocks."""
        err = ffi.new("xc_result_t *")
        check(lib.xc_comm_get_async_error(self._h(), err))
        return None if err[0] == lib.XC_SUCCESS else error_for(err[0], strerror(err[0]))

    def trace_dump(self, path=None):
        """Write this communicator's flight recorder (its last XC_TRACE_DEPTH
        collectives; docs/design.md "Flight recorder") to path, a str or
        os.PathLike; None: the file XC_TRACE_DIR names (xcomm.Error when
        XC_TRACE_DIR is not set either). xc-trace reads such files from every
        rank. Local, never waits for other ranks; works on an aborted or
        revoked communicator."""
        if path is None:
            c_path = ffi.NULL
        else:
            c_path = ffi.new("char[]", os.fsencode(path))
        check(lib.xc_comm_trace_dump(self._h(), c_path))

    # ---- fault tolerance (docs/fault-tolerance.md) ------------------------------------

    def revoke(self):
        """Make every pending and later op on this communicator fail with
        xcomm.RevokedError on every rank, whatever op each is in. Local, never
        blocks; agree(), shrink(), failed_ranks() and free() still work."""
        check(lib.xc_comm_revoke(self._h()))

    def agree(self, flag=1):
        """A fault-tolerant agreement among the live ranks: the bitwise AND of
        every rank's flag (an int), the same on every survivor, returned. When
        the survivors agree that some ranks failed, raises
        xcomm.PeerFailedError (the same on every survivor) whose .flag holds
        the agreed flag. Collective over the live ranks; works on a revoked
        communicator."""
        c_flag = ffi.new("int *", operator.index(flag))
        rc = lib.xc_comm_agree(self._h(), c_flag)
        if rc == lib.XC_ERR_PEER_FAILED:
            err = error_for(rc)
            err.flag = c_flag[0]
            raise err
        check(rc)
        return c_flag[0]

    def failed_ranks(self):
        """The ranks of this communicator this process knows have failed
        (seen by its transports or agreed on), in order. Local."""
        size = self.size
        n = ffi.new("int *")
        ranks = ffi.new("int[]", max(size, 1))
        check(lib.xc_comm_get_failed(self._h(), n, ranks))
        return [ranks[i] for i in range(n[0])]

    def shrink(self, *, config=None, **options):
        """A communicator of the survivors: the live ranks agree on who
        failed, and the new one holds every other rank, renumbered in order.
        No new connections. Options default to this communicator's.
        Collective over the live ranks; works on a revoked communicator."""
        cfg, _name = make_config(config, **options)
        return Comm._create(lib.xc_comm_shrink, self._h(), cfg)

    def grow(self, nnew, uid=None, *, config=None, **options):
        """This communicator's ranks (0 .. size-1) and nnew new processes
        (size .. size+nnew-1) in a new communicator, on new connections made
        through the rendezvous uid names. Rank 0 passes the UniqueId (from
        xcomm.get_unique_id()); the other ranks may pass None. The new
        processes call xcomm.init_rank(size + nnew, uid, size + i).
        Collective over this communicator and the new processes."""
        c_uid = ffi.NULL
        if uid is not None:
            uid = uid if isinstance(uid, UniqueId) else UniqueId(uid)
            c_uid = ffi.new("xc_unique_id_t *")
            ffi.memmove(c_uid, uid, UNIQUE_ID_BYTES)
        cfg, _name = make_config(config, **options)
        return Comm._create(lib.xc_comm_grow, self._h(), operator.index(nnew), c_uid, cfg)

    def mem_alloc(self, nbytes):
        """nbytes of memory that this communicator's ops move fastest
        (xc_mem_alloc: 2 MiB aligned, on huge pages where the kernel offers
        them, zero-filled), as an xcomm.Memory: a buffer for any op, with
        array(dtype, shape) views and free() (or use it as a context
        manager). Local, not collective; 0 bytes is allowed."""
        nbytes = operator.index(nbytes)
        if nbytes < 0:
            raise ValueError("mem_alloc: nbytes is negative (%d)" % nbytes)
        out = ffi.new("void **")
        check(lib.xc_mem_alloc(self._h(), nbytes, out))
        return Memory(out[0], nbytes)

    # ---- device memory and streams ---------------------------------------------------

    def bind_stream(self, stream, target=BIND_COLLECTIVES):
        """Route this communicator's device-memory ops to stream (an
        xcomm.Stream; None unbinds, back to the default stream): its
        collectives (target xcomm.BIND_COLLECTIVES, the default) or its sends
        and receives with peer rank target (xc_stream_bind). Local; changes
        only ops enqueued afterwards. The communicator keeps the stream alive
        while it is bound; Stream.destroy() unbinds it everywhere."""
        target = operator.index(target)
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError("bind_stream takes an xcomm.Stream or None, not %s (wrap a CUDA stream with "
                            "xcomm.Stream.wrap(comm, s))" % type(stream).__name__)
        with self._device_lock:
            check(lib.xc_stream_bind(self._h(), ffi.NULL if stream is None else stream._h(), target))
            old = self._bound.pop(target, None)
            if stream is not None:
                self._bound[target] = stream
                stream._comms.add(self)
            if old is not None and old is not stream and old not in self._bound.values():
                old._comms.discard(self)

    def bound_stream(self, target=BIND_COLLECTIVES):
        """The Stream bound for target with bind_stream, or None (the default stream)."""
        return self._bound.get(operator.index(target))

    def _forget_stream(self, stream):
        """Stream.destroy(): the library unbinds it from every communicator."""
        with self._device_lock:
            for target in [t for t, s in self._bound.items() if s is stream]:
                del self._bound[target]

    def stream(self):
        """A new xcomm.Stream on this communicator's device (xc_stream_create);
        the same as xcomm.Stream(comm)."""
        return Stream(self)

    def mem_alloc_device(self, nbytes):
        """nbytes of device memory on this communicator's device that peers on
        this host can map (xc_mem_alloc_device, like ncclMemAlloc), as an
        xcomm.DeviceMemory: array(dtype, shape) gives typed DeviceArray views,
        free() (or a `with` block, or garbage collection) gives it back.
        Local, not collective; 0 bytes is allowed. Without a device:
        xcomm.UnsupportedError."""
        nbytes = operator.index(nbytes)
        if nbytes < 0:
            raise ValueError("mem_alloc_device: nbytes is negative (%d)" % nbytes)
        out = ffi.new("void **")
        check(lib.xc_mem_alloc_device(self._h(), nbytes, out))
        return DeviceMemory(out[0], nbytes)

    def register_buffer(self, buf):
        """Register a device buffer used again and again (xc_buffer_register):
        its IPC handle is made once, and peers that read it keep it open
        until the registration ends. buf is any device buffer (DeviceArray,
        DeviceMemory, __cuda_array_interface__, DLPack on the device); the
        returned xcomm.RegisteredBuffer keeps it alive until deregister() (or
        the end of a `with` block). Local, not collective."""
        b = resolve(buf, "register_buffer buffer")  # host memory: the library answers InvalidArgumentError
        out = ffi.new("xc_buffer_t *")
        check(lib.xc_buffer_register(self._h(), b.ptr, b.nbytes, out))
        return RegisteredBuffer(out[0], buf, b.address, b.nbytes, keep=b)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        """Free; after an exception, abort first so free does not wait for
        ranks that may never arrive."""
        if self._handle is None:
            return False
        if exc_type is not None:
            try:
                self.abort()
            finally:
                self.free()
        else:
            self.free()
        return False

    def __repr__(self):
        if self._handle is None:
            return "<xcomm.Comm (freed)>"
        return "<xcomm.Comm rank %d of %d>" % (self.rank, self.size)


def init(config=None, **options):
    """The world communicator of the job, from the launcher's environment
    (xcrun, torchrun, Slurm, Open MPI, MPICH/Hydra; a world of one without
    one). Options: timeout_ms, name, thread_mode, debug_level, device (or
    config=xcomm.Config(...)). Collective over all ranks. Use it as a context
    manager (`with xcomm.init() as comm:`) or call free()."""
    cfg, _name = make_config(config, **options)
    return Comm._create(lib.xc_init, cfg)


def get_unique_id():
    """A new UniqueId: this process serves its rendezvous until the
    communicators made with it are freed."""
    uid = ffi.new("xc_unique_id_t *")
    check(lib.xc_get_unique_id(uid))
    return UniqueId(ffi.buffer(uid))


def init_rank(nranks, uid, rank, config=None, **options):
    """Join the rendezvous named by uid (a UniqueId, or its 128 bytes) as rank
    of nranks. Collective over the nranks callers."""
    uid = uid if isinstance(uid, UniqueId) else UniqueId(uid)
    c_uid = ffi.new("xc_unique_id_t *")
    ffi.memmove(c_uid, uid, UNIQUE_ID_BYTES)
    cfg, _name = make_config(config, **options)
    return Comm._create(lib.xc_comm_init_rank, nranks, c_uid, rank, cfg)
