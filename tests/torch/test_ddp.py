"""DistributedDataParallel on backend xcomm against gloo.

    python3 tests/torch/test_ddp.py [-n 3] [--backends gloo,xcomm] [--steps 20]

The driver (this script without --worker) launches -n ranks per backend
(tests/torch/launch.py: torchrun's variables), one job after
the other, every job from the same seeds. Each rank builds the same MLP from
its own seed (DDP must broadcast rank 0's parameters), trains it for --steps
SGD steps with momentum on its own synthetic batches (inputs from its seed,
targets from a fixed random teacher, so the loss falls; float32, CPU, default DDP
settings: 1.3 MB of parameters, so two gradient buckets with DDP's 1 MiB first
bucket), and saves its parameters. Then the driver checks:

  1. within each backend, every rank holds bit-identical parameters (what DDP
     promises: every rank applies the same averaged gradients);
  2. each backend against the first (gloo): for every parameter tensor,
     max|p - p_gloo| <= rtol * max|p_gloo|, rtol 1e-6; the sums differ only in
     their rounding (the order in which the ranks' gradients are added);
  3. the first backend against training without DDP on the ranks' batches
     put together (one process, the mean over all samples is DDP's average of
     the ranks' means): rtol 1e-5, so a backend that summed instead of
     averaged, or skipped a bucket, fails even if the others agree with it.

(A stand-in backend that scaled every allreduce result by 1 + 1e-5 failed
check 2 with 5.6e-6; by 1 + 1e-6 it passed with 6.2e-7.)

Exit status: 0 pass, 1 fail, 77 (skipped) when torch cannot be imported. A
backend that cannot be loaded (xcomm: `import xcomm.torch` fails) fails the
test, unless --allow-missing names it: then it is left out with a message.
"""

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import backends  # noqa: E402

SEED = 20261126
IN, HIDDEN, OUT = 256, 1024, 64  # 256*1024 + 1024 + 1024*64 + 64 floats: 1.3 MB
BATCH = 16  # per rank
LR, MOMENTUM = 0.1, 0.9


def make_model(torch, seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(IN, HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, OUT))


def batch(torch, rank, step):
    """Rank's batch at step: the same on every run, whatever the backend."""
    g = torch.Generator().manual_seed(SEED * 1000003 + rank * 1009 + step)
    x = torch.randn(BATCH, IN, generator=g)
    return x, torch.tanh(x @ teacher(torch))  # something to learn: the loss falls


def teacher(torch):
    g = torch.Generator().manual_seed(SEED - 1)
    return torch.randn(IN, OUT, generator=g) / IN ** 0.5


def train(torch, model, steps, batches):
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    losses = []
    for step in range(steps):
        x, y = batches(step)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


def params_of(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def worker(args):
    import datetime

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    why = backends.load(args.backend)
    if why is not None:
        print("rank %s: backend %s: %s" % (os.environ.get("RANK"), args.backend, why), file=sys.stderr)
        return 1
    torch.set_num_threads(1)  # 3 ranks on 2 cores: intra-op threads only add contention
    dist.init_process_group(args.backend, timeout=datetime.timedelta(seconds=args.timeout))
    rank, size = dist.get_rank(), dist.get_world_size()
    model = make_model(torch, SEED + rank)  # rank 0's parameters win: DDP broadcasts them
    ddp = DDP(model)
    losses = train(torch, ddp, args.steps, lambda step: batch(torch, rank, step))
    torch.save({"params": params_of(model), "losses": losses, "size": size},
               os.path.join(args.out, "%s_rank%d.pt" % (args.backend, rank)))
    dist.barrier()
    dist.destroy_process_group()
    return 0


def rel_diff(torch, a, b):
    """max|a - b| / max|b| (0 when both are 0)."""
    scale = float(b.abs().max())
    diff = float((a - b).abs().max())
    return diff / scale if scale > 0 else diff


def compare(torch, what, got, want, rtol):
    """Print and count the parameter tensors of got beyond rtol of want."""
    bad = 0
    worst = 0.0
    for name, w in want.items():
        r = rel_diff(torch, got[name], w)
        worst = max(worst, r)
        if not r <= rtol:  # also catches NaN
            print("FAIL %s: %s differs by %.3g relative (limit %g)" % (what, name, r, rtol))
            bad += 1
    print("%s %s: largest relative difference %.3g (limit %g)" % ("ok  " if not bad else "FAIL", what, worst, rtol))
    return bad


def driver(args):
    try:
        import torch
    except ImportError as e:
        print("skipping: cannot import torch (%s); Debian: apt-get install python3-torch, "
              "and run with /usr/bin/python3" % e)
        return 77
    names = [b for b in args.backends.split(",") if b]
    allowed = set(b for b in args.allow_missing.split(",") if b)
    usable = []
    for b in names:
        why = backends.load(b)
        if why is None:
            usable.append(b)
        elif b in allowed:
            print("SKIPPED backend %s (--allow-missing): %s" % (b, why))
        else:
            print("FAIL backend %s cannot be used: %s" % (b, why))
            return 1
    if not usable:
        print("skipping: no backend usable")
        return 77
    print("torch %s, %d ranks, %d steps, backends %s" % (torch.__version__, args.nproc, args.steps, ",".join(usable)))

    with tempfile.TemporaryDirectory(prefix="xc_ddp_") as out:
        for b in usable:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--backend", b, "--out", out,
                   "--steps", str(args.steps), "--timeout", str(args.timeout)]
            rc = backends.launch(args.nproc, cmd, timeout=args.timeout + 60)
            if rc != 0:
                print("FAIL backend %s: the %d-rank job exited with %d" % (b, args.nproc, rc))
                return 1
        results = {b: [torch.load(os.path.join(out, "%s_rank%d.pt" % (b, r))) for r in range(args.nproc)]
                   for b in usable}

    bad = 0
    # 1. Every rank of a backend holds the same parameters, bit for bit.
    for b in usable:
        p0 = results[b][0]["params"]
        for r in range(1, args.nproc):
            for name, v in results[b][r]["params"].items():
                if not torch.equal(v, p0[name]):
                    print("FAIL %s: rank %d's %s differs from rank 0's by %.3g relative" % (
                        b, r, name, rel_diff(torch, v, p0[name])))
                    bad += 1
        print("%s %s: the %d ranks' parameters are identical; loss %.6f -> %.6f" % (
            "ok  " if not bad else "FAIL", b, args.nproc, results[b][0]["losses"][0], results[b][0]["losses"][-1]))
    # 2. Each backend against the first.
    ref_b = usable[0]
    for b in usable[1:]:
        bad += compare(torch, "%s against %s" % (b, ref_b), results[b][0]["params"], results[ref_b][0]["params"],
                       args.rtol)
    # 3. The first against one process on all the ranks' batches.
    torch.set_num_threads(1)
    model = make_model(torch, SEED + 0)

    def all_batches(step):
        xs, ys = zip(*(batch(torch, r, step) for r in range(args.nproc)))
        return torch.cat(xs), torch.cat(ys)

    train(torch, model, args.steps, all_batches)
    bad += compare(torch, "%s against training without DDP" % ref_b, results[ref_b][0]["params"],
                   params_of(model), args.rtol_single)
    if bad:
        print("FAIL: %d check(s) failed" % bad)
        return 1
    print("PASS")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--nproc", type=int, default=3)
    ap.add_argument("--backends", default="gloo,xcomm", help="comma-separated; the first is the reference")
    ap.add_argument("--allow-missing", default="", help="backends left out (not failed) when they cannot load")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--rtol-single", type=float, default=1e-5)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds for each job")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--backend", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    return worker(args) if args.worker else driver(args)


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv[1:]))
