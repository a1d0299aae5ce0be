"""Every way to start the xcomm backend, one after the other in one
process: env:// (MASTER_ADDR/MASTER_PORT, as torchrun and xcrun set them),
tcp://, file://, an explicit TCPStore, an explicit FileStore (torch
itself cannot start a second process group on one store: its own
store-based barrier counts the first one's ranks), and new_group with backend="xcomm" under a gloo default group (the group then
meets through its own store). Each is checked with a collective, a group,
and destroy_process_group.

Started by tests/torch/launch.py, which sets LAUNCH_PORTS (two free ports)
and LAUNCH_TMPDIR (a directory every rank sees); under xcrun (no
LAUNCH_*), only env:// and the gloo case run.
"""

import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import xcomm.torch  # noqa: E402,F401

TIMEOUT = timedelta(seconds=60)
rank = int(os.environ["RANK"])
size = int(os.environ["WORLD_SIZE"])
ports = [int(p) for p in os.environ.get("LAUNCH_PORTS", "").split(",") if p]
tmpdir = os.environ.get("LAUNCH_TMPDIR")
done = []


def exercise(how):
    """A collective on the world and on a group, then destroy."""
    assert dist.get_backend() == "xcomm", dist.get_backend()
    assert (dist.get_rank(), dist.get_world_size()) == (rank, size)
    t = torch.full((3,), float(rank + 1))
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((3,), float(size * (size + 1) // 2))), (how, t)
    members = list(range(0, size, 2))
    g = dist.new_group(members)
    if rank in members:
        x = torch.tensor([rank], dtype=torch.int64)
        dist.all_reduce(x, group=g)
        assert x.item() == sum(members), (how, x)
    dist.barrier()
    dist.destroy_process_group()
    done.append(how)


dist.init_process_group("xcomm", timeout=TIMEOUT)
exercise("env://")
if ports and tmpdir:
    dist.init_process_group("xcomm", init_method="tcp://127.0.0.1:%d" % ports[0], rank=rank, world_size=size,
                            timeout=TIMEOUT)
    exercise("tcp://")
    dist.init_process_group("xcomm", init_method="file://" + os.path.join(tmpdir, "init_file"), rank=rank,
                            world_size=size, timeout=TIMEOUT)
    exercise("file://")
    store = dist.TCPStore("127.0.0.1", ports[1], size, rank == 0, timeout=TIMEOUT)
    dist.init_process_group("xcomm", store=store, rank=rank, world_size=size, timeout=TIMEOUT)
    exercise("TCPStore")
    del store
    fstore = dist.FileStore(os.path.join(tmpdir, "file_store"), size)
    dist.init_process_group("xcomm", store=fstore, rank=rank, world_size=size, timeout=TIMEOUT)
    exercise("FileStore")
# an xcomm group under a gloo world: it meets through the group's own store
dist.init_process_group("gloo", timeout=TIMEOUT)
members = list(range(size - 1, -1, -2))
g = dist.new_group(members, backend="xcomm")
if rank in members:
    x = torch.tensor([rank + 1.0])
    dist.all_reduce(x, group=g)
    assert x.item() == sum(m + 1 for m in members), x
    assert dist.get_backend(g) == "xcomm"
dist.barrier()
dist.destroy_process_group()
done.append("xcomm group under gloo")
if rank == 0:
    print("torch_init: %d ranks started by %s" % (size, ", ".join(done)), flush=True)
del common
