"""A minimal PEP 517/660 build backend for the pure-Python xcomm package.

It needs only the standard library, so `pip install ./bindings/python` works
offline. Metadata comes from pyproject.toml; the wheel holds the xcomm/
package (*.py files) and the dist-info; the sdist holds what is needed to
rebuild the wheel. Editable installs put a .pth file pointing at this
directory.
"""

import base64
import hashlib
import io
import os
import tarfile
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11: the few keys used here parse with a tiny reader
    tomllib = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "xcomm"
SDIST_FILES = ["pyproject.toml", "README.md", "_build/xcomm_build.py"]
# Wheel-building time stamp: fixed, so builds are reproducible.
_DATE = (2020, 1, 1, 0, 0, 0)


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        data = f.read()
    if tomllib is not None:
        return tomllib.loads(data.decode("utf-8"))["project"]
    return _mini_toml_project(data.decode("utf-8"))


def _mini_toml_project(text):
    """Read the [project] table's simple keys (strings and lists of strings)."""
    import ast
    project, table = {}, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            table = line.strip("[]")
            continue
        if table != "project" or "=" not in line or line.startswith("#"):
            continue
        key, value = (s.strip() for s in line.split("=", 1))
        if value.startswith(("\"", "[")):
            project[key] = ast.literal_eval(value)
    return project


def _metadata():
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % p["name"],
        "Version: %s" % p["version"],
        "Summary: %s" % p.get("description", ""),
        "License: MIT",
        "Requires-Python: %s" % p.get("requires-python", ">=3.8"),
    ]
    lines += ["Requires-Dist: %s" % d for d in p.get("dependencies", [])]
    for extra, deps in sorted(p.get("optional-dependencies", {}).items()):
        lines.append("Provides-Extra: %s" % extra)
        lines += ["Requires-Dist: %s ; extra == \"%s\"" % (d, extra) for d in deps]
    readme = os.path.join(ROOT, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = "\n" + f.read()
    return p["name"], p["version"], ("\n".join(lines) + "\n" + body).encode("utf-8")


def _dist_info(name, version):
    return "%s-%s.dist-info" % (name.replace("-", "_"), version)


_WHEEL = b"Wheel-Version: 1.0\nGenerator: xcomm_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _package_files():
    base = os.path.join(ROOT, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                full = os.path.join(dirpath, fn)
                yield full, os.path.relpath(full, ROOT).replace(os.sep, "/")


def _write_wheel(wheel_directory, files):
    """files: list of (archive name, bytes). Returns the wheel's file name."""
    name, version, metadata = _metadata()
    dist_info = _dist_info(name, version)
    files = list(files) + [(dist_info + "/METADATA", metadata), (dist_info + "/WHEEL", _WHEEL)]
    record = []
    for arcname, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (arcname, digest, len(data)))
    record.append(dist_info + "/RECORD,,")
    files.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode()))
    wheel_name = "%s-%s-py3-none-any.whl" % (name.replace("-", "_"), version)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in files:
            info = zipfile.ZipInfo(arcname, date_time=_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return wheel_name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 ----------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version, metadata = _metadata()
    dist_info = _dist_info(name, version)
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "wb") as f:
        f.write(metadata)
    with open(os.path.join(metadata_directory, dist_info, "WHEEL"), "wb") as f:
        f.write(_WHEEL)
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(arc, _read(full)) for full, arc in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [("_xcomm_editable.pth", (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    name, version, metadata = _metadata()
    base = "%s-%s" % (name.replace("-", "_"), version)
    sdist_name = base + ".tar.gz"
    members = [(rel, _read(os.path.join(ROOT, rel))) for rel in SDIST_FILES
               if os.path.exists(os.path.join(ROOT, rel))]
    members += [(arc, _read(full)) for full, arc in _package_files()]
    members.append(("PKG-INFO", metadata))
    with tarfile.open(os.path.join(sdist_directory, sdist_name), "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for rel, data in members:
            info = tarfile.TarInfo("%s/%s" % (base, rel))
            info.size, info.mode, info.mtime = len(data), 0o644, 1577836800
            tf.addfile(info, io.BytesIO(data))
    return sdist_name
