"""xcomm.Error: every failed xc_* call raises it (or a subclass), carrying the
xc_result_t code, its name and the library's xc_last_error() detail."""

import builtins

from ._ffi import ffi, lib

_RESULT_NAMES = dict(ffi.typeof("xc_result_t").elements)  # value -> "XC_ERR_..."


def result_name(code):
    """"XC_ERR_TIMEOUT" for -5; "XC_RESULT_<n>" for a code this binding does not know."""
    return _RESULT_NAMES.get(code, "XC_RESULT_%d" % code)


def strerror(code):
    """The library's static description of a result code."""
    return ffi.string(lib.xc_strerror(code)).decode("utf-8", "replace")


def last_error():
    """The library's detail of the last error on this thread, or ""."""
    return ffi.string(lib.xc_last_error()).decode("utf-8", "replace")


class Error(Exception):
    """A failed xcomm call. .code is the xc_result_t (negative), .name its
    enum name ("XC_ERR_TIMEOUT"), .message the library's detail."""

    def __init__(self, code, message=""):
        self.code = int(code)
        self.name = result_name(self.code)
        self.message = message or strerror(self.code)
        super().__init__(self.code, self.message)

    def __str__(self):
        return "%s: %s" % (self.name, self.message)

    def __repr__(self):
        return "%s(%s, %r)" % (type(self).__name__, self.name, self.message)

    def __reduce__(self):  # picklable (e.g. to send across processes)
        return (_make_error, (self.code, self.message))


class InvalidArgumentError(Error):
    """XC_ERR_INVALID_ARGUMENT: NULL, out of range, overflow."""


class InvalidUsageError(Error):
    """XC_ERR_INVALID_USAGE: wrong order, freed handle, ranks disagree."""


class TimeoutError(Error, builtins.TimeoutError):
    """XC_ERR_TIMEOUT: a blocking wait passed its deadline."""


class PeerFailedError(Error):
    """XC_ERR_PEER_FAILED: another rank died or failed."""


class AbortedError(Error):
    """XC_ERR_ABORTED: the communicator was aborted."""


class RevokedError(Error):
    """XC_ERR_REVOKED: some rank revoked the communicator (Comm.revoke);
    shrink it to carry on."""


class UnsupportedError(Error):
    """XC_ERR_UNSUPPORTED: not available in this build (e.g. device memory)."""


class TruncatedError(Error):
    """XC_ERR_TRUNCATED: the message was larger than the receive buffer."""


_CLASSES = {
    lib.XC_ERR_INVALID_ARGUMENT: InvalidArgumentError,
    lib.XC_ERR_INVALID_USAGE: InvalidUsageError,
    lib.XC_ERR_TIMEOUT: TimeoutError,
    lib.XC_ERR_PEER_FAILED: PeerFailedError,
    lib.XC_ERR_ABORTED: AbortedError,
    lib.XC_ERR_REVOKED: RevokedError,
    lib.XC_ERR_UNSUPPORTED: UnsupportedError,
    lib.XC_ERR_TRUNCATED: TruncatedError,
}


def _make_error(code, message=""):
    return _CLASSES.get(code, Error)(code, message)


def error_for(code, message=None):
    """The exception for a result code; message defaults to xc_last_error()."""
    if message is None:
        message = last_error()
    return _make_error(code, message)


def check(rc):
    """Raise the error for a negative xc_result_t; return rc otherwise. Call it
    right after the xc_ call, on the same thread (xc_last_error is per thread)."""
    if rc < 0:
        raise error_for(rc)
    return rc
