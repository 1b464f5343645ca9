"""Exact references for the Python tests: rationals, rounded once."""
import math
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "io"))
from npyw import round_fraction  # noqa: E402  (the io tests' rounding of a rational)


def round_binary(q, mant_bits, emin):
    """The Fraction q rounded to nearest-even in a binary format of mant_bits
    significand bits and smallest normal exponent emin."""
    return round_fraction(q, mant_bits, emin - (mant_bits - 1))


def to_f32(q):
    return round_binary(q, 24, -126)


def exact_sum(xs):
    return sum((Fraction(float(v)) for v in xs), Fraction(0))


def exact_dot(xs, ys):
    return sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(xs, ys)), Fraction(0))


def sqrt_rounded(q, mant_bits=53, emin=-1022):
    """sqrt(q), correctly rounded: floor(sqrt(q) * 2^s) with 60+ bits, plus a half when inexact."""
    if q == 0:
        return 0.0
    s = 0
    while Fraction(4) ** s * q < Fraction(2) ** 124:
        s += 8
    while Fraction(4) ** s * q >= Fraction(2) ** 132:
        s -= 8
    scaled = q * Fraction(4) ** s
    m = math.isqrt(scaled.numerator // scaled.denominator)
    root = Fraction(m) if Fraction(m * m) == scaled else Fraction(2 * m + 1, 2)
    return round_binary(root / Fraction(2) ** s, mant_bits, emin)
