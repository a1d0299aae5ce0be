"""Redistribution from Python: Layout.mesh with placement strings and DTensor
placements, block-cyclic and boxes layouts, plans (.run, .start, .info,
.relabel), torch CPU tensors; every rank computes the global array from the
seed and checks its own part."""

import numpy as np
import pytest

import xcomm
from conftest import SEED


def global_array(shape, dtype="float64"):
    rng = np.random.default_rng([SEED, 28])
    return rng.integers(-1000, 1000, size=shape).astype(dtype)


def part(g, shape, mesh, placements, rank):
    """This rank's block of g under a mesh layout (torch.chunk rule)."""
    sl = [slice(0, n) for n in shape]
    coords = list(np.unravel_index(rank, mesh))
    for k, p in enumerate(placements):
        if p.startswith("S"):
            d = int(p[1:])
            lo, hi = sl[d].start, sl[d].stop
            size = -(-(hi - lo) // mesh[k])
            a = min(hi - lo, coords[k] * size)
            sl[d] = slice(lo + a, lo + min(hi - lo, a + size))
    return g[tuple(sl)]


PLACEMENTS = ["R", "S0", "S1", "S2"]


def meshes(n):
    out = [(n,)]
    if n == 4:
        out.append((2, 2))
    return out


@pytest.mark.parametrize("shape", [(5, 7, 3)])
def test_mesh_pairs(world, shape):
    g = global_array(shape)
    for mesh in meshes(world.size):
        combos = [[a] for a in PLACEMENTS] if len(mesh) == 1 else [[a, b] for a in PLACEMENTS for b in PLACEMENTS]
        for sp in combos:
            src = xcomm.Layout.mesh(world, shape, mesh, sp)
            local = np.ascontiguousarray(part(g, shape, mesh, sp, world.rank))
            assert src.local_shape == local.shape
            for dp in combos:
                dst = xcomm.Layout.mesh(world, shape, mesh, dp)
                out = world.redistribute(local, src, dst)
                np.testing.assert_array_equal(out, part(g, shape, mesh, dp, world.rank))


def test_partial_sum_to_shard_and_info(world):
    shape, n = (6, 4), world.size
    g = global_array(shape)
    rng = np.random.default_rng([SEED, 29])
    shares = [rng.integers(-50, 50, size=shape).astype("float64") for _ in range(n - 1)]
    mine = shares[world.rank - 1] if world.rank > 0 else g - sum(shares, np.zeros(shape))
    src = xcomm.Layout.mesh(world, shape, (n,), ["P"])
    dst = xcomm.Layout.mesh(world, shape, (n,), ["S0"])
    with world.redistribute_plan(src, dst, np.float64) as plan:
        out = plan.run(mine)
        np.testing.assert_array_equal(out, part(g, shape, (n,), ["S0"], world.rank))
        info = plan.info()
        for key in ("bytes_sent", "bytes_received", "messages", "steps", "lower_bound_bytes"):
            assert key in info
        if n > 1:
            assert "reduce_scatter" in info["steps"]
        assert info["bytes_received"] == info["lower_bound_bytes"]


def test_plan_reuse_nonblocking_and_p2p_only(world):
    shape, n = (7, 5), world.size
    src = xcomm.Layout.mesh(world, shape, (n,), ["S0"])
    dst = xcomm.Layout.mesh(world, shape, (n,), ["S1"])
    for p2p_only in (False, True):
        with world.redistribute_plan(src, dst, "float32", p2p_only=p2p_only) as plan:
            for it in range(10):
                g = global_array(shape, "float32") + it
                out = plan.run(np.ascontiguousarray(part(g, shape, (n,), ["S0"], world.rank)))
                np.testing.assert_array_equal(out, part(g, shape, (n,), ["S1"], world.rank))
            g = global_array(shape, "float32")
            req = plan.start(np.ascontiguousarray(part(g, shape, (n,), ["S0"], world.rank)))
            req.wait()
            np.testing.assert_array_equal(req.data, part(g, shape, (n,), ["S1"], world.rank))
            if p2p_only:
                assert plan.info()["collective_steps"] == 0


def test_block_cyclic(world):
    n = world.size
    rows, cols = 13, 11
    g = global_array((rows, cols))

    def local_of(mb, nb, nprow, npcol, storage):
        r = world.rank
        if r >= nprow * npcol:
            return np.zeros((0, 0), order=storage)
        p, q = r // npcol, r % npcol
        rows_mine = [i for i in range(rows) if (i // mb) % nprow == p]
        cols_mine = [j for j in range(cols) if (j // nb) % npcol == q]
        return np.array(g[np.ix_(rows_mine, cols_mine)], order=storage)

    grids = [(1, n), (n, 1)] + ([(2, n // 2)] if n % 2 == 0 else [])
    for (nprow, npcol), (mb, nb), storage in [(grids[0], (2, 3), "F"), (grids[-1], (3, 2), "C"), (grids[1], (1, 4), "F")]:
        src = xcomm.Layout.block_cyclic(world, (rows, cols), (mb, nb), (nprow, npcol), storage=storage)
        dst = xcomm.Layout.block_cyclic(world, (rows, cols), (nb, mb), (npcol, nprow), storage="F")
        out = world.redistribute(local_of(mb, nb, nprow, npcol, storage), src, dst)
        np.testing.assert_array_equal(out, local_of(nb, mb, npcol, nprow, "F"))


def test_boxes_and_relabel(world):
    n = world.size
    shape = (4 * n, 3)
    g = global_array(shape)
    boxes = [((4 * r, 0), (4, 3), r) for r in range(n)]
    shifted = [((4 * r, 0), (4, 3), (r + 1) % n) for r in range(n)]
    src = xcomm.Layout.boxes(world, shape, boxes)
    dst = xcomm.Layout.boxes(world, shape, shifted)
    mine = g[4 * world.rank:4 * world.rank + 4].reshape(-1)
    with world.redistribute_plan(src, dst, np.float64) as plan:
        out = plan.run(mine)
        r = (world.rank - 1) % n
        np.testing.assert_array_equal(out, g[4 * r:4 * r + 4].reshape(-1))
        perm, saved = plan.relabel()
        assert perm == [(j - 1) % n for j in range(n)]
        assert saved == (g.nbytes if n > 1 else 0)


def test_dtensor_placements():
    class Replicate:
        pass

    class Shard:
        def __init__(self, dim):
            self.dim = dim

    class Partial:
        def __init__(self, reduce_op="sum"):
            self.reduce_op = reduce_op

    assert xcomm.from_dtensor([Shard(1), Replicate(), Partial(), Partial("max")]) == ["S1", "R", "P", "Pmax"]
    with pytest.raises(ValueError):
        xcomm.from_dtensor([object()])


def test_dtensor_objects_in_mesh(world):
    class Shard:
        def __init__(self, dim):
            self.dim = dim

    shape = (6, 2)
    g = global_array(shape)
    src = xcomm.Layout.mesh(world, shape, (world.size,), [Shard(0)])
    dst = xcomm.Layout.mesh(world, shape, (world.size,), ["R"])
    out = world.redistribute(np.ascontiguousarray(part(g, shape, (world.size,), ["S0"], world.rank)), src, dst)
    np.testing.assert_array_equal(out, g)


def test_torch_cpu_tensor(world):
    torch = pytest.importorskip("torch")
    shape = (5, 4)
    g = global_array(shape, "float32")
    src = xcomm.Layout.mesh(world, shape, (world.size,), ["S1"])
    dst = xcomm.Layout.mesh(world, shape, (world.size,), ["R"])
    t = torch.from_numpy(np.ascontiguousarray(part(g, shape, (world.size,), ["S1"], world.rank)))
    out = world.redistribute(t, src, dst)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_array_equal(out.numpy(), g)


def test_bad_layouts(world):
    with pytest.raises(xcomm.InvalidArgumentError, match="overlap"):
        xcomm.Layout.boxes(world, (4, 4), [((0, 0), (4, 4), 0), ((1, 1), (1, 1), 0)])
    with pytest.raises(xcomm.InvalidArgumentError, match="gap"):
        xcomm.Layout.boxes(world, (4, 4), [((0, 0), (2, 4), 0)])
    with pytest.raises(ValueError):
        xcomm.Layout.mesh(world, (4, 4), (world.size,), ["X"])
    a = xcomm.Layout.mesh(world, (4, 4), (world.size,), ["S0"])
    b = xcomm.Layout.mesh(world, (4, 5), (world.size,), ["S0"])
    with pytest.raises(xcomm.InvalidArgumentError, match="shapes differ"):
        world.redistribute_plan(a, b, np.float32)
    with pytest.raises(ValueError):
        with world.redistribute_plan(a, a, np.float32) as plan:
            plan.run(np.zeros(a.local_count + 1, np.float32))
