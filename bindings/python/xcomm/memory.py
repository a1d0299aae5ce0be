"""Memory from xc_mem_alloc: bytes that a communicator's ops move fastest
(host memory aligned to 2 MiB, on 2 MiB pages where the kernel offers
transparent huge pages; contents start at zero).

    with comm.mem_alloc(1 << 26) as mem:         # xcomm.Memory; freed at the end
        x = mem.array(np.float32)                # a NumPy view of it, no copy
        x[:] = 1.0
        comm.allreduce(x, out=x)

A Memory is a buffer like any other: pass it to an op as uint8 bytes, or view
it typed with mem.array(dtype, shape), np.asarray(mem) or mem.view() (a
memoryview) and pass the view.

Lifetime. Every view keeps the memory mapped, so no view can outlive it:
free() gives the memory back to the library (xc_mem_free) at once when no
view of it is alive, else when the last one goes away. A Memory forgotten
without free() is given back when it and its views are garbage. After free(),
the Memory itself is dead: free() again, array(), view(), address or passing
it to an op raise xcomm.InvalidArgumentError (XC_ERR_INVALID_ARGUMENT, as
xc_mem_free answers for memory freed already). Ops in flight (non-blocking
requests, groups) keep their buffers, and so the memory, until they complete.
"""

import weakref

import numpy as np

from ._ffi import ffi, lib
from .errors import error_for


class _Block:
    """Holds one allocation. Every NumPy view of a Memory has it as its base
    (through __array_interface__), so it lives as long as the Memory's own
    reference or any view does; its finalizer frees the memory."""

    def __init__(self, address, nbytes):
        self.__array_interface__ = {"data": (address, False), "shape": (nbytes,), "typestr": "|u1",
                                    "version": 3}


def _release(ptr, outcome):
    """The finalizer of a _Block: xc_mem_free, its error (if any) kept for
    Memory.free() to raise when it runs inside it. comm is NULL, which the
    header allows: this may run after the communicator is freed, and on any
    thread."""
    rc = lib.xc_mem_free(ffi.NULL, ptr)
    if rc < 0:
        outcome.append(error_for(rc))


class Memory:
    """Memory from Comm.mem_alloc (xc_mem_alloc). .nbytes, .address (an int,
    2 MiB aligned), .ptr (a cffi void *), array(dtype, shape), view(), free();
    a context manager that frees at the end of the block. See the module's
    doc for its lifetime."""

    def __init__(self, ptr, nbytes):
        self._nbytes = nbytes
        self._outcome = []
        self._block = _Block(int(ffi.cast("uintptr_t", ptr)), nbytes)
        fin = weakref.finalize(self._block, _release, ptr, self._outcome)
        fin.atexit = False  # at exit the process gives it back anyway

    def _live(self, what):
        block = self._block
        if block is None:
            raise error_for(lib.XC_ERR_INVALID_ARGUMENT, "xcomm.Memory.%s: the memory was already freed" % what)
        return block

    @property
    def nbytes(self):
        return self._nbytes

    def __len__(self):
        return self._nbytes

    @property
    def freed(self):
        return self._block is None

    @property
    def address(self):
        """The address as an int (0 for a 0-byte allocation)."""
        return self._live("address").__array_interface__["data"][0]

    @property
    def ptr(self):
        """The address as a cffi void *, e.g. for other cffi code. It is not
        a reference: keep the Memory (or a view) alive while it is used."""
        return ffi.cast("void *", self._live("ptr").__array_interface__["data"][0])

    def array(self, dtype=np.uint8, shape=None):
        """A writable NumPy view of the memory (no copy) as dtype, 1-D or of
        shape; nbytes must be a multiple of the dtype's size."""
        a = np.asarray(self._live("array"))
        dtype = np.dtype(dtype)
        if dtype != a.dtype:
            if dtype.itemsize == 0 or self._nbytes % dtype.itemsize:
                raise ValueError("%d bytes are not a whole number of %s elements" % (self._nbytes, dtype))
            a = a.view(dtype)
        return a if shape is None else a.reshape(shape)

    def view(self):
        """A writable memoryview of the bytes (format "B")."""
        return memoryview(self.array())

    def __array__(self, dtype=None, copy=None):
        a = self.array()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("xcomm.Memory holds uint8 bytes; converting them to %s needs a copy (use "
                                 "mem.array(dtype) to reinterpret them)" % np.dtype(dtype))
            return a.astype(dtype)
        return a.copy() if copy else a

    def __buffer__(self, flags):  # the buffer protocol from Python code (3.12+)
        return self.view()

    def free(self):
        """Give the memory back (xc_mem_free): now when no view of it is
        alive, else when the last view goes away. Local, not collective.
        Freeing twice raises InvalidArgumentError."""
        block = self._live("free")
        self._block = None
        del block  # the finalizer runs here unless a view still holds the block
        if self._outcome:
            raise self._outcome.pop()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._block is not None:
            self.free()
        return False

    def __repr__(self):
        if self._block is None:
            return "<xcomm.Memory (freed)>"
        return "<xcomm.Memory %d bytes at 0x%x>" % (self._nbytes, self.address)
