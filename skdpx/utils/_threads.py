"""One BLAS thread for loops of small matrix products."""

from contextlib import contextmanager
from functools import lru_cache
import threading

from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread"]

_lock = threading.Lock()
_state = {"depth": 0, "limiter": None}


@lru_cache(maxsize=1)
def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries, inspected once."""
    return ThreadpoolController()


@contextmanager
def single_blas_thread():
    """A context in which BLAS uses one thread.

    For loops of small matrix products (DP-SGD's steps, the local loss's
    blocks): BLAS threads only add synchronisation there, and on a machine
    whose cores are busy they stall. Measured on 2 shared cores (load 4):
    DPLimeExplainer's local loss at m = 3e5, d = 50 took 3,250 ms per query
    with 2 OpenBLAS threads and 120 ms with one.

    BLAS's thread count is one setting of the whole process: contexts
    entered by several threads at once share one limit, set by the first to
    enter and restored by the last to leave (a reference count), so
    overlapping contexts never leave the process at one thread.
    """
    with _lock:
        if _state["depth"] == 0:
            _state["limiter"] = _blas_controller().limit(limits=1, user_api="blas")
        _state["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                _state["limiter"].restore_original_limits()
                _state["limiter"] = None
