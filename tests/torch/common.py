"""What the torch backend tests share: a tiny runner (every rank runs the
same checks in the same order; the first failure prints its traceback and
exits 1, which makes the launcher stop the job), seeded data every rank can
compute for every other rank, and comparisons.

Checks are grouped in few processes: importing torch costs a second or two
per process here.
"""

import os
import sys
import time
import traceback
import zlib

import torch

SEED = int(os.environ.get("XC_TEST_SEED", "0x5eed2026"), 0)

# Every dtype torch and xcomm share (bool moves as uint8), and two that only
# move (as bytes).
REDUCE_DTYPES = [torch.int8, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32,
                 torch.float64, torch.bool]
MOVE_ONLY_DTYPES = [torch.int16, torch.complex64]
FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)

_checks = []


def check(fn):
    """Register a check: fn(ctx) runs on every rank."""
    _checks.append(fn)
    return fn


class Ctx:
    def __init__(self, dist):
        self.dist = dist
        self.rank = dist.get_rank()
        self.size = dist.get_world_size()
        self.count = 0  # assertions passed

    def ok(self, cond, what):
        if not cond:
            raise AssertionError(what)
        self.count += 1

    def eq(self, got, want, what, rtol=0.0, atol=0.0):
        """Tensors equal (exactly, or within tolerances for floats)."""
        if got.shape != want.shape or got.dtype != want.dtype:
            raise AssertionError("%s: got %s %s, want %s %s" % (what, tuple(got.shape), got.dtype, tuple(want.shape),
                                                                want.dtype))
        if rtol or atol:
            same = torch.allclose(got.double(), want.double(), rtol=rtol, atol=atol)
        else:
            same = torch.equal(got, want)
        if not same:
            raise AssertionError("%s:\n got  %s\n want %s" % (what, got.flatten()[:16].tolist(),
                                                              want.flatten()[:16].tolist()))
        self.count += 1


def key(*parts):
    return zlib.crc32(repr(parts).encode())


def data(k, rank, shape, dtype, kind="sum"):
    """Rank's seeded tensor for check key k. kind: "sum" (small integers, so
    sums are exact in every dtype, float16 included, and fit int8),
    "prod" (-2, -1, 1, 2: products of 4 ranks fit), "bits" (full range)."""
    g = torch.Generator().manual_seed((SEED * 1000003 + k * 131 + rank) % (1 << 63))
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_complex:
        return torch.complex(torch.randint(-9, 10, shape, generator=g).float(),
                             torch.randint(-9, 10, shape, generator=g).float()).to(dtype)
    if kind == "prod":
        v = torch.tensor([-2, -1, 1, 2])[torch.randint(0, 4, shape, generator=g)]
        if dtype == torch.uint8:
            v = v.abs()
        return v.to(dtype)
    if kind == "bits" and not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        return torch.randint(info.min, info.max, shape, generator=g, dtype=torch.int64).to(dtype)
    lo = 0 if dtype == torch.uint8 else -30
    return torch.randint(lo, 31, shape, generator=g).to(dtype)


def run(name, dist, setup=None, teardown=None):
    """Run every registered check, then report. Returns the exit status."""
    ctx = Ctx(dist)
    if setup:
        setup(ctx)
    t0 = time.monotonic()
    for fn in _checks:
        try:
            fn(ctx)
        except BaseException:  # noqa: BLE001 - report, then stop the job
            sys.stdout.flush()
            sys.stderr.write("[rank %d] %s: check %s failed:\n%s" % (ctx.rank, name, fn.__name__,
                                                                      traceback.format_exc()))
            sys.stderr.flush()
            os._exit(1)
    if teardown:
        teardown(ctx)
    if ctx.rank == 0:
        print("%s: %d checks, %d assertions passed at rank 0 of %d (%.1f s)" % (
            name, len(_checks), ctx.count, ctx.size, time.monotonic() - t0), flush=True)
    return 0
