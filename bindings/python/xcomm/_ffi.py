"""Find and load libxcomm (cffi ABI mode) and check that it is the ABI this
binding was written for. Importing this module either gives `ffi` and `lib`
or raises ImportError saying which libraries were tried and why they failed.

Search order:
  1. $XCOMM_LIBRARY, the path of the .so (if set, nothing else is tried);
  2. the installed library: "libxcomm.so.1" through the dynamic loader's own
     search (LD_LIBRARY_PATH, ld.so.cache), then ctypes.util.find_library;
  3. the build tree, for running from a source checkout: build/src/libxcomm.so.1
     in the package's directory or any directory above it.
"""

import ctypes.util
import os
from pathlib import Path

import cffi

from ._cdef import CDEF, DEFINES
from ._soname import elf_soname

ABI_VERSION = DEFINES["XC_ABI_VERSION"]
# The header version this binding mirrors: the library's major must match and
# its (major, minor) must be at least this (older minors lack functions).
EXPECTED_VERSION = (DEFINES["XC_VERSION_MAJOR"], DEFINES["XC_VERSION_MINOR"], DEFINES["XC_VERSION_PATCH"])
SONAME = "libxcomm.so.%d" % ABI_VERSION

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    """(how it was found, what to pass to dlopen, path of the file or None)."""
    env = os.environ.get("XCOMM_LIBRARY")
    if env:
        yield "$XCOMM_LIBRARY", env, env
        return
    yield "the dynamic loader", SONAME, None
    found = ctypes.util.find_library("xcomm")
    if found and found != SONAME:
        yield "ctypes.util.find_library", found, found if os.sep in found else None
    for parent in Path(__file__).resolve().parents:
        path = parent / "build" / "src" / SONAME
        if path.exists():
            yield "the build tree", str(path), str(path)


def _check_abi(lib, name, path):
    """None when lib is the ABI and version expected, else the reason."""
    soname = None
    if path:
        try:
            soname = elf_soname(path)
        except OSError:
            soname = None
    elif os.path.basename(name).startswith("libxcomm.so."):
        soname = os.path.basename(name)
    if soname is not None and soname != SONAME:
        return "its soname is %s but this binding needs the ABI of %s (XC_ABI_VERSION %d)" % (
            soname, SONAME, ABI_VERSION)
    v = ffi.new("int[3]")
    try:
        rc = lib.xc_get_version(v, v + 1, v + 2)
    except AttributeError:
        return "it does not export xc_get_version (not libxcomm?)"
    version = (v[0], v[1], v[2])
    if rc != 0:
        return "xc_get_version failed with %d" % rc
    if version[0] != EXPECTED_VERSION[0] or version[:2] < EXPECTED_VERSION[:2]:
        return "it is version %d.%d.%d but this binding needs %d.x (at least %d.%d)" % (
            version + (EXPECTED_VERSION[0],) + EXPECTED_VERSION[:2])
    return None


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _loaded_path(name):
    """The file the dynamic loader actually mapped for name (a soname it
    searched for, or a path): dladdr on one of its symbols, else the mapping
    in /proc/self/maps that holds that symbol. None when neither says."""
    try:
        handle = ctypes.CDLL(name)  # already loaded by cffi: the same object
        addr = ctypes.cast(handle.xc_get_version, ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None
    for libname in (None, "libdl.so.2"):  # glibc >= 2.34 has dladdr in libc
        try:
            dladdr = ctypes.CDLL(libname).dladdr
        except (OSError, AttributeError):
            continue
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        dladdr.restype = ctypes.c_int
        info = _DlInfo()
        if dladdr(addr, ctypes.byref(info)) and info.dli_fname and os.sep in os.fsdecode(info.dli_fname):
            return os.path.abspath(os.fsdecode(info.dli_fname))
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) < 6:
                    continue
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                if lo <= addr < hi and fields[5].startswith("/"):
                    return fields[5].rstrip("\n")
    except OSError:
        pass
    return None


def _load():
    tried = []
    for how, name, path in _candidates():
        try:
            lib = ffi.dlopen(name)
        except OSError as e:
            tried.append("%s (%s): %s" % (name, how, e))
            continue
        reason = _check_abi(lib, name, path)
        if reason is None:
            return lib, _loaded_path(name) or path or name
        tried.append("%s (%s): %s" % (name, how, reason))
    raise ImportError(
        "xcomm: cannot load a usable libxcomm (ABI %d, version %d.%d or later).\n  tried: %s\n"
        "Set XCOMM_LIBRARY to the path of libxcomm.so.%d, install the library, or build it "
        "(ninja -C build) in the source tree." % (
            ABI_VERSION, EXPECTED_VERSION[0], EXPECTED_VERSION[1],
            "\n         ".join(tried) or "nothing found", ABI_VERSION))


lib, library_path = _load()
