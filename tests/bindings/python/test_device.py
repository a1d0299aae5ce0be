"""Device memory through the Python bindings: xcomm.DeviceArray (memory from
xc_mem_alloc_device, exported through __cuda_array_interface__ and DLPack),
streams (xcomm.Stream, Comm.bind_stream, stream=), registered buffers, and
device arrays of other libraries (a __cuda_array_interface__-only object, a
DLPack-only producer on the device).

Run by meson as python_device_n{1,2,3} (suites bindings and device) with
XC_DEVICE=emulated, where "device memory" is host memory the library tags as
device: the tests fill and check it with xcomm.testing.host_view. With
XC_DEVICE=cuda on a GPU they read and write it with CuPy instead (skipped
without CuPy). In the other binding runs (no device) every test here is
skipped; with XC_DEVICE=emulated a communicator without a device fails.

Device ops are stream-ordered: results are read after the stream is
synchronised (the communicator's default stream is the one
Stream.wrap(comm, None) names), or after a Request of a later op on the same
stream completed.
"""

import os

import numpy as np
import pytest

import xcomm
from conftest import key_of, rank_data

DEVICE = os.environ.get("XC_DEVICE", "").strip().lower()


@pytest.fixture(scope="module", autouse=True)
def device_present(world):
    if not world.has_device:
        if DEVICE == "emulated":
            pytest.fail("XC_DEVICE=emulated, yet the communicator has no device: %s" % world._device_probe()[1])
        pytest.skip("no device in this process (run with XC_DEVICE=emulated)")
    if DEVICE != "emulated":
        pytest.importorskip("cupy", reason="reading device memory on a real device needs CuPy")


def to_device(comm, host):
    """A new DeviceArray holding a copy of host."""
    host = np.ascontiguousarray(host)
    if DEVICE == "emulated":
        return xcomm.testing.from_host(comm, host)
    import cupy
    out = xcomm.DeviceArray.empty(comm, host.shape, host.dtype)
    cupy.asarray(out).set(host)
    return out


def to_host(dev):
    """A NumPy copy of a device array (after its stream was synchronised)."""
    if DEVICE == "emulated":
        return xcomm.testing.to_host(dev)
    import cupy
    return cupy.asnumpy(cupy.asarray(dev))


def data(name, rank, n=37, dtype="float64"):
    """Seeded integer-valued data: sums are exact in any order."""
    a = rank_data(key_of("device", name), rank, n, "int32") % 1000
    return a.astype(dtype)


def everyone(name, size, n=37, dtype="float64"):
    return [data(name, r, n, dtype) for r in range(size)]


class ForeignCAI:
    """A device array of another library seen only through
    __cuda_array_interface__ (as CuPy or Numba arrays are)."""

    def __init__(self, dev):
        self._dev = dev
        self.__cuda_array_interface__ = dict(dev.__cuda_array_interface__)


class ForeignDLPack:
    """A device tensor seen only through DLPack (as a JAX GPU array is)."""

    def __init__(self, dev):
        self._dev = dev
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self._dev.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self._dev.__dlpack_device__()


# ---- memory and arrays ----------------------------------------------------------------------


@pytest.mark.parametrize("nbytes", [1, 4096, (1 << 20) + 3])
def test_mem_alloc_device(world, nbytes):
    mem = world.mem_alloc_device(nbytes)
    assert isinstance(mem, xcomm.DeviceMemory) and mem.nbytes == len(mem) == nbytes and not mem.freed
    assert mem.address != 0 and int(xcomm._ffi_obj.cast("uintptr_t", mem.ptr)) == mem.address
    cai = mem.__cuda_array_interface__
    assert cai["shape"] == (nbytes,) and cai["typestr"] == "|u1" and cai["data"] == (mem.address, False)
    assert cai["version"] == 3 and cai["stream"] is None
    b = mem.array()
    assert isinstance(b, xcomm.DeviceArray) and b.address == mem.address and b.nbytes == nbytes
    mem.free()
    assert mem.freed and "freed" in repr(mem)
    with pytest.raises(xcomm.InvalidArgumentError):
        mem.free()
    del b  # the memory goes back here


def test_mem_alloc_device_zero_bytes(world):
    mem = world.mem_alloc_device(0)
    assert mem.nbytes == 0 and mem.address == 0
    mem.free()
    with pytest.raises(ValueError):
        world.mem_alloc_device(-1)


def test_device_array_views(world):
    a = xcomm.DeviceArray.empty(world, (3, 4), np.float32)
    cai = a.__cuda_array_interface__
    assert cai["shape"] == (3, 4) and cai["typestr"] == "<f4" and cai["strides"] is None
    assert cai["version"] == 3 and cai["stream"] is None and cai["data"] == (a.address, False)
    assert (a.size, a.nbytes, a.ndim, len(a)) == (12, 48, 2, 3)
    assert a.xc_dtype == xcomm.DType.FLOAT32
    assert a[1].shape == (4,) and a[1].address == a.address + 16
    assert a[-1].address == a.address + 32 and a[1:3].shape == (2, 4)
    assert a.reshape(-1).shape == (12,) and a.reshape(2, -1).shape == (2, 6) and a.ravel().shape == (12,)
    assert a.view(np.int32).dtype == np.int32 and a.view(np.uint8).shape == (3, 16)
    with pytest.raises(ValueError):
        a.reshape(5, -1)
    with pytest.raises(IndexError):
        a[3]
    with pytest.raises(IndexError):
        a[::2]
    assert a.__dlpack_device__() == (2, a.device_id)
    host = to_host(a)
    assert host.shape == (3, 4) and host.dtype == np.float32


def test_host_view_roundtrip(world):
    values = np.arange(10, dtype=np.int64) * 3
    dev = to_device(world, values)
    np.testing.assert_array_equal(to_host(dev), values)
    if DEVICE == "emulated":
        view = xcomm.testing.host_view(dev)
        view[2] = -1
        assert to_host(dev)[2] == -1


# ---- streams ------------------------------------------------------------------------------------


def test_stream_lifecycle(world):
    s = xcomm.Stream(world)
    assert not s.destroyed and s.native is None and s.handle != xcomm._ffi_obj.NULL
    s.synchronize()  # nothing enqueued: returns at once
    s.destroy()
    assert s.destroyed and "destroyed" in repr(s)
    s.destroy()  # a second call does nothing
    with pytest.raises(xcomm.InvalidUsageError):
        s.synchronize()
    with world.stream() as t:
        assert isinstance(t, xcomm.Stream)
    assert t.destroyed


def test_stream_wrap_handles(world):
    """Stream.wrap takes an int, None, or another library's stream object."""

    class TorchLike:
        cuda_stream = 0x1000

    class CupyLike:
        ptr = 0x2000

    class NumbaLike:
        import ctypes
        handle = ctypes.c_void_p(0x3000)

    class CudaPython:
        def __cuda_stream__(self):
            return (0, 0x4000)

    for obj, native in [(0x5000, 0x5000), (None, 0), (TorchLike(), 0x1000), (CupyLike(), 0x2000),
                        (NumbaLike(), 0x3000), (CudaPython(), 0x4000)]:
        if DEVICE != "emulated" and native not in (0,):
            continue  # on a real device only real streams may be wrapped
        with xcomm.Stream.wrap(world, obj) as s:
            assert s.native == native and "wrapping" in repr(s)
            s.synchronize()
    with pytest.raises(TypeError):
        xcomm.Stream.wrap(world, "stream")


def test_bind_stream(world):
    comm = world.dup()
    try:
        s = xcomm.Stream(comm)
        assert comm.bound_stream() is None
        comm.bind_stream(s)
        assert comm.bound_stream() is s and comm.bound_stream(xcomm.BIND_COLLECTIVES) is s
        comm.bind_stream(s, target=(comm.rank + 1) % comm.size)
        assert comm.bound_stream((comm.rank + 1) % comm.size) is s
        comm.bind_stream(None)
        assert comm.bound_stream() is None
        s.destroy()  # unbinds it everywhere
        assert comm.bound_stream((comm.rank + 1) % comm.size) is None
        with pytest.raises(TypeError):
            comm.bind_stream(object())
        with pytest.raises(xcomm.InvalidUsageError):
            comm.bind_stream(s)  # destroyed
    finally:
        comm.free()


# ---- collectives --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64", "uint8"])
def test_allreduce_stream_kw(comm, rank, size, dtype):
    arrays = everyone("allreduce-" + dtype, size, dtype=dtype)
    expected = np.add.reduce(np.stack(arrays), axis=0, dtype=dtype)
    x = to_device(comm, arrays[rank])
    with xcomm.Stream(comm) as s:
        out = comm.allreduce(x, stream=s)
        assert isinstance(out, xcomm.DeviceArray) and out.shape == x.shape and out.dtype == x.dtype
        comm.allreduce(x, out=x, stream=s)  # in place, after the first on the same stream
        s.synchronize()
        np.testing.assert_array_equal(to_host(out), expected)
        np.testing.assert_array_equal(to_host(x), expected)


def test_allreduce_bound_stream(comm, rank, size):
    arrays = everyone("allreduce-bound", size)
    x = to_device(comm, arrays[rank])
    s = xcomm.Stream(comm)
    comm.bind_stream(s)
    out = comm.allreduce(x, op="max")
    s.synchronize()
    np.testing.assert_array_equal(to_host(out), np.maximum.reduce(arrays))
    comm.bind_stream(None)
    s.destroy()


def test_allreduce_default_stream(comm, rank, size):
    """No stream anywhere: the communicator's default stream. A Request
    completes when its op has run on the device, and the default stream runs
    its ops in order, so once the later iallreduce is done the blocking one
    is too; Stream.wrap(comm, None) names that stream."""
    arrays = everyone("allreduce-default", size)
    x = to_device(comm, arrays[rank])
    y = xcomm.DeviceArray.empty(comm, x.shape, x.dtype)
    comm.allreduce(x, out=y)
    req = comm.iallreduce(x, op="min")
    assert isinstance(req.data, xcomm.DeviceArray)
    req.wait()
    np.testing.assert_array_equal(to_host(y), np.add.reduce(arrays))
    np.testing.assert_array_equal(to_host(req.data), np.minimum.reduce(arrays))
    z = comm.allreduce(x, op="max")
    with xcomm.Stream.wrap(comm, None) as default:
        default.synchronize()
    np.testing.assert_array_equal(to_host(z), np.maximum.reduce(arrays))


def test_iallreduce_with_stream(comm, rank, size):
    arrays = everyone("iallreduce", size)
    x = to_device(comm, arrays[rank])
    with xcomm.Stream(comm) as s:
        req = comm.iallreduce(x, stream=s)
        req.wait()
        np.testing.assert_array_equal(to_host(req.data), np.add.reduce(arrays))


@pytest.mark.parametrize("with_stream", [True, False])
def test_broadcast(comm, rank, size, with_stream):
    root = size - 1
    values = data("broadcast", root, 50, "int64")
    buf = to_device(comm, values if rank == root else np.zeros(50, np.int64))
    with xcomm.Stream(comm) as s:
        if with_stream:
            result = comm.broadcast(buf, root=root, stream=s)
            s.synchronize()
        else:
            result = comm.broadcast(buf, root=root)
            with xcomm.Stream.wrap(comm, None) as default:  # the communicator's default stream
                default.synchronize()
        assert result is buf
        np.testing.assert_array_equal(to_host(buf), values)


def test_allgather_returns_device_array(comm, rank, size):
    arrays = everyone("allgather", size, 9, "int32")
    x = to_device(comm, arrays[rank])
    with xcomm.Stream(comm) as s:
        out = comm.allgather(x, stream=s)
        assert isinstance(out, xcomm.DeviceArray) and out.shape == (size, 9)
        s.synchronize()
        np.testing.assert_array_equal(to_host(out), np.stack(arrays))


def test_reduce_scatter_and_alltoall(comm, rank, size):
    arrays = everyone("rs", size, 4 * size, "float32")
    x = to_device(comm, arrays[rank])
    with xcomm.Stream(comm) as s:
        mine = comm.reduce_scatter(x, stream=s)
        swapped = comm.alltoall(x, stream=s)
        s.synchronize()
        total = np.add.reduce(np.stack(arrays))
        np.testing.assert_array_equal(to_host(mine), total[rank * 4:(rank + 1) * 4])
        expected = np.concatenate([arrays[j][rank * 4:(rank + 1) * 4] for j in range(size)])
        np.testing.assert_array_equal(to_host(swapped), expected)


def test_foreign_cai_and_dlpack_arrays(comm, rank, size):
    arrays = everyone("foreign", size, 16, "float32")
    expected = np.add.reduce(np.stack(arrays))
    with xcomm.Stream(comm) as s:
        cai_in = ForeignCAI(to_device(comm, arrays[rank]))
        out = comm.allreduce(cai_in, stream=s)
        assert isinstance(out, xcomm.DeviceArray)
        dl_in = ForeignDLPack(to_device(comm, arrays[rank]))
        dl_out_dev = xcomm.DeviceArray.empty(comm, (16,), np.float32)
        comm.allreduce(dl_in, out=ForeignCAI(dl_out_dev), stream=s)
        s.synchronize()
        np.testing.assert_array_equal(to_host(out), expected)
        np.testing.assert_array_equal(to_host(dl_out_dev), expected)
        assert dl_in.streams == [None]  # a stream xcomm made: the producer assumes the legacy default


def test_device_results_for_non_root_scatter(comm, rank, size):
    root = 0
    src = to_device(comm, np.arange(3 * size, dtype=np.int64)) if rank == root else None
    with xcomm.Stream(comm) as s:
        if rank == root:
            part = comm.scatter(src, root=root, stream=s)
        else:
            part = comm.scatter(root=root, count=3, dtype=np.int64, device=True, stream=s)
        assert isinstance(part, xcomm.DeviceArray)
        s.synchronize()
        np.testing.assert_array_equal(to_host(part), np.arange(3 * rank, 3 * rank + 3))


# ---- point to point -------------------------------------------------------------------------------


@pytest.mark.parametrize("with_stream", [True, False])
def test_send_recv_ring(comm, rank, size, with_stream):
    """Each rank sends to the right and receives from the left, in one group
    (a device send completes when its receiver read it)."""
    right, left = (rank + 1) % size, (rank - 1) % size
    mine = data("ring", rank, 23)
    src = to_device(comm, mine)
    dst = xcomm.DeviceArray.empty(comm, (23,), np.float64)
    with xcomm.Stream(comm) as s:
        kw = {"stream": s} if with_stream else {}
        with xcomm.group():
            comm.send(src, right, tag=5, **kw)
            status = comm.recv(dst, left, tag=5, **kw)
        if with_stream:
            s.synchronize()
        else:
            with xcomm.Stream.wrap(comm, None) as default:  # the communicator's default stream
                default.synchronize()
        assert status.data is dst
        np.testing.assert_array_equal(to_host(dst), data("ring", left, 23))


def test_send_recv_one_way_bound_per_peer(comm, rank, size, needs_peers):
    """Rank 0 sends to rank 1 on a stream bound to that peer; nobody else talks."""
    s = xcomm.Stream(comm)
    values = data("one-way", 0, 11, "int32")
    if rank == 0:
        comm.bind_stream(s, target=1)
        src = to_device(comm, values)  # kept until the stream ran the send: it reads src then
        comm.send(src, 1, tag=3)
        s.synchronize()
    elif rank == 1:
        comm.bind_stream(s, target=0)
        st = comm.recv(source=0, tag=3, count=11, dtype=np.int32, device=True)
        assert isinstance(st.data, xcomm.DeviceArray)
        s.synchronize()
        np.testing.assert_array_equal(to_host(st.data), values)
    s.destroy()


def test_isend_irecv_requests(comm, rank, size):
    right, left = (rank + 1) % size, (rank - 1) % size
    src = to_device(comm, data("irecv", rank, 7))
    with xcomm.Stream(comm) as s:
        with xcomm.group():
            rreq = comm.irecv(source=left, tag=9, count=7, dtype=np.float64, device=True, stream=s)
            sreq = comm.isend(src, right, tag=9, stream=s)
        xcomm.waitall([rreq, sreq])
        assert rreq.status.source == left and rreq.status.tag == 9 and rreq.status.bytes == 7 * 8
        np.testing.assert_array_equal(to_host(rreq.data), data("irecv", left, 7))


def test_stream_needs_a_source(comm):
    with xcomm.Stream(comm) as s:
        with pytest.raises(ValueError, match="ANY_SOURCE"):
            comm.recv(xcomm.DeviceArray.empty(comm, (1,), np.float64), stream=s)


# ---- registration, errors ------------------------------------------------------------------------------


def test_register_buffer(comm, rank, size):
    arrays = everyone("registered", size, 64)
    x = to_device(comm, arrays[rank])
    with comm.register_buffer(x) as reg:
        assert isinstance(reg, xcomm.RegisteredBuffer) and reg.registered
        assert reg.address == x.address and reg.nbytes == x.nbytes and reg.buffer is x
        with xcomm.Stream(comm) as s:
            for _ in range(3):  # the same buffer again and again
                comm.broadcast(x, root=0, stream=s)
            s.synchronize()
        np.testing.assert_array_equal(to_host(x), arrays[0])
    assert not reg.registered
    reg.deregister()  # a second call does nothing
    with pytest.raises(xcomm.InvalidArgumentError):
        comm.register_buffer(np.zeros(4))  # host memory


def test_mixed_host_and_device_is_unsupported(comm):
    dev = xcomm.DeviceArray.empty(comm, (4,), np.float32)
    with pytest.raises(xcomm.UnsupportedError):
        comm.allreduce(dev, out=np.zeros(4, np.float32))


def test_stream_argument_checks(comm):
    host = np.ones(3)
    comm.allreduce(host, stream=None)
    with xcomm.Stream(comm) as s:
        np.testing.assert_array_equal(comm.allreduce(host, stream=s), comm.size)  # host ops ignore it
    with pytest.raises(TypeError, match="xcomm.Stream"):
        comm.allreduce(xcomm.DeviceArray.empty(comm, (3,), np.float64), stream=0)


def test_non_contiguous_device_array_is_refused(comm):
    dev = xcomm.DeviceArray.empty(comm, (4, 4), np.float32)
    cai = dict(dev.__cuda_array_interface__, shape=(4, 2), strides=(16, 4))

    class Strided:
        __cuda_array_interface__ = cai

    with pytest.raises(ValueError, match="C-contiguous"):
        comm.allreduce(Strided())


def _chunk(n, k, i):
    """torch.chunk's piece i of k over n elements: (start, stop)."""
    c = -(-n // k)
    lo = min(i * c, n)
    return lo, min(lo + c, n)


def test_redistribute_device_arrays(comm, rank, size):
    """Shard(0) -> Shard(1) and Replicate of device arrays: device results,
    enqueued on the collectives' stream (the default one here), blocking and
    through a plan's non-blocking start, against slices of the global array."""
    shape = (3 * size + 1, 2 * size + 3)
    full = np.random.default_rng(2026).standard_normal(shape)  # the same on every rank
    src = xcomm.Layout.mesh(comm, shape, (size,), ["S0"])
    lo, hi = _chunk(shape[0], size, rank)
    local = to_device(comm, full[lo:hi, :])
    by_cols = comm.redistribute(local, src, xcomm.Layout.mesh(comm, shape, (size,), ["S1"]))
    assert isinstance(by_cols, xcomm.DeviceArray)
    with comm.redistribute_plan(src, xcomm.Layout.mesh(comm, shape, (size,), ["R"]), np.float64) as plan:
        req = plan.start(local)
        req.wait()
        whole = req.data
    with xcomm.Stream.wrap(comm, None) as default:
        default.synchronize()
    c0, c1 = _chunk(shape[1], size, rank)
    np.testing.assert_array_equal(to_host(by_cols).reshape(shape[0], c1 - c0), full[:, c0:c1])
    np.testing.assert_array_equal(to_host(whole).reshape(shape), full)
