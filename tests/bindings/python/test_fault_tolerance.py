"""Fault tolerance without a failure (tests/fault kills ranks): agree,
failed_ranks, revoke, shrink of a revoked communicator, grow by 0, errors."""

import numpy as np
import pytest

import xcomm


def test_agree_and(world, rank, size):
    flag = world.agree(~(1 << rank) & 0xFFFF)  # each rank clears its own bit
    assert flag == (~((1 << size) - 1)) & 0xFFFF
    assert world.failed_ranks() == []


def test_revoke_then_shrink(world, rank, size):
    d = world.dup()
    d.revoke()
    d.revoke()  # again: nothing happens
    with pytest.raises(xcomm.RevokedError) as info:
        d.allreduce(np.ones(4))
    assert info.value.name == "XC_ERR_REVOKED" and "revoked" in info.value.message
    assert isinstance(d.async_error(), xcomm.RevokedError)
    assert d.agree(1) == 1  # agreements still work on a revoked communicator
    with d.shrink(name="shrunk") as child:
        assert (child.rank, child.size) == (rank, size)
        total = child.allreduce(np.array([rank + 1], dtype=np.int64))
        assert int(total[0]) == size * (size + 1) // 2
    d.free()  # does not synchronise once revoked


def test_grow_by_zero(world, rank, size):
    uid = xcomm.get_unique_id() if rank == 0 else None
    with world.grow(0, uid) as grown:
        assert (grown.rank, grown.size) == (rank, size)
        total = grown.allreduce(np.array([rank + 1], dtype=np.int32))
        assert int(total[0]) == size * (size + 1) // 2


def test_fault_tolerance_errors(world):
    d = world.dup()
    d.free()
    for call in (d.revoke, d.agree, d.failed_ranks, d.shrink, lambda: d.grow(0)):
        with pytest.raises(xcomm.Error) as info:
            call()
        assert info.value.code == xcomm.Result.ERR_INVALID_USAGE and "freed" in info.value.message
    with pytest.raises(xcomm.InvalidArgumentError, match="nnew"):
        world.grow(-1, xcomm.get_unique_id() if world.rank == 0 else None)
    assert xcomm.Result.ERR_REVOKED == -13
