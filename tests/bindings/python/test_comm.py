"""Communicators: queries, split, split_groups, dup isolation, unique id +
init_rank, context manager, abort and async errors, options, trace dumps."""

import json
import os
import shutil
import tempfile

import numpy as np
import pytest

import xcomm


def members(comm, world_rank):
    """The world ranks of comm's members, in comm's rank order."""
    return [int(x) for x in comm.allgather(np.array([world_rank], dtype=np.int32)).reshape(-1)]


def test_queries(world, rank, size):
    assert 0 <= rank < size
    if "XC_RANK" in os.environ:  # under xcrun
        assert (rank, size) == (int(os.environ["XC_RANK"]), int(os.environ["XC_SIZE"]))
        assert (world.local_rank, world.local_size) == (int(os.environ["XC_LOCAL_RANK"]),
                                                        int(os.environ["XC_LOCAL_SIZE"]))
    assert 0 <= world.local_rank < world.local_size <= size
    assert repr(world) == "<xcomm.Comm rank %d of %d>" % (rank, size)
    assert world.handle is not None and not world.freed


def test_version_and_constants():
    assert xcomm.get_version()[:2] == (0, 2)
    assert xcomm.ABI_VERSION == 1
    assert (xcomm.ANY_SOURCE, xcomm.ANY_TAG, xcomm.UNDEFINED) == (-1, -1, -32766)
    assert xcomm.strerror(xcomm.Result.ERR_TIMEOUT)
    for dt in xcomm.DType:
        expected = 2 if dt == xcomm.DType.BFLOAT16 else np.dtype(dt.name.lower()).itemsize
        assert xcomm.dtype_size(dt) == expected == xcomm.dtype_size(dt.name.lower())
    with pytest.raises(ValueError, match="unknown xcomm dtype"):
        xcomm.dtype_size(99)
    assert xcomm.dtype_size("float64") == 8 and xcomm.dtype_size(np.uint32) == 4


@pytest.mark.parametrize("key_order", ["parent", "reversed"])
def test_split_parity(world, rank, size, key_order):
    key = None if key_order == "parent" else size - rank
    half = world.split(rank % 2, key=key, name="parity", timeout_ms=30000)
    try:
        mine = [r for r in range(size) if r % 2 == rank % 2]
        if key_order == "reversed":
            mine.reverse()
        assert half.size == len(mine) and half.rank == mine.index(rank)
        assert members(half, rank) == mine
        total = half.allreduce(np.array([rank], dtype=np.int64))
        assert int(total[0]) == sum(mine)
    finally:
        half.free()


def test_split_undefined(world, rank, size):
    sub = world.split(xcomm.UNDEFINED if rank == 0 else 5)
    if rank == 0:
        assert sub is None
    else:
        assert sub.size == size - 1 and sub.rank == rank - 1
        assert members(sub, rank) == list(range(1, size))
        sub.free()


def test_split_groups(world, rank, size):
    """Two groups listed out of order (odd ranks reversed, then evens); with
    more than 2 ranks, the last rank is in no group and gets None."""
    pool = list(range(size - 1)) if size > 2 else list(range(size))
    groups = [sorted((r for r in pool if r % 2), reverse=True), [r for r in pool if r % 2 == 0]]
    groups = [g for g in groups if g]
    sub = world.split_groups(groups, name="groups")
    mine = next((g for g in groups if rank in g), None)
    if mine is None:
        assert sub is None
        return
    try:
        assert sub.size == len(mine) and sub.rank == mine.index(rank)
        assert members(sub, rank) == mine
        sub.barrier()
    finally:
        sub.free()


def test_split_groups_tuples_and_none(world, rank, size):
    assert world.split_groups([]) is None
    sub = world.split_groups([tuple(range(size))])
    assert (sub.rank, sub.size) == (rank, size)
    sub.free()


def test_create_group(world, rank, size):
    """Made by its members alone: the upper half, reversed; the lower half
    does not call it. A second live group over the same ranks needs another
    tag."""
    mine = list(range(size - 1, size // 2 - 1, -1))
    if rank in mine:
        sub = world.create_group(mine, tag=11, name="created")
        try:
            assert sub.size == len(mine) and sub.rank == mine.index(rank)
            assert members(sub, rank) == mine
            with pytest.raises(xcomm.InvalidUsageError, match="tag 11"):
                world.create_group(mine, tag=11)
        finally:
            sub.free()
    with pytest.raises(xcomm.InvalidArgumentError):
        world.create_group([], tag=12)
    world.barrier()


def test_dup_isolation(world, rank, size):
    """The same (source, tag) on a dup and its parent never match each other."""
    if size < 2:
        pytest.skip("needs at least 2 ranks")
    d = world.dup()
    try:
        assert (d.rank, d.size) == (rank, size)
        if rank == 0:
            r1 = d.isend(np.array([111], np.int32), 1, tag=9)
            r2 = world.isend(np.array([222], np.int32), 1, tag=9)
            xcomm.waitall([r1, r2])
        elif rank == 1:
            on_world = world.recv(None, 0, 9, count=1, dtype=np.int32)
            on_dup = d.recv(None, 0, 9, count=1, dtype=np.int32)
            assert (int(on_world.data[0]), int(on_dup.data[0])) == (222, 111)
        d.barrier()
    finally:
        d.free()


@pytest.mark.parametrize("mapping", ["same", "reversed"])
def test_unique_id_init_rank(world, rank, size, mapping):
    buf = bytearray(xcomm.get_unique_id()) if rank == 0 else bytearray(128)
    world.broadcast(buf, root=0)
    uid = xcomm.UniqueId(buf)
    assert len(uid) == 128 and repr(uid).startswith("xcomm.UniqueId(")
    new_rank = rank if mapping == "same" else size - 1 - rank
    with xcomm.init_rank(size, uid, new_rank, name="uid-" + mapping) as comm:
        assert (comm.rank, comm.size) == (new_rank, size)
        assert members(comm, rank) == [r if mapping == "same" else size - 1 - r for r in range(size)]
        total = comm.allreduce(np.array([new_rank + 1], dtype=np.int32))
        assert int(total[0]) == size * (size + 1) // 2
    assert comm.freed


def test_unique_id_checks():
    with pytest.raises(ValueError, match="128 bytes"):
        xcomm.UniqueId(b"short")


def test_context_manager(world, rank):
    with world.dup() as d:
        assert d.rank == rank
        d.barrier()
    assert d.freed and repr(d) == "<xcomm.Comm (freed)>"
    d.free()  # a second free does nothing
    with pytest.raises(xcomm.Error) as info:
        d.barrier()
    assert info.value.code == xcomm.Result.ERR_INVALID_USAGE and "freed" in info.value.message


def test_context_manager_exception_aborts(world):
    """Leaving the block by an exception aborts the communicator, so its free
    does not wait for ranks that might never come."""
    with pytest.raises(RuntimeError, match="boom"):
        with world.dup() as d:
            raise RuntimeError("boom")
    assert d.freed


def test_abort_and_async_error(world):
    d = world.dup()
    assert d.async_error() is None
    d.abort()  # local, never blocks
    err = d.async_error()
    assert isinstance(err, xcomm.AbortedError) and err.code == xcomm.Result.ERR_ABORTED
    with pytest.raises(xcomm.AbortedError) as info:
        d.allreduce(np.ones(4))
    assert info.value.name == "XC_ERR_ABORTED" and "aborted" in info.value.message
    d.free()


def test_config_options(world):
    cfg = xcomm.Config(timeout_ms=20000, name="cfg", thread_mode="multiple", debug_level=xcomm.DebugLevel.NONE)
    sub = world.split(0, config=cfg)
    sub.barrier()
    sub.free()
    sub = world.split(0, config=cfg, name="override", thread_mode=xcomm.ThreadMode.MULTIPLE,
                      device=xcomm.DEVICE_NONE)
    sub.free()
    with pytest.raises(ValueError, match="thread_mode"):
        world.split(0, thread_mode="sometimes")
    with pytest.raises(ValueError, match="debug_level"):
        world.split(0, debug_level=17)
    with pytest.raises(TypeError, match="unknown option"):
        world.split(0, colour=1)
    with pytest.raises(TypeError, match="xcomm.Config"):
        world.split(0, config={"name": "x"})
    with pytest.raises(ValueError, match="timeout_ms"):
        world.split(0, timeout_ms=-1)


def test_trace_dump(world, rank):
    d = world.dup()
    for _ in range(3):
        d.allreduce(np.ones(4, dtype=np.float32))
    tmp = tempfile.mkdtemp()
    try:
        path = os.path.join(tmp, "trace.jsonl")
        d.trace_dump(path)
        with open(path) as f:
            lines = [json.loads(line) for line in f]
        assert lines[0]["xcomm_trace"] == 1 and lines[0]["rank"] == rank and lines[0]["size"] == d.size
        entries = lines[1:]
        assert len(entries) == 3
        assert [e["op"] for e in entries] == ["allreduce"] * 3
        assert all(e["state"] == "done" and e["count"] == 4 and e["dtype"] == "float32" and e["bytes"] == 16
                   for e in entries)
        assert entries[0]["seq"] < entries[1]["seq"] < entries[2]["seq"]
        if not os.environ.get("XC_TRACE_DIR"):
            with pytest.raises(xcomm.Error) as info:
                d.trace_dump()
            assert "XC_TRACE_DIR" in info.value.message
    finally:
        shutil.rmtree(tmp)
    d.free()
