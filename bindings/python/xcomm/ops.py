"""What every op of Comm shares: resolving buffers, device results, and
running the C call on the right stream.

An op on device memory is enqueued on a stream: the call's `stream=` (an
xcomm.Stream), else the stream bound to the communicator for it
(Comm.bind_stream), else the communicator's default stream. The C API picks
the stream through bindings only (xc_stream_bind), so `stream=` binds it for
the op's target (XC_BIND_COLLECTIVES, or the peer ranks of a send or
receive), makes the call, and puts the previous binding back, under a lock of
the communicator that every device op and bind_stream of it takes: ops from
other threads never see the temporary binding.

Inside xcomm.group() the library enqueues device collectives when they are
called, but device sends and receives at the group's end, on the streams
bound then. So a send or receive with stream= in a group keeps its peer's
binding until the outermost group ends, and then puts the previous one back;
two of them with one peer in one group must name the same stream.
"""

import threading

from . import groups as _group
from ._ffi import ffi, lib
from .buffers import input_buffer, is_device_object, output_buffer
from .device import DeviceArray
from .errors import check, error_for
from .request import Request
from .stream import BIND_COLLECTIVES, Stream


class _Call:
    """A prepared C call: its arguments (without the request), what the
    method returns, what the library uses until the op completes, and the
    stream binding targets it runs under (BIND_COLLECTIVES, or peer ranks;
    None for a receive from ANY_SOURCE)."""

    __slots__ = ("args", "result", "keep", "targets")

    def __init__(self, args, result, keep, targets=(BIND_COLLECTIVES,)):
        self.args, self.result, self.keep, self.targets = args, result, keep, targets

    @property
    def device(self):
        return any(getattr(b, "is_device", False) for b in self.keep or ())


_local = threading.local()  # .stream: the stream of the op being prepared on this thread


class OpBase:
    """Mixin: needs self._h(), self._device_lock, self._bound and
    self._device_state (see Comm)."""

    # ---- buffers ------------------------------------------------------------------

    def _dlpack_stream(self):
        """The stream handle a DLPack producer on the device orders its work
        before: the op's wrapped CUDA stream, else None (the legacy default
        stream, as the DLPack protocol assumes for None)."""
        stream = getattr(_local, "stream", None) or self._bound.get(BIND_COLLECTIVES)
        native = getattr(stream, "native", None)
        if native is None:
            return None
        return native if native else 1  # DLPack: 1 is the legacy default stream (0 is not allowed)

    def _device_probe(self):
        """(rc, message): whether this communicator has a device.
        xc_mem_alloc_device of 0 bytes asks (NULL with a device,
        XC_ERR_UNSUPPORTED without); asked once."""
        state = self._device_state
        if state is None:
            out = ffi.new("void **")
            try:
                rc = lib.xc_mem_alloc_device(self._h(), 0, out)
            except AttributeError:  # a libxcomm older than the device API
                rc, message = lib.XC_ERR_UNSUPPORTED, "this libxcomm has no device API (no xc_mem_alloc_device)"
            else:
                message = error_for(rc).message if rc < 0 else ""
                if rc == 0 and out[0] != ffi.NULL:
                    lib.xc_mem_free(self._h(), out[0])
            state = self._device_state = (rc, message)
        return state

    @property
    def has_device(self):
        """True when this communicator's ops take device memory (a CUDA device,
        or the emulated one), False for host memory only."""
        return self._device_probe()[0] == 0

    def _device_ok(self, obj, what):
        """Refuse device memory on a communicator without a device here, in
        Python (before a DLPack capsule is taken): a library without a device
        cannot tell a device pointer from a host one."""
        rc, message = self._device_probe()
        if rc < 0:
            raise error_for(rc, "%s: device memory (%s) on a communicator without a device: %s"
                            % (what, type(obj).__name__, message))

    def _input(self, obj, what):
        if is_device_object(obj):
            self._device_ok(obj, what)
        return input_buffer(obj, what, self._dlpack_stream())

    def _output(self, obj, what):
        if is_device_object(obj):
            self._device_ok(obj, what)
        return output_buffer(obj, what, self._dlpack_stream())

    def _new_like(self, buf, shape):
        """A new result shaped shape, in the memory kind of buf."""
        return buf.new_like(shape, self)

    def _new_array(self, count, dtype, device):
        """A new 1-D receive array: a DeviceArray on this communicator's device
        when device is true, else NumPy."""
        import numpy as np

        if device:
            return DeviceArray.empty(self, (int(count),), dtype)
        return np.empty(int(count), dtype=dtype)

    # ---- running ---------------------------------------------------------------------

    def _prepare(self, prep, stream):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError("stream= takes an xcomm.Stream (wrap a CUDA stream with xcomm.Stream.wrap(comm, s)), "
                            "not %s" % type(stream).__name__)
        _local.stream = stream
        try:
            return prep()
        finally:
            _local.stream = None

    def _restore_binding(self, target):
        """Put back the binding bind_stream made for target (or none)."""
        h = self._handle
        if h is not None:
            prev = self._bound.get(target)
            lib.xc_stream_bind(h, prev._h() if prev is not None and not prev.destroyed else ffi.NULL, target)

    def _group_bind(self, stream, targets):
        """Bind stream for the peers of a send or receive inside a group until
        the outermost group ends (see the module's doc)."""
        held = getattr(_local, "group_binds", None)
        if held is None:
            held = _local.group_binds = {}
        for t in targets:
            other = held.get((id(self), t))
            if other is not None and other[0] is not stream:
                raise ValueError("in one xcomm.group(), device sends and receives with rank %d take one stream: "
                                 "the library enqueues them at the group's end, on one stream per peer" % t)
        for t in dict.fromkeys(targets):
            if (id(self), t) in held:
                continue
            check(lib.xc_stream_bind(self._h(), stream._h(), t))
            held[(id(self), t)] = (stream, self)

            def restore(comm=self, target=t):
                _local.group_binds.pop((id(comm), target), None)
                with comm._device_lock:
                    comm._restore_binding(target)
            _group.after_end(restore)

    def _call(self, fn, args, call, stream):
        """fn(*args) on the op's stream; raises its error. Host ops (and
        device ops without stream=) are called as they are."""
        if not call.device:
            return check(fn(*args))
        with self._device_lock:
            if stream is None:
                return check(fn(*args))
            if None in call.targets:
                raise ValueError("stream= on a device receive needs a source rank, not xcomm.ANY_SOURCE "
                                 "(bind a stream to each peer with Comm.bind_stream instead)")
            if _group.in_group() and BIND_COLLECTIVES not in call.targets:
                self._group_bind(stream, call.targets)
                return check(fn(*args))
            h = self._h()
            saved = []
            try:
                for t in dict.fromkeys(call.targets):
                    check(lib.xc_stream_bind(h, stream._h(), t))
                    saved.append(t)
                rc = fn(*args)
                err = error_for(rc) if rc < 0 else None  # read xc_last_error before the binds below
            finally:
                for t in reversed(saved):
                    self._restore_binding(t)
            if err is not None:
                raise err
            return rc

    def _run(self, fn, prep, stream=None):
        """Prepare and run a blocking op; return its result. Device ops have
        only been enqueued when this returns."""
        call = self._prepare(prep, stream)
        self._call(fn, call.args, call, stream)
        _group.hold(call.keep)  # inside a group the op has only started
        return call.result

    def _start(self, fn, prep, stream=None):
        """Prepare and start a non-blocking op; return its Request."""
        call = self._prepare(prep, stream)
        req = Request(keep=call.keep, data=call.result)
        self._call(fn, call.args + (req._req,), call, stream)
        return req


