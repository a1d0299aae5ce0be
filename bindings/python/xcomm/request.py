"""Status of a completed receive or request, non-blocking Requests, waitall."""

import warnings

from ._ffi import ffi, lib
from .errors import error_for, last_error


class Status:
    """What a receive (or request) completed with: .source (rank in the
    communicator), .tag, .bytes (size of the message, also when truncated),
    .error (its xc_result_t, 0 on success) and .data (the buffer received into;
    None for sends)."""

    __slots__ = ("source", "tag", "error", "bytes", "data")

    def __init__(self, source, tag, error=0, bytes=0, data=None):
        self.source, self.tag, self.error, self.bytes, self.data = source, tag, error, bytes, data

    @classmethod
    def _from_c(cls, st, data=None):
        return cls(st.source, st.tag, st.error, st.bytes, data)

    @property
    def count(self):
        """Elements received (bytes / the element size of .data), or None."""
        itemsize = getattr(getattr(self.data, "dtype", None), "itemsize", None)
        if self.data is None or not isinstance(itemsize, int) or itemsize == 0:
            return None
        return self.bytes // itemsize

    def __repr__(self):
        return "Status(source=%d, tag=%d, error=%d, bytes=%d)" % (self.source, self.tag, self.error, self.bytes)

    def __eq__(self, other):
        if not isinstance(other, Status):
            return NotImplemented
        return (self.source, self.tag, self.error, self.bytes) == (other.source, other.tag, other.error, other.bytes)

    __hash__ = None


# Buffers of requests that were dropped before completing: the library may
# still write into them, so they are kept alive for the life of the process.
_orphans = []


class Request:
    """A pending isend/irecv. wait() blocks until it completes and returns its
    Status; test() says whether it has (without blocking). .data is the
    receive buffer (irecv) or None. A failed request raises xcomm.Error from
    wait/test/waitall, with the Status attached as .status."""

    __slots__ = ("_req", "_keep", "data", "status", "__weakref__")

    def __init__(self, keep, data=None):
        self._req = ffi.new("xc_request_t *")
        self._keep = keep  # the buffers the library reads or writes until completion
        self.data = data
        self.status = None  # the Status once complete

    @property
    def done(self):
        """True once wait/test/waitall saw it complete."""
        return self.status is not None

    def _complete(self, st, rc):
        self.status = Status._from_c(st, self.data)
        self._keep = None
        if rc < 0:
            err = error_for(rc)
            err.status = self.status
            raise err

    def wait(self):
        """Block until complete; return its Status (again on later calls)."""
        if self.status is not None:
            return self.status
        st = ffi.new("xc_status_t *")
        rc = lib.xc_wait(self._req, st)
        if rc < 0 and self._req[0] != ffi.NULL:  # not consumed: a usage error
            raise error_for(rc)
        self._complete(st, rc)
        return self.status

    def test(self):
        """True (and .status set) when complete, False while pending."""
        if self.status is not None:
            return True
        st = ffi.new("xc_status_t *")
        done = ffi.new("int *")
        rc = lib.xc_test(self._req, done, st)
        if rc < 0 and self._req[0] != ffi.NULL:
            raise error_for(rc)
        if rc < 0 or done[0]:
            self._complete(st, rc)
            return True
        return False

    def __repr__(self):
        state = "done" if self.status is not None else "pending"
        return "<xcomm.Request %s>" % state

    def __del__(self):
        if self.status is None and getattr(self, "_keep", None) is not None and self._req[0] != ffi.NULL:
            _orphans.append(self._keep)
            warnings.warn("an xcomm Request was dropped before completing: its buffer is kept alive "
                          "(leaked); call wait() or waitall()", ResourceWarning, stacklevel=2)


def waitall(requests):
    """Wait for every request; return their Statuses in order. Every request
    completes (and is freed) even when one fails; then the first error is
    raised with .statuses (all of them) attached."""
    requests = list(requests)
    for r in requests:
        if not isinstance(r, Request):
            raise TypeError("waitall takes xcomm.Request objects, not %s" % type(r).__name__)
    pending = [r for r in requests if r.status is None]
    rc, detail = 0, ""
    if pending:
        handles = ffi.new("xc_request_t[]", [r._req[0] for r in pending])
        statuses = ffi.new("xc_status_t[]", len(pending))
        rc = lib.xc_waitall(len(pending), handles, statuses)
        detail = last_error() if rc < 0 else ""
        if rc < 0 and all(handles[i] != ffi.NULL for i in range(len(pending))):
            raise error_for(rc, detail)  # nothing was consumed: a usage error
        for i, r in enumerate(pending):
            if handles[i] == ffi.NULL:
                r._req[0] = ffi.NULL
                r.status = Status._from_c(statuses[i], r.data)
                r._keep = None
    result = [r.status for r in requests]
    if rc < 0:
        err = error_for(rc, detail)
        err.statuses = result
        raise err
    return result
