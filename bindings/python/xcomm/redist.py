"""Redistribution of sharded arrays (xc_redistribute_plan and friends).

    src = xcomm.Layout.mesh(comm, (8, 6), (2, 2), ["S0", "R"])
    dst = xcomm.Layout.mesh(comm, (8, 6), (2, 2), ["S1", "S0"])
    new_local = comm.redistribute(local, src, dst)     # or, to run it often:
    with comm.redistribute_plan(src, dst, np.float32) as plan:
        new_local = plan.run(local)
        plan.info()   # {'bytes_sent': ..., 'bytes_received': ..., 'messages': ..., 'steps': [...]}

Placements are strings, one per mesh dimension: "R" (replicate), "S<d>"
(shard array dimension d), "P" (partial sum) or "P<op>" ("Pmax", "Pmin",
"Pprod", "Pavg", "Pband", "Pbor", "Pbxor"). from_dtensor() turns PyTorch
DTensor placements (Replicate(), Shard(d), Partial("sum"), ...) into these
strings; it reads them by class name, so torch need not be installed.
Mesh ranks are the communicator's in row-major order. NumPy arrays and CPU
tensors give host results; device arrays (xcomm.DeviceArray, CuPy, torch
CUDA tensors, anything with __cuda_array_interface__ or DLPack on the
device) give device results, the run enqueued on the communicator's
collectives stream like every device op (synchronise it before reading).
"""

import enum

import numpy as np

from ._cdef import DEFINES
from ._ffi import ffi, lib
from .buffers import input_buffer, is_device_object, numpy_dtype
from .config import DType, Op
from .errors import check
from .request import Request


class PlacementKind(enum.IntEnum):
    REPLICATE = lib.XC_PLACEMENT_REPLICATE
    SHARD = lib.XC_PLACEMENT_SHARD
    PARTIAL = lib.XC_PLACEMENT_PARTIAL


class Order(enum.IntEnum):
    ROW_MAJOR = lib.XC_ORDER_ROW_MAJOR
    COL_MAJOR = lib.XC_ORDER_COL_MAJOR


_STEPS = [("copy", "XC_REDIST_STEP_COPY"), ("p2p", "XC_REDIST_STEP_P2P"), ("allgather", "XC_REDIST_STEP_ALLGATHER"),
          ("alltoall", "XC_REDIST_STEP_ALLTOALL"), ("reduce_scatter", "XC_REDIST_STEP_REDUCE_SCATTER"),
          ("allreduce", "XC_REDIST_STEP_ALLREDUCE"), ("fill", "XC_REDIST_STEP_FILL")]
_PARTIAL_OPS = {"": Op.SUM, "sum": Op.SUM, "prod": Op.PROD, "product": Op.PROD, "min": Op.MIN, "max": Op.MAX,
                "avg": Op.AVG, "band": Op.BAND, "bor": Op.BOR, "bxor": Op.BXOR}


def parse_placement(p):
    """(kind, dim, op) of a placement string ("R", "S1", "P", "Pmax")."""
    if not isinstance(p, str):
        p = from_dtensor([p])[0]
    text = p.strip()
    if text.upper() == "R":
        return PlacementKind.REPLICATE, 0, Op.SUM
    if text[:1].upper() == "S" and text[1:].isdigit():
        return PlacementKind.SHARD, int(text[1:]), Op.SUM
    if text[:1].upper() == "P" and text[1:].lower() in _PARTIAL_OPS:
        return PlacementKind.PARTIAL, 0, _PARTIAL_OPS[text[1:].lower()]
    raise ValueError("placement %r is not one of 'R', 'S<dim>', 'P', 'P<op>' (Pmax, Pmin, Pprod, Pavg, ...)" % (p,))


def from_dtensor(placements):
    """PyTorch DTensor placements (Replicate(), Shard(dim), Partial(op),
    read by class name) as placement strings."""
    out = []
    for p in placements:
        if isinstance(p, str):
            out.append(p)
            continue
        name = type(p).__name__.lstrip("_")
        if name == "Replicate":
            out.append("R")
        elif name in ("Shard", "StridedShard") and hasattr(p, "dim"):
            out.append("S%d" % int(p.dim))
        elif name in ("Partial", "PartialSum"):
            op = str(getattr(p, "reduce_op", "sum")).lower().split(".")[-1]
            if op not in _PARTIAL_OPS:
                raise ValueError("DTensor Partial reduce_op %r has no xcomm op" % (op,))
            out.append("P" + ("" if op == "sum" else op))
        else:
            raise ValueError("%r is not a DTensor placement xcomm knows (Replicate, Shard, Partial)" % (p,))
    return out


def _chunk(lo, hi, parts, index):
    """torch.chunk's piece `index` of [lo, hi) in `parts`."""
    n = hi - lo
    size = -(-n // parts)
    a = min(n, index * size)
    return lo + a, lo + min(n, a + size)


def _numroc(n, nb, p, src, np_):
    nblocks, dist = n // nb, (p - src + np_) % np_
    count = (nblocks // np_) * nb
    extra = nblocks % np_
    if dist < extra:
        count += nb
    elif dist == extra:
        count += n % nb
    return count


class Layout:
    """How a global array lies over a communicator's ranks. Made by
    Layout.mesh, Layout.block_cyclic or Layout.boxes (local calls: every rank
    makes the same one). .local_shape is this rank's local array's shape
    (.local_order "C" or "F"); .free() releases it (also on garbage
    collection)."""

    def __init__(self, comm, handle, global_shape, local_shape, local_order="C"):
        self.comm, self._handle = comm, handle
        self.global_shape, self.local_shape, self.local_order = tuple(global_shape), tuple(local_shape), local_order
        n = ffi.new("size_t *")
        check(lib.xc_layout_local_count(handle, n))
        self.local_count = n[0]

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("the layout was freed")
        return self._handle

    @classmethod
    def mesh(cls, comm, global_shape, mesh_shape, placements):
        """DTensor-style: mesh_shape over comm's ranks (row-major), one
        placement per mesh dimension (strings or DTensor placements)."""
        shape, mesh = [int(x) for x in global_shape], [int(x) for x in mesh_shape]
        if len(placements) != len(mesh):
            raise ValueError("%d placements for a %d-dimensional mesh" % (len(placements), len(mesh)))
        pl = ffi.new("xc_placement_t[]", max(1, len(mesh)))
        parsed = [parse_placement(p) for p in placements]
        for i, (kind, dim, op) in enumerate(parsed):
            pl[i].kind, pl[i].dim, pl[i].op = int(kind), dim, int(op)
        out = ffi.new("xc_layout_t *")
        check(lib.xc_layout_mesh(comm._h(), len(shape), ffi.new("size_t[]", shape or [0]), len(mesh),
                                 ffi.new("int[]", mesh or [0]), pl, out))
        # This rank's box (the library agreed to the same rule).
        lo, hi = [0] * len(shape), list(shape)
        coords, r = [], comm.rank
        for m in reversed(mesh):
            coords.append(r % m)
            r //= m
        coords.reverse()
        for k, (kind, dim, _) in enumerate(parsed):
            if kind == PlacementKind.SHARD:
                lo[dim], hi[dim] = _chunk(lo[dim], hi[dim], mesh[k], coords[k])
        return cls(comm, out[0], shape, [h - l for l, h in zip(lo, hi)])

    @classmethod
    def block_cyclic(cls, comm, shape, block, grid, source=(0, 0), grid_order="R", storage="F"):
        """ScaLAPACK 2-D block-cyclic: shape (rows, cols), block (mb, nb),
        grid (nprow, npcol), source (rsrc, csrc); grid_order "R" (rank =
        p * npcol + q) or "C"; storage "F" (column-major local matrix, as
        ScaLAPACK) or "C" (row-major)."""
        rows, cols = (int(x) for x in shape)
        mb, nb = (int(x) for x in block)
        nprow, npcol = (int(x) for x in grid)
        rsrc, csrc = (int(x) for x in source)
        go = Order.COL_MAJOR if str(grid_order).upper().startswith("C") else Order.ROW_MAJOR
        so = Order.COL_MAJOR if str(storage).upper() in ("F", "COL", "COL_MAJOR", "C_MAJOR") else Order.ROW_MAJOR
        out = ffi.new("xc_layout_t *")
        check(lib.xc_layout_block_cyclic(comm._h(), rows, cols, mb, nb, nprow, npcol, rsrc, csrc, int(go), int(so), out))
        r = comm.rank
        if r < nprow * npcol:
            p, q = (r % nprow, r // nprow) if go == Order.COL_MAJOR else (r // npcol, r % npcol)
            local = (_numroc(rows, mb, p, rsrc, nprow), _numroc(cols, nb, q, csrc, npcol))
        else:
            local = (0, 0)
        return cls(comm, out[0], (rows, cols), local, "F" if so == Order.COL_MAJOR else "C")

    @classmethod
    def boxes(cls, comm, global_shape, boxes):
        """General: boxes is a list of (offsets, extents, owner); a rank's
        local buffer holds its boxes in list order, each row-major (a flat
        array)."""
        shape = [int(x) for x in global_shape]
        nd, n = len(shape), len(boxes)
        off, ext, own = [], [], []
        for b in boxes:
            o, e, w = b
            if len(o) != nd or len(e) != nd:
                raise ValueError("box %r does not have %d dimensions" % (b, nd))
            off += [int(x) for x in o]
            ext += [int(x) for x in e]
            own.append(int(w))
        out = ffi.new("xc_layout_t *")
        check(lib.xc_layout_boxes(comm._h(), nd, ffi.new("size_t[]", shape or [0]), n, ffi.new("size_t[]", off or [0]),
                                  ffi.new("size_t[]", ext or [0]), ffi.new("int[]", own or [0]), out))
        count = sum(int(np.prod(e)) for (_, e, w) in boxes if int(w) == comm.rank)
        return cls(comm, out[0], shape, (count,))

    def free(self):
        if self._handle is not None:
            check(lib.xc_layout_free(self._handle))
            self._handle = None

    def __del__(self):
        try:
            if self._handle is not None:
                lib.xc_layout_free(self._handle)
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass

    def empty(self, dtype):
        """An uninitialised local array of this layout."""
        return np.empty(self.local_shape, dtype=dtype, order=self.local_order)


class Plan:
    """A redistribution plan: .run(local) any number of times, .info(),
    .relabel(). Free it with .free() or a with-block: freeing is collective
    (every rank frees its plan)."""

    def __init__(self, comm, src, dst, dtype, p2p_only=False):
        self.comm, self.src, self.dst = comm, src, dst
        self.np_dtype = np.dtype(dtype)
        self.dtype = numpy_dtype(self.np_dtype)
        cfg = ffi.new("xc_redist_config_t *")
        check(lib.xc_redist_config_init(cfg, ffi.sizeof("xc_redist_config_t")))
        if p2p_only:
            cfg.flags = DEFINES["XC_REDIST_P2P_ONLY"]
        out = ffi.new("xc_plan_t *")
        check(lib.xc_redistribute_plan(src.handle, dst.handle, int(self.dtype), cfg, out))
        self._handle = out[0]

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("the plan was freed")
        return self._handle

    def _buffers(self, local, out):
        """(input buffer, the output's address, what run returns, what the
        library uses until the run completes)."""
        if is_device_object(local):
            return self._device_buffers(local, out)
        if self.src.local_order == "F" and isinstance(local, np.ndarray) and local.ndim == 2:
            # Column-major storage: its memory is the transpose's, C-ordered.
            local = np.asfortranarray(local).T
        buf = input_buffer(local, "local")
        if buf.is_device:  # a device array the checks above did not recognise
            raise TypeError("local is device memory of a kind this binding does not read")
        self._check_input(buf)
        array = out if out is not None else self.dst.empty(buf.array.dtype)
        if array.size != self.dst.local_count or not (array.flags.c_contiguous or array.flags.f_contiguous):
            raise ValueError("out must be a contiguous array of %d elements" % self.dst.local_count)
        result = (buf.wrap(array) if array.flags.c_contiguous else array) if out is None else out
        return buf, array.__array_interface__["data"][0], result, (buf, array)

    def _device_buffers(self, local, out):
        """Device memory (xcomm.DeviceArray, CuPy, torch CUDA, ...): the run
        is enqueued on the communicator's collectives stream, like every
        device op; read the result after synchronising it. A new result is a
        device array of dst's local shape (C-ordered: for column-major
        storage, the transpose's shape, the same memory)."""
        buf = self.comm._input(local, "local")
        self._check_input(buf)
        shape = self.dst.local_shape if self.dst.local_order == "C" else tuple(reversed(self.dst.local_shape))
        result = out if out is not None else buf.new_like(shape, self.comm)
        o = self.comm._output(result, "out")
        if o.count != self.dst.local_count:
            raise ValueError("out holds %d elements but this rank holds %d under dst" % (o.count,
                                                                                        self.dst.local_count))
        return buf, o.address, result, (buf, o, result)

    def _check_input(self, buf):
        if buf.dtype != self.dtype:
            raise TypeError("local has dtype %s but the plan was made for %s" % (DType(buf.dtype).name.lower(),
                                                                               DType(self.dtype).name.lower()))
        if buf.count != self.src.local_count:
            raise ValueError("local holds %d elements but this rank holds %d under src" % (buf.count,
                                                                                         self.src.local_count))

    def run(self, local, out=None):
        """Move local (this rank's part under src) and return the part under
        dst (a new array, or out), as a NumPy array or a torch tensor like
        local; device memory gives device memory, enqueued on the
        communicator's collectives stream (synchronise it before reading)."""
        buf, out_address, result, _ = self._buffers(local, out)
        check(lib.xc_redistribute(self.handle, ffi.cast("void *", buf.address) if buf.count else ffi.NULL,
                                  ffi.cast("void *", out_address) if self.dst.local_count else ffi.NULL))
        return result

    def start(self, local, out=None):
        """Non-blocking run: a Request whose .data is the result."""
        buf, out_address, result, keep = self._buffers(local, out)
        req = Request(keep=keep + (self,), data=result)
        check(lib.xc_iredistribute(self.handle, ffi.cast("void *", buf.address) if buf.count else ffi.NULL,
                                   ffi.cast("void *", out_address) if self.dst.local_count else ffi.NULL,
                                   req._req))
        return req

    def info(self):
        """What one run moves for this rank: bytes_sent, bytes_received,
        bytes_copied, lower_bound_bytes, messages (sent + received),
        messages_sent, messages_received, collective_steps, p2p_steps, steps
        (names of the kinds of step)."""
        i = ffi.new("xc_plan_info_t *")
        i.size = ffi.sizeof("xc_plan_info_t")
        check(lib.xc_plan_info(self.handle, i))
        return {"bytes_sent": i.bytes_sent, "bytes_received": i.bytes_received, "bytes_copied": i.bytes_copied,
                "lower_bound_bytes": i.lower_bound_bytes, "messages": i.messages_sent + i.messages_received,
                "messages_sent": i.messages_sent, "messages_received": i.messages_received,
                "collective_steps": i.collective_steps, "p2p_steps": i.p2p_steps,
                "steps": [name for name, define in _STEPS if i.step_kinds & DEFINES[define]]}

    def relabel(self):
        """(perm, bytes_saved): perm[j] is the rank that should take part j of
        dst so that the least data moves (COSTA's relabelling)."""
        perm = ffi.new("int[]", self.comm.size)
        saved = ffi.new("uint64_t *")
        check(lib.xc_plan_relabel(self.handle, perm, saved))
        return [perm[j] for j in range(self.comm.size)], saved[0]

    def free(self):
        if self._handle is not None:
            h, self._handle = self._handle, None
            check(lib.xc_plan_free(h))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.free()


class Redistribution:
    """Comm's redistribution methods."""

    def redistribute_plan(self, src, dst, dtype, *, p2p_only=False):
        """A Plan moving arrays of dtype from layout src to layout dst (collective)."""
        return Plan(self, src, dst, dtype, p2p_only)

    def redistribute(self, local, src, dst):
        """local (this rank's part under src) moved to dst: the new local
        array. On device memory this waits for the run (it frees its plan);
        a plan made with redistribute_plan runs stream-ordered."""
        buf = self._input(local, "local") if is_device_object(local) else input_buffer(local, "local")
        dtype = buf.np_dtype if buf.is_device else buf.array.dtype
        with Plan(self, src, dst, dtype) as plan:
            if not buf.is_device:
                return plan.run(local)
            # The plan is freed on the way out, which its device run must
            # have finished by: wait for it (a plan kept for reuse need not).
            req = plan.start(local)
            req.wait()
            return req.data
