"""The C calls of the torch backend's hot path, declared with every pointer
as uintptr_t: tensors give their addresses as Python ints
(Tensor.data_ptr()), which cffi passes to a uintptr_t parameter as they are,
where a `void *` parameter would need an ffi.cast (a new cdata object) per
buffer per call.

The declarations are derived from the binding's cdef (xcomm/_cdef.py, which
the header test checks against include/xcomm.h): pointers and handle
typedefs become uintptr_t, enums int. Nothing is written by hand, so they
cannot drift from the header.
"""

import re

import cffi

from .._cdef import CDEF
from .._ffi import library_path

# Functions of the hot path (and the async ones); the rest go through xcomm._ffi.lib.
NAMES = (
    "xc_allreduce", "xc_iallreduce", "xc_broadcast", "xc_ibroadcast", "xc_reduce", "xc_ireduce",
    "xc_allgather", "xc_iallgather", "xc_allgatherv", "xc_iallgatherv", "xc_gather", "xc_igather",
    "xc_scatter", "xc_iscatter", "xc_reduce_scatter", "xc_ireduce_scatter", "xc_reduce_scatterv",
    "xc_ireduce_scatterv", "xc_alltoall", "xc_ialltoall", "xc_alltoallv", "xc_ialltoallv", "xc_barrier",
    "xc_ibarrier", "xc_send", "xc_isend", "xc_recv", "xc_irecv",
)

_HANDLES = ("xc_comm_t", "xc_request_t", "xc_stream_t", "xc_buffer_t")
_ENUMS = ("xc_result_t", "xc_dtype_t", "xc_op_t")


def _param(text):
    text = " ".join(text.split())
    name = re.findall(r"\w+", text)[-1]
    if "*" in text or any(re.search(r"\b%s\b" % h, text) for h in _HANDLES):
        return "uintptr_t " + name
    if any(re.search(r"\b%s\b" % e, text) for e in _ENUMS):
        return "int " + name
    return text


def integer_cdef(names=NAMES, cdef=CDEF):
    """The declarations of names, pointers as uintptr_t, enums as int."""
    out = []
    for name in names:
        m = re.search(r"\bxc_result_t\s+%s\s*\(([^;]*)\)\s*;" % name, cdef)
        if m is None:
            raise ImportError("xcomm.torch: %s is not in the binding's cdef" % name)
        params = [_param(p) for p in m.group(1).split(",")]
        out.append("int %s(%s);" % (name, ", ".join(params)))
    return "\n".join(out)


ffi = cffi.FFI()
ffi.cdef(integer_cdef())
lib = ffi.dlopen(library_path)
