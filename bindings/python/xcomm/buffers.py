"""Turn user buffers into (pointer, count, dtype) for the C calls.

Host memory (a Buffer): anything with the buffer protocol (NumPy arrays,
bytearray, bytes, memoryview, array.array), xcomm.Memory (uint8 bytes), CPU
DLPack producers (torch tensors, JAX arrays, ...) through numpy.from_dlpack.
Inputs that are not C-contiguous are copied; outputs must be C-contiguous and
writable (ValueError otherwise): a copy would silently drop the result.

Device memory (a DeviceBuffer): xcomm.DeviceArray and xcomm.DeviceMemory,
objects with __cuda_array_interface__ (CuPy, torch.cuda, Numba; version 3's
"stream" is waited for), and DLPack producers on a CUDA device (kDLCUDA,
kDLCUDAManaged). They are never copied (xcomm does not copy device memory
from Python): inputs and outputs must be C-contiguous, outputs writable.

The dtype comes from the array; bytes-like objects are uint8; bfloat16 needs
a NumPy dtype named "bfloat16" (ml_dtypes), a torch bfloat16 tensor, or a
DLPack bfloat16 tensor on the device.
"""

import sys

import numpy as np

from ._ffi import ffi, lib
from . import device as _device
from .config import DType
from .device import DeviceArray, DeviceMemory
from .errors import UnsupportedError
from .memory import Memory

# (kind, itemsize) of a native NumPy dtype -> xcomm dtype.
_DTYPES = {
    ("i", 1): DType.INT8,
    ("u", 1): DType.UINT8,
    ("i", 4): DType.INT32,
    ("u", 4): DType.UINT32,
    ("i", 8): DType.INT64,
    ("u", 8): DType.UINT64,
    ("f", 2): DType.FLOAT16,
    ("f", 4): DType.FLOAT32,
    ("f", 8): DType.FLOAT64,
}
_DLPACK_CPU = _device.KDLCPU
_DLPACK_DEVICE = (_device.KDLCUDA, _device.KDLCUDA_MANAGED)


class IN_PLACE_TYPE:
    """The type of xcomm.IN_PLACE (XC_IN_PLACE): "the input is already in out"."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "xcomm.IN_PLACE"

    def __reduce__(self):
        return (IN_PLACE_TYPE, ())


IN_PLACE = IN_PLACE_TYPE()


def numpy_dtype(dtype):
    """The xcomm dtype of a NumPy dtype; TypeError when there is none."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16" and dtype.itemsize == 2:
        return DType.BFLOAT16
    code = _DTYPES.get((dtype.kind, dtype.itemsize))
    if code is None or not dtype.isnative:
        supported = "int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32, float64"
        reason = " in non-native byte order" if code is not None else ""
        raise TypeError("dtype %s%s is not supported by xcomm (supported: %s)" % (dtype, reason, supported))
    return code


def _torch_bfloat16_view(obj):
    """For a torch bfloat16 tensor: (int16 view of it, True); else (obj, False).
    NumPy has no bfloat16, so the bits travel as int16 and are tagged bf16."""
    if str(getattr(obj, "dtype", "")) != "torch.bfloat16":
        return obj, False
    torch = sys.modules.get(type(obj).__module__.split(".")[0])
    return obj.view(torch.int16), True


def _from_dlpack(obj, what):
    src, bf16 = _torch_bfloat16_view(obj)
    try:
        return np.from_dlpack(src), bf16
    except (BufferError, TypeError, RuntimeError, ValueError) as e:
        if hasattr(src, "numpy"):  # e.g. an older torch or NumPy without a usable DLPack path
            return np.asarray(src.numpy()), bf16
        raise TypeError("%s: cannot read %s through DLPack: %s" % (what, type(obj).__name__, e)) from e


class Buffer:
    """A user buffer in host memory resolved to a NumPy view: .array (sharing
    memory with .obj), .dtype (xcomm.DType), .count (elements), .ptr (void *)."""

    __slots__ = ("obj", "array", "dtype", "count", "_bf16_torch")
    is_device = False

    def __init__(self, obj, array, dtype, bf16_torch=False):
        self.obj, self.array, self.dtype, self.count = obj, array, dtype, array.size
        self._bf16_torch = bf16_torch

    @property
    def address(self):
        return self.array.__array_interface__["data"][0]

    @property
    def ptr(self):
        return ffi.cast("void *", self.address)

    @property
    def nbytes(self):
        return self.array.nbytes

    @property
    def shape(self):
        return self.array.shape

    def new_like(self, shape, comm=None):
        """A fresh array of this buffer's element type, wrapped like .obj."""
        return self.wrap(np.empty(shape, dtype=self.array.dtype))

    def flat(self, start, count):
        """Elements [start, start + count) of the buffer, as a NumPy view."""
        return self.array.reshape(-1)[start:start + count]

    def wrap(self, array):
        """array as the kind of object the user passed: a torch tensor for a
        torch input (through DLPack), else the NumPy array itself."""
        obj = self.obj
        if isinstance(obj, np.ndarray) or not hasattr(obj, "__dlpack__"):
            return array
        mod = sys.modules.get(type(obj).__module__.split(".")[0])
        from_dlpack = getattr(mod, "from_dlpack", None)
        if from_dlpack is None:
            return array
        out = from_dlpack(array)
        if self._bf16_torch:
            out = out.view(mod.bfloat16)
        return out


class DeviceBuffer:
    """A user buffer in device memory: .obj, .address, .shape, .dtype
    (xcomm.DType), .np_dtype (NumPy, void for a bfloat16 without ml_dtypes),
    .count, .readonly, .device_id; .holder keeps what must stay alive while
    the library uses the pointer (a consumed DLPack capsule, the owner)."""

    __slots__ = ("obj", "address", "shape", "dtype", "np_dtype", "count", "readonly", "device_id", "holder")
    is_device = True

    def __init__(self, obj, address, shape, dtype, np_dtype=None, readonly=False, device_id=None, holder=None):
        self.obj, self.address, self.shape, self.dtype = obj, int(address), tuple(shape), DType(dtype)
        self.np_dtype = np.dtype(np_dtype) if np_dtype is not None else _device._numpy_dtype_of(self.dtype)
        self.count = int(np.prod(self.shape, dtype=np.int64))
        self.readonly, self.device_id, self.holder = readonly, device_id, holder

    @property
    def ptr(self):
        return ffi.cast("void *", self.address)

    @property
    def nbytes(self):
        return self.count * self.np_dtype.itemsize

    def as_array(self):
        """The buffer as an xcomm.DeviceArray (the same memory)."""
        if isinstance(self.obj, DeviceArray):
            return self.obj
        owner = self.holder if self.holder is not None else self.obj
        return DeviceArray(owner, self.address, self.shape, self.np_dtype, self.dtype, self.device_id)

    def new_like(self, shape, comm=None):
        """A fresh device array of this buffer's element type on comm's
        device, wrapped like .obj."""
        if comm is None:
            raise ValueError("a new device array needs the communicator")
        return self.wrap(DeviceArray._like(comm, shape, self.dtype, self.np_dtype))

    def flat(self, start, count):
        """Elements [start, start + count), as a DeviceArray view."""
        return self.as_array().reshape(-1)[start:start + count]

    def wrap(self, array):
        """A DeviceArray as the kind of object the user passed: through the
        user's library's from_dlpack (cupy, torch) where it has one, else the
        DeviceArray itself."""
        obj = self.obj
        if isinstance(obj, (DeviceArray, DeviceMemory)):
            return array
        mod = sys.modules.get(type(obj).__module__.split(".")[0])
        from_dlpack = getattr(mod, "from_dlpack", None)
        if from_dlpack is None or _device.emulated():  # no library reads emulated device memory
            return array
        return from_dlpack(array)


def _cuda_array_interface(obj):
    """obj's __cuda_array_interface__, or None (a missing one, or one that
    refuses, as torch's does for bfloat16)."""
    try:
        return obj.__cuda_array_interface__
    except AttributeError:
        return None
    except (TypeError, ValueError, RuntimeError, BufferError):
        if hasattr(obj, "__dlpack__"):
            return None
        raise


def _from_cai(obj, cai, what):
    shape = tuple(int(d) for d in cai["shape"])
    typestr = cai["typestr"]
    dtype = np.dtype(typestr)
    if dtype.kind == "V":
        raise TypeError("%s: __cuda_array_interface__ typestr %r is not a dtype xcomm knows (bfloat16 on the "
                        "device: pass it through DLPack)" % (what, typestr))
    address, readonly = cai["data"]
    strides = cai.get("strides")
    if strides is not None:
        expected, step = [], dtype.itemsize
        for dim in reversed(shape):
            expected.append(step)
            step *= dim
        expected.reverse()
        if any(int(a) != e for a, e, d in zip(strides, expected, shape) if d > 1):
            raise ValueError("%s: the device array is not C-contiguous (strides %s); xcomm cannot copy device "
                             "memory: pass a contiguous array" % (what, tuple(strides)))
    if cai.get("mask") is not None:
        raise ValueError("%s: masked device arrays are not supported" % what)
    _device._wait_for_producer(cai.get("stream"))
    return DeviceBuffer(obj, address or 0, shape, numpy_dtype(dtype), dtype, bool(readonly), holder=obj)


def is_device_object(obj):
    """Whether obj says it is device memory (without exporting anything)."""
    if isinstance(obj, (np.ndarray, Memory)):
        return False
    if isinstance(obj, (DeviceArray, DeviceMemory)) or hasattr(obj, "__cuda_array_interface__"):
        return True
    if hasattr(obj, "__dlpack_device__") and not hasattr(obj, "__array_interface__"):
        try:
            return int(obj.__dlpack_device__()[0]) in _DLPACK_DEVICE
        except Exception:  # the real export reports it
            return False
    return False


def resolve(obj, what, dlpack_stream=None):
    """A Buffer or DeviceBuffer for obj (no copy, no checks of layout or
    writability). dlpack_stream: the stream handle given to a DLPack
    producer on a device (see device.import_dlpack)."""
    if isinstance(obj, np.ndarray):
        return Buffer(obj, obj, numpy_dtype(obj.dtype))
    if isinstance(obj, Memory):  # its bytes; a freed one raises InvalidArgumentError
        return Buffer(obj, obj.array(), DType.UINT8)
    if isinstance(obj, DeviceArray):
        return DeviceBuffer(obj, obj.address, obj.shape, obj.xc_dtype, obj.dtype, device_id=obj._device_id,
                            holder=obj)
    if isinstance(obj, DeviceMemory):
        arr = obj.array()  # a freed one raises InvalidArgumentError
        return DeviceBuffer(obj, arr.address, arr.shape, DType.UINT8, np.uint8, holder=arr)
    cai = _cuda_array_interface(obj)
    if cai is not None:
        return _from_cai(obj, cai, what)
    try:
        view = memoryview(obj)
    except TypeError:
        view = None
    if view is not None:
        array = np.asarray(view)
        return Buffer(obj, array, numpy_dtype(array.dtype))
    if hasattr(obj, "__dlpack__"):
        device = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (_DLPACK_CPU, 0)
        kind = int(device[0])
        if kind in _DLPACK_DEVICE:
            address, shape, dtype, device_id, holder = _device.import_dlpack(obj, what, dlpack_stream)
            return DeviceBuffer(obj, address, shape, dtype, device_id=device_id, holder=holder)
        if kind != _DLPACK_CPU:
            raise UnsupportedError(lib.XC_ERR_UNSUPPORTED, "%s: DLPack device type %d is neither the CPU nor a "
                                   "CUDA device; copy it to host memory first" % (what, kind))
        array, bf16 = _from_dlpack(obj, what)
        return Buffer(obj, array, DType.BFLOAT16 if bf16 else numpy_dtype(array.dtype), bf16)
    raise TypeError("%s must be a buffer (NumPy array, bytearray, memoryview, ...), a DLPack tensor or a device "
                    "array (__cuda_array_interface__), not %s" % (what, type(obj).__name__))


def input_buffer(obj, what, dlpack_stream=None):
    """A Buffer to read from: copied when not C-contiguous (host memory)."""
    buf = resolve(obj, what, dlpack_stream)
    if not buf.is_device and not buf.array.flags.c_contiguous:
        buf.array = np.ascontiguousarray(buf.array)
    return buf


def output_buffer(obj, what, dlpack_stream=None):
    """A Buffer to write into: must be C-contiguous and writable."""
    buf = resolve(obj, what, dlpack_stream)
    if buf.is_device:
        if buf.readonly:
            raise ValueError("%s is read-only: xcomm writes the result into it (its __cuda_array_interface__ "
                             "says so)" % what)
        return buf
    if not buf.array.flags.c_contiguous:
        raise ValueError("%s must be C-contiguous: xcomm writes into it in place (got a %s with strides %s)"
                         % (what, type(obj).__name__, buf.array.strides))
    if not buf.array.flags.writeable:
        raise ValueError("%s is read-only: xcomm writes the result into it (got a read-only %s)"
                         % (what, type(obj).__name__))
    return buf


def same_memory(a, b):
    """'same' when a and b are exactly the same bytes, 'overlap' when they
    share some, None when disjoint (a and b are Buffers or DeviceBuffers;
    host and device memory never overlap)."""
    if a.is_device != b.is_device:
        return None
    pa, pb = a.address, b.address
    if a.nbytes == 0 or b.nbytes == 0:
        return "same" if a.obj is b.obj else None
    if pa == pb and a.nbytes == b.nbytes:
        return "same"
    if pa < pb + b.nbytes and pb < pa + a.nbytes:
        return "overlap"
    return None
