"""Fixtures shared by the binding tests. Under xcrun every rank runs the same
tests in the same order; without a launcher the world is one rank.

Seeded data: rank_data(key, rank, ...) gives the same array on every rank, so
each rank computes the others' contributions (and the expected result of a
collective) locally. XC_TEST_SEED replays a failure's data.
"""

import os
import zlib

import numpy as np
import pytest

SEED = int(os.environ.get("XC_TEST_SEED", "0x5eed2026"), 0)
DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"]
try:
    import ml_dtypes  # noqa: F401  (bfloat16 as a NumPy dtype)
    DTYPES.append("bfloat16")
except ImportError:
    pass


def key_of(*parts):
    """A stable integer key for a test (the same on every rank)."""
    return zlib.crc32(repr(parts).encode())


def rank_data(key, rank, count, dtype, kind="any"):
    """Rank's seeded random array for the test keyed by key. kind: "any"
    (full integer range; floats in [-10, 10)), "prod" (floats near 1)."""
    rng = np.random.default_rng([SEED, key, rank])
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=count, dtype=dt, endpoint=True)
    if kind == "prod":
        values = rng.uniform(0.5, 1.5, size=count) * rng.choice([-1.0, 1.0], size=count)
    else:
        values = rng.uniform(-10.0, 10.0, size=count)
    return values.astype(dt)


@pytest.fixture(scope="session")
def world():
    import xcomm  # here, not at the top: test_header.py runs without the library

    comm = xcomm.init(name="world")
    yield comm
    comm.free()


@pytest.fixture(scope="session")
def rank(world):
    return world.rank


@pytest.fixture(scope="session")
def size(world):
    return world.size


@pytest.fixture
def comm(world):
    """A fresh duplicate of the world for one test, so a test that breaks its
    communicator (errors, abort) cannot disturb the next one."""
    c = world.dup()
    yield c
    c.free()


@pytest.fixture
def needs_peers(size):
    if size < 2:
        pytest.skip("needs at least 2 ranks")
