"""torch.distributed backends by name, for the torch tests and the benchmark.

load(name) makes the backend usable in this process and returns None, or
returns why it cannot be used: "gloo" (and the other built-in backends) need
only torch; "xcomm" needs `import xcomm.torch`, which registers it.
"""

import importlib

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
