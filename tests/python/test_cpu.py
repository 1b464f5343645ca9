"""The Python package on the cpu backend, under mpirun -np 1, 2 and 3
(tests/cmake/python.cmake): exact results against math.fsum and rational
references and against the gpureduce command's bits, the vector ops,
batches, stats, root / all_ranks, and errors that raise on every rank."""
import json
import math
import os

import numpy as np
import pytest
from mpi4py import MPI

import exact_ref
import gpureduce as gr

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
DATA = os.environ.get("GR_PY_DATA", "")


def shard(a):
    """This rank's part of the global array a, as the library shards: [r*N/np, (r+1)*N/np)."""
    n = len(a)
    return np.ascontiguousarray(a[RANK * n // SIZE:(RANK + 1) * n // SIZE])


def data(name):
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        pytest.skip("no %s (the CTest fixture python_data makes it)" % path)
    return np.load(path)


def cli(name):
    with open(os.path.join(DATA, name + ".json")) as f:
        return json.load(f)


def test_library_loaded_from_build_tree():
    assert gr.library_path() == os.environ["GPUREDUCE_LIBRARY"]
    assert gr.library_version() == gr.__version__


def test_exact_sum_is_fsum_on_adversarial_data():
    g = data("adv_f64.npy")
    got = gr.sum(shard(g), mode="exact", all_ranks=True)
    assert type(got) is np.float64
    assert got == math.fsum(g.tolist())
    assert got.hex() == float(exact_ref.exact_sum(g)).hex()
    assert gr.sum(shard(g), mode="fast", all_ranks=True) == gr.sum(shard(g), mode="fast", all_ranks=True)


def test_exact_f32_sum_rounded_once_to_f32():
    g = data("adv_f32.npy")
    got = gr.sum(shard(g), mode="exact", all_ranks=True)
    assert type(got) is np.float32
    assert float(got) == exact_ref.to_f32(exact_ref.exact_sum(g))
    fast = gr.sum(shard(g), all_ranks=True)
    assert type(fast) is np.float64  # fast mode accumulates and reports f32 input in f64


@pytest.mark.parametrize("op", ["sum", "nrm2", "min", "max", "argmin", "argmax"])
def test_same_bits_as_the_cli_f64(op):
    ref = cli("adv_f64_" + op)
    r = getattr(gr, op)(shard(data("adv_f64.npy")), mode="exact", all_ranks=True, full=True)
    assert r.hex == ref["result_hex"], (op, r, ref)
    assert r.count == ref["count"]
    if op in ("argmin", "argmax"):
        assert r.index == ref["index"]


@pytest.mark.parametrize("name,op", [("adv_f32", "sum"), ("adv_f32", "nrm2"), ("ties", "argmin"), ("ties", "argmax"),
                                     ("nan", "argmin"), ("nan", "argmax")])
def test_same_bits_as_the_cli(name, op):
    ref = cli("%s_%s" % (name, op))
    r = getattr(gr, op)(shard(data(name + ".npy")), mode="exact", root=SIZE - 1, full=True)
    if RANK != SIZE - 1:
        assert r is None
        return
    assert r.hex == ref["result_hex"]
    if op.startswith("arg"):
        assert r.index == ref["index"]


def test_dot_same_bits_as_the_cli_and_exact():
    x, y = data("dot_x.npy"), data("dot_y.npy")
    r = gr.dot(shard(x), shard(y), mode="exact", all_ranks=True, full=True)
    assert r.hex == cli("dot_f64")["result_hex"]
    assert float(r.value) == float(exact_ref.exact_dot(x, y))


def test_synthetic_data_same_bits_as_the_cli():
    # `gpureduce gen` wrote the generator's values; the command summed the same generator itself
    r = gr.sum(shard(data("stress_f64.npy")), mode="exact", all_ranks=True, full=True)
    ref = cli("stress_f64_sum")
    assert r.hex == ref["result_hex"] and r.count == ref["n"] == 100003


def test_nrm2_exact_and_no_overflow():
    g = data("adv_f64.npy")
    sq = sum((exact_ref.Fraction(float(v)) ** 2 for v in g), exact_ref.Fraction(0))
    assert gr.nrm2(shard(g), mode="exact", all_ranks=True) == exact_ref.sqrt_rounded(sq)
    for scale in (1e300, 1e-300):
        x = np.full(1000, scale) if RANK == 0 else np.full(500, scale)
        n = 1000 + 500 * (SIZE - 1)
        fast = gr.nrm2(x, all_ranks=True)
        assert abs(fast - scale * math.sqrt(n)) <= 1e-14 * scale * math.sqrt(n)
    v = np.float32(1e30)
    f32 = gr.nrm2(np.full(10, v), mode="exact", all_ranks=True)
    assert type(f32) is np.float32
    assert float(f32) == exact_ref.sqrt_rounded(exact_ref.Fraction(float(v)) ** 2 * (10 * SIZE), 24, -126)


def test_argmin_argmax_global_index_ties_and_nan():
    g = data("ties.npy")
    assert gr.argmax(shard(g), all_ranks=True) == (7.0, int(np.argmax(g)))
    assert gr.argmin(shard(g), all_ranks=True) == (-9.0, int(np.argmin(g)))
    g = data("nan.npy")
    v, i = gr.argmax(shard(g), all_ranks=True)
    assert math.isnan(v) and i == int(np.argmax(g)) == 400
    # an empty shard on some ranks: the index still counts in the global array
    x = np.array([3.0, 1.0, 1.0]) if RANK == SIZE - 1 else np.array([], dtype=np.float64)
    assert gr.argmin(x, all_ranks=True) == (1.0, 1)
    assert isinstance(gr.argmin(x, all_ranks=True)[0], np.float64)


def test_dtypes_and_result_types():
    i32 = np.arange(RANK * 100, RANK * 100 + 100, dtype=np.int32)
    s = gr.sum(i32, all_ranks=True)
    assert type(s) is np.int64 and s == sum(range(100 * SIZE))
    assert type(gr.max(i32, all_ranks=True)) is np.int32 and gr.max(i32, all_ranks=True) == 100 * SIZE - 1
    big = np.full(4, 2 ** 62, dtype=np.int64)
    r = gr.sum(big, all_ranks=True, full=True)
    assert r.overflow and type(r.value) is np.float64 and r.value == 4.0 * SIZE * 2 ** 62
    h = np.array([1.0, 2.5, -0.5], dtype=np.float16)
    r = gr.sum(h, mode="exact", all_ranks=True, full=True)
    assert type(r.value) is np.float16 and r.value == 3 * SIZE
    bits = int(np.array(np.float16(3 * SIZE)).view(np.uint16))
    assert r.hex.endswith("(f16 0x%04x)" % bits)
    assert gr.min(h, all_ranks=True) == np.float16(-0.5)


def test_bf16_when_ml_dtypes_is_installed():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.array([1.0, 2.0, 3.5], dtype=ml_dtypes.bfloat16)
    r = gr.sum(x, mode="exact", all_ranks=True, full=True)
    assert r.value.dtype == np.dtype(ml_dtypes.bfloat16) and float(r.value) == 6.5 * SIZE


def test_stats():
    g = data("adv_f32.npy").astype(np.float64)[:1000]
    s = gr.stats(shard(g), all_ranks=True)
    assert s.count == 1000 and s.nan_count == 0
    assert s.sum == math.fsum(g.tolist()) and s.hex == gr._c_hex(float(s.sum))
    assert s.min == g.min() and s.max == g.max()
    assert s.var == pytest.approx(np.var(g), rel=1e-9)
    i = gr.stats(np.array([RANK, -RANK, 5], dtype=np.int64), root=0)
    if RANK == 0:
        assert type(i.sum) is np.int64 and i.sum == 5 * SIZE and i.min == -(SIZE - 1) and i.max == 5
    else:
        assert i is None


def test_batch_has_each_calls_bits():
    x, y = shard(data("dot_x.npy")), shard(data("dot_y.npy"))
    z = shard(data("adv_f64.npy"))
    items = [("dot", x, y), ("nrm2", z), ("sum", z), ("argmax", z), ("min", x)]
    for mode in ("fast", "exact"):
        got = gr.batch(items, mode=mode, all_ranks=True, full=True)
        one = [gr.dot(x, y, mode=mode, all_ranks=True, full=True)] + [
            getattr(gr, op)(a, mode=mode, all_ranks=True, full=True) for op, a in items[1:]]
        assert [r.hex for r in got] == [r.hex for r in one]
        assert got[3].index == one[3].index
    plain = gr.batch(items, mode="exact", root=SIZE - 1)
    if RANK == SIZE - 1:
        assert plain[0] == got[0].value and plain[3] == (got[3].value, got[3].index)
    else:
        assert plain is None


def test_root_and_all_ranks():
    x = np.ones(10)
    for root in range(SIZE):
        v = gr.sum(x, root=root)
        assert (v == 10.0 * SIZE) if RANK == root else (v is None)
    assert gr.sum(x, all_ranks=True) == 10.0 * SIZE


def test_sub_communicators_and_free():
    sub = COMM.Split(RANK % 2, RANK)
    x = np.full(3, float(RANK))
    expect = 3.0 * sum(r for r in range(SIZE) if r % 2 == RANK % 2)
    assert gr.sum(x, comm=sub, all_ranks=True) == expect
    sub.Free()
    sub = COMM.Split(RANK % 2, RANK)  # may reuse the handle: must get a context of its own
    assert gr.sum(x, comm=sub, all_ranks=True) == expect
    sub.Free()
    assert gr.sum(x, all_ranks=True) == 3.0 * sum(range(SIZE))


def test_library_error_raises_with_code_and_message():
    with pytest.raises(gr.Error) as e:
        gr.sum(np.ones(3), root=SIZE)
    assert e.value.code == 1 and e.value.name == "GR_ERR_INVALID_ARG"
    assert "root %d is not a rank" % SIZE in e.value.message and "[rank" in e.value.message
    with pytest.raises(gr.Error) as e:
        gr.sum(np.ones(3, dtype=np.int32), mode="exact", backend="cuda")  # no GPU here, or a build without CUDA
    assert e.value.code in (3, 12)
    assert gr.sum(np.ones(3), all_ranks=True) == 3.0 * SIZE  # still usable


def test_local_mistake_raises_on_every_rank():
    bad = np.ones(8)[::2] if RANK == SIZE - 1 else np.ones(4)
    with pytest.raises(ValueError if RANK == SIZE - 1 else gr.Error, match="C-contiguous"):
        gr.sum(bad)
    with pytest.raises(TypeError if RANK == 0 else gr.Error, match="not supported"):
        gr.sum(np.ones(3, dtype=np.uint8 if RANK == 0 else np.float64))
    with pytest.raises(ValueError if RANK == 0 else gr.Error):
        gr.dot(np.ones(3), np.ones(4 if RANK == 0 else 3))
    with pytest.raises((ValueError, gr.Error)):
        gr.sum(np.ones(3), mode="exactly")


def test_different_arguments_on_ranks_raise():
    if SIZE == 1:
        pytest.skip("one rank")
    with pytest.raises(gr.Error, match="different arguments"):
        gr.sum(np.ones(3), mode="exact" if RANK == 0 else "fast")
    with pytest.raises(gr.Error, match="different arguments"):
        gr.sum(np.ones(3, dtype=np.float32 if RANK == 0 else np.float64))


def test_device_array_without_gpu_raises():
    x = np.ones(4)

    class FakeDevice:  # a CUDA array interface over host memory: the cuda context cannot be made here
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (x.ctypes.data, True),
                                    "version": 3, "strides": None, "stream": 1}
    with pytest.raises(gr.Error) as e:
        gr.sum(FakeDevice())
    assert e.value.code in (3, 12)


def test_dlpack_capsule_parsing():
    from gpureduce import _arrays
    x = np.arange(12, dtype=np.float32)[2:10]

    class Claimed:  # says CUDA, hands over a CPU capsule: parsing only
        def __dlpack_device__(self):
            return (_arrays.DL_CUDA, 0)

        def __dlpack__(self, stream=None):
            assert stream == 1
            return x.__dlpack__()
    inp = _arrays.classify(Claimed())
    assert inp.device and inp.device_id == 0
    inp.export_dlpack(1)
    assert (inp.ptr, inp.count, inp.dtype) == (x.ctypes.data, 8, 0)

    class Host:
        def __dlpack_device__(self):
            return (_arrays.DL_CPU, 0)

        def __dlpack__(self, stream=None):
            return x.__dlpack__()
    assert gr.sum(Host(), all_ranks=True) == float(x.sum()) * SIZE
    strided = np.arange(12, dtype=np.float64)[::3]

    class Strided(Claimed):
        def __dlpack__(self, stream=None):
            return strided.__dlpack__()
    with pytest.raises(ValueError, match="C-contiguous"):
        _arrays.classify(Strided()).export_dlpack(1)


def test_hex_format_is_c_printf_a():
    from gpureduce import _c_hex
    for f, s in [(1.0, "0x1p+0"), (-3.0, "-0x1.8p+1"), (0.0, "0x0p+0"), (-0.0, "-0x0p+0"), (5e-324, "0x0.0000000000001p-1022"),
                 (2.0 ** -1023, "0x0.8p-1022"), (float("inf"), "inf"), (0.1, "0x1.999999999999ap-4")]:
        assert _c_hex(f) == s
