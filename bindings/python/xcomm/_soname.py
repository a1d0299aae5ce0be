"""Read DT_SONAME from an ELF shared library (to check the ABI of the library
that was loaded, which xc_get_version cannot tell). Pure Python, no tools."""

import struct

_SHT_DYNAMIC = 6
_DT_NULL = 0
_DT_SONAME = 14


def elf_soname(path):
    """The library's soname ("libxcomm.so.1"), or None if path is not an ELF
    file or has none. Raises OSError if the file cannot be read."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 64 or data[:4] != b"\x7fELF":
        return None
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
        shdr, dyn = end + "IIQQQQIIQQ", end + "qQ"
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
        shdr, dyn = end + "IIIIIIIIII", end + "iI"
    sections = []
    for i in range(shnum):
        off = shoff + i * shentsize
        if off + struct.calcsize(shdr) > len(data):
            return None
        f = struct.unpack_from(shdr, data, off)
        # (name, type, flags, addr, offset, size, link, info, align, entsize)
        sections.append((f[1], f[4], f[5], f[6]))
    for sh_type, offset, size, link in sections:
        if sh_type != _SHT_DYNAMIC or link >= len(sections):
            continue
        str_off = sections[link][1]
        step = struct.calcsize(dyn)
        for pos in range(offset, offset + size - step + 1, step):
            tag, val = struct.unpack_from(dyn, data, pos)
            if tag == _DT_NULL:
                break
            if tag == _DT_SONAME:
                start = str_off + val
                stop = data.find(b"\0", start)
                return data[start:stop].decode("utf-8", "replace") if stop >= 0 else None
    return None
