"""Collective methods of Comm, blocking and non-blocking (i-prefixed).

Every rank of the communicator calls them in the same order with matching
arguments. Argument checks that raise before the call (ValueError, TypeError)
depend only on the kind of buffer passed, so ranks that pass the same kinds
fail together instead of leaving the others waiting.

Each op is prepared once (`_prep_<op>`: buffers resolved, results allocated,
count arrays built) into a _Call; the blocking method runs it and returns the
result, the i-method starts it and returns a Request whose .data is the
result and which keeps every buffer alive until it completes.

Device memory (xcomm.DeviceArray, __cuda_array_interface__, DLPack on a
CUDA device) works in every op, with results allocated on the device
(xcomm.DeviceArray, or the caller's library's array through its
from_dlpack). Every op takes stream= (an xcomm.Stream; see ops.py and
stream.py): device ops are stream-ordered, so a blocking call has only
enqueued the op when it returns, and its buffers must stay alive until the
stream has run it. A Request of a device op completes when the op has
completed on the device.
"""

import numpy as np

from ._cdef import DEFINES
from ._ffi import ffi, lib
from .buffers import IN_PLACE, same_memory
from .config import Op, to_enum
from .errors import check
from .ops import OpBase, _Call
from .request import Request

_XC_IN_PLACE = ffi.cast("const void *", DEFINES["XC_IN_PLACE"])
_NULL = ffi.NULL


def _check_out(out, like, count, what):
    if out.dtype != like.dtype:
        raise TypeError("%s has dtype %s but the input has %s" % (what, out.dtype.name.lower(),
                                                                 like.dtype.name.lower()))
    if out.count != count:
        raise ValueError("%s holds %d elements but needs %d" % (what, out.count, count))


def _size_array(values, n, what):
    """A size_t[n] of values (a sequence of n non-negative integers)."""
    values = [int(v) for v in values]
    if len(values) != n:
        raise ValueError("%s has %d entries but the communicator has %d ranks" % (what, len(values), n))
    if any(v < 0 for v in values):
        raise ValueError("%s holds a negative value" % what)
    return ffi.new("size_t[]", values or [0]), values


def _layout(counts, displs, n, what):
    """(counts array, displs array, counts, displs, extent): displacements
    default to the packed layout (each block right after the previous one)."""
    c_counts, counts = _size_array(counts, n, what + " counts")
    if displs is None:
        displs = list(np.cumsum([0] + counts[:-1], dtype=np.int64)) if counts else []
    c_displs, displs = _size_array(displs, n, what + " displs")
    extent = max([d + c for d, c in zip(displs, counts)] or [0])
    return c_counts, c_displs, counts, displs, extent


def _blocks_shape(shape, size):
    """The shape of one of size blocks of an array shaped shape: shape[1:]
    when the first axis is the ranks, else (elements // size,)."""
    if len(shape) > 1 and shape[0] == size:
        return tuple(shape[1:])
    return (int(np.prod(shape, dtype=np.int64)) // size,)


class Collectives(OpBase):
    """Mixin: needs self._h() (the live xc_comm_t), self.rank, self.size and
    what OpBase needs."""

    # ---- shared preparation --------------------------------------------------

    def _same_size(self, a, out, name):
        """(send pointer, out Buffer, result, keep) for ops whose output has
        the input's size: out=a or a=IN_PLACE work in place."""
        if a is IN_PLACE:
            if out is None:
                raise ValueError("%s(xcomm.IN_PLACE, ...) needs out=" % name)
            o = self._output(out, name + " out")
            return _XC_IN_PLACE, o, out, (o,)
        s = self._input(a, name + " input")
        if out is None:
            result = self._new_like(s, s.shape)
            o = self._output(result, name + " out")
            return s.ptr, o, result, (s, o)
        o = self._output(out, name + " out")
        _check_out(o, s, s.count, name + " out")
        overlap = same_memory(s, o)
        if overlap == "overlap":
            raise ValueError("%s: out partly overlaps the input; pass out=a for in place" % name)
        return (_XC_IN_PLACE if overlap == "same" else s.ptr), o, out, (s, o)

    def _own_block(self, s, o, start, name):
        """XC_IN_PLACE when the input s is exactly elements [start, start +
        s.count) of out o, the input pointer when it does not touch o."""
        if not same_memory(s, o):
            return s.ptr
        mine = self._input(o.flat(start, s.count), name + " out")
        if same_memory(s, mine) != "same":
            raise ValueError("%s: the input overlaps out but is not this rank's block of it" % name)
        return _XC_IN_PLACE

    def _reduction(self, a, op, out, name):
        op = to_enum(Op, op, "op")
        send, o, result, keep = self._same_size(a, out, name)
        return _Call((send, o.ptr, o.count, o.dtype, op, self._h()), result, keep)

    # ---- barrier, broadcast ----------------------------------------------------

    def barrier(self):
        """Return once every rank has entered the barrier."""
        check(lib.xc_barrier(self._h()))

    def ibarrier(self):
        """Start a barrier; the Request completes once every rank entered it."""
        req = Request(keep=None)
        check(lib.xc_ibarrier(self._h(), req._req))
        return req

    def _prep_broadcast(self, buf, root):
        b = self._output(buf, "broadcast buffer")
        return _Call((b.ptr, b.count, b.dtype, root, self._h()), buf, (b,))

    def broadcast(self, buf, root=0, *, stream=None):
        """Copy root's buf into every other rank's buf, in place; returns buf.
        buf must be C-contiguous and writable on every rank."""
        return self._run(lib.xc_broadcast, lambda: self._prep_broadcast(buf, root), stream)

    def ibroadcast(self, buf, root=0, *, stream=None):
        """Non-blocking broadcast; the Request's .data is buf."""
        return self._start(lib.xc_ibroadcast, lambda: self._prep_broadcast(buf, root), stream)

    # ---- reductions --------------------------------------------------------------

    def allreduce(self, a, op="sum", out=None, *, stream=None):
        """Reduce a element-wise over all ranks with op ("sum", "prod", "min",
        "max", "avg", "band", "bor", "bxor" or xcomm.Op). Returns a new array,
        or out (same dtype and number of elements). out=a, or
        a=xcomm.IN_PLACE, reduces in place (XC_IN_PLACE)."""
        return self._run(lib.xc_allreduce, lambda: self._reduction(a, op, out, "allreduce"), stream)

    def iallreduce(self, a, op="sum", out=None, *, stream=None):
        """Non-blocking allreduce; the Request's .data is the result."""
        return self._start(lib.xc_iallreduce, lambda: self._reduction(a, op, out, "allreduce"), stream)

    def _prep_reduce(self, a, op, root, out):
        op = to_enum(Op, op, "op")
        if self.rank == root:
            send, o, result, keep = self._same_size(a, out, "reduce")
            return _Call((send, o.ptr, o.count, o.dtype, op, root, self._h()), result, keep)
        if a is IN_PLACE:
            raise ValueError("reduce: xcomm.IN_PLACE is for the root only")
        s = self._input(a, "reduce input")
        return _Call((s.ptr, _NULL, s.count, s.dtype, op, root, self._h()), None, (s,))

    def reduce(self, a, op="sum", root=0, out=None, *, stream=None):
        """Reduce a over all ranks into root: returns the result at the root
        (a new array, or out; out=a or a=xcomm.IN_PLACE for in place) and None
        elsewhere (out is not used there)."""
        return self._run(lib.xc_reduce, lambda: self._prep_reduce(a, op, root, out), stream)

    def ireduce(self, a, op="sum", root=0, out=None, *, stream=None):
        """Non-blocking reduce; .data is the result at the root, else None."""
        return self._start(lib.xc_ireduce, lambda: self._prep_reduce(a, op, root, out), stream)

    def _prep_scan(self, a, op, out, name):
        call = self._reduction(a, op, out, name)
        if name == "exscan" and out is None and self.rank == 0:
            call.result = None  # rank 0's output is left untouched: nothing to return
        return call

    def scan(self, a, op="sum", out=None, *, stream=None):
        """Inclusive prefix reduction in rank order: rank i gets op over the
        inputs of ranks 0..i. A new array, or out (out=a / IN_PLACE: in place)."""
        return self._run(lib.xc_scan, lambda: self._prep_scan(a, op, out, "scan"), stream)

    def iscan(self, a, op="sum", out=None, *, stream=None):
        return self._start(lib.xc_iscan, lambda: self._prep_scan(a, op, out, "scan"), stream)

    def exscan(self, a, op="sum", out=None, *, stream=None):
        """Exclusive prefix reduction: rank i gets op over ranks 0..i-1. Rank 0
        gets None (or its out, untouched)."""
        return self._run(lib.xc_exscan, lambda: self._prep_scan(a, op, out, "exscan"), stream)

    def iexscan(self, a, op="sum", out=None, *, stream=None):
        return self._start(lib.xc_iexscan, lambda: self._prep_scan(a, op, out, "exscan"), stream)

    def _prep_reduce_scatter(self, a, op, out):
        op = to_enum(Op, op, "op")
        size = self.size
        if a is IN_PLACE:
            if out is None:
                raise ValueError("reduce_scatter(xcomm.IN_PLACE, ...) needs out= (all size blocks)")
            o = self._output(out, "reduce_scatter out")
            if o.count % size:
                raise ValueError("reduce_scatter out holds %d elements, not a multiple of %d ranks" % (o.count, size))
            k = o.count // size
            result = o.wrap(o.flat(0, k))  # the result lands in the first block, as in MPI
            return _Call((_XC_IN_PLACE, o.ptr, k, o.dtype, op, self._h()), result, (o,))
        s = self._input(a, "reduce_scatter input")
        if s.count % size:
            raise ValueError("reduce_scatter input holds %d elements, not a multiple of %d ranks" % (s.count, size))
        k = s.count // size
        if out is None:
            result = self._new_like(s, _blocks_shape(s.shape, size))
            o = self._output(result, "reduce_scatter out")
        else:
            result = out
            o = self._output(out, "reduce_scatter out")
            _check_out(o, s, k, "reduce_scatter out")
        return _Call((s.ptr, o.ptr, k, s.dtype, op, self._h()), result, (s, o))

    def reduce_scatter(self, a, op="sum", out=None, *, stream=None):
        """Reduce a (size blocks of equal length) over all ranks; rank i gets
        the reduction of block i: a new array (shape a.shape[1:] when a's
        first axis is the ranks), or out. a=xcomm.IN_PLACE with out= holding
        the input reduces in place; the result is out's first block."""
        return self._run(lib.xc_reduce_scatter, lambda: self._prep_reduce_scatter(a, op, out), stream)

    def ireduce_scatter(self, a, op="sum", out=None, *, stream=None):
        return self._start(lib.xc_ireduce_scatter, lambda: self._prep_reduce_scatter(a, op, out), stream)

    def _prep_reduce_scatterv(self, a, counts, op, out):
        op = to_enum(Op, op, "op")
        c_counts, counts = _size_array(counts, self.size, "reduce_scatterv counts")
        total, k = sum(counts), counts[self.rank]
        if a is IN_PLACE:
            if out is None:
                raise ValueError("reduce_scatterv(xcomm.IN_PLACE, ...) needs out= (sum(counts) elements)")
            o = self._output(out, "reduce_scatterv out")
            if o.count != total:
                raise ValueError("reduce_scatterv out holds %d elements but needs sum(counts) = %d" % (o.count, total))
            result = o.wrap(o.flat(0, k))
            return _Call((_XC_IN_PLACE, o.ptr, c_counts, o.dtype, op, self._h()), result, (o,))
        s = self._input(a, "reduce_scatterv input")
        if s.count != total:
            raise ValueError("reduce_scatterv input holds %d elements but sum(counts) is %d" % (s.count, total))
        if out is None:
            result = self._new_like(s, (k,))
            o = self._output(result, "reduce_scatterv out")
        else:
            result = out
            o = self._output(out, "reduce_scatterv out")
            _check_out(o, s, k, "reduce_scatterv out")
        return _Call((s.ptr, o.ptr, c_counts, s.dtype, op, self._h()), result, (s, o))

    def reduce_scatterv(self, a, counts, op="sum", out=None, *, stream=None):
        """Reduce a (sum(counts) elements) over all ranks; rank i gets
        counts[i] elements starting at counts[0] + ... + counts[i-1]."""
        return self._run(lib.xc_reduce_scatterv, lambda: self._prep_reduce_scatterv(a, counts, op, out), stream)

    def ireduce_scatterv(self, a, counts, op="sum", out=None, *, stream=None):
        return self._start(lib.xc_ireduce_scatterv, lambda: self._prep_reduce_scatterv(a, counts, op, out), stream)

    # ---- gathers -------------------------------------------------------------------

    def _prep_allgather(self, a, out):
        size = self.size
        if a is IN_PLACE:
            if out is None:
                raise ValueError("allgather(xcomm.IN_PLACE, ...) needs out=")
            o = self._output(out, "allgather out")
            if o.count % size:
                raise ValueError("allgather out holds %d elements, not a multiple of %d ranks" % (o.count, size))
            return _Call((_XC_IN_PLACE, o.ptr, o.count // size, o.dtype, self._h()), out, (o,))
        s = self._input(a, "allgather input")
        if out is None:
            result = self._new_like(s, (size,) + s.shape)
            o = self._output(result, "allgather out")
            send = s.ptr
        else:
            result = out
            o = self._output(out, "allgather out")
            _check_out(o, s, s.count * size, "allgather out")
            send = self._own_block(s, o, self.rank * s.count, "allgather")
        return _Call((send, o.ptr, s.count, o.dtype, self._h()), result, (s, o))

    def allgather(self, a, out=None, *, stream=None):
        """Gather every rank's a into one array of size * len(a) elements,
        rank i's block at i: returns a new array of shape (size,) + a.shape,
        or out. With a=xcomm.IN_PLACE, or a being exactly this rank's block
        of out, this rank's block is taken from out (XC_IN_PLACE)."""
        return self._run(lib.xc_allgather, lambda: self._prep_allgather(a, out), stream)

    def iallgather(self, a, out=None, *, stream=None):
        return self._start(lib.xc_iallgather, lambda: self._prep_allgather(a, out), stream)

    def _prep_allgatherv(self, a, counts, displs, out):
        c_counts, c_displs, counts, displs, extent = _layout(counts, displs, self.size, "allgatherv")
        mine = counts[self.rank]
        if a is IN_PLACE:
            if out is None:
                raise ValueError("allgatherv(xcomm.IN_PLACE, ...) needs out=")
            o = self._output(out, "allgatherv out")
            return _Call((_XC_IN_PLACE, mine, o.ptr, c_counts, c_displs, o.dtype, self._h()), out, (o,))
        s = self._input(a, "allgatherv input")
        if s.count != mine:
            raise ValueError("allgatherv input holds %d elements but counts[%d] is %d" % (s.count, self.rank, mine))
        if out is None:
            result = self._new_like(s, (extent,))
            o = self._output(result, "allgatherv out")
            send = s.ptr
        else:
            result = out
            o = self._output(out, "allgatherv out")
            _check_out(o, s, max(o.count, extent), "allgatherv out")
            send = self._own_block(s, o, displs[self.rank], "allgatherv")
        return _Call((send, mine, o.ptr, c_counts, c_displs, s.dtype, self._h()), result, (s, o))

    def allgatherv(self, a, counts, displs=None, out=None, *, stream=None):
        """Gather rank i's counts[i] elements at displs[i] (default: packed,
        one after the other) of one array on every rank: returns a new 1-D
        array, or out. a=xcomm.IN_PLACE, or a being this rank's block of out,
        works in place."""
        return self._run(lib.xc_allgatherv, lambda: self._prep_allgatherv(a, counts, displs, out), stream)

    def iallgatherv(self, a, counts, displs=None, out=None, *, stream=None):
        return self._start(lib.xc_iallgatherv, lambda: self._prep_allgatherv(a, counts, displs, out), stream)

    def _prep_gather(self, a, root, out):
        size, rank = self.size, self.rank
        if rank != root:
            if a is IN_PLACE:
                raise ValueError("gather: xcomm.IN_PLACE is for the root only")
            s = self._input(a, "gather input")
            return _Call((s.ptr, _NULL, s.count, s.dtype, root, self._h()), None, (s,))
        if a is IN_PLACE:
            if out is None:
                raise ValueError("gather(xcomm.IN_PLACE, ...) needs out= at the root")
            o = self._output(out, "gather out")
            if o.count % size:
                raise ValueError("gather out holds %d elements, not a multiple of %d ranks" % (o.count, size))
            return _Call((_XC_IN_PLACE, o.ptr, o.count // size, o.dtype, root, self._h()), out, (o,))
        s = self._input(a, "gather input")
        if out is None:
            result = self._new_like(s, (size,) + s.shape)
            o = self._output(result, "gather out")
            send = s.ptr
        else:
            result = out
            o = self._output(out, "gather out")
            _check_out(o, s, s.count * size, "gather out")
            send = self._own_block(s, o, rank * s.count, "gather")
        return _Call((send, o.ptr, s.count, s.dtype, root, self._h()), result, (s, o))

    def gather(self, a, root=0, out=None, *, stream=None):
        """Gather every rank's a at root: there a new array of shape
        (size,) + a.shape (or out); None elsewhere."""
        return self._run(lib.xc_gather, lambda: self._prep_gather(a, root, out), stream)

    def igather(self, a, root=0, out=None, *, stream=None):
        return self._start(lib.xc_igather, lambda: self._prep_gather(a, root, out), stream)

    def _prep_gatherv(self, a, counts, displs, root, out):
        rank = self.rank
        if rank != root:
            if a is IN_PLACE:
                raise ValueError("gatherv: xcomm.IN_PLACE is for the root only")
            s = self._input(a, "gatherv input")
            return _Call((s.ptr, s.count, _NULL, _NULL, _NULL, s.dtype, root, self._h()), None, (s,))
        if counts is None:
            raise ValueError("gatherv needs counts at the root")
        c_counts, c_displs, counts, displs, extent = _layout(counts, displs, self.size, "gatherv")
        mine = counts[rank]
        if a is IN_PLACE:
            if out is None:
                raise ValueError("gatherv(xcomm.IN_PLACE, ...) needs out= at the root")
            o = self._output(out, "gatherv out")
            return _Call((_XC_IN_PLACE, mine, o.ptr, c_counts, c_displs, o.dtype, root, self._h()), out, (o,))
        s = self._input(a, "gatherv input")
        if out is None:
            result = self._new_like(s, (extent,))
            o = self._output(result, "gatherv out")
            send = s.ptr
        else:
            result = out
            o = self._output(out, "gatherv out")
            _check_out(o, s, max(o.count, extent), "gatherv out")
            send = self._own_block(s, o, displs[rank], "gatherv")
        return _Call((send, s.count, o.ptr, c_counts, c_displs, s.dtype, root, self._h()), result, (s, o))

    def gatherv(self, a, counts=None, displs=None, root=0, out=None, *, stream=None):
        """Gather rank i's a (counts[i] elements) at displs[i] (default:
        packed) of a 1-D array at root; counts are needed at the root only.
        Returns the array (or out) at the root, None elsewhere."""
        return self._run(lib.xc_gatherv, lambda: self._prep_gatherv(a, counts, displs, root, out), stream)

    def igatherv(self, a, counts=None, displs=None, root=0, out=None, *, stream=None):
        return self._start(lib.xc_igatherv, lambda: self._prep_gatherv(a, counts, displs, root, out), stream)

    # ---- scatters ------------------------------------------------------------------

    def _recv_out(self, out, count, dtype, device, name):
        """(Buffer, result) of a non-root scatter: out, or a new array of count
        elements of dtype (a DeviceArray with device=True)."""
        if out is not None:
            o = self._output(out, name + " out")
            return o, out
        if count is None or dtype is None:
            raise ValueError("%s: ranks other than the root need out= or count= and dtype=" % name)
        result = self._new_array(count, dtype, device)
        return self._output(result, name + " out"), result

    def _prep_scatter(self, a, root, out, count, dtype, device):
        size, rank = self.size, self.rank
        if rank != root:
            o, result = self._recv_out(out, count, dtype, device, "scatter")
            return _Call((_NULL, o.ptr, o.count, o.dtype, root, self._h()), result, (o,))
        s = self._input(a, "scatter input")
        if s.count % size:
            raise ValueError("scatter input holds %d elements, not a multiple of %d ranks" % (s.count, size))
        k = s.count // size
        if out is IN_PLACE:  # the root's block stays where it is, in a
            result = s.wrap(s.flat(rank * k, k).reshape(_blocks_shape(s.shape, size)))
            return _Call((s.ptr, _XC_IN_PLACE, k, s.dtype, root, self._h()), result, (s,))
        if out is None:
            result = self._new_like(s, _blocks_shape(s.shape, size))
            o = self._output(result, "scatter out")
        else:
            result = out
            o = self._output(out, "scatter out")
            _check_out(o, s, k, "scatter out")
        return _Call((s.ptr, o.ptr, k, s.dtype, root, self._h()), result, (s, o))

    def scatter(self, a=None, root=0, out=None, *, count=None, dtype=None, device=False, stream=None):
        """Send block i of root's a (size blocks of equal length) to rank i;
        returns this rank's block (a new array, or out). Other ranks pass
        out= or count= and dtype= (and device=True for a new DeviceArray
        when the root scatters device memory); a is read at the root only.
        out=xcomm.IN_PLACE at the root leaves its block in a (returned as a view)."""
        return self._run(lib.xc_scatter, lambda: self._prep_scatter(a, root, out, count, dtype, device), stream)

    def iscatter(self, a=None, root=0, out=None, *, count=None, dtype=None, device=False, stream=None):
        return self._start(lib.xc_iscatter, lambda: self._prep_scatter(a, root, out, count, dtype, device), stream)

    def _prep_scatterv(self, a, counts, displs, root, out, count, dtype, device):
        rank = self.rank
        if rank != root:
            if count is None and counts is not None and out is None:
                count = list(counts)[rank]
            o, result = self._recv_out(out, count, dtype, device, "scatterv")
            return _Call((_NULL, _NULL, _NULL, o.ptr, o.count, o.dtype, root, self._h()), result, (o,))
        if counts is None:
            raise ValueError("scatterv needs counts at the root")
        c_counts, c_displs, counts, displs, extent = _layout(counts, displs, self.size, "scatterv")
        s = self._input(a, "scatterv input")
        if s.count < extent:
            raise ValueError("scatterv input holds %d elements but counts and displs reach %d" % (s.count, extent))
        k = counts[rank]
        if out is IN_PLACE:
            result = s.wrap(s.flat(displs[rank], k))
            return _Call((s.ptr, c_counts, c_displs, _XC_IN_PLACE, k, s.dtype, root, self._h()), result, (s,))
        if out is None:
            result = self._new_like(s, (k,))
            o = self._output(result, "scatterv out")
        else:
            result = out
            o = self._output(out, "scatterv out")
            _check_out(o, s, k, "scatterv out")
        return _Call((s.ptr, c_counts, c_displs, o.ptr, k, s.dtype, root, self._h()), result, (s, o))

    def scatterv(self, a=None, counts=None, displs=None, root=0, out=None, *, count=None, dtype=None, device=False,
                 stream=None):
        """Send counts[i] elements at displs[i] (default: packed) of root's a
        to rank i; returns this rank's part (a new 1-D array, or out). Other
        ranks pass out=, or dtype= with count= (default counts[rank]) and
        device=True for a new DeviceArray."""
        return self._run(lib.xc_scatterv,
                         lambda: self._prep_scatterv(a, counts, displs, root, out, count, dtype, device), stream)

    def iscatterv(self, a=None, counts=None, displs=None, root=0, out=None, *, count=None, dtype=None, device=False,
                  stream=None):
        return self._start(lib.xc_iscatterv,
                           lambda: self._prep_scatterv(a, counts, displs, root, out, count, dtype, device), stream)

    # ---- all to all ---------------------------------------------------------------

    def _prep_alltoall(self, a, out):
        size = self.size
        send, o, result, keep = self._same_size(a, out, "alltoall")
        if o.count % size:
            raise ValueError("alltoall buffers hold %d elements, not a multiple of %d ranks" % (o.count, size))
        return _Call((send, o.ptr, o.count // size, o.dtype, self._h()), result, keep)

    def alltoall(self, a, out=None, *, stream=None):
        """Block i of a (size blocks of equal length) goes to rank i; block j
        of the result came from rank j. A new array shaped like a, or out
        (out=a or a=xcomm.IN_PLACE: in place)."""
        return self._run(lib.xc_alltoall, lambda: self._prep_alltoall(a, out), stream)

    def ialltoall(self, a, out=None, *, stream=None):
        return self._start(lib.xc_ialltoall, lambda: self._prep_alltoall(a, out), stream)

    def _prep_alltoallv(self, a, sendcounts, recvcounts, sdispls, rdispls, out):
        size = self.size
        c_rc, c_rd, _rc, _rd, r_extent = _layout(recvcounts, rdispls, size, "alltoallv recv")
        if a is IN_PLACE:
            if out is None:
                raise ValueError("alltoallv(xcomm.IN_PLACE, ...) needs out=")
            o = self._output(out, "alltoallv out")
            return _Call((_XC_IN_PLACE, _NULL, _NULL, o.ptr, c_rc, c_rd, o.dtype, self._h()), out, (o,))
        c_sc, c_sd, _sc, _sd, s_extent = _layout(sendcounts, sdispls, size, "alltoallv send")
        s = self._input(a, "alltoallv input")
        if s.count < s_extent:
            raise ValueError("alltoallv input holds %d elements but sendcounts and sdispls reach %d"
                             % (s.count, s_extent))
        if out is None:
            result = self._new_like(s, (r_extent,))
            o = self._output(result, "alltoallv out")
        else:
            result = out
            o = self._output(out, "alltoallv out")
            _check_out(o, s, max(o.count, r_extent), "alltoallv out")
        return _Call((s.ptr, c_sc, c_sd, o.ptr, c_rc, c_rd, s.dtype, self._h()), result, (s, o))

    def alltoallv(self, a, sendcounts, recvcounts, sdispls=None, rdispls=None, out=None, *, stream=None):
        """sendcounts[i] elements at sdispls[i] of a go to rank i, and
        recvcounts[j] elements from rank j land at rdispls[j] of the result
        (displacements default to packed). A new 1-D array, or out.
        a=xcomm.IN_PLACE with out= uses recvcounts/rdispls for both sides."""
        return self._run(lib.xc_alltoallv,
                         lambda: self._prep_alltoallv(a, sendcounts, recvcounts, sdispls, rdispls, out), stream)

    def ialltoallv(self, a, sendcounts, recvcounts, sdispls=None, rdispls=None, out=None, *, stream=None):
        return self._start(lib.xc_ialltoallv,
                           lambda: self._prep_alltoallv(a, sendcounts, recvcounts, sdispls, rdispls, out), stream)
