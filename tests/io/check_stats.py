#!/usr/bin/env python3
"""check_stats.py NPY JSON: compare gpureduce --op stats --format json output
with statistics computed here from the file (struct, exact rationals):
counts, min/max/nanmin/nanmax and sum bit for bit (sum = the exact sum
rounded to f64; mean = sum / count in f64), variances to 1e-12 relative."""
import json
import math
import struct
import sys
from fractions import Fraction

CODES = {"<f2": ("e", 2), "<f4": ("f", 4), "<f8": ("d", 8), "<i4": ("i", 4), "<i8": ("q", 8)}


def load(path):
    b = open(path, "rb").read()
    pre = 10 if b[6] == 1 else 12
    hlen = struct.unpack("<H" if pre == 10 else "<I", b[8:pre])[0]
    h = eval(b[pre:pre + hlen].decode("latin1"))  # test files we wrote ourselves
    n = 1
    for s in h["shape"]:
        n *= s
    data = b[pre + hlen:]
    if h["descr"] == "bfloat16":
        return [struct.unpack("<f", b"\0\0" + data[2 * i:2 * i + 2])[0] for i in range(n)], False
    fmt, size = CODES[h["descr"]]
    return list(struct.unpack("<%d%s" % (n, fmt), data[:n * size])), fmt in "iq"


def main():
    vals, is_int = load(sys.argv[1])
    got = json.load(open(sys.argv[2]))["stats"]
    bad = []

    def same(name, want):
        g = float.fromhex(got[name + "_hex"])
        ok = (math.isnan(g) and math.isnan(want)) or (g == want and math.copysign(1, g) == math.copysign(1, want))
        if not ok:
            bad.append("%s: got %r, want %r" % (name, g, want))

    nan = float("nan")
    nans = sum(1 for v in vals if v != v)
    pinf = sum(1 for v in vals if v == float("inf"))
    ninf = sum(1 for v in vals if v == float("-inf"))
    for k, w in (("count", len(vals)), ("nan", nans), ("pinf", pinf), ("ninf", ninf)):
        if got[k] != w:
            bad.append("%s: got %r, want %r" % (k, got[k], w))
    numbers = [v for v in vals if v == v]
    finite = [v for v in numbers if abs(v) != float("inf")]
    if nans or (pinf and ninf):
        s = nan
    elif pinf:
        s = float("inf")
    elif ninf:
        s = float("-inf")
    else:
        s = float(sum(Fraction(v) for v in finite)) if finite else 0.0
    same("sum", s)
    same("mean", s / len(vals) if vals else nan)
    same("min", min(numbers) if numbers and not nans else nan)
    same("max", max(numbers) if numbers and not nans else nan)
    same("nanmin", min(numbers) if numbers else nan)
    same("nanmax", max(numbers) if numbers else nan)
    if len(finite) == len(vals) and vals:
        mu = sum(Fraction(v) for v in vals) / len(vals)
        m2 = sum((Fraction(v) - mu) ** 2 for v in vals)
        for name, den in (("var", len(vals)), ("var_sample", len(vals) - 1)):
            g = float.fromhex(got[name + "_hex"])
            if den <= 0:
                if not math.isnan(g):
                    bad.append("%s: got %r, want nan" % (name, g))
                continue
            w = float(m2 / den)
            if abs(g - w) > 1e-12 * max(abs(w), 1e-300):
                bad.append("%s: got %r, want %r (rel %.3g)" % (name, g, w, abs(g - w) / max(abs(w), 1e-300)))
    else:
        for name in ("var", "var_sample"):
            if not math.isnan(float.fromhex(got[name + "_hex"])):
                bad.append("%s: want nan (NaN or Inf in the input)" % name)
    if is_int:
        if got["isum"] != sum(vals) or got["imin"] != min(vals) or got["imax"] != max(vals):
            bad.append("integers: isum/imin/imax %r %r %r, want %r %r %r" % (got["isum"], got["imin"], got["imax"],
                                                                         sum(vals), min(vals), max(vals)))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
