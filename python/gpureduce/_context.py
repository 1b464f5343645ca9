"""libgpureduce contexts per mpi4py communicator, and their end.

A context (gr_ctx_create, collective) is made on first use for a
communicator and a backend, and kept as an MPI attribute of the
communicator: freeing the communicator destroys its contexts, and a new
communicator that reuses the handle gets its own. Every context still alive
is destroyed before MPI is finalized: by an atexit function (which runs before
mpi4py's finalization) and, when the program calls MPI.Finalize() itself, by
the delete callback of an attribute on MPI.COMM_SELF (MPI runs those first in
MPI_Finalize).
"""
import atexit
import ctypes
import threading

from mpi4py import MPI

from . import _lib

_state = {"lib": None, "keyval": None, "self_keyval": None}
_live = []  # every context alive, in creation order (the same order on each rank of a communicator)
_guard = threading.Lock()


def lib():
    """The loaded library (loaded on first use)."""
    if _state["lib"] is None:
        _state["lib"] = _lib.Lib(MPI._sizeof(MPI.Comm))
    return _state["lib"]


class Context:
    """One gr_ctx_t on a communicator."""

    def __init__(self, comm, backend, device):
        L = lib()
        cfg = _lib.Config()
        L.gr_config_init(ctypes.byref(cfg))
        cfg.backend = _lib.BACKENDS[backend]
        cfg.device = device
        self.ptr = ctypes.c_void_p()
        L.call("gr_ctx_create", L.comm_t(MPI._handleof(comm)), ctypes.byref(cfg), ctypes.byref(self.ptr))
        self.backend = _lib.BACKEND_NAMES.get(L.gr_ctx_backend(self.ptr), "?")
        self.device = L.gr_ctx_device(self.ptr)
        self.lock = threading.Lock()  # the per-call stream is context state

    def destroy(self):
        if self.ptr:
            ptr, self.ptr = self.ptr, None
            lib().gr_ctx_destroy(ptr)


def _comm_freed(comm, keyval, contexts):
    for ctx in contexts.values():
        ctx.destroy()


def finalize():
    """Destroy every context (done for you at exit and at MPI.Finalize()); later calls make new ones."""
    with _guard:
        if MPI.Is_finalized():
            _live.clear()
            return
        while _live:
            _live.pop().destroy()


def _self_freed(comm, keyval, value):
    finalize()


def check_mpi():
    """Raise Error unless MPI is usable (a call after MPI.Finalize() would make MPI abort the process)."""
    if not MPI.Is_initialized() or MPI.Is_finalized():
        raise _lib.Error(_lib.GR_ERR_MPI, "MPI is not initialised or already finalized: gpureduce calls "
                         "must come between MPI's initialisation (import mpi4py.MPI) and MPI.Finalize()")


def get(comm, backend, device):
    """The context of (comm, backend), made now (collectively) if there is none."""
    with _guard:
        if _state["keyval"] is None:
            _state["keyval"] = MPI.Comm.Create_keyval(delete_fn=_comm_freed)
            _state["self_keyval"] = MPI.Comm.Create_keyval(delete_fn=_self_freed)
            MPI.COMM_SELF.Set_attr(_state["self_keyval"], True)
            atexit.register(finalize)
        contexts = comm.Get_attr(_state["keyval"])
        if contexts is None:
            contexts = {}
            comm.Set_attr(_state["keyval"], contexts)
        ctx = contexts.get(backend)
        if ctx is None or not ctx.ptr:
            ctx = Context(comm, backend, device)
            contexts[backend] = ctx
            _live.append(ctx)
        return ctx
