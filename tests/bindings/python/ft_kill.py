#!/usr/bin/env python3
"""Recovery from Python: the last rank SIGKILLs itself in the middle of
allreduces; the survivors catch xcomm.PeerFailedError or
xcomm.RevokedError, revoke, shrink, check the child with an allreduce and
an agreement, and check failed_ranks(). Run by tests/fault/ft.sh under
`xcrun --keep-going` (PROG DIR kill): each survivor writes DIR/rank<r>.ok,
the victim DIR/killed<r>.time, a failed check DIR/rank<r>.fail."""

import os
import signal
import sys
import time

import numpy as np

import xcomm


def write(directory, name, text):
    tmp = os.path.join(directory, "%s.tmp%d" % (name, os.getpid()))
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, os.path.join(directory, name))


def main():
    directory, mode = sys.argv[1], sys.argv[2]
    assert mode == "kill", mode
    world = xcomm.init(timeout_ms=20000)
    rank, size = world.rank, world.size
    victim = size - 1
    world.barrier()  # every rank is in before one dies
    try:
        err = None
        for it in range(1000000):
            if rank == victim and it == 7:
                write(directory, "killed%d.time" % rank, "%d\n" % time.monotonic_ns())
                os.kill(os.getpid(), signal.SIGKILL)
            out = world.allreduce(np.full(8, rank, dtype=np.float64))
            assert out[0] == size * (size - 1) / 2
        raise AssertionError("no error although rank %d died" % victim)
    except (xcomm.PeerFailedError, xcomm.RevokedError) as e:
        err = e
    world.revoke()
    child = world.shrink()
    assert (child.rank, child.size) == (rank, size - 1), (child.rank, child.size)
    total = child.allreduce(np.array([rank + 1], dtype=np.int64))
    assert int(total[0]) == (size - 1) * size // 2, total
    assert child.agree(1) == 1
    assert world.failed_ranks() == [victim], world.failed_ranks()
    assert isinstance(world.async_error(), xcomm.RevokedError)
    child.free()
    world.free()
    write(directory, "rank%d.ok" % rank, "%s: %s\nshrunk to %d ranks\n" % (type(err).__name__, err, size - 1))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 (the verdict file says what failed)
        import traceback
        rank = os.environ.get("XC_RANK", "x")
        write(sys.argv[1], "rank%s.fail" % rank, traceback.format_exc())
        raise
