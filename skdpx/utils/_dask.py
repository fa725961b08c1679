"""Dask collections in ``fit``: exact statistics as sums over row partitions.

A private table too large for one process stays in the Dask workers. What an
estimator releases from it is a sum over rows (histogram counts, per-cluster
sums, a local loss's weighted sufficient statistics), so each worker computes
the statistic of its own partitions with the same function the in-memory path
applies to the whole array, and the partial sums are added in a tree. Only
the exact total reaches the client, where the privacy core adds the noise:
no noise is ever drawn in a worker, and the client never holds the rows.

Dask is optional (``pip install "skdpx[dask]"``): nothing here imports it
unless the caller already passed a Dask collection.
"""

import sys

import numpy as np

from ._chunks import add_sums, prepared_call

__all__ = ["as_dask_array", "dask_map_blocks", "dask_partition_sum", "dask_persist",
           "is_dask_collection"]


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


def _tree_sum(parts, split_every=8):
    from dask import delayed

    add = delayed(_sum_all, pure=True)
    while len(parts) > 1:
        parts = [add(*parts[i:i + split_every]) for i in range(0, len(parts), split_every)]
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

    X = as_dask_array(X)
    chunks = X.chunks[0]
    blocks = X.to_delayed().ravel()
    others = [_row_blocks(a, chunks) for a in row_arrays]
    call = dask.delayed(prepared_call, pure=True)
    parts = [call(func, prepare, b, *[o[i] for o in others], **kwargs)
             for i, b in enumerate(blocks)]
    (total,) = dask.compute(_tree_sum(parts))
    return total


def dask_map_blocks(func, X, *, n_columns=None, **kwargs):
    """:func:`~skdpx.utils._engine.map_blocks` on a dask array (lazy, the same row chunks)."""
    if X.ndim == 1:  # one value per row (labels) to a (rows, n_columns) block
        return X.map_blocks(func, dtype=np.float64, new_axis=1, meta=np.empty((0, 0)),
                            chunks=(X.chunks[0], (int(n_columns or 1),)), **kwargs)
    X = X.rechunk({1: -1})
    chunks = None if n_columns is None else (X.chunks[0], (int(n_columns),))
    return X.map_blocks(func, dtype=np.float64, chunks=chunks, meta=np.empty((0, 0)), **kwargs)


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
    """``a`` split into blocks of rows matching ``chunks`` (delayed or numpy)."""
    if is_dask_collection(a):
        import dask.array as da
        import dask.dataframe as dd

        if isinstance(a, (dd.DataFrame, dd.Series)):
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
