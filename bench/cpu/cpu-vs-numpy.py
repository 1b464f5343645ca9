#!/usr/bin/env python3
"""cpu-vs-numpy.py - the cpu backend next to a plain C loop and numpy, in one run.

Runs gr_cpu_compare (bench/cpu/cpu_compare.c: the cpu backend in fast and exact
mode, f32 and f64, on 1 thread and on all of the rank's cores, a plain C read
loop on the same buffers, and the per-call cost at 1000 f64 elements against a
loop + MPI_Allreduce), times numpy's np.sum(a, dtype=np.float64) on arrays of
the same size, and prints one table with the ratios and the goals of issue #22.

    python3 bench/cpu/cpu-vs-numpy.py [--n 2^26] [--reps 3] [--threads T]
                                  [--bin build-rel/gr_cpu_compare] [--no-numpy]
                                  [--mpirun "mpirun -np 1"] [--pages huge|small]

--pages: the page size every row's buffers ask for. huge (the default):
numpy's own choice for its arrays (madvise(MADV_HUGEPAGE) where the kernel's
THP setting allows it), and gr_cpu_compare's buffers the same; small: numpy's
hugepage advice turned off and gr_cpu_compare's buffers from plain malloc.

numpy is needed only for the numpy rows (pip install numpy); without it, or
with --no-numpy, they are left out. Exit status: 0 when every row was measured
(goals are reported, never enforced: this machine's speed is not a test), 1 on
a missing or failing binary or an incomplete report, 2 on bad options.
"""
import argparse
import os
import shlex
import socket
import subprocess
import sys
import time


def parse_count(s):
    s = s.strip()
    if "^" in s:
        b, e = s.split("^", 1)
        return int(b) ** int(e)
    return int(s, 0)


def find_bin(repo):
    for d in ("build-rel", "build", "build-cpu"):
        p = os.path.join(repo, d, "gr_cpu_compare")
        if os.access(p, os.X_OK):
            return p
    return None


def median(v):
    v = sorted(v)
    m = len(v) // 2
    return v[m] if len(v) % 2 else 0.5 * (v[m - 1] + v[m])


class NumpyRows:
    """np.sum(a, dtype=np.float64) on f32 and f64 arrays of n uniform [0, 1) numbers."""

    def __init__(self, n, huge):
        import numpy as np

        self.np = np
        if not huge:
            try:
                from numpy._core import multiarray
            except ImportError:  # numpy < 2
                from numpy.core import multiarray
            multiarray._set_madvise_hugepage(False)
        a64 = np.random.default_rng(1).random(n)
        self.arrays = {"f32": a64.astype(np.float32), "f64": a64}
        for a in self.arrays.values():
            np.sum(a, dtype=np.float64)  # warm-up

    def once(self):
        """GB/s of one timed sum per dtype."""
        out = {}
        for name, a in self.arrays.items():
            t0 = time.perf_counter()
            self.np.sum(a, dtype=self.np.float64)
            out[name] = a.nbytes / (time.perf_counter() - t0) * 1e-9
        return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", default="2^26", help="elements per row (default 2^26)")
    ap.add_argument("--reps", type=int, default=3, help="rounds (each times every row once); medians are shown")
    ap.add_argument("--threads", type=int, default=0, help="'all cores' threads (default: the cores this process may use)")
    ap.add_argument("--calls", type=int, default=20000, help="calls per batch of the per-call rows")
    ap.add_argument("--small", default="1000", help="elements of the per-call rows (default 1000)")
    ap.add_argument("--bin", default=None, help="gr_cpu_compare (default: build-rel/, build/ or build-cpu/)")
    ap.add_argument("--mpirun", default="", help="launcher prefix, e.g. 'mpirun -np 1' (default: run directly)")
    ap.add_argument("--no-numpy", action="store_true", help="leave the numpy rows out")
    ap.add_argument("--pages", choices=("huge", "small"), default="huge",
                    help="page size the buffers ask for (default huge, as numpy does)")
    a = ap.parse_args()
    try:
        n, small = parse_count(a.n), parse_count(a.small)
    except ValueError as e:
        ap.error(f"bad count: {e}")
    if n < 1 or small < 1 or a.reps < 1:
        ap.error("--n, --small and --reps must be positive")
    binary = a.bin or find_bin(repo)
    if not binary or not os.access(binary, os.X_OK):
        print("cpu-vs-numpy: no gr_cpu_compare; build it (cmake --build build-rel --target gr_cpu_compare) "
              "or pass --bin", file=sys.stderr)
        return 1

    # Rounds: each runs every row once (gr_cpu_compare --reps 1: one warm-up,
    # one timed run per row) and numpy once; a row's figure is its median over
    # the rounds. On a shared machine a burst of load then hits every row of a
    # round alike instead of all the runs of one row.
    npr, npver = None, None
    if not a.no_numpy:
        try:
            npr = NumpyRows(n, a.pages == "huge")
            npver = npr.np.__version__
        except ImportError:
            print("# numpy not installed: numpy rows left out (pip install numpy)")
    load0 = os.getloadavg()[0]
    cmd = shlex.split(a.mpirun) + [binary, "--n", str(n), "--reps", "1", "--calls", str(a.calls),
                                   "--small", str(small), "--pages", a.pages]
    if a.threads > 0:
        cmd += ["--threads", str(a.threads)]
    runs, call_runs, np_runs, header, threads = {}, {}, {}, "", 1
    for _ in range(a.reps):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout + p.stderr, file=sys.stderr)
            print(f"cpu-vs-numpy: {' '.join(cmd)} failed with status {p.returncode}", file=sys.stderr)
            return 1
        for line in p.stdout.splitlines():
            f = line.split()
            if line.startswith("#"):
                header = line.replace(", reps 1,", f", {a.reps} rounds,")
            elif f and f[0] == "row" and len(f) == 6:
                runs.setdefault((f[1], f[2], int(f[3])), []).append(float(f[5]))
                threads = max(threads, int(f[3]))
            elif f and f[0] == "call" and len(f) == 4:
                call_runs.setdefault(f[1], []).append(float(f[3]))
        if npr:
            for k, v in npr.once().items():
                np_runs.setdefault(k, []).append(v)
    rows = {k: median(v) for k, v in runs.items()}
    calls = {k: median(v) for k, v in call_runs.items()}
    npy = {k: median(v) for k, v in np_runs.items()}
    load1 = os.getloadavg()[0]

    want = [(k, d, t) for d in ("f32", "f64") for k in ("loop", "fast", "exact") for t in sorted({1, threads})]
    missing = [w for w in want if w not in rows or not rows[w] > 0]
    missing += [c for c in ("naive+allreduce", "loop+allreduce", "fast", "exact") if not calls.get(c, 0) > 0]
    if missing:
        print(f"cpu-vs-numpy: rows missing from gr_cpu_compare's output: {missing}", file=sys.stderr)
        return 1

    print(f"# cpu-vs-numpy: n {n}, median of {a.reps} rounds, host {socket.gethostname()}, "
          f"load average {load0:.1f} before / {load1:.1f} after" + (f", numpy {npver}" if npver else ""))
    print(header)
    print(f"{'dtype':5} {'row':12} {'threads':>7} {'GB/s':>8} {'x numpy':>8} {'x loop':>7}")
    for d in ("f32", "f64"):
        if d in npy:
            print(f"{d:5} {'numpy.sum':12} {1:>7} {npy[d]:8.2f} {1.0:8.2f} {npy[d] / rows[('loop', d, 1)]:7.2f}")
        for k in ("loop", "fast", "exact"):
            for t in sorted({1, threads}):
                g = rows[(k, d, t)]
                xn = f"{g / npy[d]:8.2f}" if d in npy else f"{'-':>8}"
                print(f"{d:5} {k:12} {t:>7} {g:8.2f} {xn} {g / rows[('loop', d, t)]:7.2f}")
    print(f"# per call at {small} f64 elements, result on every rank (us): "
          + ", ".join(f"{c} {calls[c]:.3f}" for c in ("naive+allreduce", "loop+allreduce", "fast", "exact")))

    print("# goals (issue #22), reported, not enforced:")
    goals = []
    for d in ("f32", "f64"):
        if d in npy:
            goals.append((f"fast {d} 1 thread >= 1.0x numpy", rows[("fast", d, 1)] / npy[d], 1.0))
    for d in ("f32", "f64"):
        for t in sorted({1, threads}):
            goals.append((f"exact {d} {t} thr >= 0.5x fast", rows[("exact", d, t)] / rows[("fast", d, t)], 0.5))
    for d in ("f32", "f64"):
        goals.append((f"fast {d} {threads} thr >= 0.85x loop {threads} thr",
                      rows[("fast", d, threads)] / rows[("loop", d, threads)], 0.85))
    for m in ("fast", "exact"):
        goals.append((f"{m} per call <= 2x naive loop + allreduce",
                      calls["naive+allreduce"] / calls[m], 0.5))
    for name, v, need in goals:
        print(f"#   {name:44} {v:6.2f}  {'met' if v >= need else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
