"""xcomm from Python: an allreduce, a ring of sends between neighbours, and a
split into two groups with a collective inside each. Every rank checks its
own results and the program exits non-zero on a mismatch.

    xcrun -n 4 python3 examples/python/example.py

(From a source checkout: PYTHONPATH=bindings/python; the library is found in
build/src/ or through XCOMM_LIBRARY.)
"""

import sys

import numpy as np

import xcomm


def main():
    errors = []

    def expect(what, ok):
        if not ok:
            errors.append(what)

    with xcomm.init(name="example") as world:
        rank, size = world.rank, world.size

        # 1. allreduce: rank r contributes (r + 1) * i at index i.
        v = np.arange(1000, dtype=np.float64) * (rank + 1)
        total = world.allreduce(v, op="sum")
        expect("allreduce", np.array_equal(total, np.arange(1000) * (size * (size + 1) / 2)))

        # 2. ring: send to the right neighbour, receive from the left one.
        right, left = (rank + 1) % size, (rank - 1) % size
        token = np.full(16, rank, dtype=np.int32)
        received = np.empty_like(token)
        req = world.irecv(received, source=left, tag=7)
        world.send(token, right, tag=7)
        status = req.wait()
        expect("ring data", np.all(received == left))
        expect("ring status", (status.source, status.tag, status.bytes) == (left, 7, token.nbytes))

        # 3. two groups (the first half and the second half of the ranks),
        #    one allreduce inside each: the sum of the group's world ranks.
        half = (size + 1) // 2
        group = world.split(0 if rank < half else 1, key=rank)
        with group:
            members = range(0, half) if rank < half else range(half, size)
            s = group.allreduce(np.array([rank], dtype=np.int64))
            expect("group allreduce", int(s[0]) == sum(members))
            expect("group rank", (group.rank, group.size) == (rank - members[0], len(members)))

        # Every rank learns whether every other rank succeeded.
        failures = world.allreduce(np.array([len(errors)], dtype=np.int32))
        print("[%d] rank %d of %d: allreduce, ring and groups %s" % (
            rank, rank, size, "correct" if not errors else "WRONG: " + ", ".join(errors)))
    return 0 if failures[0] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
