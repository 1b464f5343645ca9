#!/usr/bin/env python3
"""Write the hwloc 2.x XML topologies used by the topo tests.

The files are committed next to this script; run it again only to change a
fixture (python3 gen_fixtures.py), then check each one still loads:
    lstopo-no-graphics --if xml -i FILE.xml

Each fixture is a small, realistic node. GPUs are NVIDIA PCI devices
(vendor 0x10de, class 0x0302 "3D controller") behind a PCIe switch port
(a PCI-to-PCI bridge) under their own host bridge, so every GPU sits on a
distinct bus, as on real servers. The host bridge hangs off the object the
GPU is local to (a Package, a NUMA-level Group, or the Machine); hwloc's
non-I/O ancestor of the GPU is then that object, which gives the GPU's
cpuset and NUMA node.

  dgx8.xml      2 sockets x 8 cores x 2 hyperthreads (PUs 0-31, Linux
                numbering: socket 0 = 0-7,16-23, socket 1 = 8-15,24-31),
                NUMA 0 and 1, 8 GPUs, 4 per socket.
  epyc4.xml     1 socket in NPS4 mode: 4 NUMA nodes of 4 cores (PUs 0-15),
                one GPU per NUMA node.
  h200pair.xml  1 socket, 16 cores, 1 NUMA node, 2 GPUs both local to it
                (like the 2 x H200 test machine).
  small2.xml    2 sockets x 2 cores, NUMA 0 and 1, 1 GPU per socket:
                4 ranks on it are more ranks than GPUs.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def mask(bits):
    """hwloc bitmap string: 32-bit words, most significant first, comma separated."""
    v = 0
    for b in bits:
        v |= 1 << b
    words = []
    while True:
        words.append(v & 0xFFFFFFFF)
        v >>= 32
        if not v:
            break
    return ",".join("0x%08x" % w for w in reversed(words))


class Gen:
    def __init__(self):
        self.gp = 0
        self.out = []

    def gpi(self):
        self.gp += 1
        return self.gp

    def line(self, depth, s):
        self.out.append("  " * depth + s)


def sets(cpus, nodes):
    c, n = mask(cpus), mask(nodes)
    return ('cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s"' % (c, c, n, n))


def emit_numa(g, d, os_index, cpus, mem_gb):
    g.line(d, '<object type="NUMANode" os_index="%d" %s gp_index="%d" local_memory="%d">'
           % (os_index, sets(cpus, [os_index]), g.gpi(), mem_gb << 30))
    g.line(d + 1, '<page_type size="4096" count="%d"/>' % ((mem_gb << 30) // 4096))
    g.line(d, "</object>")


def emit_cores(g, d, cores, nodes):
    """cores: list of lists of PU os indexes, one list per core."""
    for core_os, pus in cores:
        g.line(d, '<object type="Core" os_index="%d" %s gp_index="%d">' % (core_os, sets(pus, nodes), g.gpi()))
        for pu in pus:
            g.line(d + 1, '<object type="PU" os_index="%d" %s gp_index="%d"/>' % (pu, sets([pu], nodes), g.gpi()))
        g.line(d, "</object>")


def emit_l3(g, d, cores, nodes, size_mb):
    cpus = sorted(p for _, pus in cores for p in pus)
    g.line(d, '<object type="L3Cache" %s gp_index="%d" cache_size="%d" depth="3" cache_linesize="64" '
           'cache_associativity="16" cache_type="0">' % (sets(cpus, nodes), g.gpi(), size_mb << 20))
    emit_cores(g, d + 1, cores, nodes)
    g.line(d, "</object>")


def emit_gpu(g, d, busid, devid, name):
    """Host bridge -> PCIe switch port -> GPU on bus `bus`."""
    dom, bus = busid.split(":")[0], int(busid.split(":")[1], 16)
    up = bus - 1
    g.line(d, '<object type="Bridge" gp_index="%d" bridge_type="0-1" depth="0" bridge_pci="%s:[%02x-%02x]">'
           % (g.gpi(), dom, up, bus))
    g.line(d + 1, '<object type="Bridge" gp_index="%d" bridge_type="1-1" depth="1" bridge_pci="%s:[%02x-%02x]" '
           'pci_busid="%s:%02x:00.0" pci_type="0604 [1000:c030] [0000:0000] b0" pci_link_speed="31.507692">'
           % (g.gpi(), dom, bus, bus, dom, up))
    g.line(d + 2, '<object type="PCIDev" gp_index="%d" pci_busid="%s" pci_type="0302 [10de:%04x] [10de:%04x] a1" '
           'pci_link_speed="31.507692">' % (g.gpi(), busid, devid, devid))
    g.line(d + 3, '<info name="PCIVendor" value="NVIDIA Corporation"/>')
    g.line(d + 3, '<info name="PCIDevice" value="%s"/>' % name)
    g.line(d + 2, "</object>")
    g.line(d + 1, "</object>")
    g.line(d, "</object>")


def machine_open(g, cpus, nodes, desc):
    c, n = mask(cpus), mask(nodes)
    g.line(0, '<?xml version="1.0" encoding="UTF-8"?>')
    g.line(0, '<!DOCTYPE topology SYSTEM "hwloc2.dtd">')
    g.line(0, '<topology version="2.0">')
    g.line(1, '<object type="Machine" os_index="0" cpuset="%s" complete_cpuset="%s" allowed_cpuset="%s" '
           'nodeset="%s" complete_nodeset="%s" allowed_nodeset="%s" gp_index="%d">'
           % (c, c, c, n, n, n, g.gpi()))
    g.line(2, '<info name="Backend" value="Linux"/>')
    g.line(2, '<info name="Architecture" value="x86_64"/>')
    g.line(2, '<info name="gpureduceFixture" value="%s"/>' % desc)


def machine_close(g):
    g.line(1, "</object>")
    for s in ("discovery.pu", "discovery.numa", "discovery.numa_memory"):
        g.line(1, '<support name="%s"/>' % s)
    g.line(0, "</topology>")
    return "\n".join(g.out) + "\n"


H100 = (0x2330, "GH100 [H100 SXM5 80GB]")
H200 = (0x2335, "GH100 [H200 SXM 141GB]")
A100 = (0x20b2, "GA100 [A100 SXM4 80GB]")


def dgx8():
    g = Gen()
    ncore, smt = 8, 2
    allc = list(range(2 * ncore * smt))
    machine_open(g, allc, [0, 1], "2 sockets x 8 cores x 2 threads, 8 GPUs (4 per socket)")
    buses = [["0000:07:00.0", "0000:0f:00.0", "0000:47:00.0", "0000:4e:00.0"],
             ["0000:87:00.0", "0000:90:00.0", "0000:b7:00.0", "0000:bd:00.0"]]
    for p in range(2):
        cores = [(p * ncore + k, [p * ncore + k, 2 * ncore + p * ncore + k]) for k in range(ncore)]
        cpus = sorted(x for _, pus in cores for x in pus)
        g.line(2, '<object type="Package" os_index="%d" %s gp_index="%d">' % (p, sets(cpus, [p]), g.gpi()))
        g.line(3, '<info name="CPUModel" value="AMD EPYC 7742 64-Core Processor"/>')
        emit_numa(g, 3, p, cpus, 256)
        emit_l3(g, 3, cores, [p], 32)
        for b in buses[p]:
            emit_gpu(g, 3, b, *H100)
        g.line(2, "</object>")
    return machine_close(g)


def epyc4():
    g = Gen()
    allc = list(range(16))
    machine_open(g, allc, [0, 1, 2, 3], "1 socket in NPS4 mode (4 NUMA nodes x 4 cores), 4 GPUs (1 per NUMA node)")
    g.line(2, '<object type="Package" os_index="0" %s gp_index="%d">' % (sets(allc, [0, 1, 2, 3]), g.gpi()))
    g.line(3, '<info name="CPUModel" value="AMD EPYC 7313P 16-Core Processor"/>')
    buses = ["0000:01:00.0", "0000:41:00.0", "0000:81:00.0", "0000:c1:00.0"]
    for q in range(4):
        cpus = list(range(4 * q, 4 * q + 4))
        g.line(3, '<object type="Group" %s gp_index="%d" kind="1000" subkind="0" dont_merge="0">'
               % (sets(cpus, [q]), g.gpi()))
        emit_numa(g, 4, q, cpus, 64)
        emit_l3(g, 4, [(c, [c]) for c in cpus], [q], 32)
        emit_gpu(g, 4, buses[q], *A100)
        g.line(3, "</object>")
    g.line(2, "</object>")
    return machine_close(g)


def h200pair():
    g = Gen()
    allc = list(range(16))
    machine_open(g, allc, [0], "1 socket x 16 cores, 1 NUMA node, 2 GPUs on it")
    g.line(2, '<object type="Package" os_index="0" %s gp_index="%d">' % (sets(allc, [0]), g.gpi()))
    g.line(3, '<info name="CPUModel" value="Intel(R) Xeon(R) Platinum 8480C"/>')
    emit_numa(g, 3, 0, allc, 128)
    emit_l3(g, 3, [(c, [c]) for c in allc], [0], 105)
    for b in ("0000:18:00.0", "0000:2a:00.0"):
        emit_gpu(g, 3, b, *H200)
    g.line(2, "</object>")
    return machine_close(g)


def small2():
    g = Gen()
    machine_open(g, [0, 1, 2, 3], [0, 1], "2 sockets x 2 cores, 2 GPUs (1 per socket)")
    buses = ["0000:3b:00.0", "0000:d8:00.0"]
    for p in range(2):
        cpus = [2 * p, 2 * p + 1]
        g.line(2, '<object type="Package" os_index="%d" %s gp_index="%d">' % (p, sets(cpus, [p]), g.gpi()))
        emit_numa(g, 3, p, cpus, 32)
        emit_l3(g, 3, [(c, [c]) for c in cpus], [p], 16)
        emit_gpu(g, 3, buses[p], *A100)
        g.line(2, "</object>")
    return machine_close(g)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else HERE
    for name, fn in (("dgx8", dgx8), ("epyc4", epyc4), ("h200pair", h200pair), ("small2", small2)):
        path = os.path.join(outdir, name + ".xml")
        with open(path, "w") as f:
            f.write(fn())
        print("wrote", path)


if __name__ == "__main__":
    main()
