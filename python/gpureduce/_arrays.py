"""Inputs: NumPy arrays in host memory, and GPU arrays through the CUDA array
interface (v2/v3) or DLPack, read in place (never copied)."""
import ctypes

import numpy as np

from . import _lib

# DLPack (dlpack.h): device types and the structs of an unversioned capsule
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13
DL_INT, DL_FLOAT, DL_BFLOAT = 0, 2, 4


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# CUDA array interface typestr, and the array-protocol kind + size of NumPy dtypes
_TYPESTR = {"f4": _lib.F32, "f8": _lib.F64, "i4": _lib.I32, "i8": _lib.I64, "f2": _lib.F16}
_NP_TYPES = {_lib.F32: np.float32, _lib.F64: np.float64, _lib.I32: np.int32, _lib.I64: np.int64,
             _lib.F16: np.float16}
_SUPPORTED = "float32, float64, int32, int64, float16 and bfloat16"


def _bf16_dtype():
    """ml_dtypes' bfloat16 when it is installed (optional), else None."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


class Input:
    """One array as the library sees it: address, element count, dtype, where it lives."""

    __slots__ = ("ptr", "count", "dtype", "np_dtype", "device", "device_id", "stream", "keep", "_dlpack")

    def __init__(self):
        self.ptr, self.count, self.dtype, self.np_dtype = 0, 0, 0, None
        self.device, self.device_id, self.stream, self.keep, self._dlpack = False, None, None, None, None

    def result_type(self):
        """The NumPy scalar type of a value of the input's dtype."""
        if self.dtype == _lib.BF16:
            return self.np_dtype.type if self.np_dtype is not None else np.float32
        return _NP_TYPES[self.dtype]

    def export_dlpack(self, stream):
        """DLPack on the GPU: take the capsule now, the producer ordering its work before `stream`."""
        obj, self._dlpack = self._dlpack, None
        if obj is None:
            return
        try:
            capsule = obj.__dlpack__(stream=stream)
        except TypeError:  # a producer older than the stream keyword
            capsule = obj.__dlpack__()
        p = _capsule_pointer(capsule, b"dltensor")
        t = _DLManagedTensor.from_address(p).dl_tensor
        shape = [t.shape[i] for i in range(t.ndim)]
        strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
        if t.dtype.lanes != 1:
            raise TypeError("gpureduce: DLPack dtype with %d lanes; only scalar elements are supported" % t.dtype.lanes)
        code = {(DL_FLOAT, 32): _lib.F32, (DL_FLOAT, 64): _lib.F64, (DL_INT, 32): _lib.I32, (DL_INT, 64): _lib.I64,
                (DL_FLOAT, 16): _lib.F16, (DL_BFLOAT, 16): _lib.BF16}.get((t.dtype.code, t.dtype.bits))
        if code is None:
            raise TypeError("gpureduce: DLPack dtype (code %d, %d bits) is not supported; use %s" %
                            (t.dtype.code, t.dtype.bits, _SUPPORTED))
        _check_c_order(shape, strides, 1, "the DLPack tensor")
        self.dtype = code
        self.np_dtype = _bf16_dtype() if code == _lib.BF16 else np.dtype(_NP_TYPES[code])
        self.count = _prod(shape)
        self.ptr = (t.data or 0) + t.byte_offset
        self.device_id = t.device.device_id
        self.keep = (obj, capsule)  # the capsule's destructor frees the tensor after the call


def _prod(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _check_c_order(shape, strides, itemsize, what):
    """Refuse anything but one C-contiguous block (strides in units of itemsize; None = contiguous)."""
    if strides is None:
        return
    expect = itemsize
    for dim, st in zip(reversed(shape), reversed(strides)):
        if dim != 1 and st != expect:
            raise ValueError("gpureduce: %s is not C-contiguous (shape %s, strides %s): reduce a contiguous "
                             "copy (e.g. cupy.ascontiguousarray / numpy.ascontiguousarray)" %
                             (what, tuple(shape), tuple(strides)))
        expect *= dim


def _host(x):
    a = x if isinstance(x, np.ndarray) else np.asarray(x)
    bf16 = _bf16_dtype()
    if bf16 is not None and a.dtype == bf16:
        code = _lib.BF16
    elif a.dtype.kind in "fi" and a.dtype.isnative and ("%s%d" % (a.dtype.kind, a.dtype.itemsize)) in _TYPESTR:
        code = _TYPESTR["%s%d" % (a.dtype.kind, a.dtype.itemsize)]
    else:
        raise TypeError("gpureduce: arrays of dtype %s are not supported; use %s (native byte order), e.g. "
                        "x.astype(numpy.float64)" % (a.dtype, _SUPPORTED))
    if not a.flags.c_contiguous:
        raise ValueError("gpureduce: the array is not C-contiguous (shape %s, strides %s): reduce "
                         "numpy.ascontiguousarray(x), a copy" % (a.shape, a.strides))
    inp = Input()
    inp.ptr = a.ctypes.data if a.size else 0
    inp.count = int(a.size)
    inp.dtype = code
    inp.np_dtype = a.dtype
    inp.keep = a
    return inp


def _cai(x):
    cai = x.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise ValueError("gpureduce: a masked __cuda_array_interface__ array is not supported")
    ts = cai["typestr"]
    if ts[0] not in "<|=" or ts[1:] not in _TYPESTR:
        raise TypeError("gpureduce: __cuda_array_interface__ typestr %r is not supported; use %s" %
                        (ts, _SUPPORTED.replace(" and bfloat16", "")))
    code = _TYPESTR[ts[1:]]
    shape = tuple(cai["shape"])
    _check_c_order(shape, cai.get("strides"), int(ts[2:]), "the __cuda_array_interface__ array")
    inp = Input()
    inp.device = True
    inp.ptr = int(cai["data"][0] or 0)
    inp.count = _prod(shape)
    inp.dtype = code
    inp.np_dtype = np.dtype(_NP_TYPES[code])
    stream = cai.get("stream") if int(cai.get("version", 2)) >= 3 else None
    if stream == 0:
        raise ValueError("gpureduce: __cuda_array_interface__ stream 0 is ambiguous (the protocol forbids it); "
                         "use 1 for the legacy default stream, 2 for the per-thread one")
    inp.stream = stream
    if hasattr(x, "__dlpack_device__"):
        dev_type, dev_id = x.__dlpack_device__()
        if dev_type == DL_CUDA:
            inp.device_id = int(dev_id)
    inp.keep = x
    return inp


def classify(x):
    """An Input for x; DLPack GPU tensors are exported later (export_dlpack), once the stream is known."""
    if hasattr(x, "__cuda_array_interface__"):
        return _cai(x)
    if hasattr(x, "__dlpack_device__") and not isinstance(x, np.ndarray):
        dev_type, dev_id = x.__dlpack_device__()
        if dev_type in (DL_CUDA, DL_CUDA_MANAGED):
            inp = Input()
            inp.device = True
            inp.device_id = int(dev_id)
            inp._dlpack = x
            return inp
        if dev_type == DL_CPU:
            return _host(np.from_dlpack(x))
        raise TypeError("gpureduce: DLPack device type %d is neither the CPU nor a CUDA GPU" % dev_type)
    return _host(x)
