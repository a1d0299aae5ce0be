"""A rank killed in the middle of an op: the survivors get an exception
within the timeout, never a hang. The survivors start an all_reduce (rank 0
also a receive from the last rank); the last rank SIGKILLs itself while
they wait in it. The survivors then see every later op on the
world fail at once, while a group made before without the dead rank still
works, and they exit normally.

Run with tests/torch/launch.py -n N --may-die N-1 (xcrun stops a job when a
rank dies, so this test does not run under it).
"""

import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import xcomm.torch  # noqa: F401

TIMEOUT = 30  # seconds: the process group's deadline

dist.init_process_group("xcomm", timeout=timedelta(seconds=TIMEOUT))
rank, size = dist.get_rank(), dist.get_world_size()
victim = size - 1
assert size >= 3, "needs 3 ranks or more"
survivors = dist.new_group(list(range(size - 1)))

t = torch.ones(4)
dist.all_reduce(t)
assert t[0].item() == size

# The survivors enter an all_reduce (and rank 0 a receive from the victim);
# the victim dies while they are in it, before its own part arrives.
if rank == victim:
    time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGKILL)
big = torch.ones(1 << 20)
recv = None
if rank == 0:
    recv = dist.irecv(torch.empty(1 << 20), src=victim, tag=1)
work = dist.all_reduce(big, async_op=True)

failures = []
t0 = time.monotonic()
for name, w in (("the all_reduce the victim died in", work), ("a receive from the victim", recv)):
    if w is None:
        continue
    try:
        w.wait()
        failures.append("%s did not fail" % name)
    except RuntimeError as e:
        took = time.monotonic() - t0
        print("rank %d: %s failed after %.2f s: %s" % (rank, name, took, str(e).splitlines()[0][:160]), flush=True)
        if took > TIMEOUT:
            failures.append("%s failed only after %.1f s" % (name, took))
# later ops on the world fail at once
t1 = time.monotonic()
try:
    dist.all_reduce(torch.ones(2))
    failures.append("an all_reduce on the world after the death did not fail")
except RuntimeError:
    if time.monotonic() - t1 > TIMEOUT:
        failures.append("a later all_reduce took %.1f s to fail" % (time.monotonic() - t1))
# a group without the victim goes on
x = torch.full((2,), float(rank))
dist.all_reduce(x, group=survivors)
if x[0].item() != sum(range(size - 1)):
    failures.append("the survivors' group all_reduce gave %s" % x.tolist())
if failures:
    print("rank %d: FAIL: %s" % (rank, "; ".join(failures)), flush=True)
    sys.exit(1)
print("rank %d: ok, the victim's death was reported in %.2f s" % (rank, time.monotonic() - t0), flush=True)
