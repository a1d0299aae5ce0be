"""xcomm.group(): a batch of operations that only start inside the block and
all complete at its end (xc_group_start / xc_group_end).

Inside a group even a blocking call (send, recv, allreduce, ...) returns at
once, so this module keeps what the library still reads or writes (buffers,
temporary copies, statuses) alive until the outermost group ends, and fills
the Status objects of receives there.
"""

import threading
from contextlib import contextmanager

from ._ffi import lib
from .errors import check

_local = threading.local()


def _stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def hold(*objects):
    """Keep objects alive until the current group ends (nothing outside a group)."""
    stack = _stack()
    if stack:
        stack[-1][0].extend(objects)


def after_end(fn):
    """Run fn() once the current group ended; at once outside a group."""
    stack = _stack()
    if stack:
        stack[-1][1].append(fn)
    else:
        fn()


def in_group():
    """True between the start and the end of a group on this thread."""
    return bool(_stack())


@contextmanager
def group():
    """Start a group: `with xcomm.group(): ...`. Sends, receives and
    collectives in the block only start; leaving the block waits for all of
    them, so a batch of sends and receives completes in whatever order the
    ranks list them. Groups nest (per thread); the outermost one waits.
    Results (receive buffers, returned arrays, statuses) are valid after the
    block. Waiting on a Request inside the block is an error."""
    check(lib.xc_group_start())
    stack = _stack()
    stack.append(([], []))
    raised = False
    try:
        yield
    except BaseException:
        raised = True
        raise
    finally:
        held, fixups = stack.pop()
        rc = lib.xc_group_end()
        if stack:  # nested: the outer group owns what this one started
            stack[-1][0].extend(held)
            stack[-1][1].extend(fixups)
        else:
            for fn in fixups:
                fn()
            del held
        # An exception from the block wins over the group's own error.
        if rc < 0 and not raised:
            check(rc)
