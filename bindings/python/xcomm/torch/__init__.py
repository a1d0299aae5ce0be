"""xcomm as a torch.distributed backend.

    import torch.distributed as dist
    import xcomm.torch                      # registers the backend "xcomm"
    dist.init_process_group("xcomm")        # env://, tcp://, file:// or store=...
    dist.all_reduce(t)                      # host tensors; CUDA tensors on torch's current stream
    g = dist.new_group([0, 2])              # made by its members alone, no new connections

The world's communicator meets through the store torch gives the backend:
rank 0 makes an xcomm unique id (xc_get_unique_id) and puts it there, every
rank joins with xc_comm_init_rank. A group made by new_group is
xc_comm_create_group on the world's communicator: torch calls the backend
only on the group's members, with their group ranks, so each member puts its
world rank in the group's store and reads the others'. See docs/torch.md.

torch stays optional for the xcomm package: only this module imports it.
"""

from datetime import timedelta

try:
    import torch
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as _c10d
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError("xcomm.torch needs PyTorch with torch.distributed (%s)" % e) from e

import atexit

from .. import comm as _comm
from ..config import DEVICE_AUTO
from ._pg import ProcessGroupXcomm, release_all
from ._work import error_class

BACKEND = "xcomm"

__all__ = ["BACKEND", "ProcessGroupXcomm", "create_process_group", "error_class"]


def _timeout_ms(timeout):
    if isinstance(timeout, timedelta):
        ms = int(timeout.total_seconds() * 1000)
    else:
        ms = int(float(timeout) * 1000)
    return max(ms, 1)


def _device():
    """The CUDA device torch uses now, when CUDA is initialised; else
    xcomm's choice (the local rank modulo the devices), made at the first
    device op."""
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda.current_device()
    except Exception:  # noqa: BLE001 - a broken CUDA setup: host memory still works
        pass
    return DEVICE_AUTO


def _generation(store, size):
    """Which round of this store's groups this is: every rank of a group
    adds 1 to one counter, so the n-th rendezvous on a reused store (a second
    init_process_group on the same store) gets keys of its own."""
    return (store.add("xcomm/join", 1) - 1) // size


def _world_group():
    """The default group's ProcessGroupXcomm, or None (no default group yet,
    or one of another backend)."""
    if not dist.is_initialized():
        return None
    try:
        pg = _c10d._get_default_group()
    except RuntimeError:
        return None
    return pg if isinstance(pg, ProcessGroupXcomm) and not pg._freed else None


def _rendezvous(store, rank, size, timeout, name):
    """A communicator of size ranks met through store: rank 0's unique id."""
    gen = _generation(store, size)
    key = "xcomm/uid/%d" % gen
    if rank == 0:
        uid = _comm.get_unique_id()
        store.set(key, bytes(uid))
    else:
        uid = _comm.UniqueId(store.get(key))
    return _comm.init_rank(size, uid, rank, timeout_ms=_timeout_ms(timeout), name=name, device=_device())


def _create_group(world, store, rank, size, timeout):
    """The members' group on the world's communicator (xc_comm_create_group)."""
    gen = _generation(store, size)
    store.set("xcomm/%d/rank/%d" % (gen, rank), str(world._rank))
    ranks = [world._rank if r == rank else int(store.get("xcomm/%d/rank/%d" % (gen, r))) for r in range(size)]
    # The tag tells apart live groups over the same ranks: how many groups
    # over exactly these ranks were made before. torch runs new_group on
    # every rank in one order, and each such group is made by exactly these
    # ranks, so they all count alike.
    key = tuple(ranks)
    with world._lock:
        tag = world._group_seq.get(key, 0)
        world._group_seq[key] = tag + 1
    comm = world.comm.create_group(ranks, tag=tag % (1 << 30), timeout_ms=_timeout_ms(timeout),
                                   name="torch group of %d" % size)
    return comm, ranks


def create_process_group(store, rank, size, timeout):
    """The backend's creator (what dist.Backend.register_backend calls):
    the world during init_process_group, a group for new_group."""
    world = _world_group()
    if world is None:
        comm = _rendezvous(store, rank, size, timeout, "torch world" if not dist.is_initialized() else "torch group")
        return ProcessGroupXcomm(comm, rank, size, timeout, is_world=not dist.is_initialized())
    comm, _ = _create_group(world, store, rank, size, timeout)
    return ProcessGroupXcomm(comm, rank, size, timeout, is_world=False)


def _register():
    if BACKEND.upper() not in getattr(dist.Backend, "_plugins", {}):
        dist.Backend.register_backend(BACKEND, create_process_group)


_register()
atexit.register(release_all)
