#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_npy (tests/fuzz/corpus/): valid headers of
every version, dtype and shape form, and each kind of broken header. Run it
from anywhere; it rewrites the corpus directory next to this script."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def header(d, version=1, pad=True, hlen_delta=0):
    text = d.encode("latin1")
    pre = 10 if version == 1 else 12
    body = text + b"\n"
    if pad:
        body = text + b" " * (64 - (pre + len(text) + 1) % 64) + b"\n"
    hlen = len(body) + hlen_delta
    fmt = "<H" if version == 1 else "<I"
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack(fmt, hlen) + body


def dict_(descr="'<f4'", fortran="False", shape="(4,)"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


cases = {}
for v in (1, 2, 3):
    for descr in ("'<f4'", "'<f8'", "'<i4'", "'<i8'", "'<f2'", "'bfloat16'", "'<V2'", "'|V2'", "'=f4'"):
        cases["ok_v%d_%s" % (v, descr.strip("'").replace("<", "lt").replace("|", "bar").replace("=", "eq"))] = (
            header(dict_(descr), v) + b"\0" * 16)
for name, shape in (("scalar", "()"), ("zero", "(0,)"), ("3d", "(2, 3, 4)"), ("long", "(3L, 2L)"),
                    ("max", "(18446744073709551615,)"), ("zero_mid", "(4294967296, 0, 4294967296)")):
    cases["shape_" + name] = header(dict_(shape=shape))
cases["keys_reordered"] = header("{'shape': (2,), 'fortran_order': False, 'descr': '<f8'}")
cases["double_quotes"] = header('{"descr": "<f4", "fortran_order": False, "shape": (1,)}')
cases["bad_magic"] = b"\x93NUMPZ\x01\x00\x10\x00" + b" " * 16
cases["zip"] = b"PK\x03\x04" + b"\0" * 26
cases["version4"] = b"\x93NUMPY\x04\x00\x10\x00" + b" " * 16
cases["preamble_cut"] = b"\x93NUMPY\x02\x00\x10"
cases["hlen_long"] = header(dict_(), 1, hlen_delta=200)
cases["hlen_short"] = header(dict_(), 1, hlen_delta=-50)
cases["hlen_huge_v2"] = b"\x93NUMPY\x02\x00\xff\xff\xff\x7f" + b"{}"
cases["fortran"] = header(dict_(fortran="True", shape="(2, 3)"))
cases["big_endian"] = header(dict_("'>f8'"))
cases["object"] = header(dict_("'|O'"))
cases["structured"] = header(dict_("[('a', '<f4'), ('b', '<i4')]"))
cases["overflow"] = header(dict_(shape="(4294967296, 4294967296)"))
cases["overflow_bytes"] = header(dict_("'<f8'", shape="(2305843009213693952, 2)"))
cases["dim_too_big"] = header(dict_(shape="(99999999999999999999,)"))
cases["missing_key"] = header("{'descr': '<f4', 'shape': (1,)}")
cases["extra_key"] = header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}")
cases["junk_after"] = header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} xyz")
cases["unterminated"] = header("{'descr': '<f4, 'fortran_order': False")
cases["empty"] = b""

os.makedirs(OUT, exist_ok=True)
for name in os.listdir(OUT):
    os.remove(os.path.join(OUT, name))
for name, data in sorted(cases.items()):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(cases), OUT))
