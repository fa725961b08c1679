"""The memory a fit needs, checked against what is available before anything is spent.

A fit reads its rows in blocks (:mod:`skdpx.utils._chunks`): on top of the
validated ``X`` it needs the per-row state it keeps (e.g. DPLimeExplainer's
labels, m x K), and a fixed allowance for one block's temporaries and the
black box's call on one block. :func:`check_fit_memory` compares that
estimate with the memory available to the process and refuses a fit that
cannot fit, before the first commit (a ``MemoryError`` later would come
after the spend).

Privacy: the number of rows is private under add-or-remove. The estimate
is made from the fit's row count as released (the DP count, plus four
times its noise's standard deviation: public once released), never from
the private number of rows, so a refusal is post-processing of the DP
count; it comes after the count is spent and before anything else is.
Under replace-one the number of rows is public and used as it is.
"""

import os
import resource

import numpy as np

__all__ = ["available_bytes", "check_fit_memory", "planning_rows"]

#: The fixed allowance of a fit: one block's temporaries (a few copies of a
#: 16 MiB block of rows; :data:`~skdpx.utils._chunks.BLOCK_BYTES`), a black box's call on one
#: block, and the local loss's blocks (32 MiB).
FIXED_BYTES = 256 * 2**20


def planning_rows(n_rows):
    """The number of rows a memory plan uses: ``n_rows`` rounded up to a power of two."""
    n_rows = max(1, int(n_rows))
    return 1 << (n_rows - 1).bit_length()


def _meminfo_available():
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _address_space_left():
    """RLIMIT_AS minus the process's current address space (None when unlimited)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/statm") as handle:
            size = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None
    return soft - size


def _cgroup_left():
    """A cgroup v2 memory limit minus its current use (None when there is none)."""
    try:
        with open("/sys/fs/cgroup/memory.max") as handle:
            limit = handle.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as handle:
            return int(limit) - int(handle.read().strip())
    except (OSError, ValueError):
        return None


def available_bytes():
    """The memory this process can still allocate: the least of the system's available
    memory, the address-space limit's room (``RLIMIT_AS``) and the cgroup's
    (None when none of them can be read)."""
    room = [b for b in (_meminfo_available(), _address_space_left(), _cgroup_left())
            if b is not None]
    return min(room) if room else None


def _gib(n_bytes):
    return f"{n_bytes / 2**30:.1f} GiB"


def check_fit_memory(estimator, per_row_bytes, n_rows, *, spent="Nothing was spent.",
                     fixed=FIXED_BYTES):
    """Refuse (``MemoryError``) a fit whose working memory exceeds what is available.

    ``per_row_bytes``: what the fit keeps per row on top of the validated X
    (labels, codes); ``n_rows`` a public planning count (the DP count and a
    margin), rounded up to a power of two (:func:`planning_rows`). Called
    before the fit's plan is committed; ``spent`` says what was spent so far.
    """
    room = available_bytes()
    if room is None:
        return
    need = planning_rows(n_rows) * float(per_row_bytes) + fixed
    if need > room:
        name = type(estimator).__name__
        raise MemoryError(
            f"{name}.fit needs about {_gib(need)} of working memory on top of X (estimated "
            f"from the DP count of its rows), and about {_gib(max(room, 0))} is available "
            f"to this process: it would run out of memory. {spent} Free memory, or fit on a "
            "Dask collection (docs: 'Scaling out with Dask').")


def per_row(*widths, itemsize=np.dtype(np.float64).itemsize):
    """Bytes per row of arrays of ``widths`` columns (float64 by default)."""
    return float(sum(widths)) * itemsize
