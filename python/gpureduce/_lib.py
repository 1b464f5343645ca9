"""The ctypes layer over libgpureduce: finding the shared library, the C
structs of gpureduce.h, the prototypes, and gpureduce.Error.

No compiler is needed to install the package: the C ABI of gpureduce.h is
described here, and a layout check (gr_config_init and gr_call_init write
their struct's size) refuses a library whose structs differ.
"""
import ctypes
import ctypes.util
import os
import shutil
import subprocess
import sys

#: The library's ABI this package speaks: libgpureduce.so.0.3 (0.x: the minor version is the ABI).
ABI = (0, 3)
SONAME = "libgpureduce.so.%d.%d" % ABI

# gr_result_t, as GR_RESULT_LIST in gpureduce.h
RESULT_NAMES = {
    0: "GR_SUCCESS", 1: "GR_ERR_INVALID_ARG", 2: "GR_ERR_UNSUPPORTED", 3: "GR_ERR_NO_GPU", 4: "GR_ERR_CUDA",
    5: "GR_ERR_MPI", 6: "GR_ERR_NOMEM", 7: "GR_ERR_DEVMEM", 8: "GR_ERR_SYSTEM", 9: "GR_ERR_TOPOLOGY",
    10: "GR_ERR_TOO_MANY_RANKS", 11: "GR_ERR_IO", 12: "GR_ERR_NOT_BUILT", 13: "GR_ERR_INTERNAL",
}
GR_ERR_INVALID_ARG, GR_ERR_MPI = 1, 5

# gr_dtype_t, gr_op_kind_t, gr_mode_t, gr_backend_t
F32, F64, I32, I64, F16, BF16 = range(6)
DTYPE_NAMES = ("f32", "f64", "i32", "i64", "f16", "bf16")
OPS = {"sum": 0, "min": 1, "max": 2, "abssum": 3, "sumsq": 4, "dot": 6, "nrm2": 7, "argmin": 8, "argmax": 9}
MODES = {"fast": 0, "exact": 1}
BACKENDS = {"auto": 0, "cuda": 1, "cpu": 2}
BACKEND_NAMES = {v: k for k, v in BACKENDS.items()}
GR_DEVICE_CURRENT = -2
GR_BATCH_MAX = 64


class Error(RuntimeError):
    """A libgpureduce call failed (or, on another rank, the same collective call).

    code: the gr_result_t number; name: its symbol (``"GR_ERR_IO"``);
    message: the library's error line when this rank logged one (it names the
    rank, host and what to do), else the code's description.
    """

    def __init__(self, code, message, call=""):
        self.code = int(code)
        self.name = RESULT_NAMES.get(self.code, "GR_ERR_%d" % self.code)
        self.message = message
        self.call = call
        where = " in %s" % call if call else ""
        super().__init__("%s (%d)%s: %s" % (self.name, self.code, where, message))


class Desc(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("op_kind", ctypes.c_int), ("op_power", ctypes.c_int),
                ("mode", ctypes.c_int), ("root", ctypes.c_int), ("all_ranks", ctypes.c_int)]


class Value(ctypes.Structure):
    _fields_ = [("valid", ctypes.c_int), ("is_integer", ctypes.c_int), ("overflow", ctypes.c_int),
                ("f", ctypes.c_double), ("i", ctypes.c_int64), ("count", ctypes.c_uint64),
                ("nan_count", ctypes.c_uint64), ("dtype", ctypes.c_int), ("index", ctypes.c_int64)]


class Timing(ctypes.Structure):
    _fields_ = [("local", ctypes.c_double), ("combine", ctypes.c_double), ("total", ctypes.c_double)]


class Config(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("backend", ctypes.c_int), ("bind", ctypes.c_int),
                ("share_gpus", ctypes.c_int), ("cpu_threads", ctypes.c_int), ("cuda_grid", ctypes.c_int),
                ("cuda_block", ctypes.c_int), ("progress", ctypes.c_void_p), ("progress_arg", ctypes.c_void_p),
                ("device", ctypes.c_int), ("stream", ctypes.c_void_p)]


class Call(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("stream", ctypes.c_void_p), ("result_dev", ctypes.c_void_p),
                ("ordered", ctypes.c_int)]


class BatchItem(ctypes.Structure):
    _fields_ = [("desc", Desc), ("x", ctypes.c_void_p), ("y", ctypes.c_void_p), ("count", ctypes.c_uint64),
                ("index_base", ctypes.c_int64)]


class Stats(ctypes.Structure):
    _fields_ = [("valid", ctypes.c_int), ("is_integer", ctypes.c_int), ("count", ctypes.c_uint64),
                ("nan_count", ctypes.c_uint64), ("pinf_count", ctypes.c_uint64), ("ninf_count", ctypes.c_uint64),
                ("sum", ctypes.c_double), ("mean", ctypes.c_double), ("var", ctypes.c_double),
                ("var_sample", ctypes.c_double), ("min", ctypes.c_double), ("max", ctypes.c_double),
                ("nanmin", ctypes.c_double), ("nanmax", ctypes.c_double), ("isum", ctypes.c_int64),
                ("overflow", ctypes.c_int), ("imin", ctypes.c_int64), ("imax", ctypes.c_int64)]


def _candidates():
    """(path or name, where it came from), in the order they are tried."""
    env = os.environ.get("GPUREDUCE_LIBRARY")
    if env:  # the one place asked for: nothing else is tried
        if os.path.isdir(env):
            return [(os.path.join(env, n), "GPUREDUCE_LIBRARY") for n in (SONAME, "libgpureduce.so")]
        return [(env, "GPUREDUCE_LIBRARY")]
    out = []
    if shutil.which("pkg-config"):
        try:
            libdir = subprocess.run(["pkg-config", "--variable=libdir", "gpureduce"], capture_output=True,
                                    text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            libdir = ""
        if libdir:
            out.append((os.path.join(os.path.normpath(libdir), SONAME), "pkg-config"))
    out.append((SONAME, "the dynamic loader (LD_LIBRARY_PATH, ldconfig)"))
    dirs = [os.path.join(sys.prefix, "lib"), "/usr/local/lib", "/usr/local/lib64", "/usr/lib64", "/usr/lib",
            "/opt/gpureduce/lib", os.path.expanduser("~/opt/gpureduce/lib"), os.path.expanduser("~/.local/lib")]
    out += [(os.path.join(d, SONAME), "the usual prefixes") for d in dirs]
    found = ctypes.util.find_library("gpureduce")
    if found:
        out.append((found, "ctypes.util.find_library"))
    return out


def _mpi_libraries():
    """The MPI libraries mapped into this process (Linux; empty elsewhere)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6}
    except OSError:
        return set()
    return {os.path.realpath(p) for p in paths if os.path.basename(p).startswith("libmpi.so")}


def _load():
    tried = []
    for path, how in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (%s): not there" % (path, how))
            continue
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append("%s (%s): %s" % (path, how, e))
            continue
        mpis = _mpi_libraries()
        if len(mpis) > 1:  # mpi4py's MPI and the library's MPI would each think they own the process
            raise ImportError("gpureduce: two MPI libraries in this process (%s): mpi4py and %s must use the same "
                              "MPI; build mpi4py against the MPI libgpureduce links (pip install --no-binary=mpi4py "
                              "mpi4py, with that MPI's mpicc on PATH)" % (", ".join(sorted(mpis)), path))
        return lib, path
    raise ImportError("gpureduce: cannot load the shared library %s. Install libgpureduce (cmake --install; "
                      "docs/LIBRARY.md) and set GPUREDUCE_LIBRARY to the library file or its directory, or add "
                      "<prefix>/lib/pkgconfig to PKG_CONFIG_PATH. Tried:\n  %s" % (SONAME, "\n  ".join(tried)))


def _prototypes(lib, comm_t):
    P, I, U64, SZ = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_size_t
    ptr = ctypes.POINTER
    protos = {
        "gr_strerror": (ctypes.c_char_p, [I]),
        "gr_last_error": (SZ, [ctypes.c_char_p, SZ]),
        "gr_clear_last_error": (None, []),
        "gr_version": (ctypes.c_char_p, []),
        "gr_config_init": (None, [ptr(Config)]),
        "gr_call_init": (None, [ptr(Call)]),
        "gr_ctx_create": (I, [comm_t, ptr(Config), ptr(P)]),
        "gr_ctx_destroy": (I, [P]),
        "gr_ctx_backend": (I, [P]),
        "gr_ctx_device": (I, [P]),
        "gr_ctx_set_stream": (I, [P, P]),
        "gr_reduce_batch_host": (I, [P, ptr(BatchItem), I, ptr(Value), ptr(Timing)]),
        "gr_reduce_batch_device": (I, [P, ptr(BatchItem), I, ptr(Value), ptr(Timing)]),
        "gr_stats_host": (I, [P, P, U64, ptr(Desc), ptr(Stats), ptr(Timing)]),
        "gr_stats_device": (I, [P, P, U64, ptr(Desc), ptr(Stats), ptr(Timing)]),
    }
    for name, (res, args) in protos.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise ImportError("gpureduce: the shared library has no %s: it is older than this package "
                              "(needs %s %d.%d with gr_last_error and gr_ctx_set_stream)" % ((name, SONAME) + ABI))
        f.restype = res
        f.argtypes = args


class Lib:
    """The loaded library (one per process)."""

    def __init__(self, comm_size):
        self.cdll, self.path = _load()
        # MPI_Comm is a pointer in Open MPI, an int in MPICH: mpi4py says which size
        self.comm_t = ctypes.c_void_p if comm_size == ctypes.sizeof(ctypes.c_void_p) else ctypes.c_int
        _prototypes(self.cdll, self.comm_t)
        self.version = self.cdll.gr_version().decode()
        if tuple(int(p) for p in self.version.split(".")[:2]) != ABI:
            raise ImportError("gpureduce: %s is version %s; this package speaks the %d.%d ABI" %
                              ((self.path, self.version) + ABI))
        cfg, call = Config(), Call()
        self.cdll.gr_config_init(ctypes.byref(cfg))
        self.cdll.gr_call_init(ctypes.byref(call))
        if cfg.size != ctypes.sizeof(Config) or call.size != ctypes.sizeof(Call):
            raise ImportError("gpureduce: %s has gr_config_t of %d bytes and gr_call_t of %d; this package "
                              "expects %d and %d" % (self.path, cfg.size, call.size, ctypes.sizeof(Config),
                                                     ctypes.sizeof(Call)))

    def __getattr__(self, name):
        return getattr(self.cdll, name)

    def call(self, name, *args):
        """Call a gr_result_t function; raise Error with the library's message when it fails."""
        self.cdll.gr_clear_last_error()
        rc = getattr(self.cdll, name)(*args)
        if rc == 0:
            return
        buf = ctypes.create_string_buffer(4096)
        self.cdll.gr_last_error(buf, len(buf))
        msg = buf.value.decode(errors="replace")
        if not msg:
            msg = (self.cdll.gr_strerror(rc).decode() +
                   " (this rank logged no error line: the failure started on another rank, whose line says why)")
        raise Error(rc, msg, name)
