"""What the torch backend costs (a measurement, not a test; docs/torch.md
has the figures). Run at 2 ranks or more, torchrun-style or under xcrun:

    xcrun -n 2 /usr/bin/python3 tests/torch/costs.py
    /usr/bin/python3 tests/torch/launch.py -n 4 /usr/bin/python3 tests/torch/costs.py

1. new_group: the default group is xcomm; new_group over every rank with
   backend "xcomm" and with backend "gloo", alternately, ROUNDS times each:
   the time of new_group itself, of the group's first all_reduce (xcomm sets
   up its shared segment there, lazily), of the next ones, and what each
   group adds to the process: sockets (from /proc/self/fd) and shared-memory
   mappings (from /proc/self/maps).
2. The Python layer's cost per op: 8-byte ops, blocking, through torch's
   function on the xcomm world against the same C call (xc_allreduce, ...)
   made straight from Python through cffi, interleaved in rounds (medians
   of the rounds); the difference plus the cost of a cffi call into the
   library (xc_dtype_size) is what torch's dispatch, xcomm.torch and cffi
   add; torch's function on a group whose backend does nothing at all
   tells torch's share from xcomm.torch's. gloo's all_reduce for scale.
"""

import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

import xcomm.torch  # noqa: F401
from xcomm._ffi import lib as main_lib
from xcomm.torch import _capi

ROUNDS = int(os.environ.get("COSTS_ROUNDS", "10"))
ITERS = int(os.environ.get("COSTS_ITERS", "2000"))


def sockets():
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink("/proc/self/fd/" + fd).startswith("socket:")
        except OSError:
            pass
    return n


def shm_maps():
    with open("/proc/self/maps") as f:
        return sum(1 for line in f if "/dev/shm/" in line)


def timed(fn):
    dist.barrier()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def new_group_costs(rank, size):
    ranks = list(range(size))
    dist.all_reduce(torch.ones(2))  # the world's own segment and connections are not a group's
    dist.barrier()
    out = {"xcomm": [], "gloo": []}
    keep = []
    for _ in range(ROUNDS):
        for backend in ("xcomm", "gloo"):
            s0, m0 = sockets(), shm_maps()
            holder = {}
            create = timed(lambda: holder.setdefault("g", dist.new_group(ranks, backend=backend)))
            g = holder["g"]
            t = torch.ones(2)
            first = timed(lambda: dist.all_reduce(t, group=g))
            again = timed(lambda: [dist.all_reduce(t, group=g) for _ in range(10)]) / 10
            out[backend].append((create, first, again, sockets() - s0, shm_maps() - m0))
            keep.append(g)  # alive to the end, as a program's groups are
    return out


class _NullGroup(dist.ProcessGroup):
    """A backend that does nothing: what torch's own dispatch costs."""

    def __init__(self, rank, size):
        super().__init__(rank, size)
        from xcomm.torch._work import DONE
        self._done = DONE

    def getBackendName(self):
        return "xcomm_null"

    def _nothing(self, *args, **kwargs):
        return self._done

    allreduce = broadcast = allgather = _allgather_base = reduce_scatter = _reduce_scatter_base = _nothing
    alltoall_base = gather = barrier = reduce = _nothing


def op_costs(rank, size):
    """us per op (medians of rounds): the C call through cffi, torch's
    function on the xcomm world, and on a group whose backend does nothing."""
    dist.Backend.register_backend("xcomm_null", lambda store, r, n, timeout: _NullGroup(r, n))
    null = dist.new_group(list(range(size)), backend="xcomm_null")
    gloo = dist.new_group(list(range(size)), backend="gloo")
    world = dist.distributed_c10d._get_default_group()
    h, C, L = world._h, _capi.lib, main_lib
    f32 = L.XC_FLOAT32
    x = torch.zeros(2)  # 8 bytes
    xs = [torch.zeros(2) for _ in range(size)]
    big = torch.zeros(2 * size)
    out = torch.zeros(2 * size)
    p, pb, po = x.data_ptr(), big.data_ptr(), out.data_ptr()
    ops = [
        ("all_reduce", lambda g: dist.all_reduce(x, group=g), lambda: C.xc_allreduce(1, p, 2, f32, L.XC_SUM, h)),
        ("all_reduce MAX", lambda g: dist.all_reduce(x, op=dist.ReduceOp.MAX, group=g),
         lambda: C.xc_allreduce(1, p, 2, f32, L.XC_MAX, h)),
        ("broadcast", lambda g: dist.broadcast(x, 0, group=g), lambda: C.xc_broadcast(p, 2, f32, 0, h)),
        ("reduce", lambda g: dist.reduce(x, 0, group=g), lambda: C.xc_reduce(p, 0 if rank else 1, 2, f32, L.XC_SUM,
                                                                             0, h) if rank else
         C.xc_reduce(1, p, 2, f32, L.XC_SUM, 0, h)),
        ("all_gather_into_tensor", lambda g: dist.all_gather_into_tensor(out, x, group=g),
         lambda: C.xc_allgather(p, po, 2, f32, h)),
        ("all_gather (list)", lambda g: dist.all_gather(xs, x, group=g), lambda: C.xc_allgather(p, po, 2, f32, h)),
        ("reduce_scatter_tensor", lambda g: dist.reduce_scatter_tensor(x, big, group=g),
         lambda: C.xc_reduce_scatter(pb, p, 2, f32, L.XC_SUM, h)),
        ("all_to_all_single", lambda g: dist.all_to_all_single(out, big, group=g),
         lambda: C.xc_alltoall(pb, po, 2, f32, h)),
        ("barrier", lambda g: dist.barrier(group=g), lambda: C.xc_barrier(h)),
    ]
    rows = {}
    for name, via_torch, via_c in ops:
        for fn in (lambda: via_torch(None), via_c):  # warm up
            for _ in range(20):
                fn()
        r = {"c": [], "xcomm": [], "null": [], "gloo": []}
        for _ in range(ROUNDS):
            r["c"].append(timed(lambda: [via_c() for _ in range(ITERS)]) / ITERS)
            r["xcomm"].append(timed(lambda: [via_torch(None) for _ in range(ITERS)]) / ITERS)
            r["null"].append(timed(lambda: [via_torch(null) for _ in range(ITERS)]) / ITERS)
            if name == "all_reduce":
                r["gloo"].append(timed(lambda: [via_torch(gloo) for _ in range(ITERS // 20)]) / (ITERS // 20))
        rows[name] = {k: statistics.median(v) * 1e6 for k, v in r.items() if v}
    t0 = time.perf_counter()
    for _ in range(ITERS):
        L.xc_dtype_size(f32)
    empty = (time.perf_counter() - t0) / ITERS * 1e6
    return rows, empty


def main():
    dist.init_process_group("xcomm")
    rank, size = dist.get_rank(), dist.get_world_size()
    groups = new_group_costs(rank, size)
    ops = op_costs(rank, size)
    if rank == 0:
        print("%d ranks, %d rounds (medians); torch %s, Python %s" % (size, ROUNDS, torch.__version__,
                                                                     sys.version.split()[0]))
        print("new_group over all ranks:     create    first all_reduce   later all_reduce   +sockets  +shm maps")
        for backend, rows in groups.items():
            med = [statistics.median(col) for col in zip(*rows)]
            print("  %-6s              %9.2f ms %12.2f ms %14.1f us %12d %9d" % (
                backend, med[0] * 1e3, med[1] * 1e3, med[2] * 1e6, max(r[3] for r in rows), max(r[4] for r in rows)))
        rows, empty = ops
        print("8-byte ops, blocking (us per op)   C call   dist.*, xcomm   dist.*, no-op backend   layer  (xcomm.torch)")
        for name, r in rows.items():
            layer = r["xcomm"] - r["c"] + empty
            print("  %-28s %8.2f %13.2f %19.2f %10.2f %9.2f" % (name, r["c"], r["xcomm"], r["null"], layer,
                                                              layer - r["null"]))
        print("  (layer = dist.* on xcomm - the C call + an empty cffi call (%.2f us): torch + xcomm.torch + cffi;"
              % empty)
        print("   xcomm.torch = layer - dist.* on a backend that does nothing)")
        print("  gloo's all_reduce for scale: %.1f us" % rows["all_reduce"]["gloo"])
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
