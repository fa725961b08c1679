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

# in-memory sums read numpy rows in its blocks: a module of numpy only, imported
# with this one rather than in a process's first fit (issue 41)
from ._chunks import row_slices

__all__ = ["as_dask_array", "is_dask_collection", "partition_sum", "refuse_dask_queries"]


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

    A dask DataFrame is converted with ``to_dask_array(lengths=True)`` (one
    pass that counts each partition's rows; no value reaches the client).
    Columns are put in one chunk so that each block holds whole rows.
    """
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, (dd.DataFrame, dd.Series)):
        X = X.to_dask_array(lengths=True)
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


def refuse_dask_queries(estimator, X):
    """Raise TypeError for Dask queries: explanations are answered in memory.

    Called before anything is spent (``fit_transform`` checks first).
    """
    if is_dask_collection(X):
        raise TypeError(
            f"{type(estimator).__name__} answers queries in memory: pass them as a numpy "
            "array or a pandas DataFrame (e.g. X.compute() for a few public points).")


def _tree_sum(parts, split_every=8):
    from dask import delayed

    add = delayed(_sum_all, pure=True)
    while len(parts) > 1:
        parts = [add(*parts[i:i + split_every]) for i in range(0, len(parts), split_every)]
    return parts[0]


def _sum_all(*parts):
    total = parts[0]
    for p in parts[1:]:
        total = _add(total, p)
    return total


def _add(a, b):
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b))
    return a + b


def partition_sum(func, X, *row_arrays, prepare=None, **kwargs):
    """``func`` summed over the row blocks of ``X`` (and of ``row_arrays``).

    ``func(X_block, *row_blocks, **kwargs)`` must return an array (or a tuple
    of arrays) whose sum over any split of the rows is the value on all rows,
    e.g. counts or sums over rows. ``prepare`` (optional, picklable) maps a
    block of ``X``'s rows to what ``func`` takes (e.g.
    :class:`~skdpx.utils._validation.UnitCubeRows`: missing values filled,
    clipped and scaled), block by block, so that no prepared copy of the
    whole ``X`` is ever made.

    For a numpy ``X``, ``func`` runs on consecutive blocks of rows
    (:func:`~skdpx.utils._chunks.row_slices`: a fixed number of rows from
    the width only) and the results are added: the memory is X plus one
    block's temporaries. For a dask array, ``func`` (after ``prepare``) runs
    in the workers on each block of rows (``row_arrays`` are dask arrays or
    Series with the same row chunks, or numpy arrays split to match) and
    the partial results are added in a tree; the client receives only the
    total, as numpy. Either way the total equals ``func`` on all the
    (prepared) rows up to floating-point summation order.

    Exact, not private: the caller releases the total through the privacy
    core.

    A :class:`~skdpx.utils._spark.SparkTable` (issue 42) runs ``func`` in the
    Spark executors, batch by batch, and adds the partial sums in a tree: the
    same contract (its ``row_arrays`` are names of its row columns).
    """
    if type(X).__name__ == "SparkTable":  # never imports pyspark otherwise
        return X.partition_sum(func, *row_arrays, prepare=prepare, **kwargs)
    if not is_dask_collection(X):
        total = None
        for rows in row_slices(X.shape[0], X.shape[1]):
            part = _prepared_call(func, prepare, _take_rows(X, rows),
                                  *[_take_rows(a, rows) for a in row_arrays], **kwargs)
            total = part if total is None else _add(total, part)
        return total
    import dask

    X = as_dask_array(X)
    chunks = X.chunks[0]
    blocks = X.to_delayed().ravel()
    others = [_row_blocks(a, chunks) for a in row_arrays]
    call = dask.delayed(_prepared_call, pure=True)
    parts = [call(func, prepare, b, *[o[i] for o in others], **kwargs)
             for i, b in enumerate(blocks)]
    (total,) = dask.compute(_tree_sum(parts))
    return total


def _take_rows(a, rows):
    """The rows ``rows`` (a slice) of an array or a pandas object (a view where possible)."""
    return a.iloc[rows] if hasattr(a, "iloc") else a[rows]


def _prepared_call(func, prepare, block, *row_blocks, **kwargs):
    """``func`` on one block of rows, prepared first (in a worker, or in memory)."""
    if prepare is not None:
        block = prepare(block)
    return func(block, *row_blocks, **kwargs)


def _row_blocks(a, chunks):
    """``a`` split into blocks of rows matching ``chunks`` (delayed or numpy)."""
    if is_dask_collection(a):
        import dask.array as da
        import dask.dataframe as dd

        if isinstance(a, (dd.DataFrame, dd.Series)):
            a = a.to_dask_array(lengths=True)
        if a.chunks[0] != chunks:
            a = a.rechunk({0: chunks})
        if a.ndim > 1:
            a = a.rechunk({i: -1 for i in range(1, a.ndim)})
        return list(a.to_delayed().ravel()) if isinstance(a, da.Array) else a
    a = np.asarray(a)
    ends = np.cumsum(chunks)
    return [a[e - c:e] for c, e in zip(chunks, ends)]


# ---------------------------------------------------------------- validation
