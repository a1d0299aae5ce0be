"""Point-to-point methods of Comm: send, recv, sendrecv, isend, irecv."""

import numpy as np

from . import groups as _group
from ._cdef import DEFINES
from ._ffi import ffi, lib
from .buffers import input_buffer, output_buffer
from .errors import check, error_for
from .request import Request, Status

ANY_SOURCE = DEFINES["XC_ANY_SOURCE"]
ANY_TAG = DEFINES["XC_ANY_TAG"]
TAG_MAX = DEFINES["XC_TAG_MAX"]


def _recv_buffer(buf, count, dtype, what):
    """The Buffer to receive into: buf, or a new array of count elements of
    dtype (default: 0 bytes) when buf is None."""
    if buf is None:
        array = np.empty(0 if count is None else int(count), dtype=np.uint8 if dtype is None else dtype)
        return output_buffer(array, what)
    if count is not None or dtype is not None:
        raise TypeError("%s: count and dtype are only for buf=None (the buffer's own size and dtype are used)"
                        % what)
    return output_buffer(buf, what)


def _new_status():
    """An xc_status_t that reads as "no message" until the library fills it
    (it is left untouched by a call that fails before matching a message)."""
    st = ffi.new("xc_status_t *")
    st.source, st.tag = ANY_SOURCE, ANY_TAG
    return st


def _finish(rc, st, data, keep):
    """The Status of a blocking receive, or its error with .status attached
    (e.g. the source and size of a truncated message). Inside a group the
    receive has only started: keep its buffers alive and fill the Status when
    the group ends."""
    if rc >= 0 and _group.in_group():
        status = Status._from_c(st, data)
        _group.hold(keep, st)

        def fill():
            status.source, status.tag, status.error, status.bytes = st.source, st.tag, st.error, st.bytes
        _group.after_end(fill)
        return status
    if rc < 0:
        err = error_for(rc)
        st.error = rc if st.error == 0 else st.error
        err.status = Status._from_c(st, data)
        raise err
    return Status._from_c(st, data)


class PointToPoint:
    """Mixin: needs self._h() (the live xc_comm_t)."""

    def send(self, buf, dest, tag=0):
        """Send buf to rank dest; blocks until buf may be reused (inside
        xcomm.group(): until the group ends)."""
        b = input_buffer(buf, "send buffer")
        check(lib.xc_send(b.ptr, b.count, b.dtype, dest, tag, self._h()))
        _group.hold(b)  # inside a group the send has only started

    def recv(self, buf=None, source=ANY_SOURCE, tag=ANY_TAG, *, count=None, dtype=None):
        """Receive into buf (or, with buf=None, into a new array of count
        elements of dtype). Returns the Status; .data is the buffer. A larger
        message raises xcomm.TruncatedError and leaves buf untouched."""
        b = _recv_buffer(buf, count, dtype, "receive buffer")
        st = _new_status()
        rc = lib.xc_recv(b.ptr, b.count, b.dtype, source, tag, self._h(), st)
        return _finish(rc, st, buf if buf is not None else b.wrap(b.array), b)

    def sendrecv(self, sendbuf, dest, recvbuf=None, source=ANY_SOURCE, *, sendtag=0, recvtag=ANY_TAG):
        """Send sendbuf to dest and receive from source at once (no deadlock
        in a ring). recvbuf=None receives into a new array shaped like
        sendbuf. Both buffers have the same dtype. Returns the receive Status."""
        s = input_buffer(sendbuf, "send buffer")
        if recvbuf is None:
            r = output_buffer(np.empty_like(s.array), "receive buffer")
            data = s.wrap(r.array)
        else:
            r = output_buffer(recvbuf, "receive buffer")
            data = recvbuf
        if r.dtype != s.dtype:
            raise TypeError("sendrecv: send and receive buffers must have the same dtype (%s vs %s)"
                            % (s.dtype.name.lower(), r.dtype.name.lower()))
        st = _new_status()
        rc = lib.xc_sendrecv(s.ptr, s.count, dest, sendtag, r.ptr, r.count, source, recvtag, s.dtype,
                             self._h(), st)
        return _finish(rc, st, data, (s, r))

    def isend(self, buf, dest, tag=0):
        """Start sending buf to dest; returns a Request. Do not modify buf
        until the request completes (the Request keeps it alive)."""
        b = input_buffer(buf, "send buffer")
        req = Request(keep=b)
        check(lib.xc_isend(b.ptr, b.count, b.dtype, dest, tag, self._h(), req._req))
        return req

    def irecv(self, buf=None, source=ANY_SOURCE, tag=ANY_TAG, *, count=None, dtype=None):
        """Start receiving into buf (or a new array, as recv); returns a
        Request whose .data is the buffer."""
        b = _recv_buffer(buf, count, dtype, "receive buffer")
        req = Request(keep=b, data=buf if buf is not None else b.wrap(b.array))
        check(lib.xc_irecv(b.ptr, b.count, b.dtype, source, tag, self._h(), req._req))
        return req

