"""One BLAS thread for loops of small matrix products."""

from functools import lru_cache

from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread"]


@lru_cache(maxsize=1)
def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries, inspected once."""
    return ThreadpoolController()


def single_blas_thread():
    """A context in which BLAS uses one thread.

    For loops of small matrix products (DP-SGD's steps, the local loss's
    blocks): BLAS threads only add synchronisation there, and on a machine
    whose cores are busy they stall. Measured on 2 shared cores (load 4):
    DPLimeExplainer's local loss at m = 3e5, d = 50 took 3,250 ms per query
    with 2 OpenBLAS threads and 120 ms with one.
    """
    return _blas_controller().limit(limits=1, user_api="blas")
