#!/usr/bin/env python3
"""npyw.py - write .npy and raw test files with the struct module (no numpy),
and print what a reduction of them must give.

  npyw.py write PATH [--descr <f4] [--shape 2,3,4 | --shape ""] [--version 1|2|3]
          [--values iota|ones|rand|randexp] [--seed S] [--fortran]
          [--hlen-delta N] [--truncate N] [--extra N] [--magic HEX] [--major M]
          [--raw] [--prefix N] [--no-data]
      Writes the file; prints JSON {"n", "sum_hex" (exactly rounded, as float.hex),
      "sum_int", "min", "max"} for the values written.
  npyw.py check-header PATH --descr <f4 --shape N
      Exit 0 when PATH starts with the exact header numpy.lib.format would write
      (numpy >= 1.24: growth padding, 64-byte alignment), else print both and exit 1.

iota is i % 1000 as the `iota` generator of gpureduce, so a file of iota values
must reduce to the bits of `gpureduce --gen iota --n N`.
"""
import argparse
import json
import random
import struct
import sys
from fractions import Fraction

FMT = {"f2": "e", "f4": "f", "f8": "d", "i4": "i", "i8": "q", "u2": "H", "u4": "I", "V2": "H"}
PREC = {"f2": (11, -24), "f4": (24, -149), "f8": (53, -1074), "bfloat16": (8, -133)}


def to_bf16(v):
    """v rounded to bfloat16 (nearest even), as a Python float."""
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", b))[0]


def numpy_header(descr, shape, fortran=False, version=None):
    """The bytes numpy.lib.format._write_array_header writes."""
    if len(shape) == 1:
        shape_repr = "(%d,)" % shape[0]
    else:
        shape_repr = "(" + ", ".join(str(s) for s in shape) + ")"
    d = "{'descr': %r, 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False", shape_repr)
    if shape:
        d += " " * (21 - len(repr(shape[-1 if fortran else 0])))
    for v in ([version] if version else [1, 2]):
        pre = 10 if v == 1 else 12
        raw = d.encode("latin1" if v < 3 else "utf8")
        hlen = len(raw) + 1
        pad = 64 - (pre + hlen) % 64
        if v == 1 and hlen + pad > 65535:
            continue
        fmt = "<H" if v == 1 else "<I"
        return b"\x93NUMPY" + bytes([v, 0]) + struct.pack(fmt, hlen + pad) + raw + b" " * pad + b"\n"
    raise ValueError("header too long")


def round_fraction(x, prec, emin):
    """x rounded to nearest-even in a binary format of prec bits, min exponent emin (of the last bit)."""
    if x == 0:
        return 0.0
    sign = -1 if x < 0 else 1
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    lsb = max(e - (prec - 1), emin)
    m = a / Fraction(2) ** lsb
    q = m.numerator // m.denominator
    r = m - q
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and q % 2 == 1):
        q += 1
    return sign * float(Fraction(q) * Fraction(2) ** lsb)


def values(kind, n, code, seed):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if kind == "iota":
            v = i % 1000
        elif kind == "ones":
            v = 1
        elif kind == "rand":
            v = rng.randrange(-10**6, 10**6) if code[0] == "i" else rng.uniform(-1, 1)
        elif kind == "specials":  # NaN, +Inf, -Inf among random values
            v = float("nan") if i % 7 == 3 else float("inf") if i % 11 == 5 else float("-inf") if i % 13 == 6 else rng.uniform(-1, 1)
        elif kind == "infs":  # +Inf and random values, no NaN
            v = float("inf") if i % 11 == 5 else rng.uniform(-1, 1)
        elif kind == "nans":  # NaN and random values
            v = float("nan") if i % 7 == 3 else rng.uniform(-4, 4)
        else:  # randexp: wide exponents, so the order of additions matters
            v = rng.randrange(-2**30, 2**30) if code[0] == "i" else rng.uniform(1, 2) * 2.0 ** rng.randrange(-40, 40) * rng.choice((-1, 1))
        if code == "bfloat16":
            v = to_bf16(float(v))
        elif code[0] == "f":
            v = struct.unpack("<" + FMT[code], struct.pack("<" + FMT[code], float(v)))[0]
        out.append(v)
    return out


def cmd_write(a):
    descr = a.descr
    code = descr.lstrip("<>=|")
    shape = [int(s) for s in a.shape.split(",") if s.strip()] if a.shape else []
    n = 1
    for s in shape:
        n *= s
    order = ">" if descr.startswith(">") else "<"
    if a.no_data:
        n_data = 0
    else:
        n_data = n
    vals = values(a.values, n_data, code, a.seed) if (code in FMT and code != "V2") or code == "bfloat16" else [0] * n_data
    item = struct.calcsize(FMT.get(code, "H"))
    if code == "bfloat16":
        data = b"".join(struct.pack("<f", v)[2:] for v in vals)
    elif code in FMT:
        data = b"".join(struct.pack(order + FMT[code], v) for v in vals)
    else:
        data = b"\0" * (n_data * 8)
    if a.raw:
        body = b"\xee" * a.prefix + data
    else:
        hdr = bytearray(numpy_header(descr, shape, a.fortran, a.version))
        pre = 10 if hdr[6] == 1 else 12
        if a.hlen_delta:
            hlen = struct.unpack("<H" if pre == 10 else "<I", bytes(hdr[8:pre]))[0] + a.hlen_delta
            hdr[8:pre] = struct.pack("<H" if pre == 10 else "<I", hlen)
        if a.magic is not None:
            m = bytes.fromhex(a.magic)
            hdr[0:len(m)] = m
        if a.major is not None:
            hdr[6] = a.major
        body = bytes(hdr) + data
    if a.truncate:
        body = body[:len(body) - a.truncate]
    body += b"\0" * a.extra
    with open(a.path, "wb") as f:
        f.write(body)
    res = {"n": n, "item": item}
    finite = all(v == v and abs(v) != float("inf") for v in vals)
    if code in PREC and vals and finite:
        exact = sum(Fraction(v) for v in vals)
        res["sum_hex"] = round_fraction(exact, *PREC[code]).hex()
        res["sum64_hex"] = round_fraction(exact, *PREC["f8"]).hex()
        res["min"] = min(vals)
        res["max"] = max(vals)
    elif code[0] == "i" and vals:
        res["sum_int"] = sum(vals)
        res["min"] = min(vals)
        res["max"] = max(vals)
    print(json.dumps(res))


def cmd_check_header(a):
    shape = [int(s) for s in a.shape.split(",") if s.strip()]
    want = numpy_header(a.descr, shape)
    with open(a.path, "rb") as f:
        got = f.read(len(want))
    if got != want:
        print("header differs from numpy's:\n  got  %r\n  want %r" % (got, want))
        return 1
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("path")
    w.add_argument("--descr", default="<f4")
    w.add_argument("--shape", default="10")
    w.add_argument("--version", type=int, default=None)
    w.add_argument("--values", default="iota", choices=["iota", "ones", "rand", "randexp", "specials", "infs", "nans"])
    w.add_argument("--seed", type=int, default=1)
    w.add_argument("--fortran", action="store_true")
    w.add_argument("--hlen-delta", type=int, default=0)
    w.add_argument("--truncate", type=int, default=0)
    w.add_argument("--extra", type=int, default=0)
    w.add_argument("--magic", default=None)
    w.add_argument("--major", type=int, default=None)
    w.add_argument("--raw", action="store_true")
    w.add_argument("--no-data", action="store_true", help="header only (for shapes too big to write)")
    w.add_argument("--prefix", type=int, default=0)
    c = sub.add_parser("check-header")
    c.add_argument("path")
    c.add_argument("--descr", required=True)
    c.add_argument("--shape", required=True)
    a = p.parse_args()
    if a.cmd == "write":
        cmd_write(a)
        return 0
    return cmd_check_header(a)


if __name__ == "__main__":
    sys.exit(main())
