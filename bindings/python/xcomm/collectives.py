"""Collective methods of Comm: barrier, broadcast, allreduce, allgather.

Every rank of the communicator calls them in the same order with matching
arguments. Argument checks that raise before the call (ValueError, TypeError)
depend only on the kind of buffer passed, so ranks that pass the same kinds
fail together instead of leaving the others waiting.
"""

from ._cdef import DEFINES
from ._ffi import ffi, lib
from .buffers import IN_PLACE, input_buffer, output_buffer, same_memory
from .config import Op, to_enum
from .errors import check

_XC_IN_PLACE = ffi.cast("const void *", DEFINES["XC_IN_PLACE"])


def _check_out(out, like, count, what):
    if out.dtype != like.dtype:
        raise TypeError("%s has dtype %s but the input has %s" % (what, out.dtype.name.lower(),
                                                                 like.dtype.name.lower()))
    if out.count != count:
        raise ValueError("%s holds %d elements but needs %d" % (what, out.count, count))


class Collectives:
    """Mixin: needs self._h() (the live xc_comm_t) and self.size."""

    def barrier(self):
        """Return once every rank has entered the barrier."""
        check(lib.xc_barrier(self._h()))

    def broadcast(self, buf, root=0):
        """Copy root's buf into every other rank's buf, in place; returns buf.
        buf must be C-contiguous and writable on every rank."""
        b = output_buffer(buf, "broadcast buffer")
        check(lib.xc_broadcast(b.ptr, b.count, b.dtype, root, self._h()))
        return buf

    def allreduce(self, a, op="sum", out=None):
        """Reduce a element-wise over all ranks with op ("sum", "prod", "min",
        "max", "avg", "band", "bor", "bxor" or xcomm.Op). Returns a new array,
        or out (same dtype and number of elements). out=a, or
        a=xcomm.IN_PLACE, reduces in place (XC_IN_PLACE)."""
        op = to_enum(Op, op, "op")
        if a is IN_PLACE:
            if out is None:
                raise ValueError("allreduce(xcomm.IN_PLACE, ...) needs out=")
            o = output_buffer(out, "allreduce out")
            check(lib.xc_allreduce(_XC_IN_PLACE, o.ptr, o.count, o.dtype, op, self._h()))
            return out
        s = input_buffer(a, "allreduce input")
        if out is None:
            result = s.new_like(s.array.shape)
            o = output_buffer(result, "allreduce out")
        else:
            result = out
            o = output_buffer(out, "allreduce out")
            _check_out(o, s, s.count, "allreduce out")
        overlap = same_memory(s, o) if out is not None else None
        if overlap == "overlap":
            raise ValueError("allreduce: out partly overlaps the input; pass out=a for in place")
        send = _XC_IN_PLACE if overlap == "same" else s.ptr
        check(lib.xc_allreduce(send, o.ptr, o.count, o.dtype, op, self._h()))
        return result

    def allgather(self, a, out=None):
        """Gather every rank's a into one array of size * len(a) elements,
        rank i's block at i: returns a new array of shape (size,) + a.shape,
        or out. With a=xcomm.IN_PLACE, or a being exactly this rank's block
        of out, this rank's block is taken from out (XC_IN_PLACE)."""
        size = self.size
        if a is IN_PLACE:
            if out is None:
                raise ValueError("allgather(xcomm.IN_PLACE, ...) needs out=")
            o = output_buffer(out, "allgather out")
            if o.count % size:
                raise ValueError("allgather out holds %d elements, not a multiple of %d ranks" % (o.count, size))
            check(lib.xc_allgather(_XC_IN_PLACE, o.ptr, o.count // size, o.dtype, self._h()))
            return out
        s = input_buffer(a, "allgather input")
        if out is None:
            result = s.new_like((size,) + s.array.shape)
            o = output_buffer(result, "allgather out")
            send = s.ptr
        else:
            result = out
            o = output_buffer(out, "allgather out")
            _check_out(o, s, s.count * size, "allgather out")
            send = s.ptr
            if same_memory(s, o):
                mine = o.array.reshape(-1)[self.rank * s.count:(self.rank + 1) * s.count]
                block = input_buffer(mine, "allgather out")
                if same_memory(s, block) != "same":
                    raise ValueError("allgather: the input overlaps out but is not this rank's block of it")
                send = _XC_IN_PLACE
        check(lib.xc_allgather(send, o.ptr, s.count, o.dtype, self._h()))
        return result
