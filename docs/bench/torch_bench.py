"""torch.distributed on xcomm beside gloo: nccl-tests-style tables and a summary.

    /usr/bin/python3 docs/bench/torch_bench.py [--ranks 2,4] [--backends xcomm,gloo] [--repeat 3]

For each rank count (and --repeat times, rank counts alternating) one job of
that many processes is started with torchrun's variables
(tests/torch/launch.py). Inside a job every backend runs, alternating
size by size, so drifts of the machine hit all of them alike:

- all_reduce (dist.all_reduce, in place, float32 sum) and all_to_all_single
  (float32): nccl-tests columns. `size` is bytes per rank (all_to_all_single:
  the whole input, size/n to each rank); each row is warmup calls, a barrier
  of the group, then `iters` calls back to back; `time` is the slowest rank's
  mean per call in µs, algbw = size / time (GB/s, 10^9), busbw = algbw x
  2(n-1)/n (all_reduce) or (n-1)/n (all_to_all_single). During the timed
  calls the data are zeros (an in-place sum of non-zeros would grow without
  bound over thousands of calls); then one call on rank-dependent integers is
  checked element by element against the sum (or the blocks) computed
  locally: #wrong, summed over ranks, must be 0.
- new_group: the time of dist.new_group(backend=b) on every rank (torch's own
  store barrier, which polls every 10 ms, included), of which the part in
  torch's _new_process_group_helper (the backend's constructor), and the
  first 8 B all_reduce on the new group (a backend that connects lazily pays
  there). The slowest rank's; the median of --groups groups.
- overhead (xcomm only): 8 B in-place allreduce of one tensor t by three
  ways, in --rounds interleaved rounds: dist.all_reduce on the xcomm group,
  the xcomm Python binding's comm.allreduce(a, out=a) on a = t.numpy() (the
  tensor's memory), and xc_allreduce called through cffi with the tensor's
  pointer and XC_IN_PLACE (the C call with the least Python around it).
  Each way's figure is the median of the rounds (each round: the slowest
  rank's mean per call); overhead = dist.all_reduce - cffi, also from the
  rounds' minima (the least disturbed round of each way, the better
  estimate on a shared machine); the goal is <= 5 µs. The communicator is
  the process group's own (pg.comm) when xcomm.torch exposes it, else a
  second one over the same ranks (xcomm.init_rank with a unique id sent
  over the control group): the line says which.

The default process group is the first backend's; the others are
new_group(backend=...) over all ranks; timing maxima and the unique id go
over a separate gloo group. torch.set_num_threads(1) in every rank. Before
the tables, --warmup-calls 8 B all_reduce calls on every backend.

The summary (median over --repeat runs) gives gloo time / xcomm time per row
(above 1: xcomm faster) against the goals: 8 B all_reduce >= 10x, 64 MiB >= 2x.
A backend that cannot be loaded (xcomm: `import xcomm.torch` fails) is left
out with a message. Exit status 1 when a job fails or a check finds a wrong
element.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "torch"))

import backends  # noqa: E402

MiB = 1 << 20
GOALS = {("all_reduce", 8): 10.0, ("all_reduce", 64 * MiB): 2.0}
OVERHEAD_GOAL_US = 5.0


def parse_size(s):
    s = s.strip().upper().rstrip("B")
    mult = {"K": 1 << 10, "M": MiB, "G": 1 << 30}.get(s[-1:], 1)
    return int(float(s[:-1] if mult > 1 else s) * mult)


def fmt_size(b):
    for unit, m in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", 1 << 10)):
        if b >= m and b % m == 0:
            return "%d %s" % (b // m, unit)
    return "%d B" % b


# ---- worker ---------------------------------------------------------------------


class Worker:
    def __init__(self, a):
        import torch
        import torch.distributed as dist
        import torch.distributed.distributed_c10d as c10d

        self.a, self.torch, self.dist, self.c10d = a, torch, dist, c10d
        torch.set_num_threads(1)
        self.names = a.backends.split(",")
        for b in self.names:
            why = backends.load(b)
            if why is not None:
                raise SystemExit("backend %s: %s" % (b, why))
        timeout = datetime.timedelta(seconds=a.timeout)
        dist.init_process_group(self.names[0], timeout=timeout)
        self.rank, self.n = dist.get_rank(), dist.get_world_size()
        self.ctl = dist.new_group(backend="gloo", timeout=timeout)  # timing maxima, unique id
        self.groups = {self.names[0]: dist.group.WORLD}
        for b in self.names[1:]:
            self.groups[b] = dist.new_group(backend=b, timeout=timeout)
        self.out = {"nranks": self.n, "backends": self.names, "torch": torch.__version__, "rows": [],
                    "new_group": [], "overhead": None}

    def say(self, *lines):
        if self.rank == 0:
            for line in lines:
                print(line)
            sys.stdout.flush()

    def slowest(self, seconds):
        t = self.torch.tensor([seconds], dtype=self.torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX, group=self.ctl)
        return float(t[0])

    def total(self, count):
        t = self.torch.tensor([count], dtype=self.torch.int64)
        self.dist.all_reduce(t, group=self.ctl)
        return int(t[0])

    def iters(self, size):
        if self.a.iters:
            return self.a.iters
        return max(self.a.min_iters, min(self.a.max_iters, (self.a.bytes_per_row // max(size, 1))))

    # -- the ops: (setup(count) -> state, call(state), check(count) -> wrong elements, busbw factor)

    def all_reduce_row(self, b, size):
        torch, dist, g, n, rank = self.torch, self.dist, self.groups[b], self.n, self.rank
        count = max(1, size // 4)
        buf = torch.zeros(count, dtype=torch.float32)

        def call():
            dist.all_reduce(buf, group=g)

        def check():
            i = torch.arange(count, dtype=torch.int64)
            buf.copy_(((i + 7 * rank) % 13 + 1).float())
            dist.all_reduce(buf, group=g)
            want = sum(((i + 7 * r) % 13 + 1) for r in range(n)).float()
            return int((buf != want).sum())

        return count, call, check, 2.0 * (n - 1) / n

    def all_to_all_row(self, b, size):
        torch, dist, g, n, rank = self.torch, self.dist, self.groups[b], self.n, self.rank
        block = max(1, size // 4 // n)
        count = block * n
        src = torch.zeros(count, dtype=torch.float32)
        dst = torch.zeros(count, dtype=torch.float32)

        def call():
            dist.all_to_all_single(dst, src, group=g)

        def check():
            i = torch.arange(block, dtype=torch.int64)
            src.copy_(torch.cat([(rank * 64 + to + (i % 17) * 4096).float() for to in range(n)]))
            dst.fill_(-1.0)
            dist.all_to_all_single(dst, src, group=g)
            want = torch.cat([(frm * 64 + rank + (i % 17) * 4096).float() for frm in range(n)])
            return int((dst != want).sum())

        return count, call, check, (n - 1.0) / n

    def time_row(self, op, b, size, make):
        count, call, check, factor = make(b, size)
        nbytes = count * 4
        iters = self.iters(nbytes)
        for _ in range(max(2, iters // 10)):
            call()
        self.dist.barrier(group=self.groups[b])
        t0 = time.perf_counter()
        for _ in range(iters):
            call()
        t = self.slowest((time.perf_counter() - t0) / iters)
        wrong = self.total(check())
        us = t * 1e6
        algbw = nbytes / t / 1e9
        row = {"op": op, "backend": b, "size": nbytes, "count": count, "time_us": us, "algbw": algbw,
               "busbw": algbw * factor, "wrong": wrong, "iters": iters}
        self.out["rows"].append(row)
        self.say("%10s %12d %13d %9s %7s %10.2f %7.2f %7.2f %7d %7d" % (
            b, nbytes, count, "float32", "sum" if op == "all_reduce" else "-", us, algbw, algbw * factor, wrong,
            iters))

    def table(self, op, sizes, make):
        self.say("#", "# %s (%s), float32" % (op, "dist.all_reduce, in place, sum" if op == "all_reduce"
                                                else "dist.all_to_all_single, equal splits"),
                 "#%9s %12s %13s %9s %7s %10s %7s %7s %7s %7s" % (
                     "backend", "size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong", "iters"),
                 "#%9s %12s %13s %9s %7s %10s %7s %7s %7s %7s" % ("", "(B)", "(elements)", "", "", "(us)", "(GB/s)",
                                                                  "(GB/s)", "", ""))
        for size in sizes:
            for b in self.names:
                self.time_row(op, b, size, make)

    # -- new_group

    def new_groups(self):
        dist, c10d, torch = self.dist, self.c10d, self.torch
        helper = c10d._new_process_group_helper
        spent = [0.0]

        def timed_helper(*args, **kw):
            t0 = time.perf_counter()
            try:
                return helper(*args, **kw)
            finally:
                spent[0] = time.perf_counter() - t0

        c10d._new_process_group_helper = timed_helper
        self.say("#", "# new_group(backend=b) over all ranks: total (torch's store barrier included), "
                 "backend constructor (_new_process_group_helper), first 8 B all_reduce; slowest rank, ms",
                 "#%9s %6s %12s %12s %12s" % ("backend", "group", "total", "constructor", "first op"))
        try:
            per = {b: [] for b in self.names}
            for k in range(self.a.groups):
                for b in self.names:
                    dist.barrier(group=self.ctl)
                    t0 = time.perf_counter()
                    g = dist.new_group(backend=b, timeout=datetime.timedelta(seconds=self.a.timeout))
                    t1 = time.perf_counter()
                    ctor = spent[0]
                    x = torch.ones(2)
                    t2 = time.perf_counter()
                    dist.all_reduce(x, group=g)
                    t3 = time.perf_counter()
                    ok = bool((x == self.n).all())
                    vals = [self.slowest(v) * 1e3 for v in (t1 - t0, ctor, t3 - t2)]
                    wrong = self.total(0 if ok else 1)
                    per[b].append(vals)
                    self.say("%10s %6d %12.2f %12.2f %12.3f%s" % (b, k, vals[0], vals[1], vals[2],
                                                                  "" if not wrong else "  WRONG RESULT"))
                    if wrong:
                        self.out["rows"].append({"op": "new_group", "backend": b, "size": 8, "wrong": wrong,
                                                 "time_us": 0.0})
                    dist.destroy_process_group(g)
                    del g  # the last reference: the backend goes now, on every rank alike
            for b in self.names:
                med = [statistics.median(v[i] for v in per[b]) for i in range(3)]
                self.out["new_group"].append({"backend": b, "total_ms": med[0], "ctor_ms": med[1],
                                              "first_op_ms": med[2]})
        finally:
            c10d._new_process_group_helper = helper

    # -- Python overhead over the C call

    def xcomm_comm(self):
        """The xcomm communicator under the xcomm process group, or a second
        one over the same ranks; and a word saying which."""
        import xcomm

        pg = self.groups["xcomm"]
        if pg is None or pg == self.dist.group.WORLD:
            pg = self.c10d._get_default_group()
        try:
            c = pg.comm  # xcomm.torch's ProcessGroupXcomm.comm: its xcomm.Comm
        except Exception:  # noqa: BLE001 - another version of the backend
            c = None
        if c is not None and hasattr(c, "handle"):
            return c, "the process group's own communicator", False
        uid = [bytes(xcomm.get_unique_id()) if self.rank == 0 else None]
        self.dist.broadcast_object_list(uid, src=0, group=self.ctl)
        c = xcomm.init_rank(self.n, xcomm.UniqueId(uid[0]), self.rank)
        return c, "a second communicator (xcomm.init_rank) over the same ranks", True

    def overhead(self):
        if "xcomm" not in self.names:
            return
        import xcomm
        from xcomm._ffi import ffi, lib

        torch, dist = self.torch, self.dist
        g = self.groups["xcomm"]
        comm, which, own = self.xcomm_comm()
        t = torch.zeros(2, dtype=torch.float32)
        ptr = ffi.cast("void *", t.data_ptr())
        in_place = ffi.cast("const void *", 1)  # XC_IN_PLACE
        h = comm.handle
        f32, s = int(xcomm.DType.FLOAT32), int(xcomm.Op.SUM)
        xc_allreduce = lib.xc_allreduce

        def via_dist(k):
            for _ in range(k):
                dist.all_reduce(t, group=g)

        # The tensor's memory as NumPy sees it (no copy): the binding takes a
        # torch tensor as input through DLPack, but NumPy 1.x marks what it
        # imports by DLPack read-only, so out=t would be refused.
        tn = t.numpy()

        def via_binding(k):
            for _ in range(k):
                comm.allreduce(tn, out=tn)

        def via_cffi(k):
            rc = 0
            for _ in range(k):
                rc |= xc_allreduce(in_place, ptr, 2, f32, s, h)
            if rc:
                raise RuntimeError("xc_allreduce failed: %s" % xcomm.last_error())

        ways = [("dist.all_reduce", via_dist), ("binding comm.allreduce", via_binding), ("cffi xc_allreduce", via_cffi)]
        k = self.a.overhead_iters
        times = {w: [] for w, _ in ways}
        for fn in (f for _, f in ways):
            fn(k // 10)
        for _ in range(self.a.rounds):
            for w, fn in ways:
                dist.barrier(group=self.ctl)
                t0 = time.perf_counter()
                fn(k)
                times[w].append(self.slowest((time.perf_counter() - t0) / k) * 1e6)
        t.fill_(float(self.rank + 1))
        dist.all_reduce(t, group=g)
        wrong = self.total(int((t != self.n * (self.n + 1) / 2).sum()))
        med = {w: statistics.median(v) for w, v in times.items()}
        res = {"comm": which, "iters": k, "rounds": self.a.rounds, "wrong": wrong,
               "dist_us": med["dist.all_reduce"], "binding_us": med["binding comm.allreduce"],
               "cffi_us": med["cffi xc_allreduce"]}
        res["overhead_us"] = res["dist_us"] - res["cffi_us"]
        # The least disturbed round of each way: on a shared machine a
        # round's mean carries whatever preempted it, so the minimum is the
        # better estimate of the cost itself.
        res["overhead_min_us"] = min(times["dist.all_reduce"]) - min(times["cffi xc_allreduce"])
        self.out["overhead"] = res
        self.say("#", "# overhead: 8 B float32 sum allreduce in place, %d rounds of %d calls each way, "
                      "interleaved; slowest rank's mean per call, median of the rounds" % (self.a.rounds, k),
                 "# communicator: %s" % which)
        for w, _ in ways:
            self.say("#   %-24s %8.2f us   (rounds: %s)" % (w, med[w], " ".join("%.2f" % v for v in times[w])))
        self.say("#   %-24s %8.2f us   (of the rounds' minima: %.2f; goal <= %.0f us)%s" % (
            "dist - cffi", res["overhead_us"], res["overhead_min_us"], OVERHEAD_GOAL_US,
            "" if not wrong else "  WRONG RESULT"))
        if own:
            comm.free()

    def warm_up(self):
        """Calls that no table counts: a job's first collectives pay for
        setting up (xcomm maps the group's segment, pages fault in, the
        other ranks may still be starting), which moved the first row by
        10x in trial runs."""
        x = self.torch.zeros(2)
        for b in self.names:
            for _ in range(self.a.warmup_calls):
                self.dist.all_reduce(x, group=self.groups[b])
            self.dist.barrier(group=self.groups[b])

    def run(self):
        a = self.a
        self.warm_up()
        self.say("# torch_bench: torch %s, %d ranks, backends %s (default group: %s), pid %d on %s" % (
            self.torch.__version__, self.n, " ".join(self.names), self.names[0], os.getpid(), os.uname().nodename))
        self.table("all_reduce", [parse_size(s) for s in a.allreduce_sizes.split(",") if s], self.all_reduce_row)
        self.table("all_to_all_single", [parse_size(s) for s in a.alltoall_sizes.split(",") if s],
                   self.all_to_all_row)
        self.overhead()
        if a.groups:
            self.new_groups()
        wrong = sum(r["wrong"] for r in self.out["rows"]) + ((self.out["overhead"] or {}).get("wrong") or 0)
        self.say("# Out of bounds values : %d %s" % (wrong, "OK" if not wrong else "FAILED"), "#")
        if self.rank == 0 and a.out:
            with open(a.out, "w") as f:
                json.dump(self.out, f)
        self.dist.barrier(group=self.ctl)
        self.dist.destroy_process_group()
        return 1 if wrong else 0


# ---- driver ---------------------------------------------------------------------


def summary(runs, names, goals_met):
    """Markdown tables: the median over runs of every cell."""
    lines = []
    ref, other = ("xcomm", "gloo") if ("xcomm" in names and "gloo" in names) else (names[0], names[-1])
    by = {}
    for run in runs:
        n = run["nranks"]
        for r in run["rows"]:
            if r["op"] == "new_group":
                continue
            by.setdefault((r["op"], n, r["size"], r["backend"]), []).append(r["time_us"])
    keys = sorted({k[:3] for k in by}, key=lambda k: (k[0] != "all_reduce", k[1], k[2]))
    reps = max(len(v) for v in by.values()) if by else 0
    if ref == other:  # one backend: its times only
        lines.append("| op | ranks | size | %s µs |" % ref)
        lines.append("| --- | ---: | ---: | ---: |")
        for op, n, size in keys:
            lines.append("| %s | %d | %s | %.2f |" % (op, n, fmt_size(size), statistics.median(by[(op, n, size, ref)])))
    else:
        lines.append("| op | ranks | size | %s µs | %s µs | %s/%s | goal |" % (ref, other, other, ref))
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for op, n, size in keys if ref != other else ():
        a = by.get((op, n, size, ref))
        b = by.get((op, n, size, other))
        if not a or not b:
            continue
        ta, tb = statistics.median(a), statistics.median(b)
        ratio = tb / ta
        goal = GOALS.get((op, size))
        g = ""
        if goal is not None and ref == "xcomm":
            met = ratio >= goal
            goals_met.append(("%s %s, %d ranks: %.1fx (goal >= %gx)" % (op, fmt_size(size), n, ratio, goal), met))
            g = ">= %gx: %s" % (goal, "met" if met else "NOT met")
        lines.append("| %s | %d | %s | %.2f | %.2f | %.2f | %s |" % (op, n, fmt_size(size), ta, tb, ratio, g))
    lines.append("")
    lines.append("(median of %d runs; time: the slowest rank's mean per call)" % reps)

    ng = {}
    for run in runs:
        for r in run["new_group"]:
            ng.setdefault((run["nranks"], r["backend"]), []).append(r)
    if ng:
        lines += ["", "| new_group | ranks | total ms | constructor ms | first 8 B all_reduce ms |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        for (n, b) in sorted(ng, key=lambda k: (k[0], names.index(k[1]) if k[1] in names else 99)):
            v = ng[(n, b)]
            lines.append("| %s | %d | %.2f | %.2f | %.3f |" % (
                b, n, statistics.median(x["total_ms"] for x in v), statistics.median(x["ctor_ms"] for x in v),
                statistics.median(x["first_op_ms"] for x in v)))

    ov = {}
    for run in runs:
        if run["overhead"]:
            ov.setdefault(run["nranks"], []).append(run["overhead"])
    if ov:
        lines += ["", "| overhead, 8 B allreduce | ranks | dist.all_reduce µs | binding µs | cffi xc_allreduce µs | "
                      "dist − cffi µs | same, rounds' minima µs | goal |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for n in sorted(ov):
            v = ov[n]
            d, bi, c = (statistics.median(x[k] for x in v) for k in ("dist_us", "binding_us", "cffi_us"))
            over = statistics.median(x["overhead_us"] for x in v)
            over_min = statistics.median(x["overhead_min_us"] for x in v)
            met = over <= OVERHEAD_GOAL_US
            goals_met.append(("Python overhead per op, %d ranks: %.2f µs (goal <= %g µs)"
                              % (n, over, OVERHEAD_GOAL_US), met))
            lines.append("| xcomm | %d | %.2f | %.2f | %.2f | %.2f | %.2f | <= %g µs: %s |" % (
                n, d, bi, c, over, over_min, OVERHEAD_GOAL_US, "met" if met else "NOT met"))
        lines.append("")
        lines.append("(communicator: %s)" % next(iter(ov.values()))[0]["comm"])
    return lines


def driver(a):
    try:
        import torch
    except ImportError as e:
        print("torch_bench: cannot import torch (%s); on Debian run it with /usr/bin/python3 "
              "(python3-torch)" % e, file=sys.stderr)
        return 2
    names = []
    for b in a.backends.split(","):
        why = backends.load(b)
        if why is None:
            names.append(b)
        else:
            print("# torch_bench: backend %s left out: %s" % (b, why))
    if not names:
        print("torch_bench: no backend can be used", file=sys.stderr)
        return 2
    ranks = [int(x) for x in a.ranks.split(",") if x]
    try:
        load = os.getloadavg()
        print("# torch_bench: torch %s, backends %s, ranks %s, %d repeat(s); load average %.2f %.2f %.2f, %d CPUs" % (
            torch.__version__, ",".join(names), a.ranks, a.repeat, load[0], load[1], load[2], os.cpu_count()))
    except OSError:
        pass
    sys.stdout.flush()
    runs, rc = [], 0
    with tempfile.TemporaryDirectory(prefix="xc_torch_bench_") as tmp:
        for rep in range(a.repeat):
            for n in ranks:
                out = os.path.join(tmp, "run%d_n%d.json" % (rep, n))
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--out", out,
                       "--backends", ",".join(names)] + a.passthrough
                print("#\n# run %d of %d, %d ranks" % (rep + 1, a.repeat, n))
                sys.stdout.flush()
                job = backends.launch(n, cmd, timeout=a.job_timeout, rank0_plain=True)
                if job != 0:
                    print("# torch_bench: the %d-rank job exited with %d" % (n, job))
                    rc = 1
                if os.path.exists(out):
                    with open(out) as f:
                        runs.append(json.load(f))
    if not runs:
        return 1
    goals = []
    print("#\n# Summary\n#")
    for line in summary(runs, names, goals):
        print(line)
    if goals:
        print("")
        for text, met in goals:
            print("- %s: %s" % (text, "met" if met else "NOT met"))
    return rc


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="2,4", help="rank counts, comma-separated (default 2,4)")
    ap.add_argument("--backends", default="xcomm,gloo", help="the first makes the default group (default xcomm,gloo)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of every rank count; the summary takes the median")
    ap.add_argument("--job-timeout", type=float, default=900.0)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    w = ap.add_argument_group("passed to every rank")
    w.add_argument("--allreduce-sizes", default="8,4K,256K,4M,64M", help="bytes per rank (K, M: powers of 1024)")
    w.add_argument("--alltoall-sizes", default="64K,1M,16M", help="bytes of each rank's input")
    w.add_argument("--iters", type=int, default=0, help="timed calls per row (default: from --bytes-per-row)")
    w.add_argument("--bytes-per-row", type=int, default=1 << 30, help="iters = this / size, within min and max")
    w.add_argument("--min-iters", type=int, default=10)
    w.add_argument("--max-iters", type=int, default=2000)
    w.add_argument("--warmup-calls", type=int, default=1000,
                   help="8 B all_reduce calls on every backend before the tables")
    w.add_argument("--rounds", type=int, default=11, help="overhead: interleaved rounds")
    w.add_argument("--overhead-iters", type=int, default=5000, help="overhead: calls per round and way")
    w.add_argument("--groups", type=int, default=5, help="new_group: groups made per backend (0: none)")
    w.add_argument("--timeout", type=float, default=300.0, help="seconds for the process groups")
    a = ap.parse_args(argv)
    if a.worker:
        return Worker(a).run()
    a.passthrough = []
    for opt in ("allreduce_sizes", "alltoall_sizes", "iters", "bytes_per_row", "min_iters", "max_iters",
                "warmup_calls", "rounds",
                "overhead_iters", "groups", "timeout"):
        a.passthrough += ["--" + opt.replace("_", "-"), str(getattr(a, opt))]
    return driver(a)


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv[1:]))
