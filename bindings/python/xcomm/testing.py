"""Test helpers for the emulated device. TEST-ONLY: not for programs.

With XC_DEVICE=emulated the library's "device memory" is host memory that it
tags as device (a test facility, see docs/device.md), so a test can fill and
check it from the host through its address:

    x = xcomm.DeviceArray.empty(comm, 8, np.float32)
    xcomm.testing.host_view(x)[:] = comm.rank       # write "device" memory
    comm.allreduce(x, out=x, stream=s); s.synchronize()
    assert (xcomm.testing.host_view(x) == total).all()

On a real GPU, device memory cannot be read through its address from the
host; every helper here refuses to run unless XC_DEVICE=emulated (a CUDA
program reads device arrays with CuPy, torch or Numba: they take xcomm's
DeviceArray through __cuda_array_interface__ or DLPack).
"""

import numpy as np

from .device import DeviceArray, DeviceMemory, emulated


class _HostView:
    """What a NumPy view of emulated device memory hangs on: the array
    interface of that memory, and the owner that keeps it allocated."""

    def __init__(self, interface, owner):
        self.__array_interface__ = interface
        self.owner = owner


def _require_emulated(what):
    if not emulated():
        raise RuntimeError("xcomm.testing.%s reads device memory from the host through its address, which only "
                           "the emulated device allows (XC_DEVICE=emulated); this process has XC_DEVICE unset or "
                           "set to another device" % what)


def host_view(device_array):
    """A writable NumPy array over the memory of a device array
    (xcomm.DeviceArray, xcomm.DeviceMemory, or any object with
    __cuda_array_interface__), without a copy. Emulated device only; it keeps
    the device array alive. Synchronise the stream of pending ops before
    reading what they write."""
    _require_emulated("host_view")
    obj = device_array
    if isinstance(obj, DeviceMemory):
        obj = obj.array()
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError("host_view takes a device array (__cuda_array_interface__), not %s" % type(obj).__name__)
    typestr = cai["typestr"]
    if isinstance(obj, DeviceArray):  # bfloat16 without ml_dtypes shows as 2-byte void
        typestr = obj.dtype.str
    interface = {"shape": tuple(cai["shape"]), "typestr": typestr, "data": (cai["data"][0], False),
                 "strides": cai.get("strides"), "version": 3}
    if int(np.prod(interface["shape"], dtype=np.int64)) == 0:
        return np.empty(interface["shape"], dtype=np.dtype(typestr))
    return np.asarray(_HostView(interface, obj))


def from_host(comm, array):
    """A new xcomm.DeviceArray on comm's device holding a copy of the host
    array (its shape and dtype). Emulated device only."""
    _require_emulated("from_host")
    array = np.ascontiguousarray(array)
    out = DeviceArray.empty(comm, array.shape, array.dtype)
    host_view(out)[...] = array
    return out


def to_host(device_array):
    """A NumPy copy of a device array's contents. Emulated device only."""
    return host_view(device_array).copy()
