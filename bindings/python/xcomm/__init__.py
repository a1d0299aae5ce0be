"""xcomm: Python bindings of the xcomm communication library (cffi, ABI mode).

    import numpy as np, xcomm
    with xcomm.init() as comm:                      # run with: xcrun -n 4 python3 prog.py
        total = comm.allreduce(np.full(4, comm.rank, dtype=np.float32))

Every failed call raises xcomm.Error (.code, .name, .message). Device
memory (xcomm.DeviceArray, __cuda_array_interface__, DLPack on a CUDA device)
works in every op, stream-ordered (xcomm.Stream, Comm.bind_stream, stream=).
See bindings/python/README.md.
"""

from ._cdef import DEFINES as _DEFINES
from ._ffi import ffi as _ffi_obj, lib as _lib, library_path
from .buffers import IN_PLACE, numpy_dtype
from .comm import UNDEFINED, Comm, UniqueId, get_unique_id, init, init_rank
from .device import DeviceArray, DeviceMemory, RegisteredBuffer
from .stream import BIND_COLLECTIVES, Stream
from . import testing  # noqa: F401  (xcomm.testing: emulated-device helpers, test only)
from .config import DEVICE_AUTO, DEVICE_NONE, Config, DebugLevel, DType, Op, Result, ThreadMode
from .groups import group
from .memory import Memory
from .errors import (AbortedError, Error, InvalidArgumentError, InvalidUsageError, PeerFailedError,
                     RevokedError, TimeoutError, TruncatedError, UnsupportedError, check, last_error,
                     result_name, strerror)
from .p2p import ANY_SOURCE, ANY_TAG, TAG_MAX
from .request import Request, Status, waitall
from .redist import Layout, Order, Plan, PlacementKind, from_dtensor

__version__ = "0.2.0"
ABI_VERSION = _DEFINES["XC_ABI_VERSION"]


def get_version():
    """The library's (major, minor, patch) at run time."""
    v = _ffi_obj.new("int[3]")
    check(_lib.xc_get_version(v, v + 1, v + 2))
    return (v[0], v[1], v[2])


def dtype_size(dtype):
    """Bytes of one element of an xcomm dtype (DType, its int or name, or a
    NumPy dtype)."""
    if isinstance(dtype, (DType, int)) and not isinstance(dtype, bool):
        code = int(dtype)
    elif isinstance(dtype, str) and dtype.upper() in DType.__members__:
        code = DType[dtype.upper()]
    else:
        code = numpy_dtype(dtype)
    size = _lib.xc_dtype_size(code)
    if size == 0:
        raise ValueError("unknown xcomm dtype %r" % (dtype,))
    return size


__all__ = [
    "init", "init_rank", "get_unique_id", "get_version", "group", "dtype_size", "waitall", "strerror", "last_error",
    "Comm", "Memory", "DeviceMemory", "DeviceArray", "RegisteredBuffer", "Stream", "BIND_COLLECTIVES", "Request", "Status", "UniqueId", "Config", "Error", "DType", "Op", "Result", "ThreadMode",
    "DebugLevel", "ANY_SOURCE", "ANY_TAG", "TAG_MAX", "UNDEFINED", "IN_PLACE", "DEVICE_AUTO", "DEVICE_NONE",
    "ABI_VERSION", "library_path", "Layout", "Plan", "PlacementKind", "Order", "from_dtensor",
]
