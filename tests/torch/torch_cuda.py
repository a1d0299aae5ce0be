"""CUDA tensors on the xcomm backend, against references computed on the CPU:
all_reduce (every float dtype torch and xcomm share, int32 and int64; sum,
min, max, avg), broadcast from every root, all_gather(_into_tensor),
reduce_scatter_tensor, all_to_all_single, send/recv around a ring,
batch_isend_irecv, ordering with kernels queued before and after an op on
torch's current stream and on a side stream, and DistributedDataParallel on
CUDA against one process training on the whole batch.

Needs a GPU (exit 77 without one, so a machine without CUDA skips it). Run by
every rank, torchrun-style (tests/torch/launch.py) or under xcrun:
    python3 torch_cuda.py
"""

import os
import sys
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, data, key  # noqa: E402

import xcomm.torch  # noqa: E402,F401  (registers "xcomm")

warnings.filterwarnings("ignore", message=".*will be deprecated.*")

R = dist.ReduceOp
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64]
COUNTS = [1, 1001, 1 << 20]


def dev():
    return torch.device("cuda", torch.cuda.current_device())


def everyone(k, shape, dtype, n):
    """Every rank's seeded input for check key k, on the CPU."""
    return [data(k, r, shape, dtype) for r in range(n)]


def reduced(op, xs):
    wide = torch.float64 if xs[0].is_floating_point() else torch.int64
    s = torch.stack([x.to(wide) for x in xs])
    if op == R.SUM:
        return s.sum(0).to(xs[0].dtype)
    if op == R.MIN:
        return s.min(0).values.to(xs[0].dtype)
    if op == R.MAX:
        return s.max(0).values.to(xs[0].dtype)
    if xs[0].is_floating_point():
        return (s.sum(0) / len(xs)).to(xs[0].dtype)
    return torch.div(s.sum(0), len(xs), rounding_mode="trunc").to(xs[0].dtype)


@check
def all_reduce(ctx):
    for dtype in DTYPES:
        for op, name in [(R.SUM, "sum"), (R.MIN, "min"), (R.MAX, "max"), (R.AVG, "avg")]:
            for count in COUNTS:
                for async_op in (False, True):
                    k = key("all_reduce", str(dtype), name, count, async_op)
                    xs = everyone(k, (count,), dtype, ctx.size)
                    t = xs[ctx.rank].to(dev())
                    w = dist.all_reduce(t, op=op, async_op=async_op)
                    if async_op:
                        w.wait()
                    # avg divides in float32 (float16/bfloat16 round once after it)
                    tol = 0.0
                    if name == "avg" and dtype.is_floating_point:
                        tol = 1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-6
                    ctx.eq(t.cpu(), reduced(op, xs), "all_reduce %s %s count %d async %s" % (dtype, name, count,
                                                                                          async_op), rtol=tol)


@check
def broadcast(ctx):
    for root in range(ctx.size):
        for count in COUNTS:
            k = key("broadcast", root, count)
            t = data(k, ctx.rank, (count,), torch.float32).to(dev())
            dist.broadcast(t, src=root)
            ctx.eq(t.cpu(), data(k, root, (count,), torch.float32), "broadcast root %d count %d" % (root, count))


@check
def gathers_and_scatters(ctx):
    n = ctx.size
    for count in (1, 1001, 1 << 18):
        k = key("gathers", count)
        xs = everyone(k, (count,), torch.bfloat16, n)
        out = torch.empty(n * count, dtype=torch.bfloat16, device=dev())
        dist.all_gather_into_tensor(out, xs[ctx.rank].to(dev()))
        ctx.eq(out.cpu(), torch.cat(xs), "all_gather_into_tensor count %d" % count)

        outs = [torch.empty(count, dtype=torch.bfloat16, device=dev()) for _ in range(n)]
        dist.all_gather(outs, xs[ctx.rank].to(dev()))
        for r in range(n):
            ctx.eq(outs[r].cpu(), xs[r], "all_gather piece %d count %d" % (r, count))

        ys = everyone(k + 1, (n * count,), torch.float32, n)
        piece = torch.empty(count, dtype=torch.float32, device=dev())
        dist.reduce_scatter_tensor(piece, ys[ctx.rank].to(dev()))
        want = reduced(R.SUM, ys)[ctx.rank * count:(ctx.rank + 1) * count]
        ctx.eq(piece.cpu(), want, "reduce_scatter_tensor count %d" % count)

        zs = everyone(k + 2, (n * count,), torch.int32, n)
        got = torch.empty(n * count, dtype=torch.int32, device=dev())
        dist.all_to_all_single(got, zs[ctx.rank].to(dev()))
        want = torch.cat([zs[r][ctx.rank * count:(ctx.rank + 1) * count] for r in range(n)])
        ctx.eq(got.cpu(), want, "all_to_all_single count %d" % count)


@check
def point_to_point(ctx):
    n, r = ctx.size, ctx.rank
    if n < 2:
        return
    for count in (1, 1001, 1 << 20):
        k = key("p2p", count)
        right, left = (r + 1) % n, (r - 1) % n
        mine = data(k, r, (count,), torch.float32).to(dev())
        got = torch.empty(count, dtype=torch.float32, device=dev())
        if r % 2 == 0:
            dist.send(mine, right)
            dist.recv(got, left)
        else:
            dist.recv(got, left)
            dist.send(mine, right)
        ctx.eq(got.cpu(), data(k, left, (count,), torch.float32), "send/recv ring count %d" % count)

        got2 = torch.empty(count, dtype=torch.float32, device=dev())
        ops = [dist.P2POp(dist.isend, mine, right), dist.P2POp(dist.irecv, got2, left)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        ctx.eq(got2.cpu(), data(k, left, (count,), torch.float32), "batch_isend_irecv count %d" % count)


@check
def stream_order(ctx):
    """Kernels queued before an op feed it; kernels queued after it see its
    result: no host synchronisation in between, on the current stream and on
    a side stream."""
    n, count = ctx.size, 1 << 22
    for side in (False, True):
        s = torch.cuda.Stream() if side else torch.cuda.current_stream()
        with torch.cuda.stream(s):
            t = torch.full((count,), float(ctx.rank + 1), device=dev())
            t.mul_(2)                       # queued before the op
            w = dist.all_reduce(t, async_op=True)
            w.wait()                        # the current stream waits for the op
            t.add_(1)                       # queued after it
        torch.cuda.synchronize()
        want = float(n * (n + 1) + 1)       # sum of 2(r+1), plus one
        ctx.ok(bool((t == want).all()), "stream order (side stream %s): got %s, want %s" % (
            side, t[:4].tolist(), want))


@check
def ddp(ctx):
    """DDP on CUDA: after some steps every rank's parameters equal those of
    one process training on the whole batch (equal batch per rank, so the
    mean of the ranks' mean gradients is the whole batch's)."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    n, r, steps, batch = ctx.size, ctx.rank, 5, 8
    torch.manual_seed(1234)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).double()
    ref = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).double()
    ref.load_state_dict(model.state_dict())
    net = DDP(model.to(dev()), device_ids=[torch.cuda.current_device()])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(steps):
        xs = [data(key("ddp x", step), q, (batch, 32), torch.float64) / 30 for q in range(n)]
        ys = [data(key("ddp y", step), q, (batch, 4), torch.float64) / 30 for q in range(n)]
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(xs[r].to(dev())), ys[r].to(dev())).backward()
        opt.step()
        ref_opt.zero_grad()
        torch.nn.functional.mse_loss(ref(torch.cat(xs)), torch.cat(ys)).backward()
        ref_opt.step()
    for (name, p), q in zip(net.module.named_parameters(), ref.parameters()):
        ctx.eq(p.detach().cpu(), q.detach(), "DDP parameter %s after %d steps" % (name, steps), rtol=1e-9, atol=1e-12)


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("torch_cuda: torch sees no CUDA device; skipped")
        sys.exit(77)
    local = int(os.environ.get("LOCAL_RANK", os.environ.get("XC_LOCAL_RANK", "0")))
    torch.cuda.set_device(local % torch.cuda.device_count())
    dist.init_process_group("xcomm", timeout=timedelta(seconds=60))
    status = common.run("torch_cuda", dist)
    dist.destroy_process_group()
    sys.exit(status)
