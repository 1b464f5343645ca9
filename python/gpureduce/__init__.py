"""gpureduce: repeatable distributed reductions of NumPy and GPU arrays over
mpi4py communicators, through libgpureduce (docs/PYTHON.md).

Every function is collective over ``comm`` (default ``MPI.COMM_WORLD``): each
rank passes its own part of the global array (the parts in rank order make
the array; argmin/argmax indices count in it) and the same arguments
otherwise. The root (``root=0``) gets the result, the other ranks ``None``,
unless ``all_ranks=True``. ``mode="exact"`` gives the correctly rounded
result: the same bits for any number of ranks, CPU or GPU.
"""
import ctypes
import math
import operator
import zlib

import numpy as np
from mpi4py import MPI

from . import _arrays, _context, _lib
from ._lib import Error

__version__ = "0.3.0"
__all__ = ["sum", "min", "max", "dot", "nrm2", "argmin", "argmax", "stats", "batch", "Result", "Stats", "Error",
           "finalize", "library_path", "library_version"]

_ARG_OPS = ("argmin", "argmax")
_VALUE_OPS = ("min", "max", "argmin", "argmax")  # results that are input values, of the input's type


def library_path():
    """The file of the libgpureduce shared library in use."""
    return _context.lib().path


def library_version():
    """The version of the libgpureduce in use ("0.3.0")."""
    return _context.lib().version


def finalize():
    """Destroy the library contexts now (also done at exit and by MPI.Finalize()). Collective over their communicators."""
    _context.finalize()


class Result:
    """One reduction's result (``full=True``).

    value: the NumPy scalar the plain call returns; index: the global index
    (argmin/argmax, else None); hex: the value as the ``gpureduce`` command's
    ``result_hex`` prints it (C's ``%a``, ``"0x1.8p+1"``; integers ``"0x2a"``;
    f16/bf16 values with their bits, ``"0x1p+0 (f16 0x3c00)"``); count: the
    elements reduced on all ranks; nan_count (exact mode); overflow: an
    integer result did not fit int64 (value is then the exact result rounded
    to float64); op, dtype, mode, backend: what ran; time: this rank's
    seconds (local, combine, total).
    """

    __slots__ = ("value", "index", "hex", "count", "nan_count", "overflow", "op", "dtype", "mode", "backend",
                 "time")

    def __repr__(self):
        idx = "" if self.index is None else ", index=%d" % self.index
        return "Result(%s=%r%s, hex=%r, count=%d, dtype=%s, mode=%s, backend=%s)" % (
            self.op, self.value, idx, self.hex, self.count, self.dtype, self.mode, self.backend)


class Stats:
    """One-pass statistics (``gpureduce.stats``): count, nan_count,
    pinf_count, ninf_count, sum (exact, rounded once to float64; int64 for
    integer input unless overflow), mean, var (ddof 0), var_sample (ddof 1),
    min, max, nanmin, nanmax (of the input's type), overflow, hex (of sum),
    dtype, backend. NaN and Inf as NumPy: see docs/STATS.md."""

    __slots__ = ("count", "nan_count", "pinf_count", "ninf_count", "sum", "mean", "var", "var_sample", "min",
                 "max", "nanmin", "nanmax", "overflow", "hex", "dtype", "backend")

    def __repr__(self):
        return "Stats(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


def _c_hex(f):
    """A double as C's printf("%a") writes it (glibc), which the CLI's result_hex uses."""
    if math.isnan(f):
        return "-nan" if math.copysign(1.0, f) < 0 else "nan"
    if math.isinf(f):
        return "-inf" if f < 0 else "inf"
    if f == 0:
        return "-0x0p+0" if math.copysign(1.0, f) < 0 else "0x0p+0"
    s = float(f).hex()  # '-0x1.8000000000000p+1'
    mant, exp = s.split("p")
    mant = mant.rstrip("0").rstrip(".")
    return "%sp%s" % (mant, exp)


def _value_hex(v, dtype):
    if v.is_integer and not v.overflow:
        return "-0x%x" % -v.i if v.i < 0 else "0x%x" % v.i
    s = _c_hex(v.f)
    if dtype in (_lib.F16, _lib.BF16) and not math.isnan(v.f):
        with np.errstate(over="ignore"):
            f32 = np.float32(v.f)
            if float(f32) == v.f:
                if dtype == _lib.BF16:
                    b = int(np.array(f32).view(np.uint32))
                    bits = b >> 16 if b & 0xFFFF == 0 else None
                else:
                    h = np.float16(f32)
                    bits = int(np.array(h).view(np.uint16)) if float(h) == v.f else None
                if bits is not None:
                    s += " (%s 0x%04x)" % ("bf16" if dtype == _lib.BF16 else "f16", bits)
    return s


def _scalar(v, op, inp, mode):
    if v.is_integer and not v.overflow:
        return inp.result_type()(v.i) if op in _VALUE_OPS else np.int64(v.i)
    if inp.dtype in (_lib.I32, _lib.I64):
        return np.float64(v.f)  # nrm2 of integers, or an integer result that overflowed int64
    if op in _VALUE_OPS or mode == "exact":
        return inp.result_type()(v.f)  # exact: rounded once to the input type, so this is exact
    return np.float64(v.f)  # fast mode accumulates and reports in float64


def _agree(comm, exc, sig, what):
    """One MPI_Allreduce: did every rank prepare its call, and with the same arguments?
    A local mistake then raises on every rank instead of leaving the others waiting."""
    h = zlib.crc32(repr(sig).encode()) if exc is None else 0
    out = np.zeros(3, dtype=np.int64)
    comm.Allreduce(np.array([1 if exc is not None else 0, h, -h], dtype=np.int64), out, op=MPI.MAX)
    if out[0]:
        msgs = comm.allgather(None if exc is None else "%s: %s" % (type(exc).__name__, exc))
        if exc is not None:
            raise exc
        bad = [r for r, m in enumerate(msgs) if m is not None]
        raise Error(_lib.GR_ERR_INVALID_ARG, "rank %d could not start the call (%s); every rank raises" %
                    (bad[0], msgs[bad[0]]), "gpureduce." + what)
    if out[1] != -out[2]:
        sigs = comm.allgather(sig)
        diff = "; ".join("rank %d: %r" % (r, s) for r, s in enumerate(sigs) if s != sig)
        raise Error(_lib.GR_ERR_INVALID_ARG, "the ranks called gpureduce.%s with different arguments (every rank "
                    "must pass the same ops, dtypes, mode, root, all_ranks and kind of memory): this rank %r; %s" %
                    (what, sig, diff[:2000]), "gpureduce." + what)


def _prepare(what, specs, mode, root, all_ranks, backend):
    """Local checks and the inputs; raises on a mistake (caught and agreed on by _call)."""
    if mode not in _lib.MODES:
        raise ValueError("gpureduce: mode %r: use 'fast' or 'exact'" % (mode,))
    root = operator.index(root)
    if not specs or len(specs) > _lib.GR_BATCH_MAX:
        raise ValueError("gpureduce.batch: %d items; use 1..%d" % (len(specs), _lib.GR_BATCH_MAX))
    prepared = []
    for spec in specs:
        if not isinstance(spec, (tuple, list)) or len(spec) not in (2, 3) or not isinstance(spec[0], str):
            raise TypeError("gpureduce.batch: an item is (op, x) or ('dot', x, y), not %r" % (type(spec),))
        op, x, y = spec[0], spec[1], spec[2] if len(spec) == 3 else None
        if op not in _lib.OPS and not (op == "stats" and what == "stats"):
            raise ValueError("gpureduce: op %r: use one of %s" % (op, ", ".join(sorted(_lib.OPS))))
        if (op == "dot") != (y is not None):
            raise ValueError("gpureduce: %s takes %s" % (op, "two arrays (x, y)" if op == "dot" else "one array"))
        prepared.append((op, _arrays.classify(x), _arrays.classify(y) if y is not None else None))
    inputs = [i for _, x, y in prepared for i in (x, y) if i is not None]
    on_device = inputs[0].device
    if any(i.device != on_device for i in inputs):
        raise ValueError("gpureduce: one call reduces host arrays or GPU arrays, not both")
    if backend is None:
        backend = "cuda" if on_device else "cpu"
    if backend not in _lib.BACKENDS:
        raise ValueError("gpureduce: backend %r: use 'cpu', 'cuda' or 'auto'" % (backend,))
    if on_device and backend == "cpu":
        raise ValueError("gpureduce: GPU arrays need the cuda backend (backend=None or 'cuda')")
    stream = None
    if on_device:
        streams = {i.stream for i in inputs if i.stream is not None}
        if len(streams) > 1:
            raise ValueError("gpureduce: the GPU arrays of one call come with different streams %s; synchronise "
                             "them onto one first" % sorted(streams))
        stream = streams.pop() if streams else 1  # 1: the legacy default stream
        for i in inputs:
            i.export_dlpack(stream)
    for op, x, y in prepared:
        if y is not None and (x.dtype != y.dtype or x.count != y.count):
            raise ValueError("gpureduce.dot: x and y differ (%s[%d] and %s[%d]); pass two arrays of one dtype and "
                             "size" % (_lib.DTYPE_NAMES[x.dtype], x.count, _lib.DTYPE_NAMES[y.dtype], y.count))
    devices = [i.device_id for i in inputs if i.device_id is not None]
    device = devices[0] if devices else _lib.GR_DEVICE_CURRENT
    sig = (what, mode, root, bool(all_ranks), on_device, backend,
           tuple((op, _lib.DTYPE_NAMES[x.dtype]) for op, x, _ in prepared))
    return prepared, backend, on_device, device, stream, sig


def _call(what, specs, comm, mode, root, all_ranks, backend):
    """Check and agree, then find the context: (prepared, ctx, stream) on every rank, or raise on every rank."""
    comm = MPI.COMM_WORLD if comm is None else comm
    if not isinstance(comm, MPI.Intracomm):
        raise TypeError("gpureduce: comm must be an mpi4py intracommunicator (e.g. MPI.COMM_WORLD), not %r" %
                        (type(comm),))
    _context.check_mpi()
    exc, prep = None, None
    try:
        _context.lib()  # a rank that cannot load the library raises with the others
        prep = _prepare(what, specs, mode, root, all_ranks, backend)
    except Exception as e:  # agreed on below, so every rank raises
        exc = e
    _agree(comm, exc, prep[5] if prep else None, what)
    prepared, backend, on_device, device, stream, _ = prep
    ctx = _context.get(comm, backend, device if on_device else _lib.GR_DEVICE_CURRENT)
    return comm, prepared, ctx, on_device, stream


class _Streamed:
    """The context's stream set to the arrays' stream for one call (device memory), then cleared."""

    def __init__(self, ctx, on_device, stream):
        self.ctx, self.stream = ctx, (stream if on_device else None)

    def __enter__(self):
        self.ctx.lock.acquire()
        if self.stream is not None:
            try:
                _context.lib().call("gr_ctx_set_stream", self.ctx.ptr, ctypes.c_void_p(self.stream))
            except BaseException:
                self.ctx.lock.release()
                raise

    def __exit__(self, *exc):
        if self.stream is not None:
            _context.lib().gr_ctx_set_stream(self.ctx.ptr, None)
        self.ctx.lock.release()


def _reduce(what, specs, comm, mode, root, all_ranks, backend):
    """Run the items as one batch: [(op, Result)] on ranks that hold the result, else None."""
    comm, prepared, ctx, on_device, stream = _call(what, specs, comm, mode, root, all_ranks, backend)
    L = _context.lib()
    k = len(prepared)
    bases = np.zeros(k, dtype=np.int64)
    if any(op in _ARG_OPS for op, _, _ in prepared):  # argmin/argmax: global indices
        counts = np.array([x.count for _, x, _ in prepared], dtype=np.int64)
        comm.Exscan(counts, bases, op=MPI.SUM)
        if comm.Get_rank() == 0:
            bases[:] = 0
    items = (_lib.BatchItem * k)()
    for j, (op, x, y) in enumerate(prepared):
        it = items[j]
        it.desc = _lib.Desc(x.dtype, _lib.OPS[op], 1, _lib.MODES[mode], root, 1 if all_ranks else 0)
        it.x, it.y, it.count, it.index_base = x.ptr or None, (y.ptr or None) if y else None, x.count, int(bases[j])
    out = (_lib.Value * k)()
    t = _lib.Timing()
    with _Streamed(ctx, on_device, stream):
        L.call("gr_reduce_batch_device" if on_device else "gr_reduce_batch_host", ctx.ptr, items, k, out,
               ctypes.byref(t))
    if not out[0].valid:
        return None
    results = []
    for j, (op, x, _) in enumerate(prepared):
        v = out[j]
        r = Result()
        r.value = _scalar(v, op, x, mode)
        r.index = int(v.index) if op in _ARG_OPS else None
        r.hex = _value_hex(v, x.dtype)
        r.count, r.nan_count, r.overflow = int(v.count), int(v.nan_count), bool(v.overflow)
        r.op, r.dtype, r.mode, r.backend = op, _lib.DTYPE_NAMES[x.dtype], mode, ctx.backend
        r.time = {"local": t.local, "combine": t.combine, "total": t.total}
        results.append(r)
    return results


def _plain(r):
    return (r.value, r.index) if r.op in _ARG_OPS else r.value


def _one(op, x, y, comm, mode, root, all_ranks, backend, full):
    res = _reduce(op, [(op, x) if y is None else (op, x, y)], comm, mode, root, all_ranks, backend)
    if res is None:
        return None
    return res[0] if full else _plain(res[0])


def sum(x, *, comm=None, mode="fast", root=0, all_ranks=False, backend=None, full=False):
    """Sum of the ranks' arrays. fast: float64 for float input (accumulated in f64); exact: the correctly
    rounded sum, of the input's float type; int64 for integer input. full=True: a Result."""
    return _one("sum", x, None, comm, mode, root, all_ranks, backend, full)


def min(x, *, comm=None, mode="fast", root=0, all_ranks=False, backend=None, full=False):
    """Smallest value (of the input's type; NaN when any value is NaN)."""
    return _one("min", x, None, comm, mode, root, all_ranks, backend, full)


def max(x, *, comm=None, mode="fast", root=0, all_ranks=False, backend=None, full=False):
    """Largest value (of the input's type; NaN when any value is NaN)."""
    return _one("max", x, None, comm, mode, root, all_ranks, backend, full)


def dot(x, y, *, comm=None, mode="fast", root=0, all_ranks=False, backend=None, full=False):
    """Sum of x[i]*y[i] over two arrays of one dtype and size (on each rank)."""
    return _one("dot", x, y, comm, mode, root, all_ranks, backend, full)


def nrm2(x, *, comm=None, mode="fast", root=0, all_ranks=False, backend=None, full=False):
    """Euclidean norm, without spurious overflow or underflow; exact: the correctly rounded norm."""
    return _one("nrm2", x, None, comm, mode, root, all_ranks, backend, full)


def argmin(x, *, comm=None, mode="fast", root=0, all_ranks=False, backend=None, full=False):
    """(value, global index) of the smallest value: the lowest index among ties, the first NaN if any."""
    return _one("argmin", x, None, comm, mode, root, all_ranks, backend, full)


def argmax(x, *, comm=None, mode="fast", root=0, all_ranks=False, backend=None, full=False):
    """(value, global index) of the largest value: the lowest index among ties, the first NaN if any."""
    return _one("argmax", x, None, comm, mode, root, all_ranks, backend, full)


def batch(items, *, comm=None, mode="fast", root=0, all_ranks=False, backend=None, full=False):
    """Several reductions in one call and one MPI collective: items are (op, x) or ("dot", x, y) with op
    one of sum, min, max, abssum, sumsq, dot, nrm2, argmin, argmax. Returns the list of what each
    single call returns (each with the same bits), or None on ranks without the result."""
    res = _reduce("batch", list(items), comm, mode, root, all_ranks, backend)
    if res is None:
        return None
    return res if full else [_plain(r) for r in res]


def stats(x, *, comm=None, mode="fast", root=0, all_ranks=False, backend=None):
    """One-pass statistics (a Stats), or None on ranks without the result. The sum is always exact
    (mode is checked but changes nothing)."""
    comm, prepared, ctx, on_device, stream = _call("stats", [("stats", x)], comm, mode, root, all_ranks, backend)
    x = prepared[0][1]
    d = _lib.Desc(x.dtype, 0, 1, _lib.MODES[mode], root, 1 if all_ranks else 0)
    st = _lib.Stats()
    with _Streamed(ctx, on_device, stream):
        _context.lib().call("gr_stats_device" if on_device else "gr_stats_host", ctx.ptr, x.ptr or None, x.count,
                            ctypes.byref(d), ctypes.byref(st), None)
    if not st.valid:
        return None
    s = Stats()
    s.count, s.nan_count, s.pinf_count, s.ninf_count = st.count, st.nan_count, st.pinf_count, st.ninf_count
    s.mean, s.var, s.var_sample = np.float64(st.mean), np.float64(st.var), np.float64(st.var_sample)
    s.overflow, s.dtype, s.backend = bool(st.overflow), _lib.DTYPE_NAMES[x.dtype], ctx.backend
    v = _lib.Value()
    if st.is_integer:
        t = x.result_type()
        s.min, s.max, s.nanmin, s.nanmax = t(st.imin), t(st.imax), t(st.imin), t(st.imax)
        s.sum = np.float64(st.sum) if st.overflow else np.int64(st.isum)
        v.is_integer, v.overflow, v.i, v.f = 1, st.overflow, st.isum, st.sum
    else:
        t = x.result_type()
        s.min, s.max, s.nanmin, s.nanmax = t(st.min), t(st.max), t(st.nanmin), t(st.nanmax)
        s.sum = np.float64(st.sum)
        v.f = st.sum
    s.hex = _value_hex(v, _lib.F64)
    return s

