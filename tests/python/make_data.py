"""make_data.py OUTDIR - adversarial inputs for the Python tests, as .npy files
the gpureduce command reads too (tests/python/python_data.sh runs it on them)."""
import sys

import numpy as np


def adversarial_f64(n, rng):
    """Cancellation (+-1e16 and +-1e300 pairs around small values), huge and tiny
    magnitudes (1e-300, subnormals), all signs, shuffled."""
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
    big = rng.choice(n, n // 4, replace=False)
    x[big[: len(big) // 2]] = 1e16
    x[big[len(big) // 2:]] = -1e16
    x[:7] = [1e300, -1e300, 5e-324, -1e-310, 1.0, 2.0 ** -1074 * 3, -0.0]
    x[n // 2] = 1e300 * 0.75
    x[n // 2 + 1] = -1e300 * 0.75
    rng.shuffle(x)
    return x


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(23)
    np.save(out + "/adv_f64.npy", adversarial_f64(3001, rng))
    f32 = (rng.standard_normal(2999) * 10.0 ** rng.integers(-30, 30, 2999)).astype(np.float32)
    f32[::3] = np.float32(3e7)
    f32[1::3] = np.float32(-3e7)
    np.save(out + "/adv_f32.npy", f32)
    # dot: products that cancel (x*y = +-1e20 pairs) around small ones
    x = rng.standard_normal(1501) * 10.0 ** rng.integers(-20, 20, 1501)
    y = rng.standard_normal(1501) * 10.0 ** rng.integers(-20, 20, 1501)
    x[:600:2], y[:600:2], x[1:600:2], y[1:600:2] = 1e10, 1e10, -1e10, 1e10
    np.save(out + "/dot_x.npy", x)
    np.save(out + "/dot_y.npy", y)
    # argmin/argmax: the extremes repeated (ties across any rank boundary), then a NaN
    t = rng.integers(-5, 5, 1000).astype(np.float64)
    t[[3, 500, 999]] = 7.0
    t[[10, 334, 667]] = -9.0
    np.save(out + "/ties.npy", t)
    t[[400, 800]] = np.nan
    np.save(out + "/nan.npy", t)


if __name__ == "__main__":
    main()
