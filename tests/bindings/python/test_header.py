"""The binding's cdef (bindings/python/xcomm/_cdef.py) against the header
(include/xcomm.h), in one process: same functions with the same signatures,
same typedefs, enum constants with the same values, structs with the same
layout, the same #define values; every function is used by the package and
exported by the library.

The header is read by a small preprocessor (comments and #-lines removed,
#ifdef __cplusplus blocks dropped) and parsed by pycparser, the C parser cffi
itself uses; the cdef is loaded by path, so this needs no library.
"""

import copy
import importlib.util
import os
import re

import cffi
import pytest
from pycparser import c_ast, c_generator, c_parser

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
HEADER = os.environ.get("XCOMM_HEADER", os.path.join(ROOT, "include", "xcomm.h"))
PACKAGE = os.path.join(ROOT, "bindings", "python", "xcomm")
# Macros with no integer value: the include guard, and the initializer the
# binding replaces with xc_config_init() and xc_redist_config_init().
NOT_CONSTANTS = {"XCOMM_H", "XC_CONFIG_INIT", "XC_REDIST_CONFIG_INIT"}
PRELUDE = ("typedef unsigned long size_t; typedef unsigned int uint32_t; typedef int int32_t; "
           "typedef unsigned long long uint64_t;\n")


def load_cdef():
    spec = importlib.util.spec_from_file_location("xcomm_cdef_under_test", os.path.join(PACKAGE, "_cdef.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def preprocess(text):
    """(declarations, {macro: value text}) of a header: comments stripped,
    preprocessor lines removed, #ifdef __cplusplus blocks dropped."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"\\\n", " ", text)  # continued lines
    out, macros, skipping = [], {}, []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            words = s[1:].split(None, 2)
            directive = words[0] if words else ""
            if directive in ("if", "ifdef", "ifndef"):
                skipping.append(directive == "ifdef" and len(words) > 1 and words[1] == "__cplusplus")
            elif directive == "endif":
                skipping.pop()
            elif directive == "define" and not any(skipping):
                macros[words[1]] = words[2].strip() if len(words) > 2 else ""
            continue
        if not any(skipping):
            out.append(line)
    return "\n".join(out), macros


def macro_value(text):
    """The integer of "0x7FFFFFFF", "(-1)", "((const void *)1)", or None."""
    t = re.sub(r"\(\s*const\s+void\s*\*\s*\)", "", text).replace("(", "").replace(")", "").replace(" ", "")
    try:
        return int(t, 0)
    except ValueError:
        return None


def strip_names(node):
    """A copy of a declaration's type with every parameter name removed."""
    node = copy.deepcopy(node)

    class Strip(c_ast.NodeVisitor):
        def visit_TypeDecl(self, n):
            n.declname = None
            self.generic_visit(n)

        def visit_Decl(self, n):
            n.name = None
            self.generic_visit(n)

    Strip().visit(node)
    return node


def declarations(text):
    """{("function"|"typedef"|"struct"|"enum", name): canonical C text}."""
    ast = c_parser.CParser().parse(PRELUDE + text)
    gen = c_generator.CGenerator()
    found = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Typedef):
            if ext.name in ("size_t", "uint32_t", "int32_t", "uint64_t"):
                continue
            found[("typedef", ext.name)] = gen.visit(ext)
        elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            found[("function", ext.name)] = gen.visit(strip_names(ext.type))
        elif isinstance(ext, c_ast.Decl):
            found[("other", gen.visit(ext))] = gen.visit(ext)
    return found


@pytest.fixture(scope="module")
def header():
    with open(HEADER, encoding="utf-8") as f:
        return preprocess(f.read())


@pytest.fixture(scope="module")
def cdef():
    return load_cdef()


def header_functions(text):
    """Function names by a plain regex (a cross-check of the parser)."""
    return set(re.findall(r"\b(xc_\w+)\s*\(", text))


def test_functions_and_typedefs_match(header, cdef):
    decls_h, decls_b = declarations(header[0]), declarations(cdef.CDEF)
    funcs_h = {name for kind, name in decls_h if kind == "function"}
    assert funcs_h == header_functions(header[0]), "the parser missed a prototype"
    assert len(funcs_h) >= 30
    missing = sorted(k for k in decls_h if k not in decls_b)
    extra = sorted(k for k in decls_b if k not in decls_h)
    assert not missing, "in the header but not in the binding's cdef: %s" % missing
    assert not extra, "in the binding's cdef but not in the header: %s" % extra
    for k in decls_h:
        assert decls_b[k] == decls_h[k], "%s %s differs:\n header: %s\n cdef:   %s" % (k + (decls_h[k], decls_b[k]))


def test_enums_and_structs_match(header, cdef):
    ffi_h, ffi_b = cffi.FFI(), cffi.FFI()
    ffi_h.cdef(header[0])
    ffi_b.cdef(cdef.CDEF)
    enums = re.findall(r"}\s*(xc_\w+_t)\s*;", header[0])
    assert "xc_result_t" in enums and "xc_status_t" in enums
    constants = 0
    for name in enums:
        th, tb = ffi_h.typeof(name), ffi_b.typeof(name)
        assert th.kind == tb.kind, name
        if th.kind == "enum":
            assert th.relements == tb.relements, "enum %s differs" % name
            constants += len(th.relements)
        else:
            assert ffi_h.sizeof(th) == ffi_b.sizeof(tb), "sizeof(%s) differs" % name
            fields_h = [(f, t.type.cname, t.offset) for f, t in th.fields]
            fields_b = [(f, t.type.cname, t.offset) for f, t in tb.fields]
            assert fields_h == fields_b, "struct %s differs" % name
    assert constants >= 40


def test_defines_match(header, cdef):
    macros = header[1]
    values = {name: macro_value(text) for name, text in macros.items() if name not in NOT_CONSTANTS}
    unparsed = sorted(n for n, v in values.items() if v is None)
    assert not unparsed, "macros this test cannot read (add them to NOT_CONSTANTS or DEFINES): %s" % unparsed
    assert values == cdef.DEFINES
    assert set(NOT_CONSTANTS) <= set(macros)


def test_every_function_is_bound(header):
    """Every xc_* function of the header is used by the package (lib.xc_..., called or passed on)."""
    sources = ""
    for fn in sorted(os.listdir(PACKAGE)):
        if fn.endswith(".py") and fn != "_cdef.py":
            with open(os.path.join(PACKAGE, fn), encoding="utf-8") as f:
                sources += f.read()
    unused = sorted(f for f in header_functions(header[0]) if not re.search(r"lib\.%s\b" % f, sources))
    assert not unused, "functions of the header the binding does not call: %s" % unused


def test_library_exports_every_function(header, cdef):
    path = os.environ.get("XCOMM_LIBRARY")
    if not path:
        pytest.skip("XCOMM_LIBRARY is not set")
    ffi = cffi.FFI()
    ffi.cdef(cdef.CDEF)
    lib = ffi.dlopen(path)
    for name in sorted(header_functions(header[0])):
        assert getattr(lib, name) is not None, name


def test_python_enums_cover_the_header(header):
    """Every enum constant (bar the FORCE_32BIT markers) has a Python name."""
    xcomm = pytest.importorskip("xcomm")
    names = set(re.findall(r"\b(XC_\w+)\s*=", header[0]))
    python = {"XC_" + prefix + m.name for cls, prefix in [(xcomm.Result, ""), (xcomm.DType, ""), (xcomm.Op, ""),
                                                          (xcomm.ThreadMode, "THREAD_"),
                                                          (xcomm.DebugLevel, "DEBUG_"),
                                                          (xcomm.PlacementKind, "PLACEMENT_"),
                                                          (xcomm.Order, "ORDER_")] for m in cls}
    wanted = {n for n in names if not n.endswith("FORCE_32BIT")}
    assert wanted == python


def test_package_version_is_the_header_version(cdef):
    d = cdef.DEFINES
    version = "%d.%d.%d" % (d["XC_VERSION_MAJOR"], d["XC_VERSION_MINOR"], d["XC_VERSION_PATCH"])
    with open(os.path.join(PACKAGE, "__init__.py"), encoding="utf-8") as f:
        assert re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1) == version
    with open(os.path.join(PACKAGE, "..", "pyproject.toml"), encoding="utf-8") as f:
        assert re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1) == version
