"""Dask collections in ``fit``: exact statistics as sums over row partitions.

A private table too large for one process stays in the Dask workers. What an
estimator releases from it is a sum over rows (histogram counts, per-cluster
sums, a local loss's weighted sufficient statistics), so each worker computes
the statistic of its own partitions with the same function the in-memory path
applies to the whole array, and the partial sums are added in a tree. Only
the exact total reaches the client, where the privacy core adds the noise:
no noise is ever drawn in a worker, and the client never holds the rows.

Every task this module makes has a key no other graph uses
(:func:`unique_name`): Dask would name it after a hash of its inputs, so two
fits on one collection submit tasks under the same keys, and when one of
them is held in the workers (a fit's persisted rows) while the other graph
was optimised differently (a step fused into the next one when nothing
else reads it), the scheduler is sent two different tasks under one key
("Detected different `run_spec`", dask issue 9888), which can fail or
deadlock a computation.

Dask is optional (``pip install "skdpx[dask]"``): nothing here imports it
unless the caller already passed a Dask collection.
"""

import itertools
import os
import socket
import sys
import time

import numpy as np

from ._chunks import add_sums, prepared_call

__all__ = ["as_dask_array", "dask_map_blocks", "dask_partition_sum", "dask_persist",
           "dask_rows_like", "is_dask_collection", "unique_name"]

#: this process, for the key names: the host, and when the module was imported
_PROCESS = (socket.gethostname(), time.time_ns())
_NAMES = itertools.count()


def unique_name(prefix):
    """``"prefix-<token>"``: a Dask key name used by no other task of any graph.

    Dask names a task after a hash of its inputs, so the same step on the
    same collection (a second fit, a second pass) gets the same key. When
    that key is held in the workers (persisted rows) and the new graph was
    optimised differently (e.g. the fill step fused into the scaling when
    no labels read it), the scheduler holds two different tasks under one
    key (dask issue 9888). Every task this layer makes is named here
    instead: the token hashes this process (host, process id, import time)
    and a counter, so no two calls in any process share it. Nothing random
    is drawn.
    """
    from dask.base import tokenize

    return f"{prefix}-{tokenize(_PROCESS, os.getpid(), next(_NAMES))}"


def is_dask_collection(X):
    """Whether ``X`` is a Dask collection (array, DataFrame, Series).

    Never imports Dask: an object of Dask's exists only once Dask is imported.
    """
    if "dask" not in sys.modules:
        return False
    import dask

    return dask.is_dask_collection(X)


def as_dask_array(X, dtype=float):
    """A 2-D dask array chunked by rows only, with known chunk sizes.

    A dask DataFrame is converted with ``to_dask_array()`` and its chunk sizes
    computed (one pass that counts each block's rows; no value reaches the
    client).
    Columns are put in one chunk so that each block holds whole rows.
    """
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, (dd.DataFrame, dd.Series)):
        # the array's own chunk sizes, computed below: to_dask_array(lengths=True)
        # counts the rows of the optimised collection, whose partitions dask may
        # have fused (one label column read from Parquet files), and then refuses
        # its own lengths (dask 2026.8: "1 != 2")
        X = X.to_dask_array()
    elif not isinstance(X, da.Array):
        raise TypeError(f"expected a dask array or DataFrame, got {type(X).__name__}.")
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D dask array, got {X.ndim} dimensions.")
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if dtype is not None and X.dtype != dtype:
        X = X.astype(dtype)
    return X.rechunk({1: -1})


def _tree_sum(parts, name, split_every=8):
    """The parts added in a tree of delayed sums, keyed ``(name, level, i)``."""
    from dask import delayed

    add = delayed(_sum_all, pure=True)
    level = 0
    while len(parts) > 1:
        level += 1
        parts = [add(*parts[i:i + split_every], dask_key_name=(name, level, i // split_every))
                 for i in range(0, len(parts), split_every)]
    return parts[0]


def _sum_all(*parts):
    total = parts[0]
    for p in parts[1:]:
        total = add_sums(total, p)
    return total


def dask_partition_sum(func, X, *row_arrays, prepare=None, **kwargs):
    """:func:`~skdpx.utils._engine.partition_sum` on a dask ``X``.

    ``func`` (after ``prepare``) runs in the workers on each block of rows
    (``row_arrays`` are dask arrays or Series with the same row chunks, or
    numpy arrays split to match) and the partial results are added in a
    tree; the client receives only the total, as numpy.
    """
    import dask
    from dask.utils import funcname

    X = as_dask_array(X)
    chunks = X.chunks[0]
    blocks = X.to_delayed().ravel()
    others = [_row_blocks(a, chunks) for a in row_arrays]
    call = dask.delayed(prepared_call, pure=True)
    name = unique_name(funcname(func))  # the partial sums' keys (name, 0, i), this call's only
    parts = [call(func, prepare, b, *[o[i] for o in others], dask_key_name=(name, 0, i),
                  **kwargs)
             for i, b in enumerate(blocks)]
    (total,) = dask.compute(_tree_sum(parts, name))
    return total


def dask_map_blocks(func, X, *, n_columns=None, **kwargs):
    """:func:`~skdpx.utils._engine.map_blocks` on a dask array (lazy, the same row chunks).

    The result's keys are this call's only (:func:`unique_name`).
    """
    from dask.utils import funcname

    name = unique_name(funcname(func))
    if X.ndim == 1:  # one value per row (labels) to a (rows, n_columns) block
        return X.map_blocks(func, dtype=np.float64, new_axis=1, meta=np.empty((0, 0)),
                            chunks=(X.chunks[0], (int(n_columns or 1),)), name=name, **kwargs)
    X = X.rechunk({1: -1})
    chunks = None if n_columns is None else (X.chunks[0], (int(n_columns),))
    return X.map_blocks(func, dtype=np.float64, chunks=chunks, meta=np.empty((0, 0)),
                        name=name, **kwargs)


def dask_rows_like(a, X):
    """:func:`~skdpx.utils._engine.rows_like` for a dask ``X``: ``a`` with ``X``'s row chunks.

    A numpy ``a`` becomes a dask array under this call's own name
    (:func:`unique_name`).
    """
    if is_dask_collection(a):
        return a.rechunk({0: X.chunks[0]})
    import dask.array as da

    return da.from_array(np.asarray(a), chunks=(X.chunks[0],), name=unique_name("rows"))


def dask_persist(*arrays):
    """The dask arrays computed and kept in the workers' memory (``persist``).

    On a distributed client, waits until they are there and raises a task's
    error (e.g. the black box failing on a partition) here, in ``fit``.
    """
    import dask

    arrays = dask.persist(*arrays)
    try:
        from distributed import futures_of, wait
    except ImportError:  # the local scheduler: persist computed them already
        return arrays
    futures = futures_of(arrays)
    if futures:
        wait(futures)
        for future in futures:
            if future.status == "error":
                future.result()  # raises the task's exception
    return arrays


def _row_blocks(a, chunks):
    """``a`` split into blocks of rows matching ``chunks`` (delayed or numpy).

    A dask DataFrame gives its partitions as they are (pandas DataFrames, no
    conversion): one per chunk, the rows of ``X``'s chunks
    (:func:`~skdpx.utils._engine.source_rows`: the partitions the validation
    encoded into those chunks).
    """
    if is_dask_collection(a):
        import dask.array as da
        import dask.dataframe as dd

        if isinstance(a, dd.DataFrame):
            parts = list(a.to_delayed())
            if len(parts) != len(chunks):
                raise ValueError(
                    f"a dask DataFrame of {len(parts)} partitions cannot be read beside "
                    f"{len(chunks)} row chunks: pass the DataFrame the chunks were encoded "
                    "from.")
            return parts
        if isinstance(a, dd.Series):
            a = a.to_dask_array()  # (its own chunk sizes: see as_dask_array)
            if any(np.isnan(c) for c in a.chunks[0]):
                a = a.compute_chunk_sizes()
        if a.chunks[0] != chunks:
            a = a.rechunk({0: chunks})
        if a.ndim > 1:
            a = a.rechunk({i: -1 for i in range(1, a.ndim)})
        return list(a.to_delayed().ravel()) if isinstance(a, da.Array) else a
    a = np.asarray(a)
    ends = np.cumsum(chunks)
    return [a[e - c:e] for c, e in zip(chunks, ends)]


# ---------------------------------------------------------------- validation
