"""Point-to-point: send/recv, sendrecv, isend/irecv/wait/test/waitall, any
source, tag matching, statuses and truncation."""

import numpy as np
import pytest

import xcomm
from conftest import DTYPES, key_of, rank_data

pytestmark = pytest.mark.usefixtures("needs_peers")


@pytest.mark.parametrize("dtype", DTYPES)
def test_ring_send_recv(comm, rank, size, dtype):
    """A token goes round the ring: 0 -> 1 -> ... -> 0, each rank adding its data."""
    key = key_of("ring", dtype)
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    buf = np.empty(517, dtype=dtype)
    if rank == 0:
        comm.send(rank_data(key, 0, 517, dtype), nxt, tag=11)
        st = comm.recv(buf, source=prv, tag=11)
    else:
        st = comm.recv(buf, source=prv, tag=11)
        comm.send(buf, nxt, tag=11)
    assert (st.source, st.tag, st.bytes, st.error) == (prv, 11, buf.nbytes, 0)
    assert st.data is buf and st.count == 517
    assert np.array_equal(buf.view(np.uint8), rank_data(key, 0, 517, dtype).view(np.uint8))


def test_send_recv_bytes_like(comm, rank, size):
    """bytes, bytearray, memoryview and recv(None, count=, dtype=)."""
    if rank == 0:
        comm.send(b"hello", 1, tag=1)
        comm.send(memoryview(np.arange(10, dtype=np.float32)), 1, tag=2)
        comm.send(np.arange(6, dtype=np.int64).reshape(2, 3), 1, tag=3)
    elif rank == 1:
        buf = bytearray(5)
        st = comm.recv(buf, 0, 1)
        assert buf == b"hello" and st.bytes == 5
        st = comm.recv(None, 0, 2, count=10, dtype=np.float32)
        np.testing.assert_array_equal(st.data, np.arange(10, dtype=np.float32))
        out = np.zeros((2, 3), dtype=np.int64)
        comm.recv(memoryview(out), 0, 3)
        np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3))


def test_any_source(comm, rank, size):
    """Rank 0 receives one message from every other rank with ANY_SOURCE and
    ANY_TAG; the status says who sent it and with which tag."""
    key = key_of("any-source")
    if rank == 0:
        seen = set()
        for _ in range(size - 1):
            buf = np.empty(100, dtype=np.uint32)
            st = comm.recv(buf)  # source and tag default to ANY
            assert st.tag == 1000 + st.source
            assert st.bytes == 400
            np.testing.assert_array_equal(buf, rank_data(key, st.source, 100, "uint32"))
            seen.add(st.source)
        assert seen == set(range(1, size))
    else:
        comm.send(rank_data(key, rank, 100, "uint32"), 0, tag=1000 + rank)


def test_any_source_specific_tag(comm, rank, size):
    """ANY_SOURCE with a tag takes only that tag; then the other arrives."""
    if rank == 0:
        a = comm.recv(None, xcomm.ANY_SOURCE, 8, count=1, dtype=np.int32)
        b = comm.recv(None, xcomm.ANY_SOURCE, 7, count=1, dtype=np.int32)
        assert (a.source, a.tag, int(a.data[0])) == (1, 8, 8)
        assert (b.source, b.tag, int(b.data[0])) == (1, 7, 7)
    elif rank == 1:
        reqs = [comm.isend(np.array([7], np.int32), 0, tag=7), comm.isend(np.array([8], np.int32), 0, tag=8)]
        xcomm.waitall(reqs)


@pytest.mark.parametrize("dtype", ["uint8", "float64", "int32"])
def test_sendrecv_ring(comm, rank, size, dtype):
    key = key_of("sendrecv", dtype)
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    st = comm.sendrecv(rank_data(key, rank, 4099, dtype), nxt, source=prv, sendtag=3, recvtag=3)
    assert (st.source, st.tag, st.bytes) == (prv, 3, 4099 * np.dtype(dtype).itemsize)
    np.testing.assert_array_equal(st.data, rank_data(key, prv, 4099, dtype))
    out = np.empty(4099, dtype=dtype)
    st = comm.sendrecv(rank_data(key, rank, 4099, dtype), nxt, out)  # any source, any tag
    assert st.data is out and st.source == prv and st.tag == 0
    np.testing.assert_array_equal(out, rank_data(key, prv, 4099, dtype))


def test_sendrecv_dtype_mismatch(comm):
    with pytest.raises(TypeError, match="same dtype"):
        comm.sendrecv(np.zeros(3, np.float32), 0, np.zeros(3, np.int32))


def test_isend_irecv_all_pairs(comm, rank, size):
    """Every rank exchanges with every other at once; waitall returns the
    statuses in order and keeps the buffers alive until completion."""
    key = key_of("all-pairs")
    others = [r for r in range(size) if r != rank]
    recvs = [comm.irecv(np.empty(3000, np.float32), r, tag=rank) for r in others]
    sends = [comm.isend(rank_data(key, rank * 100 + r, 3000, "float32"), r, tag=r) for r in others]
    statuses = xcomm.waitall(recvs + sends)
    for r, req, st in zip(others, recvs, statuses):
        assert req.done and req.status is st
        assert (st.source, st.tag, st.bytes, st.error) == (r, rank, 12000, 0)
        np.testing.assert_array_equal(req.data, rank_data(key, r * 100 + rank, 3000, "float32"))
    for st in statuses[len(others):]:
        assert st.error == 0 and st.source == xcomm.ANY_SOURCE
    assert xcomm.waitall(recvs) == statuses[:len(others)]  # completed requests keep their status


def test_request_wait_and_test(comm, rank, size):
    if rank == 0:
        req = comm.irecv(None, 1, 5, count=8, dtype=np.int64)
        assert repr(req) in ("<xcomm.Request pending>", "<xcomm.Request done>")
        comm.send(b"go", 1, tag=6)
        while not req.test():
            pass
        assert req.test() and req.status.source == 1
        assert req.wait() is req.status
        np.testing.assert_array_equal(req.data, np.arange(8))
    elif rank == 1:
        comm.recv(bytearray(2), 0, 6)
        req = comm.isend(np.arange(8, dtype=np.int64), 0, tag=5)
        st = req.wait()
        assert st.error == 0 and req.done and req.wait() is st


def test_tag_matching_order(comm, rank):
    """Messages with different tags are matched by tag; same-tag messages in
    the order sent."""
    if rank == 0:
        reqs = [comm.isend(np.array([i], np.int32), 1, tag=t) for i, t in enumerate([5, 9, 5, 9])]
        xcomm.waitall(reqs)
    elif rank == 1:
        got = [int(comm.recv(None, 0, t, count=1, dtype=np.int32).data[0]) for t in [9, 5, 9, 5]]
        assert got == [1, 0, 3, 2]


def test_truncation(comm, rank):
    """A larger message fails the receive with TruncatedError, writes nothing,
    and the status still tells its size and origin."""
    if rank == 0:
        comm.send(np.arange(100, dtype=np.uint8), 1, tag=3)
    elif rank == 1:
        buf = bytearray(b"x" * 10)
        with pytest.raises(xcomm.TruncatedError) as info:
            comm.recv(buf, 0, 3)
        err = info.value
        assert err.code == xcomm.Result.ERR_TRUNCATED and err.name == "XC_ERR_TRUNCATED"
        assert "100 bytes" in err.message
        assert (err.status.source, err.status.tag, err.status.bytes) == (0, 3, 100)
        assert buf == b"x" * 10


def test_zero_byte_message(comm, rank):
    if rank == 0:
        comm.send(b"", 1, tag=4)
    elif rank == 1:
        st = comm.recv(None, 0, 4)
        assert (st.source, st.tag, st.bytes) == (0, 4, 0) and st.data.size == 0


def test_waitall_with_a_failed_request(comm, rank):
    """waitall completes every request, then raises the first error with all
    the statuses attached."""
    if rank == 0:
        xcomm.waitall([comm.isend(np.arange(50, dtype=np.uint8), 1, tag=1),
                       comm.isend(np.arange(5, dtype=np.uint8), 1, tag=2)])
    elif rank == 1:
        small, ok = bytearray(10), bytearray(5)
        reqs = [comm.irecv(small, 0, 1), comm.irecv(ok, 0, 2)]
        with pytest.raises(xcomm.TruncatedError) as info:
            xcomm.waitall(reqs)
        first, second = info.value.statuses
        assert (first.error, first.bytes) == (xcomm.Result.ERR_TRUNCATED, 50)
        assert (second.error, second.bytes, bytes(ok)) == (0, 5, bytes(range(5)))
        assert all(r.done for r in reqs) and small == bytearray(10)


def test_dropped_request_keeps_its_buffer(comm, rank):
    """A pending request that is garbage-collected warns and keeps its buffer
    alive (the library may still write into it); freeing the communicator
    then aborts it."""
    import gc

    from xcomm import request

    before = len(request._orphans)
    req = comm.irecv(np.empty(4, np.int32), source=rank, tag=12345)
    with pytest.warns(ResourceWarning, match="dropped before completing"):
        del req
        gc.collect()
    assert len(request._orphans) == before + 1
