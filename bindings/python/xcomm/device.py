"""Device memory: xcomm's own device arrays, reading other libraries' device
arrays (__cuda_array_interface__, DLPack), and registered buffers.

    mem = comm.mem_alloc_device(4096)              # xcomm.DeviceMemory (xc_mem_alloc_device)
    x = mem.array(np.float32, (1024,))             # xcomm.DeviceArray, a view of it
    y = xcomm.DeviceArray.empty(comm, (1024,), np.float32)
    comm.allreduce(x, out=y)                       # stream-ordered: y is ready once its stream is
    cupy.asarray(y); torch.as_tensor(y, device="cuda")   # no copy (__cuda_array_interface__ v3)

A DeviceArray is a C-contiguous array in device memory, nothing more: it has
shape, dtype, reshape, view, slicing along its first axis, and it exports
itself to CuPy, torch, Numba (__cuda_array_interface__, version 3, "stream"
None: xcomm has no work pending on it that the consumer must wait for beyond
the streams the caller synchronises) and to any DLPack consumer (__dlpack__,
device type kDLCUDA). Arithmetic and copies are for those libraries; on the
emulated device (XC_DEVICE=emulated) xcomm.testing.host_view reads and
writes it from the host.

Lifetime: as xcomm.Memory. Every DeviceArray (and every DLPack export of
one) keeps its allocation alive; free() gives it back when the last of them
is gone, the garbage collector does the same for a DeviceMemory never freed.
Device ops are stream-ordered: a blocking op returns once enqueued, so keep
the buffers you pass (inputs, outputs, results) alive until the stream has
run the op (as with NCCL); freeing memory a pending op still uses is a bug
in the caller, not something xcomm can see.

This module reads device memory only through the library; the few CUDA
driver calls it makes (the device of a pointer, synchronising a producer's
stream) go through ctypes to libcuda.so.1 when it exists and are skipped on
the emulated device.
"""

import ctypes
import operator
import os
import threading
import weakref

import cffi
import numpy as np

from ._ffi import ffi, lib
from .config import DType
from .errors import check, error_for

KDLCPU = 1  # DLDeviceType kDLCPU
KDLCUDA = 2  # DLDeviceType kDLCUDA
KDLCUDA_MANAGED = 13  # kDLCUDAManaged: device memory the host may read too

# DLPack's C structs (dlpack.h, the unversioned ABI every producer still
# offers). A separate FFI: they are no part of xcomm.h, whose declarations
# _cdef.py mirrors exactly.
_dl = cffi.FFI()
_dl.cdef("""
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
""")

# DLDataTypeCode: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4.
_DL_TO_DTYPE = {
    (0, 8): DType.INT8, (1, 8): DType.UINT8, (0, 32): DType.INT32, (1, 32): DType.UINT32,
    (0, 64): DType.INT64, (1, 64): DType.UINT64, (2, 16): DType.FLOAT16, (4, 16): DType.BFLOAT16,
    (2, 32): DType.FLOAT32, (2, 64): DType.FLOAT64,
}
_DTYPE_TO_DL = {v: k for k, v in _DL_TO_DTYPE.items()}


def emulated():
    """True when this process runs xcomm's emulated device (XC_DEVICE=emulated),
    where device memory is host memory the library tags as device."""
    return os.environ.get("XC_DEVICE", "").strip().lower() == "emulated"


# ---- the CUDA driver, when there is one ---------------------------------------

_driver_lock = threading.Lock()
_driver = None  # None: not tried; False: not available; else the CDLL


def _cuda_driver():
    """libcuda.so.1 through ctypes, initialised; None without one (or on the
    emulated device, whose pointers and streams the driver does not know)."""
    global _driver
    if emulated():
        return None
    with _driver_lock:
        if _driver is None:
            try:
                drv = ctypes.CDLL("libcuda.so.1")
                _driver = drv if drv.cuInit(0) == 0 else False
            except (OSError, AttributeError):
                _driver = False
        return _driver or None


def pointer_device(address):
    """The CUDA device ordinal that owns address (0 when unknown: the emulated
    device, no driver, or a pointer the driver does not know)."""
    drv = _cuda_driver()
    if drv is None or not address:
        return 0
    ordinal = ctypes.c_int(0)
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
    rc = drv.cuPointerGetAttribute(ctypes.byref(ordinal), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   ctypes.c_uint64(address))
    return ordinal.value if rc == 0 else 0


def _wait_for_producer(stream):
    """__cuda_array_interface__ v3 "stream": the producer may still have work
    on that stream writing the array; wait for it (from the host) before the
    op is enqueued on xcomm's stream. Nothing to do for None, on the emulated
    device, or without a driver."""
    if stream is None:
        return
    stream = int(stream)
    if stream == 0:
        raise ValueError("__cuda_array_interface__: stream 0 is not allowed (v3; 1 is the legacy default stream)")
    drv = _cuda_driver()
    if drv is not None:
        rc = drv.cuStreamSynchronize(ctypes.c_void_p(stream))
        if rc != 0:
            raise error_for(lib.XC_ERR_CUDA, "cuStreamSynchronize(%#x) on the producer's stream of a "
                            "__cuda_array_interface__ buffer failed with CUresult %d" % (stream, rc))


# ---- memory from xc_mem_alloc_device ---------------------------------------------


class _DeviceBlock:
    """Holds one allocation; every DeviceArray of it references it, and its
    finalizer gives the memory back (xc_mem_free, comm NULL: the memory may
    outlive its communicator)."""

    __slots__ = ("address", "nbytes", "__weakref__")

    def __init__(self, address, nbytes):
        self.address, self.nbytes = address, nbytes


def _release(ptr, outcome):
    rc = lib.xc_mem_free(ffi.NULL, ptr)
    if rc < 0:
        outcome.append(error_for(rc))


class DeviceMemory:
    """Device memory from Comm.mem_alloc_device (xc_mem_alloc_device): .nbytes,
    .address (an int), .ptr (a cffi void *), array(dtype, shape) for a typed
    DeviceArray view, free(); a context manager. Passed to an op as it is, it
    is uint8 bytes (it has __cuda_array_interface__)."""

    def __init__(self, ptr, nbytes):
        self._nbytes = nbytes
        self._outcome = []
        address = int(ffi.cast("uintptr_t", ptr))
        self._block = _DeviceBlock(address, nbytes)
        if address:
            fin = weakref.finalize(self._block, _release, ptr, self._outcome)
            fin.atexit = False  # at exit the process gives it back anyway

    def _live(self, what):
        block = self._block
        if block is None:
            raise error_for(lib.XC_ERR_INVALID_ARGUMENT,
                            "xcomm.DeviceMemory.%s: the memory was already freed" % what)
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
        """The device address as an int (0 for a 0-byte allocation)."""
        return self._live("address").address

    @property
    def ptr(self):
        """The address as a cffi void * (not a reference: keep the memory alive)."""
        return ffi.cast("void *", self._live("ptr").address)

    def array(self, dtype=np.uint8, shape=None):
        """A DeviceArray view of the memory (no copy) as dtype, 1-D or of
        shape; nbytes must be a whole number of elements."""
        block = self._live("array")
        dtype = np.dtype(dtype)
        if dtype.itemsize == 0 or self._nbytes % dtype.itemsize:
            raise ValueError("%d bytes are not a whole number of %s elements" % (self._nbytes, dtype))
        n = self._nbytes // dtype.itemsize
        a = DeviceArray(block, block.address, (n,), dtype)
        return a if shape is None else a.reshape(shape)

    @property
    def __cuda_array_interface__(self):
        return self.array().__cuda_array_interface__

    def free(self):
        """Give the memory back (xc_mem_free) now when no DeviceArray of it is
        alive, else when the last one goes away. Freeing twice raises
        InvalidArgumentError."""
        block = self._live("free")
        self._block = None
        del block
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
            return "<xcomm.DeviceMemory (freed)>"
        return "<xcomm.DeviceMemory %d bytes at 0x%x>" % (self._nbytes, self.address)


def _normalize_shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    shape = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("negative dimension in shape %s" % (shape,))
    return shape


def _numpy_dtype_of(xc_dtype):
    """A NumPy dtype for an xcomm DType (bfloat16: ml_dtypes when installed, else
    2-byte void, which exports as typestr "<V2")."""
    names = {DType.INT8: "i1", DType.UINT8: "u1", DType.INT32: "<i4", DType.UINT32: "<u4", DType.INT64: "<i8",
             DType.UINT64: "<u8", DType.FLOAT16: "<f2", DType.FLOAT32: "<f4", DType.FLOAT64: "<f8"}
    if xc_dtype == DType.BFLOAT16:
        try:
            import ml_dtypes
            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return np.dtype("V2")
    return np.dtype(names[DType(xc_dtype)])


class DeviceArray:
    """A C-contiguous array in device memory (see the module's doc).

    DeviceArray.empty(comm, shape, dtype) allocates one (xc_mem_alloc_device);
    DeviceMemory.array() views existing memory. .shape, .dtype (NumPy),
    .xc_dtype (xcomm.DType), .size, .nbytes, .ndim, .address, .ptr,
    .device_id; reshape(), view(dtype), ravel(), a[i] / a[i:j] along the
    first axis (views). Exported through __cuda_array_interface__ and
    __dlpack__."""

    __slots__ = ("_owner", "_address", "_shape", "_dtype", "_xc_dtype", "_device_id", "__weakref__")

    def __init__(self, owner, address, shape, dtype, xc_dtype=None, device_id=None):
        from .buffers import numpy_dtype  # late: buffers imports this module
        self._owner = owner  # what keeps the memory alive
        self._address = int(address)
        self._shape = _normalize_shape(shape)
        self._dtype = np.dtype(dtype)
        self._xc_dtype = DType(xc_dtype) if xc_dtype is not None else numpy_dtype(self._dtype)
        self._device_id = device_id

    @classmethod
    def empty(cls, comm, shape, dtype=np.float32):
        """A new uninitialised array on comm's device (xc_mem_alloc_device)."""
        shape = _normalize_shape(shape)
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return comm.mem_alloc_device(nbytes).array(dtype, shape)

    @classmethod
    def _like(cls, comm, shape, xc_dtype, np_dtype=None):
        """empty() with an xcomm dtype (bfloat16 has no NumPy dtype of its own)."""
        shape = _normalize_shape(shape)
        dtype = np.dtype(np_dtype) if np_dtype is not None else _numpy_dtype_of(xc_dtype)
        n = int(np.prod(shape, dtype=np.int64))
        mem = comm.mem_alloc_device(n * dtype.itemsize)
        block = mem._live("array")
        return cls(block, block.address, shape, dtype, xc_dtype)

    # ---- attributes -------------------------------------------------------------

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def xc_dtype(self):
        return self._xc_dtype

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def size(self):
        return int(np.prod(self._shape, dtype=np.int64))

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    @property
    def address(self):
        """The device address of the first element, an int."""
        return self._address

    @property
    def ptr(self):
        """The address as a cffi void * (not a reference: keep the array alive)."""
        return ffi.cast("void *", self._address)

    @property
    def device_id(self):
        """The CUDA device ordinal holding the memory (0 on the emulated device)."""
        if self._device_id is None:
            self._device_id = pointer_device(self._address)
        return self._device_id

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self._shape[0]

    # ---- views -------------------------------------------------------------------

    def _view(self, address, shape, dtype=None, xc_dtype=None):
        return DeviceArray(self._owner, address, shape, self._dtype if dtype is None else dtype,
                           self._xc_dtype if xc_dtype is None and dtype is None else xc_dtype, self._device_id)

    def reshape(self, *shape):
        """The same memory with another shape (one dimension may be -1)."""
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        shape = [operator.index(s) for s in shape]
        unknown = [i for i, s in enumerate(shape) if s == -1]
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if len(unknown) > 1 or any(s < -1 for s in shape):
            raise ValueError("cannot reshape a DeviceArray to %s" % (tuple(shape),))
        if unknown:
            if known == 0 or self.size % known:
                raise ValueError("cannot reshape a DeviceArray of size %d to %s" % (self.size, tuple(shape)))
            shape[unknown[0]] = self.size // known
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError("cannot reshape a DeviceArray of size %d to %s" % (self.size, tuple(shape)))
        return self._view(self._address, tuple(shape))

    def ravel(self):
        return self.reshape(-1)

    def view(self, dtype):
        """The same bytes as another dtype (the last axis is rescaled)."""
        dtype = np.dtype(dtype)
        if dtype.itemsize == self.itemsize:
            return self._view(self._address, self._shape, dtype)
        if not self._shape or (self._shape[-1] * self.itemsize) % dtype.itemsize:
            raise ValueError("cannot view %s as %s: the last axis is not a whole number of elements"
                             % (self._dtype, dtype))
        shape = self._shape[:-1] + (self._shape[-1] * self.itemsize // dtype.itemsize,)
        return self._view(self._address, shape, dtype)

    def __getitem__(self, key):
        """a[i] or a[i:j] (step 1) along the first axis: a view."""
        if not self._shape:
            raise IndexError("a 0-d DeviceArray cannot be indexed")
        n = self._shape[0]
        row = int(np.prod(self._shape[1:], dtype=np.int64)) * self.itemsize
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                raise IndexError("DeviceArray slices have step 1 (its views stay contiguous)")
            count = max(0, stop - start)
            return self._view(self._address + start * row, (count,) + self._shape[1:])
        try:
            i = operator.index(key)
        except TypeError:
            raise IndexError("DeviceArray takes an integer or a slice along its first axis, not %r" % (key,))
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("index %d is out of range for an axis of length %d" % (key, n))
        return self._view(self._address + i * row, self._shape[1:])

    # ---- export --------------------------------------------------------------------

    @property
    def __cuda_array_interface__(self):
        return {"shape": self._shape, "typestr": self._dtype.str, "descr": [("", self._dtype.str)],
                "data": (self._address, False), "strides": None, "version": 3, "stream": None}

    def __dlpack_device__(self):
        return (KDLCUDA, self.device_id)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule ("dltensor", unversioned) of this array; it keeps
        the memory alive until the consumer releases it. stream is accepted
        and not waited on: xcomm has no work of its own pending on a
        DeviceArray once the caller has synchronised the op's stream."""
        if copy:
            raise BufferError("xcomm.DeviceArray cannot copy device memory (copy=True)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError("xcomm.DeviceArray lives on %s, not %s" % (self.__dlpack_device__(), dl_device))
        return _export_dlpack(self)

    def __repr__(self):
        return "<xcomm.DeviceArray shape=%s dtype=%s at 0x%x>" % (self._shape, self._dtype, self._address)


# ---- DLPack export (producer) ------------------------------------------------------

_exports = {}  # address of a DLManagedTensor -> what it keeps alive, until its deleter runs
_exports_lock = threading.Lock()
_CAPSULE_NAME = b"dltensor"
_USED_NAME = b"used_dltensor"


@_dl.callback("void(DLManagedTensor *)")
def _dl_deleter(managed):
    with _exports_lock:
        _exports.pop(int(_dl.cast("uintptr_t", managed)), None)


# The capsule calls, each with its own prototype (ctypes.pythonapi.X is one
# shared object per name, whose argtypes must not be changed under others).
# PYFUNCTYPE: called with the GIL held, a Python error set by the call raises.
_api = ctypes.pythonapi
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", _api))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
_PyCapsule_SetName = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_SetName", _api))
_PyCapsule_IsValid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_PyCapsule_GetPointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    """A capsule nobody consumed (its name is still "dltensor"): release what it holds."""
    if _PyCapsule_IsValid_raw(capsule, _CAPSULE_NAME):
        managed = _PyCapsule_GetPointer_raw(capsule, _CAPSULE_NAME)
        if managed:
            _dl_deleter(_dl.cast("DLManagedTensor *", managed))


_DESTRUCTOR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


def _export_dlpack(array):
    managed = _dl.new("DLManagedTensor *")
    shape = _dl.new("int64_t[]", list(array.shape) or [0])
    t = managed.dl_tensor
    t.data = _dl.cast("void *", array.address)
    t.device.device_type, t.device.device_id = KDLCUDA, array.device_id
    t.ndim = array.ndim
    code, bits = _DTYPE_TO_DL[array.xc_dtype]
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    t.shape = shape
    t.strides = _dl.NULL  # C-contiguous
    t.byte_offset = 0
    managed.manager_ctx = _dl.NULL
    managed.deleter = _dl_deleter
    address = int(_dl.cast("uintptr_t", managed))
    with _exports_lock:
        _exports[address] = (managed, shape, array)
    return _PyCapsule_New(address, _CAPSULE_NAME, _DESTRUCTOR)


# ---- DLPack import (consumer) ---------------------------------------------------------


class _Imported:
    """A consumed DLPack capsule: calls the producer's deleter when the last
    reference (the op's buffer, a Request) goes away."""

    __slots__ = ("managed", "capsule_owner", "__weakref__")

    def __init__(self, managed, owner):
        self.managed, self.capsule_owner = managed, owner

    def __del__(self):
        managed, self.managed = self.managed, None
        if managed is not None and managed.deleter != _dl.NULL:
            managed.deleter(managed)


def import_dlpack(obj, what, stream=None):
    """(address, shape, xc_dtype, device_id, holder) of a DLPack producer on a
    CUDA device. stream is the int handle of the stream the op runs on (None:
    the legacy default stream), handed to the producer so that it orders its
    pending work before it. Non-contiguous tensors raise ValueError."""
    try:
        capsule = obj.__dlpack__(stream=stream)
    except TypeError:
        capsule = obj.__dlpack__()
    ptr = _PyCapsule_GetPointer(capsule, _CAPSULE_NAME)  # raises ValueError for a versioned/used capsule
    if _PyCapsule_SetName(capsule, _USED_NAME) != 0:
        raise BufferError("%s: cannot mark the DLPack capsule as used" % what)
    managed = _dl.cast("DLManagedTensor *", ptr)
    holder = _Imported(managed, obj)
    t = managed.dl_tensor
    ndim = int(t.ndim)
    shape = tuple(int(t.shape[i]) for i in range(ndim))
    key = (int(t.dtype.code), int(t.dtype.bits))
    if int(t.dtype.lanes) != 1 or key not in _DL_TO_DTYPE:
        raise TypeError("%s: DLPack dtype (code %d, %d bits, %d lanes) is not supported by xcomm"
                        % (what, key[0], key[1], int(t.dtype.lanes)))
    xc_dtype = _DL_TO_DTYPE[key]
    if t.strides != _dl.NULL:
        expected, step = [], 1
        for dim in reversed(shape):
            expected.append(step)
            step *= dim
        expected.reverse()
        actual = [int(t.strides[i]) for i in range(ndim)]
        if any(a != e for a, e, d in zip(actual, expected, shape) if d > 1):
            raise ValueError("%s: the DLPack tensor is not C-contiguous (strides %s in elements); xcomm "
                             "cannot copy device memory: pass a contiguous tensor" % (what, actual))
    address = int(_dl.cast("uintptr_t", t.data)) + int(t.byte_offset)
    return address, shape, xc_dtype, int(t.device.device_id), holder


# ---- registered buffers -------------------------------------------------------------------


def _deregister(handle):
    lib.xc_buffer_deregister(handle)


class RegisteredBuffer:
    """A device buffer registered with Comm.register_buffer (xc_buffer_register):
    its IPC handle is made once, and peers keep it open until deregister()
    (or the end of a `with` block, or garbage collection). It keeps the buffer
    object alive meanwhile. .buffer is what was registered, .address and
    .nbytes its bytes."""

    def __init__(self, handle, obj, address, nbytes, keep=None):
        self._handle = handle
        self.buffer, self.address, self.nbytes = obj, address, nbytes
        self._keep = keep  # e.g. a consumed DLPack capsule of obj
        self._fin = weakref.finalize(self, _deregister, handle)
        self._fin.atexit = False

    @property
    def handle(self):
        """The xc_buffer_t (a cffi pointer), or None once deregistered."""
        return self._handle

    @property
    def registered(self):
        return self._handle is not None

    def deregister(self):
        """Release the registration (not the memory). A second call does nothing."""
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        self._fin.detach()
        rc = lib.xc_buffer_deregister(handle)
        self.buffer = self._keep = None
        check(rc)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.deregister()
        return False

    def __repr__(self):
        if self._handle is None:
            return "<xcomm.RegisteredBuffer (deregistered)>"
        return "<xcomm.RegisteredBuffer %d bytes at 0x%x>" % (self.nbytes, self.address)
