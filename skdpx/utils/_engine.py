"""One engine-neutral layer: a statistic summed over the partitions of the private rows.

Everything a fit releases from its rows is a sum over rows (histogram
counts, per-cluster sums, a local loss's weighted sufficient statistics, a
full-batch gradient). This module computes such a sum wherever the rows are:

* **in memory** (a numpy array or pandas DataFrame): consecutive blocks of
  rows in this process (:func:`~skdpx.utils._chunks.row_slices`);
* **on Dask** (a dask array or DataFrame): each partition in the workers
  (:mod:`skdpx.utils._dask`);
* **on Spark** (a :class:`~skdpx.utils._spark.SparkTable` made from a Spark
  DataFrame by the validation): the Arrow batches of each partition in the
  executors (:mod:`skdpx.utils._spark`).

Every engine calls the *same* per-block function (the one the in-memory
path applies to its blocks), adds the partial results in a tree, and
returns the exact total, as numpy, to the driver: the privacy core adds the
noise there, once. No noise is drawn in a worker or an executor, and the
driver never gathers a row.

No estimator imports Dask or pyspark (or :mod:`._dask`, :mod:`._spark`): they
call this module. Neither engine is imported here unless the caller passed
one of its objects.
"""

import sys

import numpy as np

from ._chunks import add_sums, prepared_call, row_slices

__all__ = ["RowNumbers", "engine", "exact_rows", "is_distributed", "map_blocks",
           "partition_sum", "persist", "refuse_distributed_queries", "row_numbers", "rows_like",
           "source_rows", "unpersist"]


def engine(X):
    """Where the rows ``X`` are: ``"memory"``, ``"dask"`` or ``"spark"`` (never imports either)."""
    if "dask" in sys.modules:
        import dask

        if dask.is_dask_collection(X):
            return "dask"
    if "pyspark" in sys.modules:
        from ._spark import is_spark

        if is_spark(X):
            return "spark"
    return "memory"


def is_distributed(X):
    """Whether ``X`` is held by an engine (Dask or Spark) rather than this process."""
    return engine(X) != "memory"


def refuse_distributed_queries(estimator, X):
    """Raise TypeError for queries held by an engine: explanations are answered in memory.

    Called before anything is spent (``fit_transform`` checks first).
    """
    kind = engine(X)
    if kind != "memory":
        how = "X.compute()" if kind == "dask" else "X.toPandas()"
        raise TypeError(
            f"{type(estimator).__name__} answers queries in memory: pass them as a numpy "
            f"array or a pandas DataFrame (e.g. {how} for a few public points), not as a "
            f"{kind.capitalize()} collection.")


def partition_sum(func, X, *row_arrays, prepare=None, **kwargs):
    """``func`` summed over the row blocks of ``X`` (and of ``row_arrays``), on any engine.

    ``func(X_block, *row_blocks, **kwargs)`` must return an array (or a tuple
    of arrays) whose sum over any split of the rows is the value on all rows,
    e.g. counts or sums over rows. ``prepare`` (optional, picklable) maps a
    block of ``X``'s rows to what ``func`` takes (e.g.
    :class:`~skdpx.utils._validation.UnitCubeRows`: missing values filled,
    clipped and scaled), block by block, so that no prepared copy of the
    whole ``X`` is ever made.

    In memory, ``func`` runs on consecutive blocks of rows (a fixed number of
    rows from the width only) and the results are added: the memory is X
    plus one block's temporaries. On Dask (``row_arrays`` dask arrays or
    Series with the same rows, or numpy arrays split to match) and on Spark
    (``row_arrays`` tables derived from the same Spark DataFrame as ``X``),
    it runs on each partition in the workers or executors, and the partial
    results are added in a tree. Either way the total equals ``func`` on all
    the (prepared) rows up to floating-point summation order, and only it
    reaches the driver. A Spark DataFrame without rows gives ``func`` on
    empty blocks (the statistic of no row, zeros), as in memory.

    Exact, not private: the caller releases the total through the privacy
    core.

    A task lost with its worker or executor is run again by the engine
    (Dask reschedules it, Spark retries it) and nothing is spent twice: the
    spend was committed to the ledger in the driver before any task ran,
    and the noise is drawn in the driver, once, after the total arrives. A
    task only reads rows and returns a partial sum, and the same rows give
    the same partial sum however often it runs (the collection must give the
    same rows on every read: files, tables, deterministic transformations;
    doc/scale.rst, "Deterministic rows").
    """
    kind = engine(X)
    if kind == "dask":
        from ._dask import dask_partition_sum

        return dask_partition_sum(func, X, *row_arrays, prepare=prepare, **kwargs)
    if kind == "spark":
        from ._spark import spark_partition_sum

        return spark_partition_sum(func, X, *row_arrays, prepare=prepare, **kwargs)
    total = None
    for rows in row_slices(X.shape[0], X.shape[1]):
        part = prepared_call(func, prepare, _take_rows(X, rows),
                             *[_take_rows(a, rows) for a in row_arrays], **kwargs)
        total = add_sums(total, part)
    return total


def _take_rows(a, rows):
    """The rows ``rows`` (a slice) of an array or a pandas object (a view where possible)."""
    return a.iloc[rows] if hasattr(a, "iloc") else a[rows]


def _count_rows(block):
    return np.array([len(block)], dtype=np.int64)


def exact_rows(X):
    """The exact number of rows of ``X`` (private under add-or-remove).

    Read only by the privacy core's count (:class:`~skdpx.privacy.FitCount`)
    and where the relation makes it public. On an engine, a dask array's
    known chunk sizes, else one pass that sums the partitions' row counts:
    no value reaches the driver.
    """
    kind = engine(X)
    if kind == "dask":
        from ._dask import as_dask_array

        return int(as_dask_array(X, dtype=None).shape[0])
    if kind == "spark":
        total = partition_sum(_count_rows, X)
        return 0 if total is None else int(total[0])
    return X.shape[0] if hasattr(X, "shape") and len(X.shape) else len(X)


def map_blocks(func, X, *, n_columns=None, **kwargs):
    """The rows of ``X`` mapped block by block: ``func(block, **kwargs)`` for each block.

    ``func`` maps each row by a rule on that row alone (fill, clip, scale,
    label), so the result does not depend on how the rows are split. In
    memory, a numpy array (the blocks' results stacked); on an engine, a
    lazy collection of the same engine with the same rows (nothing is
    computed until it is summed or persisted). ``n_columns``: the width of
    the result, when it differs from ``X``'s.
    """
    kind = engine(X)
    if kind == "dask":
        from ._dask import dask_map_blocks

        return dask_map_blocks(func, X, n_columns=n_columns, **kwargs)
    if kind == "spark":
        return X.map(func, n_columns=n_columns, **kwargs)
    parts = [func(_take_rows(X, rows), **kwargs) for rows in row_slices(X.shape[0], X.shape[1])]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)


def rows_like(a, X):
    """``a`` (one value per row of ``X``) on ``X``'s engine, with its partitions.

    A numpy ``a`` beside a dask ``X`` becomes a dask array with ``X``'s row
    chunks; anything else is returned as it is (on Spark, the validation
    made it a table of ``X``'s DataFrame).
    """
    if engine(X) == "dask":
        from ._dask import dask_rows_like

        return dask_rows_like(a, X)
    return a


def persist(*arrays):
    """Row collections of one engine computed once and kept in its memory.

    Dask: ``persist`` (waits, and raises a task's error here, in ``fit``);
    Spark: one pass computes every array of the same rows into a cached
    DataFrame. In memory: returned as they are. A block lost with a worker
    or executor (now or later) is computed again from its lineage, with the
    same result when the collection gives the same rows on every read;
    nothing is spent or drawn here.
    """
    kind = engine(arrays[0])
    if kind == "dask":
        from ._dask import dask_persist

        return dask_persist(*arrays)
    if kind == "spark":
        from ._spark import spark_persist

        return spark_persist(*arrays)
    return arrays


def source_rows(frame, X):
    """The input rows as they came (a DataFrame's columns and dtypes), beside validated ``X``.

    What a per-block function needs when the black box must see a
    DataFrame's rows as the user gave them (missing values, dtypes), not
    their encoding: a row array for :func:`partition_sum` with ``X``
    (``frame`` the input :func:`~skdpx.utils._tables.validate_table` was
    given, ``X`` what it returned), whose blocks are pandas DataFrames of the
    same rows as ``X``'s blocks:

    * in memory: ``frame`` itself (a pandas DataFrame; blocks ``frame.iloc[rows]``);
    * on Dask: ``frame``, a dask DataFrame whose partitions are ``X``'s row
      chunks (the validation encodes each partition into one chunk), each
      block one partition;
    * on Spark: a table of ``X``'s DataFrame reading its feature columns as
      a pandas DataFrame, batch by batch, in the executors.

    Nothing is read here.
    """
    if engine(X) == "spark":
        from ._spark import frame_table

        return frame_table(X)
    if engine(frame) == "dask":
        import dask.dataframe as dd

        if isinstance(frame, dd.Series):  # validated as its one-column DataFrame
            return frame.to_frame()
    return frame


class RowNumbers:
    """The row numbers ``0 .. n - 1`` of rows in memory, made block by block (no array of n).

    A row array for :func:`partition_sum`: ``numbers[rows]`` (a slice) is
    that block's numbers.
    """

    def __init__(self, n):
        self.n = int(n)

    @property
    def shape(self):
        return (self.n,)

    def __len__(self):
        return self.n

    def __getitem__(self, rows):
        if not isinstance(rows, slice):
            raise TypeError("RowNumbers are read by slices of rows.")
        return np.arange(*rows.indices(self.n), dtype=np.int64)


def row_numbers(X, *row_arrays):
    """The rows' numbers on ``X``'s engine: ``(numbers, X, *row_arrays)``.

    ``numbers`` holds one distinct non-negative integer per row of ``X``,
    a row array for :func:`partition_sum` beside ``X`` and ``row_arrays``
    (returned as they must then be passed: on Spark, tables of one
    DataFrame that carries the numbers). Each block's numbers are
    consecutive. They number the rows in the engine's order, from 0: in
    memory and on Dask, the row's position (a dask ``arange`` with ``X``'s
    row chunks; no value computed); on Spark, ``monotonically_increasing_id``
    (the partition and the position in it), made consecutive across
    partitions by one pass that sums the partitions' row counts (a vector
    of one count per partition, which reaches the driver and nothing
    else). A row's numbers say where it is, never what it holds: the
    draws a row is given from them (:meth:`~skdpx.privacy.NoiseSource.row_uniforms`)
    are independent of its values.

    Private: the number of rows is the largest number plus one; read only
    inside a committed fit.
    """
    kind = engine(X)
    if kind == "spark":
        from ._spark import spark_row_numbers

        return spark_row_numbers(X, *row_arrays)
    if kind == "dask":
        import dask.array as da

        chunks = X.chunks[0]
        numbers = da.arange(0, int(sum(chunks)), chunks=(chunks,), dtype=np.int64)
        return (numbers, X, *row_arrays)
    return (RowNumbers(X.shape[0]), X, *row_arrays)


def unpersist(*arrays):
    """Free what :func:`persist` kept, once nothing will read it again.

    Spark: the cached DataFrames are dropped from the executors' memory
    (Spark keeps them until told); Dask: nothing to do (the workers free a
    persisted array when its last reference goes). In memory: nothing.
    """
    for a in arrays:
        if engine(a) == "spark":
            a.df.unpersist()
