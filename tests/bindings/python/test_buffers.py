"""Buffer kinds: the buffer protocol (bytes-like, memoryview, array.array),
DLPack producers (CPU), bfloat16 (with ml_dtypes), and results returned in
the caller's kind."""

import array

import numpy as np
import pytest

from conftest import key_of, rank_data


class DLPackOnly:
    """A CPU tensor seen only through DLPack (as a torch tensor is): no buffer
    protocol, no __array__."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, stream=None, **kwargs):
        return self._arr.__dlpack__(**kwargs) if kwargs else self._arr.__dlpack__()

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_dlpack_cpu_producer(world, rank, size):
    a = np.full(5, rank + 1, dtype=np.float32)
    result = world.allreduce(DLPackOnly(a))
    np.testing.assert_array_equal(result, np.full(5, size * (size + 1) / 2, dtype=np.float32))
    out = np.zeros(5, dtype=np.float32)
    world.allreduce(DLPackOnly(a), out=DLPackOnly(out))  # writes through the DLPack view
    np.testing.assert_array_equal(out, result)
    b = np.full(3, rank, dtype=np.int64)
    world.broadcast(DLPackOnly(b), root=size - 1)
    np.testing.assert_array_equal(b, size - 1)


def test_array_module_and_memoryview_formats(world, rank, size):
    ints = array.array("i", [rank] * 4)  # C int: int32
    world.allreduce(ints, out=ints)
    assert list(ints) == [sum(range(size))] * 4
    doubles = memoryview(bytearray(16)).cast("d")
    doubles[0], doubles[1] = rank, 1.0
    world.allreduce(doubles, out=doubles)
    assert (doubles[0], doubles[1]) == (sum(range(size)), float(size))
    gathered = world.allgather(bytes([rank]) * 3)  # bytes input: uint8
    assert gathered.dtype == np.uint8 and gathered.tolist() == [[r] * 3 for r in range(size)]


def test_inputs_are_not_modified(world, rank, size):
    """A read-only input is fine; only outputs must be writable."""
    a = rank_data(key_of("ro-input"), rank, 64, "int64")
    a.flags.writeable = False
    world.allreduce(a)
    world.allgather(a)


def test_bfloat16(world, rank, size):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.full(8, rank + 0.5, dtype=ml_dtypes.bfloat16)
    result = world.allreduce(a)
    assert result.dtype == a.dtype
    np.testing.assert_allclose(result.astype(np.float32), sum(r + 0.5 for r in range(size)), rtol=1e-2)


@pytest.fixture
def faketorch(monkeypatch):
    """A stand-in for torch (not installed here): CPU tensors seen only
    through DLPack, dtype names like "torch.bfloat16", view(dtype) and
    torch.from_dlpack: the calls xcomm makes on a real torch tensor."""
    import sys
    import types

    mod = types.ModuleType("faketorch")

    class Dtype:
        def __init__(self, name, np_dtype):
            self.name, self.np_dtype = name, np_dtype

        def __str__(self):
            return "torch." + self.name

    mod.float32, mod.int16 = Dtype("float32", np.float32), Dtype("int16", np.int16)
    mod.bfloat16 = Dtype("bfloat16", np.int16)  # bits held as int16

    class Tensor:
        def __init__(self, arr, dtype):
            self._arr, self.dtype = arr, dtype

        def __dlpack__(self, **kwargs):
            if self.dtype is mod.bfloat16:
                raise BufferError("NumPy has no bfloat16")
            return self._arr.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return (1, 0)

        def view(self, dtype):
            return Tensor(self._arr.view(dtype.np_dtype), dtype)

    Tensor.__module__ = "faketorch"
    mod.Tensor = Tensor
    mod.from_dlpack = lambda x: Tensor(np.from_dlpack(x), mod.float32 if np.from_dlpack(x).dtype == np.float32
                                       else mod.int16)
    monkeypatch.setitem(sys.modules, "faketorch", mod)
    return mod


def bf16_bits(values):
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16).view(np.int16)


def bf16_values(bits):
    return (np.asarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def test_torch_like_tensors(world, rank, size, faketorch):
    t = faketorch.Tensor(np.full(4, rank + 1, np.float32), faketorch.float32)
    result = world.allreduce(t)
    assert isinstance(result, faketorch.Tensor) and result.dtype is faketorch.float32
    np.testing.assert_array_equal(result._arr, size * (size + 1) / 2)
    bf = faketorch.Tensor(bf16_bits([rank + 0.5] * 3), faketorch.bfloat16)
    summed = world.allreduce(bf)
    assert isinstance(summed, faketorch.Tensor) and summed.dtype is faketorch.bfloat16
    np.testing.assert_allclose(bf16_values(summed._arr), sum(r + 0.5 for r in range(size)), rtol=1e-2)
    gathered = world.allgather(bf)
    assert gathered.dtype is faketorch.bfloat16 and gathered._arr.shape == (size, 3)
    np.testing.assert_array_equal(bf16_values(gathered._arr)[:, 0], [r + 0.5 for r in range(size)])
