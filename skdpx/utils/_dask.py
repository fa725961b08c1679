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

__all__ = ["as_dask_array", "is_dask_collection", "partition_sum",
           "refuse_dask_queries", "validate_dask_table"]


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
    :class:`~skdpx.utils._chunks.UnitCubeRows`: missing values filled,
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
    """
    if not is_dask_collection(X):
        from ._chunks import row_slices

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


def _meta(X):
    """An empty in-memory stand-in of ``X``: its columns and dtypes, no value.

    A dask DataFrame's ``_meta`` (an empty pandas DataFrame); for a dask
    array, an empty numpy array of its dtype and number of columns.
    """
    import dask.dataframe as dd

    if isinstance(X, dd.Series):
        X = X.to_frame()
    if isinstance(X, dd.DataFrame):
        return X._meta
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D array, got a {X.ndim}-D dask array instead: "
                         "reshape your data (a single feature: X[:, None]).")
    return np.empty((0, X.shape[1]), dtype=X.dtype)


def _encode_block(block, schema, n_encoded, private=True):
    """One partition's rows encoded by the public schema (in a worker).

    ``private`` (a fit's rows): no cell is refused (see
    :meth:`~skdpx.utils._tables.TableSchema.encode`).
    """
    if len(block) == 0:
        return np.empty((0, n_encoded))
    Z = schema.encode(block, private=private)
    Z = Z.toarray() if hasattr(Z, "toarray") else Z
    return np.asarray(Z, dtype=np.float64)


def _encoded_array(X, schema, private=True):
    """The encoded rows as a row-chunked float dask array.

    ``schema.encode`` runs on each partition in the workers (``private``:
    a fit's rows, no cell refused). When the partitions' row counts are
    unknown (a DataFrame), one pass returns each partition's row count
    (the exact number of rows, read only by the DP count, as ``len(X)`` is in memory),
    nothing else.
    """
    import dask
    import dask.array as da
    import dask.dataframe as dd

    n_encoded = schema.n_encoded
    if isinstance(X, dd.DataFrame):
        parts, lengths = X.to_delayed(), None
    else:
        X = X.rechunk({1: -1})
        if schema.encoder is None and not any(np.isnan(c) for c in X.chunks[0]):
            return as_dask_array(X, dtype=np.float64)
        parts = X.to_delayed().ravel()
        lengths = None if any(np.isnan(c) for c in X.chunks[0]) else list(X.chunks[0])
    encode = dask.delayed(_encode_block, pure=True)
    blocks = [encode(p, schema, n_encoded, private) for p in parts]
    if lengths is None:
        # one pass: each partition's row count (read only by the DP count, as len(X))
        lengths = [int(n) for n in dask.compute(*[dask.delayed(len, pure=True)(b)
                                                 for b in blocks])]
    arrays = [da.from_delayed(b, shape=(n, n_encoded), dtype=np.float64)
              for b, n in zip(blocks, lengths)]
    return da.concatenate(arrays, axis=0)


def validate_dask_table(estimator, X, y="no_validation", *, reset, categories=None):
    """:func:`~skdpx.utils._tables.validate_table` for a dask array or DataFrame.

    The same checks and the same public schema as in memory, made without
    gathering a row in the client:

    * the schema (``schema_``, ``n_features_in_``, ``feature_names_in_``)
      is read from the collection's columns and dtypes only (an empty
      stand-in: a dask DataFrame's ``_meta``), exactly as in memory;
    * the encoding (declared categories one-hot, numeric columns as float)
      is applied to each partition in the workers;
    * as in memory, no value of a fit's rows is refused (a refusal would be
      a release about one row): missing and infinite values pass as NaN
      and inf (the estimator sets them to the bounds' midpoint), a
      categorical value that is not a declared level encodes as missing,
      and ``y``'s values are the estimator's to drop or neutralise. Only
      public facts are refused: the columns, the dtypes, an empty or
      misshapen collection, ``y``'s length.

    Parameters
    ----------
    estimator : estimator
    X : dask array of shape (n_samples, n_features) or dask DataFrame
    y : dask array or Series, array-like, or "no_validation"
        Rechunked to ``X``'s rows (a numpy ``y`` is split to match); its
        length is checked; its values are the estimator's to drop or neutralise.
    reset : bool
        Set the schema (fit), or check ``X`` against it.
    categories : dict or None
        The estimator's declared categories (as in memory).

    Returns
    -------
    Z : dask array of shape (n_samples, n_encoded), dtype float64
        Chunked by rows only, with known chunk sizes (the number of rows
        ``Z.shape[0]`` is exact: under add-or-remove only the DP count reads it, as
        ``len(X)`` in memory).
    y : dask array of shape (n_samples,) or ndarray, only when given
    """
    import dask.dataframe as dd
    from sklearn.utils.validation import validate_data

    from ..preprocessing._schema import _is_frame
    from ._tables import TableSchema, _all_numeric, check_same_rows

    no_y = isinstance(y, str) and y == "no_validation"
    if not no_y and y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target "
                         "y is None.")
    if isinstance(X, dd.Series):
        X = X.to_frame()
    meta = _meta(X)
    if meta.shape[1] < 1:
        raise ValueError(f"0 feature(s) (shape={meta.shape}) while a minimum of 1 is required "
                         f"by {type(estimator).__name__}.")
    # names and the number of features, checked or set as in memory (no value read)
    validate_data(estimator, meta, reset=reset, skip_check_array=True)
    if reset:
        bounds = getattr(estimator, "bounds", None)
        mixed = (bool(categories) or isinstance(bounds, dict)
                 or (_is_frame(meta) and not _all_numeric(meta)))
        if mixed:
            estimator.schema_ = TableSchema(meta, bounds=bounds, categories=categories,
                                            n_features=estimator.n_features_in_)
        else:
            if not _is_frame(meta) and meta.dtype.kind not in "biuf":
                raise ValueError(f"dtype {meta.dtype} is not numeric: convert the dask array "
                                 "to float, or pass a DataFrame with declared categories.")
            estimator.schema_ = TableSchema(meta, bounds=bounds, categories=None,
                                            n_features=estimator.n_features_in_)
    Z = _encoded_array(X, estimator.schema_, private=reset)
    if Z.shape[0] < 1:
        raise ValueError(f"Found array with 0 sample(s) (shape={Z.shape}) while a minimum of "
                         f"1 is required by {type(estimator).__name__}.")
    if not no_y:
        if isinstance(y, (dd.Series, dd.DataFrame)) or is_dask_collection(y):
            y = as_dask_array(y, dtype=None)
            if y.shape[1] != 1:
                raise ValueError(f"y must be 1-d; got {y.shape[1]} columns.")
            y = y[:, 0]
            n_y = int(y.shape[0])
        else:
            y = np.asarray(y)
            n_y = len(y)
        check_same_rows(estimator, Z.shape[0], n_y)
        if is_dask_collection(y) and y.chunks[0] != Z.chunks[0]:
            y = y.rechunk({0: Z.chunks[0]})
    return Z if no_y else (Z, y)
