"""Finding and checking the library at import: $XCOMM_LIBRARY, the build
tree, the ABI (soname) and version checks, and clear ImportErrors."""

import os
import subprocess
import sys

import pytest

import xcomm
from xcomm import _ffi
from xcomm._soname import elf_soname

BINDINGS = os.path.dirname(os.path.dirname(os.path.abspath(xcomm.__file__)))


def import_xcomm(env_changes, cwd="/"):
    env = dict(os.environ, PYTHONPATH=BINDINGS, PYTHONDONTWRITEBYTECODE="1")
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    code = "import xcomm; print(xcomm.library_path)"
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True)


def test_loaded_library():
    assert elf_soname(xcomm.library_path) == "libxcomm.so.1"
    if os.environ.get("XCOMM_LIBRARY"):
        assert xcomm.library_path == os.environ["XCOMM_LIBRARY"]


def test_library_path_is_the_file_loaded():
    """Found through the loader's own search (LD_LIBRARY_PATH here), the
    path is the file that was mapped, not the soname that was asked for."""
    libdir = os.path.dirname(xcomm.library_path)
    r = import_xcomm({"XCOMM_LIBRARY": None, "LD_LIBRARY_PATH": libdir})
    assert r.returncode == 0, r.stderr
    path = r.stdout.strip()
    assert os.path.isabs(path) and os.path.exists(path), path
    assert os.path.samefile(path, xcomm.library_path)
    with open("/proc/self/maps") as maps:
        mapped = {line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6}
    assert os.path.realpath(xcomm.library_path) in {os.path.realpath(m) for m in mapped if m.startswith("/")}


def test_missing_library_is_a_clear_import_error():
    r = import_xcomm({"XCOMM_LIBRARY": "/nonexistent/libxcomm.so.1"})
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "$XCOMM_LIBRARY" in r.stderr and "/nonexistent/libxcomm.so.1" in r.stderr


def test_not_xcomm_is_rejected():
    import _ctypes  # an ELF shared object that is certainly not libxcomm

    r = import_xcomm({"XCOMM_LIBRARY": _ctypes.__file__})
    assert r.returncode != 0 and "ImportError" in r.stderr
    assert "xc_get_version" in r.stderr or "soname" in r.stderr


def test_build_tree_is_found():
    """Without $XCOMM_LIBRARY, a source checkout finds build/src/libxcomm.so.1."""
    root = os.path.dirname(os.path.dirname(BINDINGS))
    lib = os.path.join(root, "build", "src", "libxcomm.so.1")
    if not os.path.exists(lib):
        pytest.skip("no build/src/libxcomm.so.1 in this checkout")
    r = import_xcomm({"XCOMM_LIBRARY": None, "LD_LIBRARY_PATH": None})
    assert r.returncode == 0, r.stderr
    found = r.stdout.strip()
    assert found == "libxcomm.so.1" or os.path.realpath(found) == os.path.realpath(lib)


class FakeLib:
    def __init__(self, version):
        self.version = version

    def xc_get_version(self, major, minor, patch):
        major[0], minor[0], patch[0] = self.version
        return 0


# The binding needs 0.2 (its cdef declares 0.2's functions: xc_comm_shrink, ...).
@pytest.mark.parametrize("version,ok", [((0, 2, 0), True), ((0, 2, 7), True), ((0, 3, 0), True),
                                        ((0, 1, 9), False), ((1, 0, 0), False), ((2, 1, 0), False)])
def test_version_check(version, ok):
    reason = _ffi._check_abi(FakeLib(version), "libxcomm.so.1", None)
    assert (reason is None) == ok, reason
    if not ok:
        assert "%d.%d.%d" % version in reason and "needs 0.x" in reason


def test_soname_check():
    reason = _ffi._check_abi(FakeLib((0, 2, 0)), "libxcomm.so.2", None)
    assert reason and "libxcomm.so.2" in reason and "XC_ABI_VERSION 1" in reason
