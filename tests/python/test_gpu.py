"""The Python package on the cuda backend (label gpu; python_test.sh exits 77
without a GPU): a minimal __cuda_array_interface__ object over memory from
libcudart through ctypes (no CuPy needed); every exact result and every
argmin/argmax has the cpu backend's bits, and a reduction given the array's
stream is ordered after an asynchronous copy still running on it."""
import ctypes
import math
import os

import numpy as np
import pytest
from mpi4py import MPI

import gpureduce as gr
import make_data

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
CUDART = ctypes.CDLL(os.environ["GR_CUDART"])
H2D = 1
NON_BLOCKING = 1


def check(rc, what):
    if rc != 0:
        raise RuntimeError("%s failed: CUDA error %d" % (what, rc))


def setup_module():
    n = ctypes.c_int(0)
    check(CUDART.cudaGetDeviceCount(ctypes.byref(n)), "cudaGetDeviceCount")
    check(CUDART.cudaSetDevice(RANK % n.value), "cudaSetDevice")  # the library takes the current device


class DeviceArray:
    """A copy of a host array in device memory, exposed as CUDA array interface v3."""

    def __init__(self, host, stream=None, pinned=None):
        self.nbytes = host.nbytes
        self.ptr = ctypes.c_void_p()
        check(CUDART.cudaMalloc(ctypes.byref(self.ptr), ctypes.c_size_t(max(self.nbytes, 1))), "cudaMalloc")
        if stream is None:
            check(CUDART.cudaMemcpy(self.ptr, ctypes.c_void_p(host.ctypes.data), ctypes.c_size_t(self.nbytes), H2D),
                  "cudaMemcpy")
        self.__cuda_array_interface__ = {"shape": host.shape, "typestr": host.dtype.str, "strides": None,
                                         "data": (self.ptr.value, False), "version": 3,
                                         "stream": stream.value if stream is not None else None}

    def __del__(self):
        CUDART.cudaFree(self.ptr)


def both(op, host_arrays, mode="exact", **kw):
    """(cuda Result, cpu Result) of one op on the same values."""
    dev = [DeviceArray(a) for a in host_arrays]
    g = getattr(gr, op)(*dev, mode=mode, all_ranks=True, full=True, **kw)
    c = getattr(gr, op)(*host_arrays, mode=mode, all_ranks=True, full=True, **kw)
    return g, c


def local(a):
    n = len(a)
    return np.ascontiguousarray(a[RANK * n // SIZE:(RANK + 1) * n // SIZE])


DATA = local(make_data.adversarial_f64(30011, np.random.default_rng(5)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.int64])
@pytest.mark.parametrize("op", ["sum", "min", "max", "nrm2", "argmin", "argmax"])
def test_cuda_exact_bits_equal_cpu(op, dtype):
    if np.dtype(dtype).kind == "i":
        x = (DATA % 1e6).astype(dtype)
    else:
        big = float(np.finfo(dtype).max)
        x = np.clip(DATA, -big, big).astype(dtype)  # huge, tiny (and subnormal) values of that type
    g, c = both(op, [x])
    assert g.backend == "cuda" and c.backend == "cpu"
    assert (g.hex, g.index, g.count) == (c.hex, c.index, c.count)


def test_cuda_dot_batch_stats_equal_cpu():
    y = np.ascontiguousarray(DATA[::-1])
    g, c = both("dot", [DATA, y])
    assert g.hex == c.hex
    dx, dy = DeviceArray(DATA), DeviceArray(y)
    items = [("dot", DATA, y), ("nrm2", y), ("argmax", DATA), ("sum", DATA)]
    dev = [("dot", dx, dy), ("nrm2", dy), ("argmax", dx), ("sum", dx)]
    gb = gr.batch(dev, mode="exact", all_ranks=True, full=True)
    cb = gr.batch(items, mode="exact", all_ranks=True, full=True)
    assert [(r.hex, r.index) for r in gb] == [(r.hex, r.index) for r in cb]
    fast = gr.sum(dx, all_ranks=True)
    assert abs(fast - cb[3].value) <= 1e-12 * abs(DATA).sum() * SIZE
    gs, cs = gr.stats(dx, all_ranks=True), gr.stats(DATA, all_ranks=True)
    assert gs.backend == "cuda" and (gs.hex, gs.count, gs.min, gs.max) == (cs.hex, cs.count, cs.min, cs.max)


def test_ordered_after_the_arrays_stream():
    # 2^24 doubles copied asynchronously from pinned memory on a non-blocking stream: a reduction that
    # did not wait for that stream would read the zeros underneath
    n = 1 << 24
    pinned = ctypes.c_void_p()
    check(CUDART.cudaMallocHost(ctypes.byref(pinned), ctypes.c_size_t(n * 8)), "cudaMallocHost")
    host = np.ctypeslib.as_array(ctypes.cast(pinned, ctypes.POINTER(ctypes.c_double)), shape=(n,))
    host[:] = np.arange(n, dtype=np.float64) + RANK
    stream = ctypes.c_void_p()
    check(CUDART.cudaStreamCreateWithFlags(ctypes.byref(stream), NON_BLOCKING), "cudaStreamCreateWithFlags")
    try:
        for op in ("sum", "nrm2", "argmax"):
            d = DeviceArray.__new__(DeviceArray)
            d.ptr, d.nbytes = ctypes.c_void_p(), n * 8
            check(CUDART.cudaMalloc(ctypes.byref(d.ptr), ctypes.c_size_t(n * 8)), "cudaMalloc")
            check(CUDART.cudaMemset(d.ptr, 0, ctypes.c_size_t(n * 8)), "cudaMemset")
            check(CUDART.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
            d.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f8", "strides": None, "version": 3,
                                          "data": (d.ptr.value, False), "stream": stream.value}
            check(CUDART.cudaMemcpyAsync(d.ptr, pinned, ctypes.c_size_t(n * 8), H2D, stream), "cudaMemcpyAsync")
            got = getattr(gr, op)(d, mode="exact", all_ranks=True, full=True)
            check(CUDART.cudaStreamSynchronize(stream), "cudaStreamSynchronize")
            ref = getattr(gr, op)(host, mode="exact", all_ranks=True, full=True)
            assert (got.hex, got.index) == (ref.hex, ref.index), op
    finally:
        CUDART.cudaStreamSynchronize(stream)
        CUDART.cudaStreamDestroy(stream)
        CUDART.cudaFreeHost(pinned)


def test_gpu_mistake_raises_everywhere():
    x = DeviceArray(DATA)
    with pytest.raises(ValueError if RANK == 0 else gr.Error):
        gr.sum(x, backend="cpu" if RANK == 0 else None)
    assert math.isfinite(gr.sum(x, mode="exact", all_ranks=True))


def test_cupy_array_interface_and_dlpack():
    cupy = pytest.importorskip("cupy")
    x = DATA.astype(np.float32)
    ref = gr.sum(x, mode="exact", all_ranks=True, full=True)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:  # produced on a non-blocking stream: the array interface names it
        d = cupy.asarray(x) * 2
        d /= 2
        got = gr.sum(d, mode="exact", all_ranks=True, full=True)
    assert got.hex == ref.hex and got.backend == "cuda"

    class OnlyDLPack:  # forces the DLPack path: the producer orders its stream before ours
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()
    with s:
        d2 = cupy.asarray(x) * 2
        d2 /= 2
        got = gr.argmax(OnlyDLPack(d2), mode="exact", all_ranks=True, full=True)
    ref = gr.argmax(x, mode="exact", all_ranks=True, full=True)
    assert (got.hex, got.index) == (ref.hex, ref.index)


def test_torch_dlpack():
    torch = pytest.importorskip("torch")
    x = DATA.copy()
    t = torch.from_numpy(x).to("cuda:%d" % torch.cuda.current_device())

    class OnlyDLPack:
        def __dlpack__(self, stream=None):
            return t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return t.__dlpack_device__()
    got = gr.nrm2(OnlyDLPack(), mode="exact", all_ranks=True, full=True)
    assert got.hex == gr.nrm2(x, mode="exact", all_ranks=True, full=True).hex
    assert gr.sum(t, mode="exact", all_ranks=True, full=True).hex == gr.sum(x, mode="exact", all_ranks=True,
                                                                          full=True).hex
