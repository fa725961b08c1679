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
count; it comes after the count is spent and before anything else is. The
need (X included, planned from the count) is compared with the process's
limits (the machine's total memory, RLIMIT_AS, the cgroup's limit), never
with what is left now: that depends on the private X already held, whose
size is a function of the number of rows. Under replace-one the number of
rows is public and used as it is.
"""

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


def _meminfo_total():
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _address_space_limit():
    """The soft RLIMIT_AS (None when unlimited)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def _cgroup_limit():
    """A cgroup v2 memory limit (None when there is none)."""
    try:
        with open("/sys/fs/cgroup/memory.max") as handle:
            limit = handle.read().strip()
        return None if limit == "max" else int(limit)
    except (OSError, ValueError):
        return None


def available_bytes():
    """The most memory this process could ever hold: the least of the machine's
    total memory, the address-space limit (``RLIMIT_AS``) and the cgroup's limit
    (None when none of them can be read).

    Limits only, never what is left now: what is left depends on the private ``X``
    already in this process (its size is a function of the number of rows), so a
    refusal compared with it would depend on the exact number of rows.
    """
    room = [b for b in (_meminfo_total(), _address_space_limit(), _cgroup_limit())
            if b is not None]
    return min(room) if room else None


def _gib(n_bytes):
    return f"{n_bytes / 2**30:.1f} GiB"


def check_fit_memory(estimator, per_row_bytes, n_rows, *, x_row_bytes=0.0,
                     spent="Nothing was spent.", fixed=FIXED_BYTES):
    """Refuse (``MemoryError``) a fit whose working memory exceeds what is available.

    ``per_row_bytes``: what the fit keeps per row on top of the validated X
    (labels, codes); ``x_row_bytes`` what one row of the validated X takes;
    ``n_rows`` a public planning count (the DP count and a margin), rounded up
    to a power of two (:func:`planning_rows`). The need is compared with the
    process's limits (:func:`available_bytes`), never with what is left. Called
    before the fit's plan is committed; ``spent`` says what was spent so far.
    """
    room = available_bytes()
    if room is None:
        return
    # X itself is counted too (planned from the count): the limits are totals
    need = planning_rows(n_rows) * (float(per_row_bytes) + float(x_row_bytes)) + fixed
    if need > room:
        name = type(estimator).__name__
        raise MemoryError(
            f"{name}.fit needs about {_gib(need)} of memory with X (estimated from the DP "
            f"count of its rows), more than this process's limit of {_gib(room)} (the "
            f"least of the machine's memory, RLIMIT_AS and the cgroup's): it cannot fit "
            f"here. {spent} Fit on a Dask collection (docs: 'Scaling out with Dask'), or "
            "where more memory is allowed.")


def per_row(*widths, itemsize=np.dtype(np.float64).itemsize):
    """Bytes per row of arrays of ``widths`` columns (float64 by default)."""
    return float(sum(widths)) * itemsize
