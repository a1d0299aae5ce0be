"""What test_ddp.py and docs/bench/torch_bench.py share, without importing
torch at the top (their drivers skip or stop cleanly without it):

load(name) makes a torch.distributed backend usable in this process and
returns None, or returns why it cannot be used: "gloo" (and the other
built-in backends) need only torch; "xcomm" needs `import xcomm.torch`,
which registers it.

launch(n, argv, timeout) runs argv on n ranks through launch.py (torchrun's
variables, the job stopped at the first failing rank) and returns the job's
exit status.
"""

import importlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Backends that a module registers when imported.
MODULES = {"xcomm": "xcomm.torch"}


def load(name):
    try:
        import torch.distributed as dist
    except ImportError as e:
        return "cannot import torch.distributed: %s" % e
    if not dist.is_available():
        return "torch.distributed is not available in this torch build"
    if name == "gloo":
        return None if dist.is_gloo_available() else "this torch was built without gloo"
    module = MODULES.get(name)
    if module is None:
        return None  # a built-in one (nccl, mpi, ucc): init_process_group says if it is missing
    try:
        importlib.import_module(module)
    except Exception as e:  # ImportError, or the library failing to load
        return "cannot import %s: %s: %s" % (module, type(e).__name__, e)
    return None


def launch(n, argv, timeout, rank0_plain=False):
    """launch.py -n n --timeout timeout -- argv; its exit status. launch.py
    prefixes every line with "[rank] "; rank0_plain prints rank 0's lines
    without it (a benchmark's tables)."""
    cmd = [sys.executable, os.path.join(HERE, "launch.py"), "-n", str(n), "--timeout", str(timeout), "--"] + list(argv)
    out = getattr(sys.stdout, "buffer", sys.stdout)
    sys.stdout.flush()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for line in iter(p.stdout.readline, b""):
        if rank0_plain and line.startswith(b"[0] "):
            line = line[4:]
        out.write(line)
        out.flush()
    p.stdout.close()
    return p.wait()
