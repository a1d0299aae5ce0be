"""The Work objects the xcomm process group returns.

- DONE: an op that already ran to completion (run blocking because its
  caller waits at once: `async_op=False`). One shared instance: the caller
  only calls wait() on it and drops it.
- PendingWork: an op started with a non-blocking xcomm call (xc_i*,
  xc_isend/xc_irecv): wait() blocks on its requests (xc_waitall, the GIL
  released), is_completed() tests them (xc_test), a failure raises an
  exception that carries xcomm's message (a RuntimeError, as torch's own
  backends raise). get_future() gives a torch Future that a helper thread
  completes.
- For callers in C++ (DDP's reducer, _verify_params_across_processes) the
  Python works above cannot be returned: a Python subclass of Work that
  only C++ holds is garbage-collected, and C++ then calls the base class's
  wait(), which never returns. They get torch's own C++ Work over a torch
  Future instead (_create_work_from_future; wrapped()), which the helper
  thread completes. Its wait() does not raise the op's error (torch's
  FutureWrappingWork ignores it); reading the future's value does.
- StreamWork: a device-memory op, enqueued on torch's current CUDA stream
  (stream-ordered, as NCCL's work): wait() makes the current stream wait for
  it and reports an asynchronous error of the communicator.
"""

import threading
import time
from datetime import timedelta

import torch
from torch._C._distributed_c10d import Work

try:  # a C++ Work over a torch Future (torch 1.13 has it, marked experimental)
    from torch._C._distributed_c10d import _create_work_from_future
except ImportError:  # pragma: no cover - other torch versions
    _create_work_from_future = None

from .. import errors as _errors
from .._ffi import ffi, lib

_ERROR_CLASSES = {}


def error_class(code):
    """An exception class that is both the xcomm.Error subclass of code and
    a RuntimeError, as torch's backends raise (so `except RuntimeError` and
    `except xcomm.TimeoutError` both catch it)."""
    cls = _ERROR_CLASSES.get(code)
    if cls is None:
        base = _errors._CLASSES.get(code, _errors.Error)
        cls = type(base.__name__, (base, RuntimeError), {"__module__": "xcomm.torch"})
        _ERROR_CLASSES[code] = cls
    return cls


def make_error(code, what, message=None):
    """The exception of a failed xcomm call (code < 0) made for op `what`;
    message defaults to xc_last_error() (read it on the failing thread)."""
    if message is None:
        message = _errors.last_error()
    return error_class(code)(code, "%s: %s" % (what, message or _errors.strerror(code)))


class DoneWork(Work):
    """An op that already completed."""

    def __init__(self, result=None):
        super().__init__()
        self._result = result if result is not None else []

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def exception(self):
        return None

    def result(self):
        return self._result

    def synchronize(self):
        pass

    def source_rank(self):
        raise RuntimeError("xcomm: source_rank() is only known for a receive from any source")

    _source_rank = source_rank

    def get_future(self):
        fut = torch.futures.Future()
        fut.set_result(self._result)
        return fut


DONE = DoneWork()


def _tensors(value):
    """A flat list of the tensors in value (a C++ Work's future must hold a
    Tensor or a list of them)."""
    out = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
    return out


def wrap_future(fut):
    return _create_work_from_future(fut)


def _seconds(timeout):
    """None for no timeout (None, or torch's kNoTimeout: a zero timedelta)."""
    if timeout is None:
        return None
    if isinstance(timeout, timedelta):
        timeout = timeout.total_seconds()
    return None if timeout <= 0 else float(timeout)


class PendingWork(Work):
    """An op that runs on while the caller goes on. reqs: a cffi
    `xc_request_t[n]`; keep: what must live until completion (buffers,
    counts); finish: run once on success (copies into the caller's tensors);
    outputs: result(); status: an `xc_status_t *` for a receive from any
    source."""

    def __init__(self, what, reqs, n, keep, finish, outputs, status=None, collective=False):
        super().__init__()
        self._collective = collective  # completes in order with the others of its group
        self._what = what
        self._reqs = reqs
        self._n = n
        self._keep = keep
        self._finish = finish
        self._outputs = outputs if outputs is not None else []
        self._status = status
        self._source = -1
        # Reentrant: completing the future runs its callbacks on this thread,
        # and one may call wait() on this very work.
        self._lock = threading.RLock()
        self._done = False
        self._exc = None
        self._base = None  # completed (with None) when the op completes
        self._future = None  # _base.then(_value): the op's outputs, or its error

    # ---- completion (self._lock held) ------------------------------------------------------
    def _complete(self, rc, message):
        self._done = True
        if rc < 0:
            self._exc = make_error(rc, self._what, message)
        else:
            if self._status is not None:
                self._source = self._status.source
            if self._finish is not None:
                try:
                    self._finish()
                except Exception as e:  # noqa: BLE001 - reported through wait()
                    self._exc = e
        self._keep = None
        self._finish = None
        if self._base is not None:
            self._base.set_result(None)

    def _wait_locked(self):
        if self._n == 1:
            rc = lib.xc_wait(self._reqs, self._status if self._status is not None else ffi.NULL)
        else:
            rc = lib.xc_waitall(self._n, self._reqs, ffi.NULL)
        self._complete(rc, _errors.last_error() if rc < 0 else "")

    def _test_locked(self):
        """True once complete (all requests done or one failed)."""
        if self._done:
            return True
        done = ffi.new("int *")
        for i in range(self._n):
            if self._reqs[i] == ffi.NULL:
                continue
            st = self._status if (self._status is not None and self._n == 1) else ffi.NULL
            rc = lib.xc_test(self._reqs + i, done, st)
            if rc < 0:
                message = _errors.last_error()
                if any(self._reqs[j] != ffi.NULL for j in range(self._n)):
                    # The op's other requests may still use its buffers.
                    _completer.add(_Orphan(self._reqs, self._n, self._keep))
                self._complete(rc, message)
                return True
            if not done[0]:
                return False
        self._complete(0, "")
        return True

    def _complete_blocking(self):
        """For the helper thread, when this is all it has to do: wait (the
        GIL released inside xc_wait). Bounded by the op's deadline."""
        with self._lock:
            if not self._done:
                self._wait_locked()
        return True

    def _try_complete(self):
        """For the helper thread: test without blocking or waiting for the lock."""
        if not self._lock.acquire(blocking=False):
            return self._done
        try:
            return self._test_locked()
        finally:
            self._lock.release()

    # ---- torch's Work interface --------------------------------------------------------------
    def wait(self, timeout=None):
        limit = _seconds(timeout)
        if limit is None:
            with self._lock:
                if not self._done:
                    self._wait_locked()
        else:
            end = time.monotonic() + limit
            pause = 2e-5
            while True:
                with self._lock:
                    if self._test_locked():
                        break
                if time.monotonic() >= end:
                    raise RuntimeError("xcomm: %s: wait timed out after %g s (the op goes on)" % (self._what, limit))
                time.sleep(pause)
                pause = min(pause * 2, 1e-3)
        if self._exc is not None:
            raise self._exc
        return True

    def is_completed(self):
        with self._lock:
            return self._test_locked()

    def is_success(self):
        if not self.is_completed():
            raise RuntimeError("xcomm: is_success() of an op that has not completed")
        return self._exc is None

    def exception(self):
        return self._exc

    def result(self):
        self.wait()
        return self._outputs

    def synchronize(self):
        pass

    def source_rank(self):
        if self._status is None:
            raise RuntimeError("xcomm: source_rank() is only known for a receive from any source")
        self.wait()
        return self._source

    _source_rank = source_rank

    def wrapped(self):
        """This op as a C++ Work (for C++ callers), or self where torch lacks one."""
        if _create_work_from_future is None:
            return self
        self._outputs = _tensors(self._outputs)
        return _create_work_from_future(self.get_future())

    def _value(self, _base):
        if self._exc is not None:
            raise self._exc
        return self._outputs

    def get_future(self):
        """A torch Future of the outputs. A failed op fails the future
        itself (a then() callback raises), so C++ readers see the error too:
        Future.set_exception only marks the Python wrapper."""
        with self._lock:
            if self._future is None:
                self._base = torch.futures.Future()
                self._future = self._base.then(self._value)
                if self._done:
                    self._base.set_result(None)
                else:
                    _completer.add(self)
            return self._future

    def __del__(self):
        # Dropped while pending: the library may still write into the
        # buffers, so they live on with the helper thread, which finishes
        # the requests (their outcome has no one left to read it).
        if not getattr(self, "_done", True):
            _completer.add(_Orphan(self._reqs, self._n, self._keep))


class _Orphan:
    """Requests no work owns any more, and the buffers they use."""

    def __init__(self, reqs, n, keep):
        self._reqs, self._n, self._keep = reqs, n, keep

    def _try_complete(self):
        done = ffi.new("int *")
        for i in range(self._n):
            if self._reqs[i] != ffi.NULL:
                if lib.xc_test(self._reqs + i, done, ffi.NULL) >= 0 and not done[0]:
                    return False
        self._keep = None
        return True


class _Completer:
    """One daemon thread that tests pending works whose future was asked
    for (or that were dropped while pending) and completes them."""

    def __init__(self):
        self._cv = threading.Condition()
        self._pending = []
        self._thread = None

    def add(self, work):
        with self._cv:
            self._pending.append(work)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="xcomm-torch-completer", daemon=True)
                self._thread.start()
            self._cv.notify()

    def _run(self):
        pause = 2e-5
        while True:
            with self._cv:
                while not self._pending:
                    self._cv.wait()
                    pause = 2e-5
                items = list(self._pending)
            if len(items) == 1 and getattr(items[0], "_collective", False):
                # One collective (DDP's bucket, a C++ caller's op): block on it
                # instead of polling; collectives of a group complete in order.
                items[0]._complete_blocking()
                finished = items
            else:
                finished = [w for w in items if w._try_complete()]
            if finished:
                with self._cv:
                    self._pending = [w for w in self._pending if w not in finished]
                pause = 2e-5
            else:
                time.sleep(pause)
                pause = min(pause * 2, 1e-3)


_completer = _Completer()


class StreamWork(Work):
    """A device op enqueued on a CUDA stream (stream-ordered). Untested: no
    GPU was available where this was written."""

    def __init__(self, pg, what, stream, outputs, keep, record=True, finish=None):
        super().__init__()
        self._finish = finish
        self._pg = pg
        self._what = what
        self._outputs = outputs if outputs is not None else []
        self._keep = keep  # tensors made here (copies) stay alive until wait
        self._stream = stream
        self._event = torch.cuda.Event()
        if record:
            self._record()

    def _record(self):
        """Mark the op's place on its stream (for a grouped op: once
        xc_group_end has enqueued it, after which its copies back go)."""
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()
        self._event.record(self._stream)

    def wait(self, timeout=None):
        torch.cuda.current_stream().wait_event(self._event)
        self._pg._raise_async_error(self._what)
        return True

    def is_completed(self):
        return self._event.query()

    def is_success(self):
        return self._pg._async_error() is None

    def exception(self):
        return self._pg._async_error()

    def result(self):
        return self._outputs

    def synchronize(self):
        self._event.synchronize()

    def source_rank(self):
        raise RuntimeError("xcomm: source_rank() is only known for a receive from any source")

    _source_rank = source_rank

    def get_future(self):
        fut = torch.futures.Future()
        fut.set_result(self._outputs)
        return fut

    def wrapped(self):
        """As a C++ Work over a completed future: the op is stream-ordered,
        and whatever reads its outputs on the stream runs after it."""
        if _create_work_from_future is None:
            return self
        fut = torch.futures.Future()
        fut.set_result(_tensors(self._outputs))
        return _create_work_from_future(fut)
