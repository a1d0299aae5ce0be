"""`pip install bindings/python` works offline (no index, default build
isolation: the in-tree backend needs nothing), and the installed package
imports and finds the library. Exit 77 (skipped) without pip or numpy/cffi."""

import os
import subprocess
import sys
import tempfile


def main():
    try:
        import cffi  # noqa: F401
        import numpy  # noqa: F401
        import pip  # noqa: F401
    except ImportError as e:
        print("skipping: %s" % e)
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.normpath(os.path.join(here, "..", "..", "..", "bindings", "python"))
    with tempfile.TemporaryDirectory() as target:
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                   PIP_ROOT_USER_ACTION="ignore", PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTHONPATH", None)
        cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", target, source]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, env=env, check=True)
        env["PYTHONPATH"] = target
        check = ("import os, sys, xcomm; p = os.path.realpath(xcomm.__file__); "
                 "assert p.startswith(os.path.realpath(sys.argv[1])), p; "
                 "assert xcomm.get_version()[:2] == (0, 2); print('installed', p, 'library', xcomm.library_path)")
        subprocess.run([sys.executable, "-c", check, target], env=env, check=True, cwd=target)
        # xcomm.torch ships in the package; it imports where torch does
        for name in ("__init__.py", "_pg.py", "_work.py", "_capi.py"):
            path = os.path.join(target, "xcomm", "torch", name)
            if not os.path.isfile(path):
                raise SystemExit("not installed: %s" % path)
        try:
            import torch.distributed  # noqa: F401
        except ImportError:
            print("torch is not importable here: xcomm.torch installed, not imported")
        else:
            check = ("import xcomm.torch, torch.distributed as dist; "
                     "assert 'XCOMM' in dist.Backend._plugins; print('xcomm.torch registered the backend')")
            subprocess.run([sys.executable, "-c", check], env=env, check=True, cwd=target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
