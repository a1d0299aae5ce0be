"""Streams (xc_stream_t): the ordered queues that device-memory ops run on.

    with xcomm.Stream(comm) as s:                  # xc_stream_create; destroyed at the end
        comm.allreduce(x, out=x, stream=s)          # enqueued on s; returns at once
        s.synchronize()                             # x holds the sum from here on

    s = xcomm.Stream.wrap(comm, torch.cuda.current_stream())   # the application's stream
    comm.bind_stream(s)                             # comm's device collectives go to s
    comm.bind_stream(s2, target=peer)               # its device sends/receives with peer go to s2

Device ops are stream-ordered (as NCCL's): a call checks its arguments,
enqueues the op and returns; it runs after the work enqueued on its stream
before it. Which stream: the `stream=` of the call, else the stream bound to
the communicator for the op (bind_stream: collectives, or point-to-point with
one peer), else the device's default stream (CUDA's legacy stream 0, which
Stream.wrap(comm, None) names too: synchronize() on that waits for them).
A receive from ANY_SOURCE always goes to the default stream. Host-memory ops
do not use streams (a `stream=` given with host buffers is not used).

A Stream is destroyed by destroy(), at the end of a `with` block, or by the
garbage collector once nothing references it (a communicator it is bound to
references it). Destroying waits for the work xcomm enqueued on it.
"""

import threading
import weakref

from ._cdef import DEFINES
from ._ffi import ffi, lib
from .errors import Error, check, error_for

BIND_COLLECTIVES = DEFINES["XC_BIND_COLLECTIVES"]


def _destroy(handle):
    lib.xc_stream_destroy(handle)


def stream_handle_of(obj):
    """The int handle (cudaStream_t) of a CUDA stream given as an int, None
    (the legacy default stream, 0), a cffi pointer, a ctypes c_void_p, or an
    object of another library: __cuda_stream__() (the CUDA Python protocol),
    .cuda_stream (torch.cuda.Stream), .ptr (cupy.cuda.Stream), .handle
    (numba.cuda streams: a c_void_p or an int-like)."""
    if obj is None:
        return 0
    if isinstance(obj, bool):
        raise TypeError("a CUDA stream handle cannot be a bool")
    if isinstance(obj, int):
        return obj
    if isinstance(obj, ffi.CData):
        return int(ffi.cast("uintptr_t", obj))
    if hasattr(obj, "__cuda_stream__"):
        version_and_handle = obj.__cuda_stream__()
        return stream_handle_of(version_and_handle[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(obj, attr):
            return stream_handle_of(getattr(obj, attr))
    value = getattr(obj, "value", obj)  # ctypes.c_void_p
    if value is None:
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise TypeError("not a CUDA stream: %s (pass an int, None, or an object with __cuda_stream__, "
                        ".cuda_stream, .ptr or .handle)" % type(obj).__name__) from None


class Stream:
    """An xcomm stream. Stream(comm) makes one on comm's device
    (xc_stream_create); Stream.wrap(comm, cuda_stream) wraps a stream the
    application owns (xc_stream_wrap). synchronize() waits for the work xcomm
    enqueued on it and raises the first error of that work; destroy() (or a
    `with` block) releases it. See the module's doc."""

    def __init__(self, comm, *, _handle=None, _native=None, _native_obj=None):
        if _handle is None:
            out = ffi.new("xc_stream_t *")
            check(lib.xc_stream_create(comm._h(), out))
            _handle = out[0]
        self._handle = _handle
        self._native = _native  # the wrapped cudaStream_t (an int), None for a stream xcomm made
        self._native_obj = _native_obj  # kept alive: the CUDA stream must outlive the wrapper
        self._comms = weakref.WeakSet()  # communicators it is bound on (Comm.bind_stream)
        self._lock = threading.Lock()
        self._fin = weakref.finalize(self, _destroy, _handle)
        self._fin.atexit = False  # at exit the process lets go of it anyway

    @classmethod
    def wrap(cls, comm, cuda_stream):
        """Wrap the application's CUDA stream (see stream_handle_of for what
        is accepted; None or 0 is the legacy default stream, where device ops
        go when no stream is bound). xcomm never
        destroys the CUDA stream; this Stream keeps the object given alive.
        On the emulated device any value names an emulated stream of that value."""
        native = stream_handle_of(cuda_stream)
        out = ffi.new("xc_stream_t *")
        check(lib.xc_stream_wrap(comm._h(), ffi.cast("void *", native), out))
        return cls(comm, _handle=out[0], _native=native, _native_obj=cuda_stream)

    def _h(self):
        handle = self._handle
        if handle is None:
            raise error_for(lib.XC_ERR_INVALID_USAGE, "the stream was already destroyed")
        return handle

    @property
    def handle(self):
        """The xc_stream_t (a cffi pointer), e.g. for other cffi code."""
        return self._h()

    @property
    def native(self):
        """The wrapped cudaStream_t as an int (Stream.wrap), None for a
        stream xcomm made (Stream(comm))."""
        return self._native

    @property
    def destroyed(self):
        return self._handle is None

    def synchronize(self):
        """Block until every op xcomm enqueued on this stream has completed
        (under the deadline of the communicators it serves); raise the first
        error of those ops (which clears it)."""
        check(lib.xc_stream_synchronize(self._h()))

    def destroy(self):
        """Wait for the work xcomm enqueued on it, unbind it from every
        communicator and release it (xc_stream_destroy); raise the stream's
        first error, if any. A second call does nothing."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is None:
            return
        self._fin.detach()
        for comm in list(self._comms):
            comm._forget_stream(self)
        self._comms.clear()
        self._native_obj = None
        check(lib.xc_stream_destroy(handle))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            try:
                self.destroy()
            except Error:
                pass  # the block's exception says more
        else:
            self.destroy()
        return False

    def __repr__(self):
        if self._handle is None:
            return "<xcomm.Stream (destroyed)>"
        if self._native is None:
            return "<xcomm.Stream>"
        return "<xcomm.Stream wrapping 0x%x>" % self._native
