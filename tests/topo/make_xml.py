#!/usr/bin/env python3
"""Regenerates the hwloc XML files of the synthetic topologies in this folder.

    python3 tests/topo/make_xml.py          # rewrites tests/topo/*.xml

The CPU side of each machine comes from an hwloc synthetic description
(hwloc_topology_set_synthetic, then hwloc_topology_export_xmlbuffer, through
ctypes: only libhwloc.so.15 is needed, no compiler and no lstopo). Synthetic
topologies have no I/O devices, so the PCI devices (GPUs, NICs with their OS
devices) are then added under each package as one host bridge per package,
in the XML form hwloc 2.x exports; this is what gives GPUs and NICs their NUMA
locality when the files are loaded. The JSON files beside these are written
by hand and name the GPUs, their links and the XML.

Core counts are scaled down from the real machines (8 cores per package, 2
threads each) to keep the files small; caches, memory sizes, the Linux
numbering of hyperthreads (cpu N and N + cores are siblings) and the PCI
layout follow the real ones. Bus ids and PCI ids are those of the real
devices where known, otherwise plausible.
"""
import ctypes
import os
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))

# PCI devices: (bus id, class, vendor:device, link GB/s, [(osdev name, osdev type)])
# osdev types as hwloc 2.x numbers them: 2 network, 3 openfabrics.
GEN3, GEN4, GEN5 = 15.753846, 31.507692, 63.015385  # x16 rates as hwloc computes them


def gpus(ids, buses, speed):
    return [(f"0000:{b:02x}:00.0", 0x0302, ids, speed, []) for b in buses]


def ib(buses, first, ids, speed):
    return [(f"0000:{b:02x}:00.0", 0x0207, ids, speed, [(f"mlx5_{first + i}", 3)]) for i, b in enumerate(buses)]


def eth(bus, name, ids, speed):
    return [(f"0000:{bus:02x}:00.0", 0x0200, ids, speed, [(name, 2)])]


MACHINES = {
    # DGX H100: 2 x Xeon Platinum 8480C (56 cores, 105 MiB L3, 2 MiB L2 per
    # core), 1 TiB per socket, 8 H100 SXM5 and 8 ConnectX-7, 4 + 4 per socket.
    "dgx_h100": (
        "Package:2 NUMANode:1(memory=1099511627776) L3Cache:1(size=110100480) "
        "L2Cache:8(size=2097152) Core:1 PU:2(indexes=2*16:1*2)",
        [
            gpus((0x10DE, 0x2330), [0x1B, 0x43, 0x52, 0x61], GEN5) + ib([0x18, 0x40, 0x4F, 0x5E], 0, (0x15B3, 0x1021), GEN5),
            gpus((0x10DE, 0x2330), [0x9D, 0xC3, 0xD1, 0xDF], GEN5) + ib([0x9A, 0xC0, 0xCE, 0xDC], 4, (0x15B3, 0x1021), GEN5),
        ],
    ),
    # DGX-1 (V100): 2 x Xeon E5-2698 v4 (20 cores, 50 MiB L3, 256 KiB L2),
    # 256 GiB per socket, 8 V100 SXM2 (4 + 4) and 4 EDR InfiniBand ports.
    "dgx1_v100": (
        "Package:2 NUMANode:1(memory=274877906944) L3Cache:1(size=52428800) "
        "L2Cache:8(size=262144) Core:1 PU:2(indexes=2*16:1*2)",
        [
            gpus((0x10DE, 0x1DB5), [0x06, 0x07, 0x0A, 0x0B], GEN3) + ib([0x05, 0x0C], 0, (0x15B3, 0x1013), GEN3),
            gpus((0x10DE, 0x1DB5), [0x85, 0x86, 0x89, 0x8A], GEN3) + ib([0x84, 0x8B], 2, (0x15B3, 0x1013), GEN3),
        ],
    ),
    # One-socket server (EPYC-like: 4 CCX of 2 cores, 16 MiB L3 each),
    # 256 GiB, 4 A100 PCIe on separate root ports, one 10 GbE port.
    "pcie4": (
        "Package:1 NUMANode:1(memory=274877906944) L3Cache:4(size=16777216) "
        "L2Cache:2(size=524288) Core:1 PU:2(indexes=2*8:1*2)",
        [
            gpus((0x10DE, 0x20F1), [0x01, 0x41, 0x81, 0xC1], GEN4) + eth(0x21, "eth0", (0x8086, 0x1572), 7.876923),
        ],
    ),
    # Workstation: one socket, 8 cores, 128 GiB, 2 RTX A6000 joined by an
    # NVLink bridge, one 1 GbE port.
    "nvlink_bridge2": (
        "Package:1 NUMANode:1(memory=137438953472) L3Cache:1(size=33554432) "
        "L2Cache:8(size=1048576) Core:1 PU:2(indexes=2*8:1*2)",
        [
            gpus((0x10DE, 0x2230), [0x17, 0x65], GEN4) + eth(0x04, "eno1", (0x8086, 0x15F3), 0.615385),
        ],
    ),
    # Two sockets, no GPU: 2 x 8 cores, 64 GiB per socket, one 25 GbE port
    # on the second socket.
    "cpu_2socket": (
        "Package:2 NUMANode:1(memory=68719476736) L3Cache:1(size=33554432) "
        "L2Cache:8(size=1048576) Core:1 PU:2(indexes=2*16:1*2)",
        [
            [],
            eth(0x81, "ens1f0", (0x15B3, 0x1017), GEN3 / 2),
        ],
    ),
}


def synthetic_xml(desc):
    h = ctypes.CDLL("libhwloc.so.15")
    topo = ctypes.c_void_p()
    if h.hwloc_topology_init(ctypes.byref(topo)) != 0:
        sys.exit("hwloc_topology_init failed")
    if h.hwloc_topology_set_synthetic(topo, desc.encode()) != 0:
        sys.exit(f"bad synthetic description: {desc}")
    if h.hwloc_topology_load(topo) != 0:
        sys.exit("hwloc_topology_load failed")
    buf, n = ctypes.c_char_p(), ctypes.c_int()
    h.hwloc_topology_export_xmlbuffer.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                                  ctypes.POINTER(ctypes.c_int), ctypes.c_ulong]
    if h.hwloc_topology_export_xmlbuffer(topo, ctypes.byref(buf), ctypes.byref(n), 0) != 0:
        sys.exit("hwloc_topology_export_xmlbuffer failed")
    text = buf.value.decode()
    h.hwloc_topology_destroy(topo)
    return text


def add_pci(root, per_package):
    packages = [o for o in root.iter("object") if o.get("type") == "Package"]
    assert len(packages) == len(per_package), "one PCI list per package"
    gp = max(int(o.get("gp_index")) for o in root.iter("object")) + 1
    for pkg, devices in zip(packages, per_package):
        if not devices:
            continue
        buses = [int(d[0][5:7], 16) for d in devices]
        lo, hi = (0x00, 0x7F) if min(buses) < 0x80 else (0x80, 0xFF)
        bridge = ET.SubElement(pkg, "object", {"type": "Bridge", "gp_index": str(gp), "bridge_type": "0-1",
                                               "depth": "0", "bridge_pci": f"0000:[{lo:02x}-{hi:02x}]"})
        gp += 1
        for bus_id, cls, (vendor, device), speed, osdevs in devices:
            dev = ET.SubElement(bridge, "object", {
                "type": "PCIDev", "gp_index": str(gp), "pci_busid": bus_id,
                "pci_type": f"{cls:04x} [{vendor:04x}:{device:04x}] [{vendor:04x}:0000] a1",
                "pci_link_speed": f"{speed:f}"})
            gp += 1
            for name, kind in osdevs:
                ET.SubElement(dev, "object", {"type": "OSDev", "gp_index": str(gp), "name": name,
                                              "osdev_type": str(kind)})
                gp += 1


def main():
    for name, (desc, pci) in MACHINES.items():
        root = ET.fromstring(synthetic_xml(desc))
        machine = root.find("object")
        for info in machine.findall("info"):  # drop what differs from run to run
            if info.get("name") in ("ProcessName", "hwlocVersion"):
                machine.remove(info)
        add_pci(root, pci)
        ET.indent(root, space=" ")
        text = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n' +
                ET.tostring(root, encoding="unicode") + "\n")
        with open(os.path.join(HERE, name + ".xml"), "w") as f:
            f.write(text)
        print(f"{name}.xml: {len(text)} bytes")


if __name__ == "__main__":
    main()
