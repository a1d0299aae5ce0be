"""Turn user buffers into (pointer, count, dtype) for the C calls.

Accepted: anything with the buffer protocol (NumPy arrays, bytearray, bytes,
memoryview, array.array), xcomm.Memory (uint8 bytes), CPU DLPack producers (torch tensors, JAX arrays, ...)
through numpy.from_dlpack. Objects with __cuda_array_interface__ and DLPack
producers on a device raise xcomm.UnsupportedError: this build of the library
has no device path. The dtype comes from the array; bytes-like objects are
uint8; bfloat16 needs a NumPy dtype named "bfloat16" (ml_dtypes) or a torch
bfloat16 tensor.

Inputs that are not C-contiguous are copied; outputs must be C-contiguous and
writable (ValueError otherwise): a copy would silently drop the result.
"""

import sys

import numpy as np

from ._ffi import ffi, lib
from .config import DType
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
# Whether the library can read and write device memory. The C API has no
# query for it yet; when a build gains a device path this becomes one.
DEVICE_MEMORY_SUPPORTED = False
_DLPACK_CPU = 1  # DLDeviceType kDLCPU
_DEVICE_MESSAGE = "device memory is not supported by this build"


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
    device = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (_DLPACK_CPU, 0)
    if int(device[0]) != _DLPACK_CPU and not DEVICE_MEMORY_SUPPORTED:
        raise UnsupportedError(lib.XC_ERR_UNSUPPORTED, "%s: %s (DLPack device type %d); copy it to host "
                               "memory first" % (what, _DEVICE_MESSAGE, int(device[0])))
    src, bf16 = _torch_bfloat16_view(obj)
    try:
        return np.from_dlpack(src), bf16
    except (BufferError, TypeError, RuntimeError, ValueError) as e:
        if hasattr(src, "numpy"):  # e.g. an older torch or NumPy without a usable DLPack path
            return np.asarray(src.numpy()), bf16
        raise TypeError("%s: cannot read %s through DLPack: %s" % (what, type(obj).__name__, e)) from e


class Buffer:
    """A user buffer resolved to a NumPy view: .array (sharing memory with
    .obj), .dtype (xcomm.DType), .count (elements), .ptr (void *)."""

    __slots__ = ("obj", "array", "dtype", "count", "_bf16_torch")

    def __init__(self, obj, array, dtype, bf16_torch=False):
        self.obj, self.array, self.dtype, self.count = obj, array, dtype, array.size
        self._bf16_torch = bf16_torch

    @property
    def ptr(self):
        return ffi.cast("void *", self.array.__array_interface__["data"][0])

    @property
    def nbytes(self):
        return self.array.nbytes

    def new_like(self, shape):
        """A fresh array of this buffer's element type, wrapped like .obj."""
        return self.wrap(np.empty(shape, dtype=self.array.dtype))

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


def resolve(obj, what):
    """A Buffer for obj (no copy, no checks of layout or writability)."""
    if isinstance(obj, np.ndarray):
        return Buffer(obj, obj, numpy_dtype(obj.dtype))
    if isinstance(obj, Memory):  # its bytes; a freed one raises InvalidArgumentError
        return Buffer(obj, obj.array(), DType.UINT8)
    if hasattr(obj, "__cuda_array_interface__") and not DEVICE_MEMORY_SUPPORTED:
        raise UnsupportedError(lib.XC_ERR_UNSUPPORTED, "%s: %s (%s has __cuda_array_interface__); copy it to "
                               "host memory first" % (what, _DEVICE_MESSAGE, type(obj).__name__))
    try:
        view = memoryview(obj)
    except TypeError:
        view = None
    if view is not None:
        array = np.asarray(view)
        return Buffer(obj, array, numpy_dtype(array.dtype))
    if hasattr(obj, "__dlpack__"):
        array, bf16 = _from_dlpack(obj, what)
        return Buffer(obj, array, DType.BFLOAT16 if bf16 else numpy_dtype(array.dtype), bf16)
    raise TypeError("%s must be a buffer (NumPy array, bytearray, memoryview, ...) or a CPU DLPack tensor, "
                    "not %s" % (what, type(obj).__name__))


def input_buffer(obj, what):
    """A Buffer to read from: copied when not C-contiguous."""
    buf = resolve(obj, what)
    if not buf.array.flags.c_contiguous:
        buf.array = np.ascontiguousarray(buf.array)
    return buf


def output_buffer(obj, what):
    """A Buffer to write into: must be C-contiguous and writable."""
    buf = resolve(obj, what)
    if not buf.array.flags.c_contiguous:
        raise ValueError("%s must be C-contiguous: xcomm writes into it in place (got a %s with strides %s)"
                         % (what, type(obj).__name__, buf.array.strides))
    if not buf.array.flags.writeable:
        raise ValueError("%s is read-only: xcomm writes the result into it (got a read-only %s)"
                         % (what, type(obj).__name__))
    return buf


def same_memory(a, b):
    """'same' when a and b are exactly the same bytes, 'overlap' when they
    share some, None when disjoint (a and b are Buffers)."""
    pa, pb = a.array.__array_interface__["data"][0], b.array.__array_interface__["data"][0]
    if a.nbytes == 0 or b.nbytes == 0:
        return "same" if a.obj is b.obj else None
    if pa == pb and a.nbytes == b.nbytes:
        return "same"
    if pa < pb + b.nbytes and pb < pa + a.nbytes:
        return "overlap"
    return None
