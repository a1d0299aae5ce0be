"""ProcessGroupXcomm: torch.distributed's ProcessGroup interface over one
xcomm communicator.

How an op runs:
- Host tensors, caller waits at once: when the op is called by
  torch.distributed's own function with async_op=False (or by dist.send /
  dist.recv, which always wait), the blocking xcomm call runs and the shared
  completed Work (DONE) is returned. This is the hot path: a dict lookup or
  two, the tensor's address, and one C call through xcomm.torch._capi,
  which takes addresses as plain ints.
- Host tensors, anything else (async_op=True, a call from C++ such as DDP's
  reducer, batch_isend_irecv): the non-blocking xcomm call (xc_i*,
  xc_isend/xc_irecv) and a PendingWork on its request. Point-to-point is
  always non-blocking: a send and a receive of one rank never wait on each
  other.
- CUDA tensors: the blocking call, which with device memory only enqueues
  the op on the stream bound to it; this group binds torch's current
  stream (xc_stream_wrap + xc_stream_bind), so the op is ordered with the
  caller's kernels, as with NCCL. Untested here (no GPU).

Tensors that are not contiguous are copied (inputs) or received into a
contiguous copy that is copied back on completion (outputs). Reductions take
the dtypes xcomm has (int8, uint8, int32, int64, float16, bfloat16, float32,
float64; bool as uint8 with SUM as MAX and PRODUCT as MIN, as NCCL does);
ops that only move data take any dtype (as bytes).
"""

import sys
import threading
import weakref
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

from .. import errors as _errors
from .._cdef import DEFINES
from .._ffi import ffi, lib
from . import _capi
from torch._C._distributed_c10d import Work

from ._work import DONE, PendingWork, StreamWork, make_error

C = _capi.lib
_getframe = sys._getframe
_IN_PLACE = 1
TAG_MAX = DEFINES["XC_TAG_MAX"]
_MONITOR_TAG = TAG_MAX  # reserved for monitored_barrier; user tags are 0 .. TAG_MAX - 1
_ANY_SOURCE = DEFINES["XC_ANY_SOURCE"]
_BIND_COLLECTIVES = DEFINES["XC_BIND_COLLECTIVES"]

_DTYPES = {
    torch.int8: lib.XC_INT8,
    torch.uint8: lib.XC_UINT8,
    torch.int32: lib.XC_INT32,
    torch.int64: lib.XC_INT64,
    torch.float16: lib.XC_FLOAT16,
    torch.bfloat16: lib.XC_BFLOAT16,
    torch.float32: lib.XC_FLOAT32,
    torch.float64: lib.XC_FLOAT64,
    torch.bool: lib.XC_UINT8,
}
_R = dist.ReduceOp.RedOpType
_OPS = {
    _R.SUM: lib.XC_SUM,
    _R.PRODUCT: lib.XC_PROD,
    _R.MIN: lib.XC_MIN,
    _R.MAX: lib.XC_MAX,
    _R.BAND: lib.XC_BAND,
    _R.BOR: lib.XC_BOR,
    _R.BXOR: lib.XC_BXOR,
    _R.AVG: lib.XC_AVG,
}
# The all_reduce hot path's tables: no bool, no bitwise ops (their checks).
_ARITH_DTYPES = {k: v for k, v in _DTYPES.items() if k is not torch.bool}
_AllreduceOptions = dist.AllreduceOptions
# torch's own ReduceOp objects (dist.ReduceOp.SUM, ..., the defaults of its
# functions): alive as long as torch, so their ids stay theirs.
_OPS_BY_ID = {id(getattr(dist.ReduceOp, name)): _OPS[getattr(_R, name)]
              for name in ("SUM", "PRODUCT", "MIN", "MAX", "AVG")}
_ALL_REDUCE_CODE = getattr(getattr(c10d, "all_reduce", None), "__code__", None)
# bool tensors reduce as uint8 0/1: "sum" is "any", "product" is "all" (NCCL's choice).
_BOOL_OPS = dict(_OPS)
_BOOL_OPS.update({_R.SUM: lib.XC_MAX, _R.PRODUCT: lib.XC_MIN})
del _BOOL_OPS[_R.AVG]

# torch.distributed's functions that call a group's method and wait for the
# Work at once unless async_op is true; and those that always wait.
_ASYNC_OP_CALLERS = frozenset(
    getattr(c10d, name).__code__
    for name in ("all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_coalesced", "all_gather_into_tensor",
                 "_all_gather_base", "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base", "all_to_all",
                 "all_to_all_single", "gather", "scatter", "reduce", "broadcast", "barrier")
    if hasattr(getattr(c10d, name, None), "__code__"))
_WAITING_CALLERS = frozenset(getattr(c10d, name).__code__ for name in ("send", "recv")
                             if hasattr(getattr(c10d, name, None), "__code__"))
_ASYNC_CALLERS = frozenset(getattr(c10d, name).__code__ for name in ("isend", "irecv")
                           if hasattr(getattr(c10d, name, None), "__code__"))


# Who called an op method, and so what it gets back:
_OTHER = 0     # C++ (DDP's reducer, _verify_params_across_processes) or code we do not know:
               # a non-blocking op in a C++ Work wrapping a torch Future (see _work.py)
_PY_ASYNC = 1  # torch.distributed's function with async_op=True, isend/irecv: a PendingWork
_WAITS = 2     # torch.distributed's function that waits at once: the blocking call, DONE


def _caller(depth=2):
    """(the caller's kind: _WAITS, _PY_ASYNC or _OTHER; the locals of
    torch's calling function, or None). When it waits for the Work right
    away, the blocking call does the same work without a request; anything
    else gets a real non-blocking op. The locals are read once (~0.5 us):
    they also hold the function's `op`."""
    f = _getframe(depth)
    code = f.f_code
    if code in _ASYNC_OP_CALLERS:
        loc = f.f_locals
        return (_WAITS if loc.get("async_op") is False else _PY_ASYNC), loc
    if code in _WAITING_CALLERS:
        return _WAITS, None
    return (_PY_ASYNC if code in _ASYNC_CALLERS else _OTHER), None


def _caller_waits():
    """The caller's kind alone (see _caller)."""
    return _caller(3)[0]


def _options(opts, cls):
    return cls() if opts is None else opts


class ProcessGroupXcomm(dist.ProcessGroup):
    """torch.distributed process group over an xcomm communicator. Made by
    the backend's creator (dist.init_process_group("xcomm"), dist.new_group
    with backend "xcomm"); `comm` is an xcomm.Comm it takes over."""

    def __init__(self, comm, rank, size, timeout, is_world):
        super().__init__(rank, size)
        self._comm = comm
        self._h = int(ffi.cast("uintptr_t", comm.handle))
        self._rank = rank
        self._size = size
        self._timeout = timeout
        self._is_world = is_world
        self._coalescing = 0
        self._xc_group = None  # during coalescing with device ops: their StreamWorks
        self._group_seq = {}  # world only: groups made per list of ranks (their tags)
        self._lock = threading.Lock()
        self._streams = {}  # CUDA stream handle -> xcomm.Stream (wrapped)
        self._bound = {}  # bind target -> CUDA stream handle bound there
        self._freed = False
        _live.add(self)

    # ---- identity ----------------------------------------------------------------------------
    def getBackendName(self):
        return "xcomm"

    _get_backend_name = getBackendName

    @property
    def comm(self):
        """The xcomm.Comm under this group (rank and size are the group's)."""
        return self._comm

    def __repr__(self):
        return "<xcomm.torch.ProcessGroupXcomm rank %d of %d>" % (self._rank, self._size)

    # ---- helpers -----------------------------------------------------------------------------
    def _fail(self, rc, what):
        raise make_error(rc, what)

    def _check_tag(self, tag):
        if not 0 <= tag < TAG_MAX:
            raise ValueError("xcomm: tag %d is outside 0 .. %d" % (tag, TAG_MAX - 1))

    def _check_rank(self, r, what):
        if not 0 <= r < self._size:
            raise ValueError("xcomm: %s: rank %d is outside the group's 0 .. %d" % (what, r, self._size - 1))

    @staticmethod
    def _one(tensors, what):
        if isinstance(tensors, torch.Tensor):
            return tensors
        if len(tensors) != 1:
            raise ValueError("xcomm: %s takes one tensor per process, not %d" % (what, len(tensors)))
        return tensors[0]

    @staticmethod
    def _dtype(t, what, reduce=False):
        """(xcomm dtype, count) of t: its own dtype, or bytes for data movement."""
        dt = _DTYPES.get(t.dtype)
        if dt is not None:
            return dt, t.numel()
        if reduce:
            raise TypeError("xcomm: %s cannot reduce %s tensors (it reduces int8, uint8, int32, int64, float16, "
                            "bfloat16, float32, float64 and bool)" % (what, t.dtype))
        return lib.XC_UINT8, t.numel() * t.element_size()

    @staticmethod
    def _unit(t, what):
        """(xcomm dtype, xcomm elements per tensor element): 1 for the
        dtypes xcomm has, the element size for those moved as bytes."""
        dt = _DTYPES.get(t.dtype)
        return (dt, 1) if dt is not None else (lib.XC_UINT8, t.element_size())

    def _red(self, opts, loc, t, what):
        """The xcomm reduction of opts: torch's own ReduceOp objects found by
        identity in the calling function's `op` (opts.reduceOp.op builds two
        Python objects, ~0.8 us), else read from opts."""
        if loc is not None and t.dtype is not torch.bool:
            red = _OPS_BY_ID.get(id(loc.get("op")))
            if red is not None:
                return red
        return self._op(opts.reduceOp, t, what)

    @staticmethod
    def _op(opts_op, t, what):
        table = _BOOL_OPS if t.dtype == torch.bool else _OPS
        op = table.get(opts_op.op if hasattr(opts_op, "op") else opts_op)
        if op is None:
            raise ValueError("xcomm: %s: reduction %s is not supported for %s tensors" % (what, opts_op, t.dtype))
        if op in (lib.XC_BAND, lib.XC_BOR, lib.XC_BXOR) and (t.is_floating_point() or t.is_complex()):
            raise ValueError("xcomm: %s: bitwise reductions take integer tensors, not %s" % (what, t.dtype))
        return op

    @staticmethod
    def _same_device(tensors, what):
        cuda = tensors[0].is_cuda
        for t in tensors:
            if t.is_cuda != cuda or not (t.is_cuda or t.device.type == "cpu"):
                raise ValueError("xcomm: %s: tensors must all be on the CPU or all on CUDA devices (got %s)" %
                                 (what, ", ".join(sorted({str(x.device) for x in tensors}))))
        return cuda

    def _run(self, what, fsync, fasync, args, keep=None, finish=None, outputs=None, cuda=False, peer=None,
             waits=_OTHER):
        """Run one xcomm op: blocking (DONE), enqueued on the current CUDA
        stream (StreamWork), or non-blocking (PendingWork); for callers other
        than torch's Python functions, the work goes back in a C++ Work
        (wrapped())."""
        if cuda:
            stream = self._bind_current_stream(_BIND_COLLECTIVES if peer is None else peer, what)
            grouped = self._coalescing > 0
            if grouped and self._xc_group is None:
                rc = lib.xc_group_start()
                if rc < 0:
                    self._fail(rc, what)
                self._xc_group = []
            rc = fsync(*args)
            if rc < 0:
                self._fail(rc, what)
            if finish is not None and not grouped:
                finish()  # torch ops on the same stream: ordered after the xcomm op
            work = StreamWork(self, what, stream, outputs, keep, record=not grouped,
                              finish=finish if grouped else None)
            if grouped:
                self._xc_group.append(work)
            return work.wrapped() if waits == _OTHER else work
        if waits == _WAITS and not self._coalescing:
            rc = fsync(*args)
            if rc < 0:
                self._fail(rc, what)
            if finish is not None:
                finish()
            return DONE
        req = ffi.new("xc_request_t[1]")
        rc = fasync(*args, int(ffi.cast("uintptr_t", req)))
        if rc < 0:
            self._fail(rc, what)
        work = PendingWork(what, req, 1, keep, finish, outputs, collective=peer is None)
        return work.wrapped() if waits == _OTHER else work

    @staticmethod
    def _input(t):
        return t if t.is_contiguous() else t.contiguous()

    @staticmethod
    def _apart(src, dst):
        """src, or a copy of it when its memory overlaps dst's (xcomm refuses
        overlapping buffers; torch allows e.g. all_to_all_single(t, t))."""
        a, b = src.data_ptr(), dst.data_ptr()
        if a < b + dst.numel() * dst.element_size() and b < a + src.numel() * src.element_size():
            return src.clone()
        return src

    @staticmethod
    def _like(tensors, t, what):
        """tensors all of t's dtype and device kind; whether that is CUDA."""
        cuda, dtype = t.is_cuda, t.dtype
        for x in tensors:
            if x.dtype != dtype:
                raise TypeError("xcomm: %s: dtype %s differs from %s" % (what, x.dtype, dtype))
            if x.is_cuda != cuda:
                raise ValueError("xcomm: %s: tensors must all be on the CPU or all on CUDA devices" % what)
        if not cuda and t.device.type != "cpu":
            raise ValueError("xcomm: %s: tensors on %s are not supported" % (what, t.device))
        return cuda

    @staticmethod
    def _pair_device(a, b, what):
        cuda = a.is_cuda
        if b.is_cuda != cuda or not (cuda or (a.device.type == "cpu" and b.device.type == "cpu")):
            raise ValueError("xcomm: %s: tensors must both be on the CPU or both on CUDA devices (got %s and %s)" %
                             (what, a.device, b.device))
        return cuda

    @staticmethod
    def _output(t, finish_list):
        """A contiguous tensor to receive into for output t; copied back by
        the finish steps when t is not contiguous itself."""
        if t.is_contiguous():
            return t
        tmp = torch.empty_like(t, memory_format=torch.contiguous_format)
        finish_list.append(lambda: t.copy_(tmp))
        return tmp

    @staticmethod
    def _finisher(steps):
        if not steps:
            return None

        def finish():
            for step in steps:
                step()
        return finish

    @staticmethod
    def _packed(tensors):
        """A contiguous buffer holding the tensors one after the other: a
        view of their own storage when they already lie so (e.g. chunks of
        one tensor), else None."""
        first = tensors[0]
        if not all(t.is_contiguous() and t.dtype == first.dtype and t.device == first.device for t in tensors):
            return None
        addr = first.data_ptr()
        for t in tensors:
            if t.data_ptr() != addr:
                return None
            addr += t.numel() * t.element_size()
        total = sum(t.numel() for t in tensors)
        try:  # within first's storage, else they only happen to lie side by side
            return first.as_strided((total,), (1,))
        except RuntimeError:
            return None

    @staticmethod
    def _counts(values):
        arr = ffi.new("size_t[]", list(values) or [0])
        return arr, int(ffi.cast("uintptr_t", arr))

    # ---- collectives -------------------------------------------------------------------------
    def allreduce(self, tensors, opts=None):
        if type(tensors) is list and len(tensors) == 1 and type(opts) is _AllreduceOptions:
            # The hot path: dist.all_reduce(async_op=False) of a contiguous
            # host tensor of an xcomm dtype, an arithmetic reduction. The
            # caller's locals (read once: they cost ~0.5 us) say async_op and
            # the op; torch's ReduceOp.SUM etc. are found by identity, since
            # opts.reduceOp.op builds two Python objects (~0.8 us).
            f = _getframe(1)
            if f.f_code is _ALL_REDUCE_CODE and not self._coalescing:
                loc = f.f_locals
                t = tensors[0]
                dt = _ARITH_DTYPES.get(t.dtype)
                red = _OPS_BY_ID.get(id(loc.get("op")))
                if loc.get("async_op") is False and dt is not None and red is not None and not t.is_cuda and \
                        t.is_contiguous():
                    rc = C.xc_allreduce(_IN_PLACE, t.data_ptr(), t.numel(), dt, red, self._h)
                    if rc < 0:
                        self._fail(rc, "all_reduce")
                    return DONE
        if isinstance(tensors, torch.Tensor):  # allreduce(tensor, op)
            op, opts = opts, _AllreduceOptions()
            if op is not None:
                opts.reduceOp = op
            tensors = [tensors]
        waits, loc = _caller()
        return self._allreduce(self._one(tensors, "all_reduce"), opts, waits, loc)

    def _allreduce(self, t, opts, waits, loc):
        opts = _options(opts, dist.AllreduceOptions)
        dt, n = self._dtype(t, "all_reduce", reduce=True)
        red = self._red(opts, loc, t, "all_reduce")
        steps = []
        buf = self._output(t, steps)
        if buf is not t:
            buf.copy_(t)
        return self._run("all_reduce", C.xc_allreduce, C.xc_iallreduce,
                         (_IN_PLACE, buf.data_ptr(), n, dt, red, self._h), keep=(t, buf),
                         finish=self._finisher(steps), outputs=[t], cuda=t.is_cuda, waits=waits)

    def allreduce_coalesced(self, tensors, opts=None):
        """Every tensor reduced alike: tensors of one dtype go as one
        buffer, one allreduce per dtype."""
        waits, loc = _caller()
        opts = _options(opts, dist.AllreduceCoalescedOptions)
        if not tensors:
            return DONE
        cuda = self._same_device(tensors, "all_reduce_coalesced")
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        works = []
        inner = _PY_ASYNC if waits == _OTHER else waits  # the whole is wrapped below
        for group in by_dtype.values():
            dt, _ = self._dtype(group[0], "all_reduce_coalesced", reduce=True)
            red = self._red(opts, loc, group[0], "all_reduce_coalesced")
            flat = torch.cat([g.reshape(-1) for g in group])

            def unpack(group=group, flat=flat):
                off = 0
                for g in group:
                    g.copy_(flat[off:off + g.numel()].view_as(g))
                    off += g.numel()
            works.append(self._run("all_reduce_coalesced", C.xc_allreduce, C.xc_iallreduce,
                                   (_IN_PLACE, flat.data_ptr(), flat.numel(), dt, red, self._h), keep=(flat,),
                                   finish=unpack, outputs=list(tensors), cuda=cuda, waits=inner))
        if len(works) == 1:
            return works[0].wrapped() if waits == _OTHER else works[0]
        several = _Several(works, list(tensors))
        return several.wrapped() if waits == _OTHER else several

    def broadcast(self, tensors, opts=None):
        if isinstance(tensors, torch.Tensor):  # broadcast(tensor, root)
            tensors, root = [tensors], opts
            opts = dist.BroadcastOptions()
            opts.rootRank = root
        waits = _caller_waits()
        opts = _options(opts, dist.BroadcastOptions)
        t = self._one(tensors, "broadcast")
        root = opts.rootRank
        self._check_rank(root, "broadcast")
        dt, n = self._dtype(t, "broadcast")
        steps = []
        buf = self._output(t, steps)
        if buf is not t and self._rank == root:
            buf.copy_(t)
        return self._run("broadcast", C.xc_broadcast, C.xc_ibroadcast, (buf.data_ptr(), n, dt, root, self._h),
                         keep=(t, buf), finish=self._finisher(steps), outputs=[t], cuda=t.is_cuda, waits=waits)

    def reduce(self, tensors, opts=None):
        if isinstance(tensors, torch.Tensor):  # reduce(tensor, root, op)
            raise TypeError("xcomm: reduce takes ([tensor], ReduceOptions)")
        waits, loc = _caller()
        opts = _options(opts, dist.ReduceOptions)
        t = self._one(tensors, "reduce")
        root = opts.rootRank
        self._check_rank(root, "reduce")
        dt, n = self._dtype(t, "reduce", reduce=True)
        red = self._red(opts, loc, t, "reduce")
        steps = []
        if self._rank == root:
            buf = self._output(t, steps)
            if buf is not t:
                buf.copy_(t)
            args = (_IN_PLACE, buf.data_ptr(), n, dt, red, root, self._h)
        else:
            buf = self._input(t)
            args = (buf.data_ptr(), 0, n, dt, red, root, self._h)
        return self._run("reduce", C.xc_reduce, C.xc_ireduce, args, keep=(t, buf), finish=self._finisher(steps),
                         outputs=[t], cuda=t.is_cuda, waits=waits)

    def allgather(self, output_tensors, input_tensors, opts=None):
        waits = _caller_waits()
        if isinstance(input_tensors, torch.Tensor):  # allgather(outputs, input)
            output_tensors, input_tensors = [output_tensors], [input_tensors]
        outs = self._one(output_tensors, "all_gather")
        t = self._one(input_tensors, "all_gather")
        if len(outs) != self._size:
            raise ValueError("xcomm: all_gather: %d output tensors for a group of %d" % (len(outs), self._size))
        cuda = self._like(outs, t, "all_gather")
        if outs[self._rank].numel() != t.numel():
            raise ValueError("xcomm: all_gather: this rank's output holds %d elements, its input %d" %
                             (outs[self._rank].numel(), t.numel()))
        src = self._input(t)
        dt, unit = self._unit(t, "all_gather")
        sizes = [o.numel() for o in outs]
        flat = self._packed(outs)
        steps = []
        if flat is None:
            # Separate output tensors: gathered into one buffer, then copied
            # out (one copy per output, as gloo does; outputs that are
            # consecutive chunks of one tensor are gathered in place).
            flat = torch.empty(sum(sizes), dtype=t.dtype, device=t.device)

            def unpack():
                for o, v in zip(outs, flat.split(sizes)):
                    o.copy_(v if o.dim() == 1 else v.view_as(o))
            steps.append(unpack)
        if len(set(sizes)) == 1:
            args = (src.data_ptr(), flat.data_ptr(), sizes[0] * unit, dt, self._h)
            return self._run("all_gather", C.xc_allgather, C.xc_iallgather, args, keep=(src, flat, outs),
                             finish=self._finisher(steps), outputs=[list(outs)], cuda=cuda, waits=waits)
        counts, pc = self._counts(k * unit for k in sizes)
        displs, pd = self._counts(_offsets([k * unit for k in sizes]))
        args = (src.data_ptr(), t.numel() * unit, flat.data_ptr(), pc, pd, dt, self._h)
        return self._run("all_gather", C.xc_allgatherv, C.xc_iallgatherv, args,
                         keep=(src, flat, outs, counts, displs), finish=self._finisher(steps),
                         outputs=[list(outs)], cuda=cuda, waits=waits)

    def _allgather_base(self, output, input, opts=None):
        waits = _caller_waits()
        cuda = self._pair_device(output, input, "all_gather_into_tensor")
        if output.dtype != input.dtype:
            raise TypeError("xcomm: all_gather_into_tensor: output dtype %s differs from the input's %s" %
                            (output.dtype, input.dtype))
        if output.numel() != input.numel() * self._size:
            raise ValueError("xcomm: all_gather_into_tensor: the output holds %d elements, not %d x %d" %
                             (output.numel(), self._size, input.numel()))
        dt, n = self._dtype(input, "all_gather_into_tensor")
        steps = []
        dst = self._output(output, steps)
        block = input.numel() * input.element_size()
        if dst is output and input.is_contiguous() and input.data_ptr() == output.data_ptr() + self._rank * block:
            src, send = input, _IN_PLACE  # this rank's block of the output (FSDP's way): XC_IN_PLACE
        else:
            src = self._apart(self._input(input), dst)
            send = src.data_ptr()
        return self._run("all_gather_into_tensor", C.xc_allgather, C.xc_iallgather,
                         (send, dst.data_ptr(), n, dt, self._h), keep=(src, dst, output),
                         finish=self._finisher(steps), outputs=[output], cuda=cuda, waits=waits)

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        """Every input tensor gathered from every rank: the inputs go as one
        byte buffer (any mix of dtypes), one allgather."""
        waits = _caller_waits()
        if len(output_lists) != self._size:
            raise ValueError("xcomm: all_gather_coalesced: %d output lists for a group of %d" %
                             (len(output_lists), self._size))
        if not input_list:
            return DONE
        cuda = self._same_device(list(input_list) + [o for lst in output_lists for o in lst], "all_gather_coalesced")
        nbytes = [t.numel() * t.element_size() for t in input_list]
        for lst in output_lists:
            if [o.numel() * o.element_size() for o in lst] != nbytes or \
                    [o.dtype for o in lst] != [t.dtype for t in input_list]:
                raise ValueError("xcomm: all_gather_coalesced: each output list must match the input list")
        total = sum(nbytes)
        send = torch.cat([self._input(t).reshape(-1).view(torch.uint8) for t in input_list])
        recv = torch.empty(total * self._size, dtype=torch.uint8, device=send.device)

        def unpack():
            for r, lst in enumerate(output_lists):
                off = r * total
                for o, k in zip(lst, nbytes):
                    o.copy_(recv[off:off + k].clone().view(o.dtype).view_as(o))  # clone: aligned
                    off += k
        return self._run("all_gather_coalesced", C.xc_allgather, C.xc_iallgather,
                         (send.data_ptr(), recv.data_ptr(), total, lib.XC_UINT8, self._h),
                         keep=(send, recv, output_lists), finish=unpack, outputs=list(output_lists), cuda=cuda,
                         waits=waits)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        waits, loc = _caller()
        if isinstance(output_tensors, torch.Tensor):  # reduce_scatter(output, inputs, op)
            op = opts
            output_tensors, input_tensors = [output_tensors], [input_tensors]
            opts = dist.ReduceScatterOptions()
            if op is not None:
                opts.reduceOp = op
        opts = _options(opts, dist.ReduceScatterOptions)
        out = self._one(output_tensors, "reduce_scatter")
        ins = self._one(input_tensors, "reduce_scatter")
        if len(ins) != self._size:
            raise ValueError("xcomm: reduce_scatter: %d input tensors for a group of %d" % (len(ins), self._size))
        cuda = self._same_device(list(ins) + [out], "reduce_scatter")
        for x in ins:
            if x.dtype != out.dtype:
                raise TypeError("xcomm: reduce_scatter: input dtype %s differs from the output's %s" %
                                (x.dtype, out.dtype))
        if ins[self._rank].numel() != out.numel():
            raise ValueError("xcomm: reduce_scatter: this rank's input block holds %d elements, the output %d" %
                             (ins[self._rank].numel(), out.numel()))
        dt, _ = self._dtype(out, "reduce_scatter", reduce=True)
        red = self._red(opts, loc, out, "reduce_scatter")
        flat = self._packed(ins)
        if flat is None:
            flat = torch.cat([x.reshape(-1) for x in ins])
        steps = []
        dst = self._output(out, steps)
        sizes = [x.numel() for x in ins]
        if len(set(sizes)) == 1:
            return self._run("reduce_scatter", C.xc_reduce_scatter, C.xc_ireduce_scatter,
                             (flat.data_ptr(), dst.data_ptr(), out.numel(), dt, red, self._h),
                             keep=(flat, dst, out), finish=self._finisher(steps), outputs=[out], cuda=cuda,
                             waits=waits)
        counts, pc = self._counts(sizes)
        return self._run("reduce_scatter", C.xc_reduce_scatterv, C.xc_ireduce_scatterv,
                         (flat.data_ptr(), dst.data_ptr(), pc, dt, red, self._h), keep=(flat, dst, out, counts),
                         finish=self._finisher(steps), outputs=[out], cuda=cuda, waits=waits)

    def _reduce_scatter_base(self, output, input, opts=None):
        waits, loc = _caller()
        opts = _options(opts, dist.ReduceScatterOptions)
        cuda = self._pair_device(output, input, "reduce_scatter_tensor")
        if output.dtype != input.dtype:
            raise TypeError("xcomm: reduce_scatter_tensor: input dtype %s differs from the output's %s" %
                            (input.dtype, output.dtype))
        if input.numel() != output.numel() * self._size:
            raise ValueError("xcomm: reduce_scatter_tensor: the input holds %d elements, not %d x %d" %
                             (input.numel(), self._size, output.numel()))
        dt, n = self._dtype(output, "reduce_scatter_tensor", reduce=True)
        red = self._red(opts, loc, output, "reduce_scatter_tensor")
        steps = []
        dst = self._output(output, steps)
        src = self._apart(self._input(input), dst)
        return self._run("reduce_scatter_tensor", C.xc_reduce_scatter, C.xc_ireduce_scatter,
                         (src.data_ptr(), dst.data_ptr(), n, dt, red, self._h), keep=(src, dst, output),
                         finish=self._finisher(steps), outputs=[output], cuda=cuda, waits=waits)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        waits = _caller_waits()
        outs, ins = list(output_tensors), list(input_tensors)
        if len(outs) != self._size or len(ins) != self._size:
            raise ValueError("xcomm: all_to_all: %d outputs and %d inputs for a group of %d" %
                             (len(outs), len(ins), self._size))
        cuda = self._same_device(outs + ins, "all_to_all")
        dtype = ins[0].dtype
        if any(x.dtype != dtype for x in outs + ins):
            raise TypeError("xcomm: all_to_all: every tensor must have one dtype")
        dt, unit = self._unit(ins[0], "all_to_all")
        send = self._packed(ins)
        if send is None:
            send = torch.cat([x.reshape(-1) for x in ins])
        recv = self._packed(outs)
        steps = []
        if recv is None:
            recv = torch.empty(sum(o.numel() for o in outs), dtype=dtype, device=outs[0].device)
            osizes = [o.numel() for o in outs]

            def unpack():
                off = 0
                for o, k in zip(outs, osizes):
                    o.copy_(recv[off:off + k].view_as(o))
                    off += k
            steps.append(unpack)
        scounts = [x.numel() * unit for x in ins]
        rcounts = [o.numel() * unit for o in outs]
        return self._alltoallv("all_to_all", send, recv, scounts, rcounts, dt, steps, (ins, outs), cuda, waits)

    def _alltoallv(self, what, send, recv, scounts, rcounts, dt, steps, keep, cuda, waits):
        if len(set(scounts)) == 1 and scounts == rcounts:
            return self._run(what, C.xc_alltoall, C.xc_ialltoall,
                             (send.data_ptr(), recv.data_ptr(), scounts[0], dt, self._h), keep=(send, recv, keep),
                             finish=self._finisher(steps), outputs=[recv], cuda=cuda, waits=waits)
        sc, psc = self._counts(scounts)
        sd, psd = self._counts(_offsets(scounts))
        rc, prc = self._counts(rcounts)
        rd, prd = self._counts(_offsets(rcounts))
        return self._run(what, C.xc_alltoallv, C.xc_ialltoallv,
                         (send.data_ptr(), psc, psd, recv.data_ptr(), prc, prd, dt, self._h),
                         keep=(send, recv, keep, sc, sd, rc, rd), finish=self._finisher(steps), outputs=[recv],
                         cuda=cuda, waits=waits)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        waits = _caller_waits()
        cuda = self._pair_device(output, input, "all_to_all_single")
        if output.dtype != input.dtype:
            raise TypeError("xcomm: all_to_all_single: output dtype %s differs from the input's %s" %
                            (output.dtype, input.dtype))
        dt, unit = self._unit(input, "all_to_all_single")
        n = input.numel()
        if not input_split_sizes and not output_split_sizes and output.numel() == n and \
                (input.shape[0] if input.dim() else 1) % self._size == 0:
            # equal blocks: xc_alltoall
            steps = []
            dst = self._output(output, steps)
            src = self._apart(self._input(input), dst)
            return self._run("all_to_all_single", C.xc_alltoall, C.xc_ialltoall,
                             (src.data_ptr(), dst.data_ptr(), n // self._size * unit, dt, self._h),
                             keep=(src, dst, input, output), finish=self._finisher(steps), outputs=[output],
                             cuda=cuda, waits=waits)
        splits = []
        for t, sizes, name in ((input, input_split_sizes, "input"), (output, output_split_sizes, "output")):
            rows = t.shape[0] if t.dim() > 0 else 1
            row = t.numel() // rows if rows else 0
            if not sizes:
                if rows % self._size:
                    raise ValueError("xcomm: all_to_all_single: %d %s rows do not split evenly over %d ranks" %
                                     (rows, name, self._size))
                sizes = [rows // self._size] * self._size
            if len(sizes) != self._size or sum(sizes) != rows or min(sizes) < 0:
                raise ValueError("xcomm: all_to_all_single: %s split sizes %s do not split %d rows over %d ranks" %
                                 (name, list(sizes), rows, self._size))
            splits.append([s * row * unit for s in sizes])
        steps = []
        dst = self._output(output, steps)
        src = self._apart(self._input(input), dst)
        return self._alltoallv("all_to_all_single", src, dst, splits[0], splits[1], dt, steps, (input, output), cuda,
                               waits)

    def gather(self, output_tensors, input_tensors, opts=None):
        waits = _caller_waits()
        opts = _options(opts, dist.GatherOptions)
        t = self._one(input_tensors, "gather")
        root = opts.rootRank
        self._check_rank(root, "gather")
        dt, n = self._dtype(t, "gather")
        src = self._input(t)
        steps = []
        if self._rank == root:
            outs = self._one(output_tensors, "gather")
            cuda = self._like(outs, t, "gather")
            if len(outs) != self._size or any(o.numel() != t.numel() for o in outs):
                raise ValueError("xcomm: gather: the root needs %d output tensors like the input" % self._size)
            flat = self._packed(outs)
            if flat is None:
                flat = torch.empty(t.numel() * self._size, dtype=t.dtype, device=t.device)

                def unpack():
                    for i, o in enumerate(outs):
                        o.copy_(flat[i * t.numel():(i + 1) * t.numel()].view_as(o))
                steps.append(unpack)
            recv, result = flat.data_ptr(), [list(outs)]
        else:
            if output_tensors and any(len(x) for x in output_tensors):
                raise ValueError("xcomm: gather: only the root (rank %d) passes output tensors" % root)
            cuda, flat, recv, result = t.is_cuda, None, 0, []
        return self._run("gather", C.xc_gather, C.xc_igather, (src.data_ptr(), recv, n, dt, root, self._h),
                         keep=(src, flat, output_tensors), finish=self._finisher(steps), outputs=result, cuda=cuda,
                         waits=waits)

    def scatter(self, output_tensors, input_tensors, opts=None):
        waits = _caller_waits()
        opts = _options(opts, dist.ScatterOptions)
        out = self._one(output_tensors, "scatter")
        root = opts.rootRank
        self._check_rank(root, "scatter")
        dt, n = self._dtype(out, "scatter")
        steps = []
        dst = self._output(out, steps)
        if self._rank == root:
            ins = self._one(input_tensors, "scatter")
            if len(ins) != self._size or any(x.numel() != out.numel() or x.dtype != out.dtype for x in ins):
                raise ValueError("xcomm: scatter: the root needs %d input tensors like the output" % self._size)
            cuda = self._same_device(list(ins) + [out], "scatter")
            flat = self._packed(ins)
            if flat is None:
                flat = torch.cat([x.reshape(-1) for x in ins])
            send = flat.data_ptr()
        else:
            if input_tensors and any(len(x) for x in input_tensors):
                raise ValueError("xcomm: scatter: only the root (rank %d) passes input tensors" % root)
            cuda, flat, send = out.is_cuda, None, 0
        return self._run("scatter", C.xc_scatter, C.xc_iscatter, (send, dst.data_ptr(), n, dt, root, self._h),
                         keep=(flat, dst, out), finish=self._finisher(steps), outputs=[out], cuda=cuda, waits=waits)

    def barrier(self, opts=None):
        waits = _caller_waits()
        if waits == _WAITS and not self._coalescing:
            rc = C.xc_barrier(self._h)
            if rc < 0:
                self._fail(rc, "barrier")
            return DONE
        return self._run("barrier", C.xc_barrier, C.xc_ibarrier, (self._h,), waits=waits)

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        """Rank 0 waits (up to timeout) for every other rank to check in, then
        lets them go; a rank that does not arrive is named in the error
        (every such rank with wait_all_ranks), as with gloo. Point-to-point on
        a reserved tag, so a missing rank cannot hold up a collective."""
        import time
        limit = timeout.total_seconds() if isinstance(timeout, timedelta) else timeout
        if limit is None or limit <= 0:
            limit = self._timeout.total_seconds()
        end = time.monotonic() + limit
        token = torch.zeros(1, dtype=torch.uint8)

        def poll(reqs):
            done = ffi.new("int *")
            pending = []
            for peer, req, keep in reqs:
                rc = lib.xc_test(req, done, ffi.NULL)
                if rc < 0:
                    raise make_error(rc, "monitored_barrier (rank %d)" % peer)
                if not done[0]:
                    pending.append((peer, req, keep))
            return pending

        def start(fn, peer, buf):
            req = ffi.new("xc_request_t[1]")
            rc = fn(buf.data_ptr(), 1, lib.XC_UINT8, peer, _MONITOR_TAG, self._h, int(ffi.cast("uintptr_t", req)))
            if rc < 0:
                self._fail(rc, "monitored_barrier")
            return (peer, req, buf)

        def wait_for(reqs, what):
            pause = 2e-5
            while reqs:
                reqs = poll(reqs)
                if not reqs:
                    return
                if time.monotonic() >= end:
                    _orphans.extend(reqs)  # the library may still complete them
                    missing = [peer for peer, _, _ in reqs]
                    if not wait_all_ranks:
                        missing = missing[:1]
                    raise RuntimeError("xcomm: monitored_barrier timed out after %g s: %s %s" %
                                       (limit, what, ", ".join(str(m) for m in missing)))
                time.sleep(pause)
                pause = min(pause * 2, 1e-3)

        if self._rank == 0:
            arrivals = [start(C.xc_irecv, r, torch.zeros(1, dtype=torch.uint8)) for r in range(1, self._size)]
            wait_for(arrivals, "rank(s) that did not arrive:" if wait_all_ranks else "rank")
            releases = [start(C.xc_isend, r, token) for r in range(1, self._size)]
            wait_for(releases, "could not release rank(s)")
        elif self._size > 1:
            arrival = start(C.xc_isend, 0, token)
            release = start(C.xc_irecv, 0, torch.zeros(1, dtype=torch.uint8))
            wait_for([arrival, release], "no release from rank")
        return None

    # ---- point to point ----------------------------------------------------------------------
    def send(self, tensors, dstRank, tag=0):
        t = self._one(tensors, "send")
        self._check_rank(dstRank, "send")
        self._check_tag(tag)
        dt, n = self._dtype(t, "send")
        src = self._input(t)
        return self._run("send to rank %d" % dstRank, C.xc_send, C.xc_isend,
                         (src.data_ptr(), n, dt, dstRank, tag, self._h), keep=(src,), cuda=t.is_cuda, peer=dstRank,
                         waits=_caller_waits())

    def recv(self, tensors, srcRank, tag=0):
        t = self._one(tensors, "recv")
        self._check_rank(srcRank, "recv")
        self._check_tag(tag)
        dt, n = self._dtype(t, "recv")
        steps = []
        dst = self._output(t, steps)
        waits = _caller_waits()
        if t.is_cuda or (waits == _WAITS and not self._coalescing):
            # xc_recv's status argument: NULL (0).
            def fsync(*args):
                return C.xc_recv(*args, 0)
        else:
            fsync = None
        return self._run("receive from rank %d" % srcRank, fsync, C.xc_irecv,
                         (dst.data_ptr(), n, dt, srcRank, tag, self._h), keep=(dst, t),
                         finish=self._finisher(steps), outputs=[t], cuda=t.is_cuda, peer=srcRank, waits=waits)

    def recv_anysource(self, tensors, tag=0):
        """A receive from whichever rank sends first; work._source_rank()
        (what dist.recv(src=None) returns) says which."""
        waits = _caller_waits()
        t = self._one(tensors, "recv")
        self._check_tag(tag)
        dt, n = self._dtype(t, "recv")
        steps = []
        dst = self._output(t, steps)
        # (On CUDA tensors xcomm runs an any-source receive on the default
        # stream; its work completes when the data has arrived.)
        req = ffi.new("xc_request_t[1]")
        status = ffi.new("xc_status_t *")
        rc = C.xc_irecv(dst.data_ptr(), n, dt, _ANY_SOURCE, tag, self._h, int(ffi.cast("uintptr_t", req)))
        if rc < 0:
            self._fail(rc, "receive from any rank")
        work = PendingWork("receive from any rank", req, 1, (dst, t), self._finisher(steps), [t], status=status)
        return work.wrapped() if waits == _OTHER else work

    def _start_coalescing(self):
        """batch_isend_irecv: the ops until _end_coalescing only start. Host
        point-to-point is non-blocking anyway; device ops go in one xcomm
        group (xc_group_start at the first of them), so sends and receives
        between two ranks progress together, and their works record their
        stream events once the group has enqueued them."""
        self._coalescing += 1

    def _end_coalescing(self, reqs=None):
        self._coalescing -= 1
        if self._coalescing == 0 and self._xc_group is not None:
            works, self._xc_group = self._xc_group, None
            rc = lib.xc_group_end()
            if rc < 0:
                self._fail(rc, "batch_isend_irecv")
            for w in works:
                w._record()

    # ---- CUDA ----------------------------------------------------------------------------------
    def _bind_current_stream(self, target, what):
        """Bind torch's current CUDA stream to target (the collectives, or a
        peer) unless it is bound already; returns the torch stream."""
        stream = torch.cuda.current_stream()
        handle = stream.cuda_stream
        with self._lock:
            if self._bound.get(target) != handle:
                from ..stream import Stream
                try:
                    xs = self._streams.get(handle)
                    if xs is None:
                        xs = Stream.wrap(self._comm, handle)  # no device here: XC_ERR_UNSUPPORTED, with why
                        self._streams[handle] = xs
                    self._comm.bind_stream(xs, target)
                except _errors.Error as e:
                    raise make_error(e.code, "%s on CUDA tensors" % what, e.message) from None
                self._bound[target] = handle
        return stream

    def _async_error(self):
        err = ffi.new("xc_result_t *")
        if lib.xc_comm_get_async_error(ffi.cast("xc_comm_t", self._h), err) < 0 or err[0] == 0:
            return None
        return make_error(err[0], "xcomm", _errors.strerror(err[0]))

    def _raise_async_error(self, what):
        e = self._async_error()
        if e is not None:
            raise make_error(e.code, what, e.message)

    # ---- the end -------------------------------------------------------------------------------
    def _release(self):
        """Free the communicator: the world collectively (xc_comm_free
        synchronises its ranks so none tears down while a peer still needs
        it), a group locally (abort, then free: torch gives groups no
        collective end, and their ranks may drop them in any order)."""
        if self._freed:
            return
        self._freed = True
        _live.discard(self)
        comm = self._comm
        try:
            for s in list(self._streams.values()):
                try:
                    s.destroy()
                except Exception:  # noqa: BLE001 - the end of the group
                    pass
            if not self._is_world:
                comm.abort()
            comm.free()
        except Exception:  # noqa: BLE001 - nothing can be raised from here
            pass

    def __del__(self):
        self._release()


def _offsets(counts):
    out, total = [], 0
    for k in counts:
        out.append(total)
        total += k
    return out


class _Several(Work):
    """A work made of several (all_reduce_coalesced with several dtypes)."""

    def __init__(self, works, outputs):
        super().__init__()
        self._works = works
        self._outputs = outputs

    def wait(self, timeout=None):
        for w in self._works:
            w.wait(timeout)
        return True

    def is_completed(self):
        return all(w.is_completed() for w in self._works)

    def is_success(self):
        return all(w.is_success() for w in self._works)

    def exception(self):
        for w in self._works:
            e = w.exception()
            if e is not None:
                return e
        return None

    def result(self):
        self.wait()
        return self._outputs

    def get_future(self):
        futs = [w.get_future() for w in self._works]
        return torch.futures.collect_all(futs).then(lambda _: self._outputs)

    def wrapped(self):
        from ._work import wrap_future
        return wrap_future(self.get_future())


# Requests of a monitored_barrier that timed out, and their buffers.
_orphans = []
# Every group not yet released: freed at exit, groups first, the world last.
_live = weakref.WeakSet()


def release_all():
    for pg in sorted(list(_live), key=lambda p: p._is_world):
        pg._release()
