"""Errors: library failures raise xcomm.Error with code, name and the
library's message; bad buffers are refused before the call (ValueError,
TypeError); device memory on a communicator without a device is refused
with UnsupportedError (tests/bindings/python/test_device.py tests it with one)."""

import pickle

import numpy as np
import pytest

import xcomm


def check_error(info, code, name, *words):
    err = info.value
    assert isinstance(err, xcomm.Error) and isinstance(err, Exception)
    assert err.code == code and err.name == name
    assert err.message, "the error has no message"
    for w in words:
        assert w in err.message, "%r not in %r" % (w, err.message)
    assert str(err) == "%s: %s" % (name, err.message)


def test_bad_rank(comm, size):
    with pytest.raises(xcomm.Error) as info:
        comm.send(b"x", size)
    check_error(info, -1, "XC_ERR_INVALID_ARGUMENT", "xc_send", "peer rank %d" % size, "out of range")
    assert isinstance(info.value, xcomm.InvalidArgumentError)
    with pytest.raises(xcomm.Error) as info:
        comm.recv(bytearray(1), source=size + 5)
    check_error(info, -1, "XC_ERR_INVALID_ARGUMENT", "xc_recv", str(size + 5))
    assert (info.value.status.source, info.value.status.bytes) == (xcomm.ANY_SOURCE, 0)  # no message matched
    with pytest.raises(xcomm.Error) as info:
        comm.isend(b"x", -7)
    check_error(info, -1, "XC_ERR_INVALID_ARGUMENT", "-7")
    with pytest.raises(xcomm.Error) as info:  # every rank fails alike: no one is left waiting
        comm.broadcast(bytearray(4), root=size)
    check_error(info, -1, "XC_ERR_INVALID_ARGUMENT", "root %d" % size)


def test_bad_tag(comm, rank, size):
    with pytest.raises(xcomm.InvalidArgumentError) as info:
        comm.send(b"x", (rank + 1) % size, tag=-5)
    check_error(info, -1, "XC_ERR_INVALID_ARGUMENT", "tag -5")


def test_bitwise_op_on_floats(comm):
    with pytest.raises(xcomm.Error) as info:
        comm.allreduce(np.ones(3), op="bxor")
    check_error(info, -1, "XC_ERR_INVALID_ARGUMENT", "bitwise")


def test_unknown_op(comm):
    with pytest.raises(ValueError, match="op must be one of"):
        comm.allreduce(np.ones(3), op="mean")


def test_non_contiguous_output(comm):
    a = np.ones(8, dtype=np.float32)
    wide = np.zeros(16, dtype=np.float32)
    for call in (lambda: comm.allreduce(a, out=wide[::2]),
                 lambda: comm.allgather(np.ones(2, np.float32), out=np.zeros((comm.size, 2, 2), np.float32)[:, :, 0]),
                 lambda: comm.broadcast(wide[::2]),
                 lambda: comm.recv(wide[::2], source=comm.rank)):
        with pytest.raises(ValueError, match="C-contiguous") as info:
            call()
        assert not isinstance(info.value, xcomm.Error)
    np.testing.assert_array_equal(wide, 0)


def test_read_only_output(comm):
    ro = np.zeros(8, dtype=np.float32)
    ro.flags.writeable = False
    for call in (lambda: comm.allreduce(np.ones(8, np.float32), out=ro),
                 lambda: comm.broadcast(ro),
                 lambda: comm.broadcast(b"immutable"),
                 lambda: comm.recv(bytes(4), source=comm.rank),
                 lambda: comm.irecv(memoryview(b"1234"), source=comm.rank)):
        with pytest.raises(ValueError, match="read-only"):
            call()


def test_output_shape_and_dtype(comm):
    with pytest.raises(ValueError, match="holds 4 elements but needs 8"):
        comm.allreduce(np.ones(8), out=np.empty(4))
    with pytest.raises(TypeError, match="dtype float32"):
        comm.allreduce(np.ones(8), out=np.empty(8, np.float32))
    with pytest.raises(ValueError, match="needs %d" % (3 * comm.size)):
        comm.allgather(np.ones(3), out=np.empty(3 * comm.size + 1))
    a = np.arange(10.0)
    with pytest.raises(ValueError, match="overlaps"):
        comm.allreduce(a[:8], out=a[2:])
    with pytest.raises(ValueError, match="needs out"):
        comm.allreduce(xcomm.IN_PLACE)


@pytest.mark.parametrize("dtype", ["complex64", "bool", "int16", "uint16", "float128", "U3", "object", ">i4"])
def test_unsupported_dtype(comm, dtype):
    try:
        a = np.zeros(4, dtype=dtype)
    except TypeError:
        pytest.skip("NumPy here has no %s" % dtype)
    with pytest.raises(TypeError, match="not supported by xcomm"):
        comm.allreduce(a)
    with pytest.raises(TypeError, match="not supported by xcomm"):
        comm.send(a, comm.rank)


def test_not_a_buffer(comm):
    with pytest.raises(TypeError, match="must be a buffer"):
        comm.allreduce([1, 2, 3])
    with pytest.raises(TypeError, match="must be a buffer"):
        comm.send("text", 0)


def test_recv_count_with_buffer(comm):
    with pytest.raises(TypeError, match="only for buf=None"):
        comm.recv(bytearray(4), count=4)


class FakeCudaArray:
    """Looks like a CuPy/Numba device array."""

    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0xDEAD0000, False), "version": 3}


class FakeDeviceDLPack:
    """A DLPack producer on a CUDA device (DLDeviceType 2)."""

    def __dlpack__(self, stream=None):
        raise AssertionError("must not be exported")

    def __dlpack_device__(self):
        return (2, 0)


@pytest.mark.parametrize("make", [FakeCudaArray, FakeDeviceDLPack])
def test_device_memory_unsupported(comm, make):
    assert comm.has_device in (True, False)
    if comm.has_device:
        pytest.skip("this process has a device (XC_DEVICE): the fake device pointers would be used")
    for call in (lambda: comm.allreduce(make()), lambda: comm.broadcast(make()),
                 lambda: comm.send(make(), comm.rank)):
        with pytest.raises(xcomm.Error) as info:
            call()
        check_error(info, -8, "XC_ERR_UNSUPPORTED", "device memory", "without a device")
        assert isinstance(info.value, xcomm.UnsupportedError)


def test_error_object():
    err = xcomm.TimeoutError(-5, "xc_recv: timed out")
    assert isinstance(err, TimeoutError) and isinstance(err, xcomm.Error)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is xcomm.TimeoutError and (back.code, back.message) == (-5, "xc_recv: timed out")
    assert xcomm.Error(-12).message == xcomm.strerror(-12) and xcomm.Error(-12).name == "XC_ERR_INTERNAL"
    assert xcomm.Error(-99).name == "XC_RESULT_-99"
    xcomm.get_version()
    assert xcomm.last_error() == ""  # the last call on this thread succeeded
