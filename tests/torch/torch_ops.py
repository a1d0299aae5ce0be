"""Every torch.distributed op on the xcomm backend against values computed
locally: every dtype torch and xcomm share (and two moved as bytes), every
reduction, blocking and async_op=True, on the world and on groups of
several shapes made by new_group (overlapping ones alive together), point
to point with a known and with any source, isend/irecv and
batch_isend_irecv, non-contiguous tensors, object collectives, barriers,
and errors: bad arguments, ranks that disagree on the shape (an exception
on every rank, not a hang).

Run by every rank, torchrun-style (tests/torch/launch.py) or under xcrun:
    python3 torch_ops.py
"""

import os
import sys
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import MOVE_ONLY_DTYPES, REDUCE_DTYPES, check, data, key  # noqa: E402

import xcomm.torch  # noqa: E402,F401  (registers "xcomm")

warnings.filterwarnings("ignore", message=".*will be deprecated.*")

R = dist.ReduceOp
MODES = (False, True)  # async_op
ALL_OPS = [(R.SUM, "sum"), (R.PRODUCT, "product"), (R.MIN, "min"), (R.MAX, "max"), (R.AVG, "avg"),
           (R.BAND, "band"), (R.BOR, "bor"), (R.BXOR, "bxor")]


def opname(op):
    """A name of op that is the same in every process (str(op) holds its address)."""
    return next(name for o, name in ALL_OPS if o == op)


def ops_for(dtype):
    ops = [R.SUM, R.PRODUCT, R.MIN, R.MAX]
    if dtype != torch.bool:
        ops.append(R.AVG)
    if not dtype.is_floating_point:
        ops += [R.BAND, R.BOR, R.BXOR]
    return ops


def kind_of(op):
    return {R.PRODUCT: "prod", R.BAND: "bits", R.BOR: "bits", R.BXOR: "bits"}.get(op, "sum")


def reference(op, xs, n):
    """The reduction of tensors xs (one per rank) as the backend defines it."""
    dtype = xs[0].dtype
    if dtype == torch.bool:
        s = torch.stack(xs)
        if op in (R.SUM, R.MAX, R.BOR):
            return s.any(0)
        if op in (R.PRODUCT, R.MIN, R.BAND):
            return s.all(0)
        if op == R.BXOR:
            return (s.sum(0) % 2).bool()
    wide = torch.float64 if dtype.is_floating_point else torch.int64
    s = torch.stack([x.to(wide) for x in xs])
    if op == R.SUM:
        return s.sum(0).to(dtype)
    if op == R.PRODUCT:
        return s.prod(0).to(dtype)
    if op == R.MIN:
        return s.min(0).values.to(dtype)
    if op == R.MAX:
        return s.max(0).values.to(dtype)
    if op == R.AVG:
        if dtype.is_floating_point:
            return (s.sum(0) / n).to(dtype)
        return torch.div(s.sum(0), n, rounding_mode="trunc").to(dtype)
    acc = xs[0].clone()
    for x in xs[1:]:
        acc = {R.BAND: torch.bitwise_and, R.BOR: torch.bitwise_or, R.BXOR: torch.bitwise_xor}[op](acc, x)
    return acc


def tol(dtype, op):
    if op == R.AVG and dtype.is_floating_point:
        return {torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float32: 1e-6, torch.float64: 1e-12}[dtype]
    return 0.0


def finish(ctx, work, async_op, what):
    if async_op and isinstance(work, torch._C.Future):
        # all_reduce_coalesced and all_gather_coalesced return the work's future
        work.wait()
        ctx.ok(work.done(), "%s: the future is done after wait()" % what)
    elif async_op:
        ctx.ok(work is not None, "%s: async_op=True returns a Work" % what)
        ctx.ok(work.wait() is True, "%s: wait() returns True" % what)
        ctx.ok(work.is_completed(), "%s: completed after wait()" % what)
        ctx.ok(work.is_success() and work.exception() is None, "%s: success after wait()" % what)
    else:
        ctx.ok(work is None, "%s: async_op=False returns None" % what)


def members_of(group, ctx):
    return list(range(ctx.size)) if group is None else group_ranks[group]


group_ranks = {}


def grank(ctx, group):
    return ctx.rank if group is None else dist.get_rank(group)


# ---- all_reduce -------------------------------------------------------------------------------
def all_reduce_checks(ctx, group=None, tag="world", dtypes=REDUCE_DTYPES, shapes=((7,), (3, 1000))):
    ranks = members_of(group, ctx)
    n = len(ranks)
    for dtype in dtypes:
        for op in ops_for(dtype):
            for async_op in MODES:
                shape = shapes[(len(opname(op)) + int(async_op)) % len(shapes)]
                k = key("all_reduce", tag, str(dtype), opname(op), async_op)
                xs = [data(k, r, shape, dtype, kind_of(op)) for r in ranks]
                t = xs[ranks.index(ctx.rank)].clone()
                what = "all_reduce(%s, %s, %s, async_op=%s) on %s" % (dtype, opname(op), shape, async_op, tag)
                finish(ctx, dist.all_reduce(t, op=op, group=group, async_op=async_op), async_op, what)
                r = tol(dtype, op)
                ctx.eq(t, reference(op, xs, n), what, rtol=r, atol=r)


@check
def all_reduce_world(ctx):
    all_reduce_checks(ctx)


@check
def all_reduce_non_contiguous_and_empty(ctx):
    for async_op in MODES:
        k = key("nc", async_op)
        xs = [data(k, r, (6, 8), torch.float32) for r in range(ctx.size)]
        base = xs[ctx.rank].clone()
        view = base[:, ::2]  # not contiguous: the result must land in base's storage
        finish(ctx, dist.all_reduce(view, async_op=async_op), async_op, "all_reduce of a strided view")
        want = sum(x[:, ::2] for x in xs)
        ctx.eq(view, want, "all_reduce of a strided view")
        ctx.eq(base[:, 1::2], xs[ctx.rank][:, 1::2], "all_reduce leaves the rest of the base alone")
        ctx.ok(not view.is_contiguous(), "the view stays a view")
        e = torch.empty(0)
        finish(ctx, dist.all_reduce(e, async_op=async_op), async_op, "all_reduce of 0 elements")
        s = torch.tensor(float(ctx.rank + 1))
        finish(ctx, dist.all_reduce(s, async_op=async_op), async_op, "all_reduce of a 0-d tensor")
        ctx.eq(s, torch.tensor(float(ctx.size * (ctx.size + 1) // 2)), "all_reduce of a 0-d tensor")


@check
def all_reduce_complex_sum(ctx):
    # torch hands complex tensors to the backend as float pairs
    k = key("complex")
    xs = [data(k, r, (5,), torch.complex64) for r in range(ctx.size)]
    t = xs[ctx.rank].clone()
    dist.all_reduce(t)
    ctx.eq(t, sum(xs), "all_reduce of complex64")


@check
def all_reduce_coalesced(ctx):
    for async_op in MODES:
        k = key("coalesced", async_op)
        specs = [((3,), torch.float32), ((2, 2), torch.float32), ((5,), torch.float32)]
        ts = [data(k + i, ctx.rank, s, d) for i, (s, d) in enumerate(specs)]
        w = dist.all_reduce_coalesced(ts, op=R.MAX, async_op=async_op)
        finish(ctx, w, async_op, "all_reduce_coalesced")
        for i, (s, d) in enumerate(specs):
            want = reference(R.MAX, [data(k + i, r, s, d) for r in range(ctx.size)], ctx.size)
            ctx.eq(ts[i], want, "all_reduce_coalesced tensor %d" % i)
        # the group's own method also takes several dtypes (torch's function does not)
        specs = [((3,), torch.float32), ((2, 2), torch.float64), ((5,), torch.int32), ((4,), torch.float32)]
        ts = [data(k + 10 + i, ctx.rank, s, d) for i, (s, d) in enumerate(specs)]
        pg = dist.distributed_c10d._get_default_group()
        w = pg.allreduce_coalesced(ts, dist.AllreduceCoalescedOptions())
        w.wait()
        ctx.ok(w.is_completed(), "allreduce_coalesced of several dtypes completes")
        for i, (s, d) in enumerate(specs):
            want = reference(R.SUM, [data(k + 10 + i, r, s, d) for r in range(ctx.size)], ctx.size)
            ctx.eq(ts[i], want, "allreduce_coalesced of several dtypes, tensor %d" % i)


# ---- broadcast, reduce ---------------------------------------------------------------------------
def broadcast_checks(ctx, group=None, tag="world"):
    ranks = members_of(group, ctx)
    for dtype in REDUCE_DTYPES + MOVE_ONLY_DTYPES:
        for async_op in MODES:
            for root in ranks:
                k = key("bcast", tag, str(dtype), async_op, root)
                t = data(k, ctx.rank, (9,), dtype)
                finish(ctx, dist.broadcast(t, src=root, group=group, async_op=async_op), async_op, "broadcast")
                ctx.eq(t, data(k, root, (9,), dtype), "broadcast(%s, src=%d, async_op=%s) on %s" %
                       (dtype, root, async_op, tag))


@check
def broadcast_world(ctx):
    broadcast_checks(ctx)
    big = torch.arange(100000, dtype=torch.float64) if ctx.rank == 0 else torch.zeros(100000, dtype=torch.float64)
    dist.broadcast(big, src=0)
    ctx.eq(big, torch.arange(100000, dtype=torch.float64), "broadcast of 800 kB")


@check
def reduce_(ctx):
    for dtype in REDUCE_DTYPES:
        for op in ops_for(dtype):
            for async_op in MODES:
                root = (len(opname(op)) + REDUCE_DTYPES.index(dtype)) % ctx.size
                k = key("reduce", str(dtype), opname(op), async_op)
                xs = [data(k, r, (6,), dtype, kind_of(op)) for r in range(ctx.size)]
                t = xs[ctx.rank].clone()
                w = dist.reduce(t, dst=root, op=op, async_op=async_op)
                finish(ctx, w, async_op, "reduce")
                what = "reduce(%s, %s, dst=%d, async_op=%s)" % (dtype, opname(op), root, async_op)
                if ctx.rank == root:
                    r = tol(dtype, op)
                    ctx.eq(t, reference(op, xs, ctx.size), what, rtol=r, atol=r)


# ---- gathers ---------------------------------------------------------------------------------------
def all_gather_checks(ctx, group=None, tag="world"):
    ranks = members_of(group, ctx)
    n = len(ranks)
    me = ranks.index(ctx.rank)
    for dtype in REDUCE_DTYPES + MOVE_ONLY_DTYPES:
        for async_op in MODES:
            k = key("ag", tag, str(dtype), async_op)
            mine = data(k, ctx.rank, (2, 3), dtype)
            outs = [torch.empty(2, 3, dtype=dtype) for _ in range(n)]
            finish(ctx, dist.all_gather(outs, mine, group=group, async_op=async_op), async_op, "all_gather")
            for i, r in enumerate(ranks):
                ctx.eq(outs[i], data(k, r, (2, 3), dtype), "all_gather(%s, async_op=%s) on %s: block %d" %
                       (dtype, async_op, tag, i))
            # into one tensor
            out = torch.empty(n * 6, dtype=dtype)
            finish(ctx, dist.all_gather_into_tensor(out, mine.reshape(-1), group=group, async_op=async_op),
                   async_op, "all_gather_into_tensor")
            ctx.eq(out, torch.cat([data(k, r, (2, 3), dtype).reshape(-1) for r in ranks]),
                   "all_gather_into_tensor(%s) on %s" % (dtype, tag))
    # outputs that are chunks of one tensor (gathered in place), uneven sizes
    flat = torch.zeros(n * 4)
    finish(ctx, dist.all_gather(list(flat.chunk(n)), torch.full((4,), float(me)), group=group), False, "chunks")
    ctx.eq(flat, torch.arange(n).float().repeat_interleave(4), "all_gather into chunks of one tensor")
    sizes = [r % 3 + 1 for r in range(n)]
    outs = [torch.empty(s, dtype=torch.int64) for s in sizes]
    w = dist.all_gather(outs, torch.full((sizes[me],), 10 * ctx.rank, dtype=torch.int64), group=group,
                        async_op=True)
    w.wait()
    for i, r in enumerate(ranks):
        ctx.eq(outs[i], torch.full((sizes[i],), 10 * r, dtype=torch.int64), "all_gather of uneven sizes")


@check
def all_gather_world(ctx):
    all_gather_checks(ctx)
    # non-contiguous input and outputs
    base = torch.arange(12.0).reshape(3, 4) + 100 * ctx.rank
    outs = [torch.zeros(3, 4)[:, :2] for _ in range(ctx.size)]
    dist.all_gather(outs, base[:, 1:3])
    for r in range(ctx.size):
        ctx.eq(outs[r], (torch.arange(12.0).reshape(3, 4) + 100 * r)[:, 1:3], "all_gather of strided tensors")


@check
def all_gather_coalesced(ctx):
    for async_op in MODES:
        inputs = [torch.full((2,), float(ctx.rank)), torch.arange(3.0) + ctx.rank]
        outs = [[torch.empty(2), torch.empty(3)] for _ in range(ctx.size)]
        finish(ctx, dist.all_gather_coalesced(outs, inputs, async_op=async_op), async_op, "all_gather_coalesced")
        for r in range(ctx.size):
            ctx.eq(outs[r][0], torch.full((2,), float(r)), "all_gather_coalesced first tensor from %d" % r)
            ctx.eq(outs[r][1], torch.arange(3.0) + r, "all_gather_coalesced second tensor from %d" % r)
    # the group's own method also takes several dtypes (torch's function does not)
    inputs = [torch.full((2,), float(ctx.rank)), torch.arange(3, dtype=torch.int32) + ctx.rank,
              torch.tensor([ctx.rank % 2 == 1])]
    outs = [[torch.empty(2), torch.empty(3, dtype=torch.int32), torch.empty(1, dtype=torch.bool)]
            for _ in range(ctx.size)]
    pg = dist.distributed_c10d._get_default_group()
    pg.allgather_coalesced(outs, inputs, torch._C._distributed_c10d.AllgatherOptions()).wait()
    for r in range(ctx.size):
        ctx.eq(outs[r][0], torch.full((2,), float(r)), "allgather_coalesced float from %d" % r)
        ctx.eq(outs[r][1], torch.arange(3, dtype=torch.int32) + r, "allgather_coalesced int from %d" % r)
        ctx.eq(outs[r][2], torch.tensor([r % 2 == 1]), "allgather_coalesced bool from %d" % r)


def gather_scatter_checks(ctx, group=None, tag="world"):
    ranks = members_of(group, ctx)
    n = len(ranks)
    for dtype in (torch.float32, torch.int8, torch.bfloat16, torch.bool, torch.int16):
        for async_op in MODES:
            for root in ranks:
                k = key("gather", tag, str(dtype), async_op, root)
                mine = data(k, ctx.rank, (5,), dtype)
                outs = [torch.empty(5, dtype=dtype) for _ in range(n)] if ctx.rank == root else None
                finish(ctx, dist.gather(mine, outs, dst=root, group=group, async_op=async_op), async_op, "gather")
                if ctx.rank == root:
                    for i, r in enumerate(ranks):
                        ctx.eq(outs[i], data(k, r, (5,), dtype), "gather(%s, dst=%d) block %d on %s" %
                               (dtype, root, i, tag))
                k = key("scatter", tag, str(dtype), async_op, root)
                ins = [data(k, i, (4,), dtype) for i in range(n)] if ctx.rank == root else None
                out = torch.empty(4, dtype=dtype)
                finish(ctx, dist.scatter(out, ins, src=root, group=group, async_op=async_op), async_op, "scatter")
                ctx.eq(out, data(k, ranks.index(ctx.rank), (4,), dtype), "scatter(%s, src=%d) on %s" %
                       (dtype, root, tag))


@check
def gather_scatter_world(ctx):
    gather_scatter_checks(ctx)


# ---- reduce_scatter, all_to_all ---------------------------------------------------------------------
def reduce_scatter_checks(ctx, group=None, tag="world"):
    ranks = members_of(group, ctx)
    n = len(ranks)
    me = ranks.index(ctx.rank)
    for dtype in REDUCE_DTYPES:
        for op in (R.SUM, R.MAX) + ((R.BXOR,) if not dtype.is_floating_point else (R.PRODUCT,)):
            for async_op in MODES:
                k = key("rs", tag, str(dtype), opname(op), async_op)
                full = {r: data(k, r, (n, 3), dtype, kind_of(op)) for r in ranks}
                want = reference(op, [full[r][me] for r in ranks], n)
                out = torch.empty(3, dtype=dtype)
                w = dist.reduce_scatter(out, list(full[ctx.rank].clone().unbind(0)), op=op, group=group,
                                        async_op=async_op)
                finish(ctx, w, async_op, "reduce_scatter")
                what = "reduce_scatter(%s, %s, async_op=%s) on %s" % (dtype, opname(op), async_op, tag)
                ctx.eq(out, want, what)
                out = torch.empty(3, dtype=dtype)
                w = dist.reduce_scatter_tensor(out, full[ctx.rank].reshape(-1).clone(), op=op, group=group,
                                               async_op=async_op)
                finish(ctx, w, async_op, "reduce_scatter_tensor")
                ctx.eq(out, want, "reduce_scatter_tensor" + what[len("reduce_scatter"):])
    # uneven blocks (xc_reduce_scatterv)
    sizes = [r % 3 + 1 for r in range(n)]
    ins = [torch.full((s,), float(ctx.rank + 1)) for s in sizes]
    out = torch.empty(sizes[me])
    dist.reduce_scatter(out, ins, group=group)
    ctx.eq(out, torch.full((sizes[me],), float(sum(r + 1 for r in ranks))), "reduce_scatter of uneven blocks")


@check
def reduce_scatter_world(ctx):
    reduce_scatter_checks(ctx)


def all_to_all_checks(ctx, group=None, tag="world"):
    ranks = members_of(group, ctx)
    n = len(ranks)
    me = ranks.index(ctx.rank)
    for dtype in (torch.float32, torch.int64, torch.float16, torch.bool, torch.complex64):
        for async_op in MODES:
            k = key("a2a", tag, str(dtype), async_op)

            def block(src, dst):
                return data(k + src * 97 + dst, 0, (2,), dtype)
            ins = [block(me, j) for j in range(n)]
            outs = [torch.empty(2, dtype=dtype) for _ in range(n)]
            finish(ctx, dist.all_to_all(outs, ins, group=group, async_op=async_op), async_op, "all_to_all")
            for j in range(n):
                ctx.eq(outs[j], block(j, me), "all_to_all(%s) block from %d on %s" % (dtype, j, tag))
            # single tensor, equal splits
            out = torch.empty(n * 2, dtype=dtype)
            finish(ctx, dist.all_to_all_single(out, torch.cat(ins), group=group, async_op=async_op), async_op,
                   "all_to_all_single")
            ctx.eq(out, torch.cat([block(j, me) for j in range(n)]), "all_to_all_single(%s) on %s" % (dtype, tag))
    # split sizes: rank i sends (i + j) % 3 rows of 2 columns to rank j
    for async_op in MODES:
        def rows(i, j):
            return (i + j) % 3

        def payload(i, j):
            return torch.arange(rows(i, j) * 2, dtype=torch.float64).reshape(-1, 2) + 1000 * i + 10 * j
        inp = torch.cat([payload(me, j) for j in range(n)])
        out = torch.empty(sum(rows(j, me) for j in range(n)), 2, dtype=torch.float64)
        w = dist.all_to_all_single(out, inp, output_split_sizes=[rows(j, me) for j in range(n)],
                                   input_split_sizes=[rows(me, j) for j in range(n)], group=group, async_op=async_op)
        finish(ctx, w, async_op, "all_to_all_single with split sizes")
        ctx.eq(out, torch.cat([payload(j, me) for j in range(n)]), "all_to_all_single with split sizes on " + tag)
    # uneven list
    outs = [torch.empty(rows(j, me)) for j in range(n)]
    dist.all_to_all(outs, [torch.full((rows(me, j),), float(me)) for j in range(n)], group=group)
    for j in range(n):
        ctx.eq(outs[j], torch.full((rows(j, me),), float(j)), "all_to_all of uneven sizes")


@check
def all_to_all_world(ctx):
    all_to_all_checks(ctx)
    # non-contiguous input and output of all_to_all_single
    n = ctx.size
    inp = (torch.arange(2 * n * 3, dtype=torch.float32).reshape(2 * n, 3) + 100 * ctx.rank)[:, 1]
    out = torch.zeros(2 * n, 2)[:, 0]
    dist.all_to_all_single(out, inp)
    want = torch.cat([(torch.arange(2 * n * 3, dtype=torch.float32).reshape(2 * n, 3) + 100 * j)[:, 1]
                      [2 * ctx.rank:2 * ctx.rank + 2] for j in range(n)])
    ctx.eq(out, want, "all_to_all_single of strided tensors")


@check
def overlapping_buffers(ctx):
    """Inputs that share memory with the output, as FSDP and in-place code
    pass them: all_gather_into_tensor from this rank's own chunk of the
    output (XC_IN_PLACE), all_to_all_single(t, t), reduce_scatter_tensor
    into a chunk of its own input (copied apart first)."""
    n, me = ctx.size, ctx.rank
    for async_op in MODES:
        out = torch.zeros(n * 3)
        mine = out[me * 3:(me + 1) * 3]
        mine.copy_(torch.full((3,), float(me + 1)))
        finish(ctx, dist.all_gather_into_tensor(out, mine, async_op=async_op), async_op, "in-place all_gather")
        ctx.eq(out, torch.arange(1, n + 1).float().repeat_interleave(3), "all_gather_into_tensor from its own chunk")
        t = torch.arange(n * 2, dtype=torch.float64) + 100 * me
        finish(ctx, dist.all_to_all_single(t, t, async_op=async_op), async_op, "all_to_all_single(t, t)")
        want = torch.cat([(torch.arange(n * 2, dtype=torch.float64) + 100 * j)[2 * me:2 * me + 2] for j in range(n)])
        ctx.eq(t, want, "all_to_all_single with the same tensor in and out")
        buf = torch.full((n * 2,), float(me + 1))
        finish(ctx, dist.reduce_scatter_tensor(buf[:2], buf, async_op=async_op), async_op, "overlapping rs")
        ctx.eq(buf[:2], torch.full((2,), float(n * (n + 1) // 2)), "reduce_scatter_tensor into its own input")


# ---- point to point -------------------------------------------------------------------------------------
@check
def send_recv(ctx):
    n, me = ctx.size, ctx.rank
    if n < 2:
        return
    right, left = (me + 1) % n, (me - 1) % n
    for dtype in REDUCE_DTYPES + MOVE_ONLY_DTYPES:
        k = key("p2p", str(dtype))
        # isend/irecv ring
        rreq = dist.irecv(t := torch.empty(6, dtype=dtype), src=left, tag=3)
        sreq = dist.isend(data(k, me, (6,), dtype), dst=right, tag=3)
        sreq.wait()
        rreq.wait()
        ctx.ok(rreq.is_completed() and sreq.is_completed(), "isend/irecv complete")
        ctx.eq(t, data(k, left, (6,), dtype), "isend/irecv ring of %s" % dtype)
    # blocking send/recv, both orders by parity, small and large (past the eager size)
    for count in (5, 300000):
        src = torch.arange(count, dtype=torch.float32) + me
        got = torch.empty(count)
        if me % 2 == 0:
            dist.send(src, dst=right, tag=count % 1000)
            dist.recv(got, src=left, tag=count % 1000)
        else:
            dist.recv(got, src=left, tag=count % 1000)
            dist.send(src, dst=right, tag=count % 1000)
        ctx.eq(got, torch.arange(count, dtype=torch.float32) + left, "send/recv of %d floats" % count)
    # tags keep messages apart: two sends, received in the other order
    if me == 0:
        dist.send(torch.tensor([1.0]), dst=1, tag=11)
        dist.send(torch.tensor([2.0]), dst=1, tag=12)
    elif me == 1:
        b, a = torch.empty(1), torch.empty(1)
        dist.recv(b, src=0, tag=12)
        dist.recv(a, src=0, tag=11)
        ctx.ok(a.item() == 1.0 and b.item() == 2.0, "tags keep messages apart")
    # non-contiguous receive buffer
    dist.barrier()
    buf = torch.zeros(4, 2)
    r = dist.irecv(buf[:, 1], src=left, tag=21)
    dist.send(torch.arange(4.0) + me, dst=right, tag=21)
    r.wait()
    ctx.eq(buf[:, 1], torch.arange(4.0) + left, "irecv into a strided view")
    ctx.eq(buf[:, 0], torch.zeros(4), "irecv leaves the rest alone")


@check
def recv_any_source(ctx):
    n, me = ctx.size, ctx.rank
    if n < 2:
        return
    # every other rank sends its rank to rank 0, which receives from any source
    if me == 0:
        seen = []
        for _ in range(n - 1):
            t = torch.empty(1, dtype=torch.int64)
            src = dist.recv(t, tag=7)
            ctx.ok(src == t.item(), "recv(src=None) returns the sender (%d) of %d" % (src, t.item()))
            seen.append(src)
        ctx.ok(sorted(seen) == list(range(1, n)), "every sender seen once: %s" % seen)
        # irecv from any source: the work's source rank
        t = torch.empty(1, dtype=torch.int64)
        w = dist.irecv(t, tag=8)
        w.wait()
        ctx.ok(w._source_rank() == t.item() == n - 1, "irecv from any source: source %d" % w._source_rank())
    else:
        dist.send(torch.tensor([me]), dst=0, tag=7)
        if me == n - 1:
            dist.send(torch.tensor([me]), dst=0, tag=8)


@check
def batch_isend_irecv(ctx):
    n, me = ctx.size, ctx.rank
    if n < 2:
        return
    right, left = (me + 1) % n, (me - 1) % n
    for count in (3, 200000):  # small, and past the eager size: both directions at once
        to_r = torch.full((count,), float(me))
        to_l = torch.full((count,), float(-me))
        from_l, from_r = torch.empty(count), torch.empty(count)
        ops = [dist.P2POp(dist.isend, to_r, right), dist.P2POp(dist.irecv, from_l, left),
               dist.P2POp(dist.isend, to_l, left), dist.P2POp(dist.irecv, from_r, right)]
        reqs = dist.batch_isend_irecv(ops)
        ctx.ok(len(reqs) == 4, "batch_isend_irecv returns one work per op")
        for w in reqs:
            w.wait()
        ctx.eq(from_l, torch.full((count,), float(left)), "batch_isend_irecv from the left")
        ctx.eq(from_r, torch.full((count,), float(-right)), "batch_isend_irecv from the right")


# ---- barriers, objects, works --------------------------------------------------------------------------
@check
def barriers(ctx):
    dist.barrier()
    w = dist.barrier(async_op=True)
    w.wait()
    ctx.ok(w.is_completed(), "async barrier completes")
    pg = dist.distributed_c10d._get_default_group()
    pg.monitored_barrier(timedelta(seconds=30))
    pg.monitored_barrier(timedelta(seconds=30), True)
    ctx.ok(True, "monitored_barrier")


@check
def objects(ctx):
    out = [None] * ctx.size
    dist.all_gather_object(out, {"rank": ctx.rank, "name": "r%d" % ctx.rank})
    ctx.ok(out == [{"rank": r, "name": "r%d" % r} for r in range(ctx.size)], "all_gather_object: %s" % out)
    objs = [("hello", ctx.size), [1, 2, 3]] if ctx.rank == 0 else [None, None]
    dist.broadcast_object_list(objs, src=0)
    ctx.ok(objs == [("hello", ctx.size), [1, 2, 3]], "broadcast_object_list: %s" % objs)


@check
def works_and_futures(ctx):
    t = torch.ones(4)
    w = dist.all_reduce(t, async_op=True)
    fut = w.get_future()
    got = fut.wait()
    ctx.eq(got[0], torch.full((4,), float(ctx.size)), "the future's value is the output")
    ctx.ok(w.wait(timeout=timedelta(seconds=30)), "wait with a timeout")
    ctx.ok(w.result()[0] is t, "result() is the output tensor")
    # many in flight, waited in reverse order
    ts = [torch.full((3,), float(i)) for i in range(8)]
    ws = [dist.all_reduce(x, async_op=True) for x in ts]
    for w in reversed(ws):
        w.wait()
    for i, x in enumerate(ts):
        ctx.eq(x, torch.full((3,), float(i * ctx.size)), "async all_reduce %d of 8 in flight" % i)
    # called from C++ (DDP checks its parameters this way) or directly: a C++
    # Work over a future, which the backend's helper thread completes
    pg = dist.distributed_c10d._get_default_group()
    params = [torch.ones(3, 2), torch.zeros(5)]
    torch._C._distributed_c10d._verify_params_across_processes(pg, params, None)
    ctx.ok(True, "_verify_params_across_processes (C++ calls allgather and waits)")
    x = torch.full((4,), float(ctx.rank))
    w = pg.allreduce([x], dist.AllreduceOptions())
    ctx.ok(type(w).__module__ != "xcomm.torch._work", "a direct call gets torch's C++ Work: %r" % w)
    w.wait()
    ctx.eq(x, torch.full((4,), float(sum(range(ctx.size)))), "a direct allreduce's result after wait()")
    ctx.eq(w.get_future().wait()[0], x, "a direct allreduce's future")
    # a collective started async, then point-to-point, then its wait (gloo-style overlap)
    if ctx.size >= 2:
        big = torch.ones(50000)
        w = dist.all_reduce(big, async_op=True)
        me, n = ctx.rank, ctx.size
        got = torch.empty(1)
        r = dist.irecv(got, src=(me - 1) % n, tag=99)
        dist.send(torch.tensor([float(me)]), dst=(me + 1) % n, tag=99)
        r.wait()
        w.wait()
        ctx.eq(big, torch.full((50000,), float(n)), "async all_reduce overlapped with p2p")
        ctx.eq(got, torch.tensor([float((me - 1) % n)]), "p2p during an async all_reduce")


# ---- groups ------------------------------------------------------------------------------------------------
def shm_maps():
    with open("/proc/self/maps") as f:
        return sum(1 for line in f if "/dev/shm/" in line)


def sockets():
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd).startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


@check
def groups(ctx):
    n, me = ctx.size, ctx.rank
    # torch 1.13's new_group sorts the ranks: group rank = place in sorted order
    shapes = {
        "all": list(range(n)),
        "rank 0 alone": [0],
        "evens": list(range(0, n, 2)),
        "odds": list(range(1, n, 2)),
        "first half": list(range(max(n // 2, 1))),
        "last half": list(range(n // 2, n)),
    }
    socks, maps = sockets(), shm_maps()
    made = {}
    for name, ranks in shapes.items():
        if not ranks:
            continue
        g = dist.new_group(ranks)  # every rank calls new_group, members or not
        if me in ranks:
            group_ranks[g] = ranks
            made[name] = g
            ctx.ok(dist.get_rank(g) == ranks.index(me), "new_group(%s): rank %d" % (name, dist.get_rank(g)))
            ctx.ok(dist.get_world_size(g) == len(ranks), "new_group(%s): size" % name)
        else:
            ctx.ok(g == dist.GroupMember.NON_GROUP_MEMBER, "new_group(%s): non-member" % name)
    ctx.ok(sockets() == socks, "new_group opened no socket (%d before, %d after)" % (socks, sockets()))
    # collectives on each group, every group alive at once
    for name, g in made.items():
        tag = "group " + name
        all_reduce_checks(ctx, g, tag, dtypes=(torch.float32, torch.int8, torch.bfloat16), shapes=((5,),))
        if name == "all":
            broadcast_checks(ctx, g, tag)
            reduce_scatter_checks(ctx, g, tag)
        if name in ("evens", "last half"):
            all_gather_checks(ctx, g, tag)
        if name == "first half":
            all_to_all_checks(ctx, g, tag)
        if name == "last half":
            gather_scatter_checks(ctx, g, tag)
        # p2p inside the group: a ring in group ranks
        gr, gn = dist.get_rank(g), dist.get_world_size(g)
        ranks = group_ranks[g]
        got = torch.empty(1, dtype=torch.int64)
        r = dist.irecv(got, src=ranks[(gr - 1) % gn], group=g, tag=5)
        dist.send(torch.tensor([me]), dst=ranks[(gr + 1) % gn], group=g, tag=5)
        r.wait()
        ctx.ok(got.item() == ranks[(gr - 1) % gn], "p2p ring in group %s" % name)
        dist.barrier(group=g)
    ctx.ok(sockets() == socks, "groups' collectives opened no socket")
    # one shared segment per group at most (its collectives), none per pair
    ctx.ok(shm_maps() - maps <= len(made), "at most one new shared-memory mapping per group, whatever its size "
           "(%d groups, %d new)" % (len(made), shm_maps() - maps))
    # overlapping groups created one after the other, and one over the same ranks twice
    if n >= 2:
        a_ranks, b_ranks = list(range(n - 1)), list(range(1, n))
        a, b, a2 = dist.new_group(a_ranks), dist.new_group(b_ranks), dist.new_group(a_ranks)
        for g, ranks, name in ((a, a_ranks, "A"), (b, b_ranks, "B"), (a2, a_ranks, "A again")):
            if me in ranks:
                group_ranks[g] = ranks
                t = torch.full((3,), float(me))
                w = dist.all_reduce(t, group=g, async_op=True)
                w.wait()
                ctx.eq(t, torch.full((3,), float(sum(ranks))), "all_reduce on overlapping group " + name)
        if me in a_ranks:
            # the same ranks and sources on A and on A again: never mixed up
            t1, t2 = torch.full((2,), 1.0 + me), torch.full((2,), 100.0 + me)
            w2 = dist.all_reduce(t2, group=a2, async_op=True)
            w1 = dist.all_reduce(t1, group=a, async_op=True)
            w1.wait()
            w2.wait()
            ctx.eq(t1, torch.full((2,), float(sum(1 + r for r in a_ranks))), "group A's result")
            ctx.eq(t2, torch.full((2,), float(sum(100 + r for r in a_ranks))), "group A-again's result")
        dist.barrier()


# ---- errors ------------------------------------------------------------------------------------------------
def expect(ctx, exc, fn, what, match=None):
    try:
        fn()
    except exc as e:
        if match is not None and match not in str(e):
            raise AssertionError("%s: the error %r does not say %r" % (what, str(e), match))
        ctx.count += 1
        return e
    raise AssertionError("%s: no %s raised" % (what, exc.__name__))


@check
def bad_arguments(ctx):
    t = torch.ones(3)
    expect(ctx, TypeError, lambda: dist.all_reduce(torch.ones(3, dtype=torch.int16)), "int16 all_reduce",
           "int16")
    expect(ctx, ValueError, lambda: dist.all_reduce(t, op=R.BAND), "BAND on floats", "bitwise")
    expect(ctx, ValueError, lambda: dist.all_reduce(torch.ones(2, dtype=torch.bool), op=R.AVG), "AVG on bool")
    pg = dist.distributed_c10d._get_default_group()
    opts = dist.BroadcastOptions()
    opts.rootRank = ctx.size
    expect(ctx, ValueError, lambda: pg.broadcast([t], opts), "broadcast from a rank outside the group",
           "outside")
    expect(ctx, ValueError, lambda: pg.send([t], 0, xcomm.torch._pg.TAG_MAX), "a reserved tag", "tag")
    expect(ctx, ValueError, lambda: dist.all_gather([torch.empty(3)] * (ctx.size + 1), t), "too many outputs",
           "output tensors")
    if ctx.size > 1:
        expect(ctx, ValueError, lambda: dist.all_to_all_single(torch.empty(ctx.size * 2 + 1),
                                                              torch.empty(ctx.size * 2 + 1)), "uneven rows", "split")
    dist.barrier()


@check
def mismatched_shapes(ctx):
    """Ranks that pass different sizes: an exception on every rank at once
    (xcomm compares the ops' signatures), blocking and async; each on a group
    of its own, so the world is not left out of step."""
    if ctx.size < 2:
        return
    import time
    for async_op in MODES:
        g = dist.new_group(list(range(ctx.size)))
        t = torch.ones(4 if ctx.rank == 0 else 5)
        t0 = time.monotonic()

        def go():
            w = dist.all_reduce(t, group=g, async_op=async_op)
            if async_op:
                try:
                    w.wait()
                finally:
                    ctx.ok(w.is_completed(), "a failed async op is completed")
                    ctx.ok(isinstance(w.exception(), RuntimeError), "exception() of a failed op")
        e = expect(ctx, RuntimeError, go, "all_reduce of 4 and 5 elements (async_op=%s)" % async_op,
                   "rank")
        ctx.ok(isinstance(e, xcomm.Error), "the error is an xcomm.Error too: %r" % e)
        ctx.ok(time.monotonic() - t0 < 20, "the mismatch failed in %.1f s, not at the deadline" %
               (time.monotonic() - t0))
        g2 = dist.new_group(list(range(ctx.size)))
        t2 = torch.ones(3, dtype=torch.float32 if ctx.rank == 0 else torch.float64)

        def go2():
            w = dist.all_reduce(t2, group=g2, async_op=async_op)
            if async_op:
                w.wait()
        expect(ctx, RuntimeError, go2, "all_reduce of float32 and float64 (async_op=%s)" % async_op)
        # the same through a direct call (a C++ Work): its future raises
        g3 = dist.new_group(list(range(ctx.size)))
        pg3 = dist.distributed_c10d._get_default_group() if g3 is None else g3
        t3 = torch.ones(2 if ctx.rank == 0 else 3)
        w3 = pg3.allreduce([t3], dist.AllreduceOptions())
        expect(ctx, RuntimeError, lambda: w3.get_future().wait(), "the future of a direct all_reduce that failed")
        dist.barrier()


@check
def monitored_barrier_names_the_missing(ctx):
    """Last, on a group of its own (the missing rank's requests stay
    behind): rank 1 does not come; rank 0 fails within the timeout naming
    it, the others fail waiting for rank 0's release."""
    if ctx.size < 2:
        return
    import time
    g = dist.new_group(list(range(ctx.size)))
    if ctx.rank != 1:
        t0 = time.monotonic()
        e = expect(ctx, RuntimeError, lambda: g.monitored_barrier(timedelta(seconds=1), True),
                   "monitored_barrier without rank 1", "rank" if ctx.rank else "did not arrive: 1")
        ctx.ok(time.monotonic() - t0 < 10, "monitored_barrier gave up after %.1f s: %s" % (time.monotonic() - t0, e))
    dist.barrier()


import xcomm  # noqa: E402

if __name__ == "__main__":
    dist.init_process_group("xcomm", timeout=timedelta(seconds=60))
    status = common.run("torch_ops", dist)
    dist.destroy_process_group()
    sys.exit(status)
