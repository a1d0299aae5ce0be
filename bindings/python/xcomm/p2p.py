"""Point-to-point methods of Comm: send, recv, sendrecv, isend, irecv.

On device memory (see collectives.py and stream.py) they are stream-ordered:
the stream is the call's stream= (bound for the peer while the call is made),
else the stream bound to the peer with Comm.bind_stream, else the
communicator's default stream. A device send pairs only with a device
receive, and completes when its receiver has read it: two ranks that each
send to the other before receiving must put both calls in an xcomm.group().
recv on device memory returns at enqueue, with a Status holding the peer, tag
and capacity it was given; irecv's Request gives the matched source, tag and
size once it completes.
"""

from . import groups as _group
from ._cdef import DEFINES
from ._ffi import ffi, lib
from .errors import Error, error_for
from .ops import OpBase, _Call
from .request import Status

ANY_SOURCE = DEFINES["XC_ANY_SOURCE"]
ANY_TAG = DEFINES["XC_ANY_TAG"]
TAG_MAX = DEFINES["XC_TAG_MAX"]


def _peer(source):
    """The stream binding target of a receive: its source rank, None for
    ANY_SOURCE (which no binding names)."""
    return None if source == ANY_SOURCE else source


def _new_status():
    """An xc_status_t that reads as "no message" until the library fills it
    (it is left untouched by a call that fails before matching a message)."""
    st = ffi.new("xc_status_t *")
    st.source, st.tag = ANY_SOURCE, ANY_TAG
    return st


def _finish(rc, st, data, keep, err=None):
    """The Status of a blocking receive, or its error (err, else the one of
    rc) with .status attached (e.g. the source and size of a truncated
    message). Inside a group the receive has only started: keep its buffers
    alive and fill the Status when the group ends."""
    if rc >= 0 and _group.in_group():
        status = Status._from_c(st, data)
        _group.hold(keep, st)

        def fill():
            status.source, status.tag, status.error, status.bytes = st.source, st.tag, st.error, st.bytes
        _group.after_end(fill)
        return status
    if rc < 0:
        err = err if err is not None else error_for(rc)
        st.error = rc if st.error == 0 else st.error
        err.status = Status._from_c(st, data)
        raise err
    return Status._from_c(st, data)


class PointToPoint(OpBase):
    """Mixin: needs self._h() (the live xc_comm_t) and what OpBase needs."""

    def _recv_buffer(self, buf, count, dtype, device, what):
        """(Buffer to receive into, the object returned as the data): buf, or
        a new array of count elements of dtype (default: 0 bytes; a
        DeviceArray with device=True) when buf is None."""
        if buf is None:
            array = self._new_array(0 if count is None else count, "uint8" if dtype is None else dtype, device)
            return self._output(array, what), array
        if count is not None or dtype is not None or device:
            raise TypeError("%s: count, dtype and device are only for buf=None (the buffer's own size, dtype and "
                            "memory are used)" % what)
        return self._output(buf, what), buf

    def send(self, buf, dest, tag=0, *, stream=None):
        """Send buf to rank dest; blocks until buf may be reused (inside
        xcomm.group(): until the group ends; device memory: enqueued on the
        stream, see the module's doc)."""
        def prep():
            b = self._input(buf, "send buffer")
            return _Call((b.ptr, b.count, b.dtype, dest, tag, self._h()), None, (b,), (dest,))
        self._run(lib.xc_send, prep, stream)

    def recv(self, buf=None, source=ANY_SOURCE, tag=ANY_TAG, *, count=None, dtype=None, device=False, stream=None):
        """Receive into buf (or, with buf=None, into a new array of count
        elements of dtype; device=True: a new xcomm.DeviceArray). Returns the
        Status; .data is the buffer. A larger message raises
        xcomm.TruncatedError and leaves buf untouched."""
        def prep():
            b, data = self._recv_buffer(buf, count, dtype, device, "receive buffer")
            st = _new_status()
            return _Call((b.ptr, b.count, b.dtype, source, tag, self._h(), st), (st, data), (b,), (_peer(source),))
        call = self._prepare(prep, stream)
        st, data = call.result
        try:
            self._call(lib.xc_recv, call.args, call, stream)
        except Error as err:
            return _finish(err.code, st, data, call.keep, err)
        return _finish(0, st, data, call.keep)

    def sendrecv(self, sendbuf, dest, recvbuf=None, source=ANY_SOURCE, *, sendtag=0, recvtag=ANY_TAG, stream=None):
        """Send sendbuf to dest and receive from source at once (no deadlock
        in a ring). recvbuf=None receives into a new array shaped like
        sendbuf (in the same memory kind). Both buffers have the same dtype.
        Returns the receive Status."""
        def prep():
            s = self._input(sendbuf, "send buffer")
            if recvbuf is None:
                data = self._new_like(s, s.shape)
            else:
                data = recvbuf
            r = self._output(data, "receive buffer")
            if r.dtype != s.dtype:
                raise TypeError("sendrecv: send and receive buffers must have the same dtype (%s vs %s)"
                                % (s.dtype.name.lower(), r.dtype.name.lower()))
            st = _new_status()
            return _Call((s.ptr, s.count, dest, sendtag, r.ptr, r.count, source, recvtag, s.dtype, self._h(), st),
                         (st, data), (s, r), (dest, _peer(source)))
        call = self._prepare(prep, stream)
        st, data = call.result
        try:
            self._call(lib.xc_sendrecv, call.args, call, stream)
        except Error as err:
            return _finish(err.code, st, data, call.keep, err)
        return _finish(0, st, data, call.keep)

    def isend(self, buf, dest, tag=0, *, stream=None):
        """Start sending buf to dest; returns a Request. Do not modify buf
        until the request completes (the Request keeps it alive)."""
        def prep():
            b = self._input(buf, "send buffer")
            return _Call((b.ptr, b.count, b.dtype, dest, tag, self._h()), None, (b,), (dest,))
        return self._start(lib.xc_isend, prep, stream)

    def irecv(self, buf=None, source=ANY_SOURCE, tag=ANY_TAG, *, count=None, dtype=None, device=False, stream=None):
        """Start receiving into buf (or a new array, as recv); returns a
        Request whose .data is the buffer."""
        def prep():
            b, data = self._recv_buffer(buf, count, dtype, device, "receive buffer")
            return _Call((b.ptr, b.count, b.dtype, source, tag, self._h()), data, (b,), (_peer(source),))
        return self._start(lib.xc_irecv, prep, stream)

