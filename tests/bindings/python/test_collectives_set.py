"""The rest of the MPI collective set (reduce, gather(v), scatter(v),
allgatherv, reduce_scatter(v), alltoall(v), scan, exscan), checked against a
reference each rank computes from every rank's seeded data.

An op the library does not implement yet answers XC_ERR_UNSUPPORTED on every
rank alike; its test is then skipped (with the library's message), never
passed.
"""

import numpy as np
import pytest

import xcomm
from conftest import key_of, rank_data
from test_collectives import assert_reduced, reference

CASES = [("int32", "sum"), ("uint8", "bxor"), ("int64", "max"), ("float64", "sum"), ("float32", "min")]


def call(fn, *args, **kwargs):
    """fn(...), or a skip when the library answers "not built yet"."""
    try:
        return fn(*args, **kwargs)
    except xcomm.UnsupportedError as e:
        pytest.skip("not in the library yet: %s" % e.message)


def v_counts(size, salt):
    """Uneven counts per rank, some of them zero."""
    return [(r * 7 + salt) % 5 for r in range(size)]


def gappy_displs(counts):
    """Displacements with a gap of 3 elements before every block."""
    out, at = [], 0
    for c in counts:
        at += 3
        out.append(at)
        at += c
    return out


@pytest.mark.parametrize("dtype,op", CASES)
def test_reduce(world, rank, size, dtype, op):
    for root in range(size):
        key = key_of("reduce", dtype, op, root)
        mine = rank_data(key, rank, 301, dtype)
        result = call(world.reduce, mine, op=op, root=root)
        if rank == root:
            assert_reduced(result, reference(op, [rank_data(key, r, 301, dtype) for r in range(size)]), op, size)
        else:
            assert result is None
        np.testing.assert_array_equal(mine, rank_data(key, rank, 301, dtype))


def test_reduce_in_place(world, rank, size):
    key = key_of("reduce-in-place")
    a = rank_data(key, rank, 50, "int64")
    root = size - 1
    result = call(world.reduce, a, "sum", root, out=a if rank == root else None)
    if rank == root:
        assert result is a
        np.testing.assert_array_equal(a, reference("sum", [rank_data(key, r, 50, "int64") for r in range(size)]))


@pytest.mark.parametrize("dtype", ["int8", "float64"])
def test_gather(world, rank, size, dtype):
    for root in range(size):
        key = key_of("gather", dtype, root)
        result = call(world.gather, rank_data(key, rank, 33, dtype).reshape(3, 11), root=root)
        if rank != root:
            assert result is None
            continue
        assert result.shape == (size, 3, 11)
        for r in range(size):
            np.testing.assert_array_equal(result[r].reshape(-1), rank_data(key, r, 33, dtype))


def test_gather_in_place(world, rank, size):
    key = key_of("gather-in-place")
    data = [rank_data(key, r, 8, "uint32") for r in range(size)]
    out = np.zeros((size, 8), dtype=np.uint32)
    out[rank] = data[rank]
    if rank == 0:
        assert call(world.gather, xcomm.IN_PLACE, root=0, out=out) is out
        np.testing.assert_array_equal(out, np.stack(data))
    else:
        assert call(world.gather, data[rank], root=0) is None


@pytest.mark.parametrize("packed", [True, False])
def test_gatherv(world, rank, size, packed):
    counts = v_counts(size, 2)
    displs = None if packed else gappy_displs(counts)
    for root in range(size):
        key = key_of("gatherv", packed, root)
        data = [rank_data(key, r, counts[r], "int32") for r in range(size)]
        # counts are needed at the root only
        result = call(world.gatherv, data[rank], counts if rank == root else None,
                      displs if rank == root else None, root=root)
        if rank != root:
            assert result is None
            continue
        at = displs or list(np.cumsum([0] + counts[:-1]))
        for r in range(size):
            np.testing.assert_array_equal(result[at[r]:at[r] + counts[r]], data[r])


@pytest.mark.parametrize("packed", [True, False])
def test_allgatherv(world, rank, size, packed):
    counts = v_counts(size, 1)
    displs = None if packed else gappy_displs(counts)
    key = key_of("allgatherv", packed)
    data = [rank_data(key, r, counts[r], "float64") for r in range(size)]
    result = call(world.allgatherv, data[rank], counts, displs)
    at = displs or list(np.cumsum([0] + counts[:-1]))
    assert result.ndim == 1 and result.size == at[-1] + counts[-1]
    for r in range(size):
        np.testing.assert_array_equal(result[at[r]:at[r] + counts[r]], data[r])


def test_allgatherv_in_place(world, rank, size):
    counts = v_counts(size, 3)
    at = list(np.cumsum([0] + counts[:-1]))
    key = key_of("allgatherv-in-place")
    data = [rank_data(key, r, counts[r], "int32") for r in range(size)]
    out = np.zeros(sum(counts), dtype=np.int32)
    out[at[rank]:at[rank] + counts[rank]] = data[rank]
    assert call(world.allgatherv, xcomm.IN_PLACE, counts, out=out) is out
    np.testing.assert_array_equal(out, np.concatenate(data))


@pytest.mark.parametrize("dtype", ["uint64", "float32"])
def test_scatter(world, rank, size, dtype):
    for root in range(size):
        key = key_of("scatter", dtype, root)
        full = rank_data(key, root, size * 17, dtype).reshape(size, 17)
        if rank == root:
            result = call(world.scatter, full, root=root)
        else:
            result = call(world.scatter, None, root=root, count=17, dtype=dtype)
        assert result.shape == (17,)
        np.testing.assert_array_equal(result, full[rank])


def test_scatter_in_place_and_out(world, rank, size):
    key = key_of("scatter-in-place")
    full = rank_data(key, 0, size * 5, "int8").reshape(size, 5)
    if rank == 0:
        a = full.copy()
        block = call(world.scatter, a, root=0, out=xcomm.IN_PLACE)
        np.testing.assert_array_equal(block, full[0])
        np.testing.assert_array_equal(a, full)
    else:
        out = np.zeros(5, dtype=np.int8)
        assert call(world.scatter, root=0, out=out) is out
        np.testing.assert_array_equal(out, full[rank])


@pytest.mark.parametrize("packed", [True, False])
def test_scatterv(world, rank, size, packed):
    counts = v_counts(size, 4)
    displs = None if packed else gappy_displs(counts)
    at = displs or list(np.cumsum([0] + counts[:-1]))
    extent = at[-1] + counts[-1]
    for root in range(size):
        key = key_of("scatterv", packed, root)
        full = rank_data(key, root, extent, "int64")
        if rank == root:
            result = call(world.scatterv, full, counts, displs, root=root)
        else:
            result = call(world.scatterv, None, counts, root=root, dtype="int64")
        np.testing.assert_array_equal(result, full[at[rank]:at[rank] + counts[rank]])


@pytest.mark.parametrize("dtype,op", CASES)
def test_reduce_scatter(world, rank, size, dtype, op):
    key = key_of("reduce_scatter", dtype, op)
    k = 13
    result = call(world.reduce_scatter, rank_data(key, rank, size * k, dtype).reshape(size, k), op=op)
    assert result.shape == (k,)
    full = reference(op, [rank_data(key, r, size * k, dtype) for r in range(size)])
    assert_reduced(result, full[rank * k:(rank + 1) * k], op, size)


@pytest.mark.parametrize("dtype,op", CASES[:3])
def test_reduce_scatterv(world, rank, size, dtype, op):
    counts = v_counts(size, 0)
    at = list(np.cumsum([0] + counts[:-1]))
    key = key_of("reduce_scatterv", dtype, op)
    result = call(world.reduce_scatterv, rank_data(key, rank, sum(counts), dtype), counts, op=op)
    full = reference(op, [rank_data(key, r, sum(counts), dtype) for r in range(size)])
    assert_reduced(result, full[at[rank]:at[rank] + counts[rank]], op, size)


@pytest.mark.parametrize("in_place", [False, True])
def test_alltoall(world, rank, size, in_place):
    key = key_of("alltoall")
    data = [rank_data(key, r, size * 9, "uint32").reshape(size, 9) for r in range(size)]
    if in_place:
        a = data[rank].copy()
        assert call(world.alltoall, a, out=a) is a
        result = a
    else:
        result = call(world.alltoall, data[rank])
        np.testing.assert_array_equal(data[rank], rank_data(key, rank, size * 9, "uint32").reshape(size, 9))
    assert result.shape == (size, 9)
    for j in range(size):
        np.testing.assert_array_equal(result[j], data[j][rank])


def test_alltoallv(world, rank, size):
    def count(src, dst):  # elements rank src sends to rank dst
        return (src * 3 + dst * 2) % 4

    key = key_of("alltoallv")
    sendcounts = [count(rank, j) for j in range(size)]
    recvcounts = [count(j, rank) for j in range(size)]
    rdispls = gappy_displs(recvcounts)
    data = [rank_data(key, r, sum(count(r, j) for j in range(size)), "float64") for r in range(size)]
    result = call(world.alltoallv, data[rank], sendcounts, recvcounts, rdispls=rdispls)
    for j in range(size):
        start = sum(count(j, d) for d in range(rank))  # where rank j's block for me starts (packed)
        np.testing.assert_array_equal(result[rdispls[j]:rdispls[j] + recvcounts[j]],
                                      data[j][start:start + count(j, rank)])


@pytest.mark.parametrize("dtype,op", CASES)
def test_scan(world, rank, size, dtype, op):
    key = key_of("scan", dtype, op)
    data = [rank_data(key, r, 101, dtype) for r in range(size)]
    result = call(world.scan, data[rank], op=op)
    assert_reduced(result, reference(op, data[:rank + 1]), op, rank + 1)


@pytest.mark.parametrize("dtype,op", CASES)
def test_exscan(world, rank, size, dtype, op):
    key = key_of("exscan", dtype, op)
    data = [rank_data(key, r, 101, dtype) for r in range(size)]
    result = call(world.exscan, data[rank], op=op)
    if rank == 0:
        assert result is None
    else:
        assert_reduced(result, reference(op, data[:rank]), op, rank)


def test_exscan_leaves_rank_0_untouched(world, rank, size):
    out = np.full(4, 99, dtype=np.int32)
    assert call(world.exscan, np.full(4, rank + 1, dtype=np.int32), out=out) is out
    expected = np.full(4, 99) if rank == 0 else np.full(4, rank * (rank + 1) // 2)
    np.testing.assert_array_equal(out, expected)


def test_bad_arguments_raise_before_the_call(world, size):
    with pytest.raises(ValueError, match="ranks"):
        world.allgatherv(np.zeros(1), [1] * (size + 1))
    with pytest.raises(ValueError, match="negative"):
        world.reduce_scatterv(np.zeros(1), [-1] + [1] * (size - 1))
    with pytest.raises(ValueError, match="count= and dtype="):
        world.scatter(np.zeros(size), root=size)  # no rank is the root: every rank is "other"
    if size > 1:
        with pytest.raises(ValueError, match="multiple"):
            world.alltoall(np.zeros(size * 2 + 1))
