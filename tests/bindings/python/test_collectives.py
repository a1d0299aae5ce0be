"""Collectives on NumPy arrays of every dtype, checked against NumPy's own
reduction of every rank's seeded data (each rank regenerates the others')."""

import numpy as np
import pytest

import xcomm
from conftest import DTYPES, key_of, rank_data

OPS = ["sum", "prod", "min", "max", "avg", "band", "bor", "bxor"]
BITWISE = {"band", "bor", "bxor"}


def is_int(dtype):
    return np.dtype(dtype).kind in "iu"


NUMPY_OPS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum,
             "band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}


def reference(op, arrays):
    """What allreduce must give: integer ops wrap as the dtype does, integer
    avg truncates toward zero; floats are computed in float64."""
    dt = arrays[0].dtype
    n = len(arrays)
    if is_int(dt):
        stack = np.stack(arrays)
        if op == "avg":
            s = np.add.reduce(stack, axis=0, dtype=dt)  # wraps as the library does
            return np.array([abs(int(x)) // n * (1 if x >= 0 else -1) for x in s], dtype=dt)
        return NUMPY_OPS[op].reduce(stack, axis=0, dtype=dt)
    stack = np.stack([a.astype(np.float64) for a in arrays])
    if op == "avg":
        return np.add.reduce(stack, axis=0) / n
    return NUMPY_OPS[op].reduce(stack, axis=0)


def tolerance(dtype, n):
    """(rtol, atol) for a float result of n ranks' values in [-10, 10)."""
    name = np.dtype(dtype).name
    eps = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-14}[name]
    return 4 * eps, 10 * n * 2 * eps


def assert_reduced(result, expected, op, n):
    if is_int(result.dtype) or op in ("min", "max"):
        assert result.dtype == expected.dtype or not is_int(result.dtype), "integer results keep their dtype"
        np.testing.assert_array_equal(result.astype(expected.dtype), expected)
    else:
        rtol, atol = tolerance(result.dtype, n)
        np.testing.assert_allclose(result.astype(np.float64), expected, rtol=rtol, atol=atol)


def assert_same_everywhere(world, result):
    """Every rank got the bit-identical result."""
    raw = np.ascontiguousarray(result).view(np.uint8).reshape(-1)
    everyone = world.allgather(raw)
    for r in range(world.size):
        assert np.array_equal(everyone[r], raw), "rank %d's result differs from this rank's" % r


def test_barrier(world):
    for _ in range(3):
        world.barrier()


@pytest.mark.parametrize("count", [1, 1003])
@pytest.mark.parametrize("dtype,op", [(d, o) for d in DTYPES for o in OPS if is_int(d) or o not in BITWISE])
def test_allreduce(world, rank, size, dtype, op, count):
    key = key_of("allreduce", dtype, op, count)
    kind = "prod" if op == "prod" else "any"
    mine = rank_data(key, rank, count, dtype, kind)
    before = mine.copy()
    result = world.allreduce(mine, op=op)
    assert result is not mine and result.dtype == mine.dtype and result.shape == mine.shape
    assert np.array_equal(mine.view(np.uint8), before.view(np.uint8)), "allreduce changed its input"
    expected = reference(op, [rank_data(key, r, count, dtype, kind) for r in range(size)])
    assert_reduced(result, expected, op, size)
    assert_same_everywhere(world, result)


@pytest.mark.parametrize("how", ["out", "out=a", "IN_PLACE", "enum-op", "2d", "strided-input"])
def test_allreduce_variants(world, rank, size, how):
    key = key_of("allreduce-variants", how)
    data = [rank_data(key, r, 600, "int32") for r in range(size)]
    expected = reference("sum", data)
    a = data[rank].copy()
    if how == "out":
        out = np.full_like(a, 7)
        assert world.allreduce(a, out=out) is out
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(a, data[rank])
    elif how == "out=a":
        assert world.allreduce(a, "sum", out=a) is a
        np.testing.assert_array_equal(a, expected)
    elif how == "IN_PLACE":
        assert world.allreduce(xcomm.IN_PLACE, out=a) is a
        np.testing.assert_array_equal(a, expected)
    elif how == "enum-op":
        np.testing.assert_array_equal(world.allreduce(a, op=xcomm.Op.SUM), expected)
    elif how == "2d":
        result = world.allreduce(a.reshape(20, 30))
        assert result.shape == (20, 30)
        np.testing.assert_array_equal(result.reshape(-1), expected)
    elif how == "strided-input":  # inputs that are not contiguous are copied
        wide = np.zeros(1200, dtype=np.int32)
        wide[::2] = a
        np.testing.assert_array_equal(world.allreduce(wide[::2]), expected)


@pytest.mark.parametrize("dtype,op", [("float32", "sum"), ("uint64", "bxor"), ("float64", "max")])
def test_allreduce_large(world, rank, size, dtype, op):
    count = (1 << 20) + 3
    key = key_of("allreduce-large", dtype, op)
    result = world.allreduce(rank_data(key, rank, count, dtype), op=op)
    expected = reference(op, [rank_data(key, r, count, dtype) for r in range(size)])
    assert_reduced(result, expected, op, size)


def test_allreduce_empty(world):
    result = world.allreduce(np.zeros(0, dtype=np.float32))
    assert result.shape == (0,) and result.dtype == np.float32


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast(world, rank, size, dtype):
    for root in range(size):
        key = key_of("broadcast", dtype, root)
        a = rank_data(key, rank, 1003, dtype)
        assert world.broadcast(a, root=root) is a
        expected = rank_data(key, root, 1003, dtype)
        assert np.array_equal(a.view(np.uint8), expected.view(np.uint8))


def test_broadcast_bytes_like(world, rank, size):
    root = size - 1
    buf = bytearray(b"rank %d" % rank + bytes(100))
    world.broadcast(buf, root=root)
    assert buf == bytearray(b"rank %d" % root + bytes(100))
    big = np.full(3 << 20, rank, dtype=np.uint8)
    world.broadcast(memoryview(big), root=0)
    assert not big.any()


@pytest.mark.parametrize("count", [1, 1003])
@pytest.mark.parametrize("dtype", DTYPES)
def test_allgather(world, rank, size, dtype, count):
    key = key_of("allgather", dtype, count)
    result = world.allgather(rank_data(key, rank, count, dtype))
    assert result.shape == (size, count) and result.dtype == np.dtype(dtype)
    for r in range(size):
        assert np.array_equal(result[r].view(np.uint8), rank_data(key, r, count, dtype).view(np.uint8))


@pytest.mark.parametrize("how", ["out", "own-block", "IN_PLACE", "2d", "empty"])
def test_allgather_variants(world, rank, size, how):
    key = key_of("allgather-variants", how)
    data = [rank_data(key, r, 12, "float64") for r in range(size)]
    expected = np.stack(data)
    if how == "out":
        out = np.empty(size * 12)
        assert world.allgather(data[rank], out=out) is out
        np.testing.assert_array_equal(out.reshape(size, 12), expected)
    elif how == "own-block":  # the input is this rank's block of out: in place
        out = np.zeros((size, 12))
        out[rank] = data[rank]
        world.allgather(out[rank], out=out)
        np.testing.assert_array_equal(out, expected)
    elif how == "IN_PLACE":
        out = np.zeros((size, 12))
        out[rank] = data[rank]
        assert world.allgather(xcomm.IN_PLACE, out=out) is out
        np.testing.assert_array_equal(out, expected)
    elif how == "2d":
        result = world.allgather(data[rank].reshape(3, 4))
        assert result.shape == (size, 3, 4)
        np.testing.assert_array_equal(result.reshape(size, 12), expected)
    elif how == "empty":
        assert world.allgather(np.zeros(0, dtype=np.int8)).shape == (size, 0)
