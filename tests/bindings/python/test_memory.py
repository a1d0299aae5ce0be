"""Comm.mem_alloc (xc_mem_alloc / xc_mem_free): 2 MiB aligned, zero-filled
memory used as a buffer by the collectives (results checked against NumPy's
reduction of every rank's seeded data), its lifetime (views keep it, free
twice and use after free raise xcomm.InvalidArgumentError, never crash)."""

import gc

import numpy as np
import pytest

import xcomm
from conftest import key_of, rank_data

ALIGN = 2 << 20  # 2 MiB


@pytest.mark.parametrize("nbytes", [1, 4096, ALIGN, 3 * ALIGN + 5])
def test_alloc_aligned_zeroed_writable(world, nbytes):
    mem = world.mem_alloc(nbytes)
    try:
        assert isinstance(mem, xcomm.Memory) and len(mem) == mem.nbytes == nbytes and not mem.freed
        assert mem.address != 0 and mem.address % ALIGN == 0, hex(mem.address)
        assert int(xcomm._ffi_obj.cast("uintptr_t", mem.ptr)) == mem.address
        a = mem.array()
        assert a.dtype == np.uint8 and a.shape == (nbytes,) and a.flags.writeable and a.flags.c_contiguous
        assert a.__array_interface__["data"][0] == mem.address
        assert not a.any(), "contents start at zero"
        pattern = (np.arange(nbytes) * 7 % 251).astype(np.uint8)
        a[:] = pattern
        np.testing.assert_array_equal(np.asarray(mem), pattern)  # a second view sees the same bytes
        v = mem.view()
        assert v.format == "B" and v.nbytes == nbytes and not v.readonly
        v[nbytes - 1] = 42
        assert a[-1] == 42
        del a, v
    finally:
        mem.free()
    assert mem.freed and "freed" in repr(mem)


def test_typed_views(world):
    with world.mem_alloc(48) as mem:
        f = mem.array(np.float64, (2, 3))
        assert f.shape == (2, 3) and f.dtype == np.float64
        f[:] = [[1, 2, 3], [4, 5, 6]]
        np.testing.assert_array_equal(mem.array(np.int32).view(np.float64), f.reshape(-1))
        with pytest.raises(ValueError):
            mem.array(np.dtype("V5"))  # 48 bytes are not whole 5-byte elements
        del f
    assert mem.freed


@pytest.mark.parametrize("dtype", ["float64", "int32", "float32"])
def test_allreduce_in_and_out_of_memory(world, rank, size, dtype):
    n = 1000 + ALIGN // 8  # past the algorithms' large-message switch too
    key = key_of("mem-allreduce", dtype)
    arrays = [rank_data(key, r, n, dtype) for r in range(size)]
    if np.dtype(dtype).kind == "f":  # small integers: the sum is exact in any order
        arrays = [np.round(a).astype(dtype) for a in arrays]
    expected = np.add.reduce(np.stack(arrays), axis=0, dtype=dtype)
    itemsize = np.dtype(dtype).itemsize
    with world.mem_alloc(n * itemsize) as src, world.mem_alloc(n * itemsize) as dst:
        s, d = src.array(dtype), dst.array(dtype)
        s[:] = arrays[rank]
        world.allreduce(s, out=d)  # out of place, both in xc_mem_alloc memory
        np.testing.assert_array_equal(d, expected)
        np.testing.assert_array_equal(s, arrays[rank])  # the input is untouched
        world.allreduce(s, out=s)  # in place
        np.testing.assert_array_equal(s, expected)
        del s, d


def test_memory_object_is_a_uint8_buffer(world, rank, size):
    n = 4097
    key = key_of("mem-uint8")
    arrays = [rank_data(key, r, n, "uint8") for r in range(size)]
    with world.mem_alloc(n) as mem:
        mem.array()[:] = arrays[rank]
        result = world.allreduce(mem, op="bxor")  # the Memory itself, as bytes
        assert isinstance(result, np.ndarray) and result.dtype == np.uint8
        np.testing.assert_array_equal(result, np.bitwise_xor.reduce(np.stack(arrays), axis=0))
        world.allreduce(mem, op="sum", out=mem)  # in place: out is the same memory
        np.testing.assert_array_equal(mem.array(), np.add.reduce(np.stack(arrays), axis=0, dtype=np.uint8))
        root = size - 1
        mem.array()[:] = arrays[rank]
        world.broadcast(mem, root=root)
        np.testing.assert_array_equal(mem.array(), arrays[root])
        gathered = world.allgather(mem)
        assert gathered.shape == (size, n)
        np.testing.assert_array_equal(gathered, np.stack([arrays[root]] * size))


def test_nonblocking_keeps_the_memory(world, rank, size):
    """free() while an op is in flight: the request holds the memory until
    it completes, and the result is right."""
    n = 10000
    mem = world.mem_alloc(n * 8)
    x = mem.array(np.int64)
    x[:] = np.arange(n) + rank
    req = world.iallreduce(x, out=x)
    del x  # only the request holds the memory now
    mem.free()
    assert mem.freed
    req.wait()
    np.testing.assert_array_equal(req.data, size * np.arange(n) + sum(range(size)))


def test_zero_bytes(world, size):
    mem = world.mem_alloc(0)
    assert mem.nbytes == 0 and mem.address == 0  # the header: bytes 0 gives NULL
    assert mem.array().size == 0 and mem.view().nbytes == 0
    assert world.allreduce(mem).size == 0
    mem.free()
    with pytest.raises(xcomm.InvalidArgumentError):
        mem.free()


def test_free_twice_and_use_after_free_raise(world):
    mem = world.mem_alloc(1024)
    mem.free()
    with pytest.raises(xcomm.InvalidArgumentError) as info:
        mem.free()
    err = info.value
    assert isinstance(err, xcomm.Error) and err.code == xcomm.Result.ERR_INVALID_ARGUMENT
    assert err.name == "XC_ERR_INVALID_ARGUMENT" and "already freed" in err.message
    for use in (mem.array, mem.view, lambda: mem.address, lambda: mem.ptr, lambda: np.asarray(mem),
                lambda: world.allreduce(mem), lambda: world.broadcast(mem, root=0)):
        with pytest.raises(xcomm.InvalidArgumentError):
            use()
    with world.mem_alloc(16) as m2:
        m2.free()  # freed inside the block: the end of the block does not free it again
    assert m2.freed


def test_views_outlive_free_without_crashing(world, rank, size):
    """A view made before free() keeps the memory mapped: reading and
    writing it after free() is safe; the memory goes back when it dies."""
    mem = world.mem_alloc(ALIGN)
    a = mem.array(np.float32)
    v = mem.view()
    a[:] = rank + 0.5
    mem.free()
    assert mem.freed
    assert a.sum() == (rank + 0.5) * a.size  # still mapped
    v[0:4] = bytes(4)
    assert a[0] == 0.0
    np.testing.assert_array_equal(world.allreduce(a[1:9], op="max"), np.full(8, size - 0.5, np.float32))
    del a, v
    gc.collect()


def test_many_allocations_are_given_back(world):
    """Allocate and free repeatedly (also through garbage collection without
    free()): nothing leaks into an error."""
    for i in range(64):
        mem = world.mem_alloc(ALIGN + i)
        mem.array()[-1] = i
        if i % 2:
            mem.free()
        del mem
    gc.collect()


def test_bad_sizes(world):
    with pytest.raises(ValueError):
        world.mem_alloc(-1)
    with pytest.raises(TypeError):
        world.mem_alloc(1.5)
    # More than any machine has, and sizes whose rounding up to 2 MiB overflows.
    for nbytes in (1 << 62, (1 << 64) - 1, (1 << 64) - ALIGN + 1):
        with pytest.raises(xcomm.Error) as info:
            world.mem_alloc(nbytes)
        assert info.value.code in (xcomm.Result.ERR_NO_MEMORY, xcomm.Result.ERR_INVALID_ARGUMENT), info.value
    with pytest.raises(OverflowError):  # does not fit size_t: cffi refuses it
        world.mem_alloc(1 << 64)


def test_freed_comm(world):
    c = world.dup()
    mem = c.mem_alloc(100)
    c.free()
    with pytest.raises(xcomm.Error):
        c.mem_alloc(100)
    mem.array()[:] = 1  # the memory outlives its communicator
    mem.free()
