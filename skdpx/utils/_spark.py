"""The Spark backend of the engine-neutral sums (:mod:`skdpx.utils._engine`).

A fit's private rows on Spark are a :class:`SparkTable`: a Spark DataFrame
and how each batch of its rows becomes a float block (the public schema's
encoding, then per-row steps such as fill, clip and scale, or the black
box's labels). Nothing is computed when a table is made or mapped: each
sum is one pass in which every Spark task reads the Arrow batches of its
partition (``mapInPandas``), applies the same per-block function the
in-memory path applies to its blocks, and returns one pickled partial sum
(a few kilobytes whatever the partition's size); the partial sums are
added in a tree (``treeAggregate``), and only the exact total reaches the
driver, where the privacy core adds the noise. No row is collected to the
driver; no noise is drawn in an executor.

pyspark is optional (the ``spark`` extra): nothing here imports it unless
the caller passed a Spark DataFrame. The executors must run a Python with
skdpx, numpy, pandas and pyarrow (``PYSPARK_PYTHON``).
"""

import itertools
import pickle
import sys
import weakref
from functools import partial

import numpy as np

from ._chunks import add_sums, prepared_call

__all__ = ["FrameColumns", "ReadColumns", "SparkTable", "frame_table", "is_spark",
           "is_spark_dataframe", "spark_partition_sum", "spark_persist", "spark_row_numbers"]

_PERSISTED = itertools.count()


def is_spark_dataframe(X):
    """Whether ``X`` is a Spark DataFrame (never imports pyspark)."""
    if "pyspark" not in sys.modules:
        return False
    from pyspark.sql import DataFrame

    return isinstance(X, DataFrame)


def is_spark(X):
    """Whether ``X`` is a Spark DataFrame or a :class:`SparkTable`."""
    return isinstance(X, SparkTable) or is_spark_dataframe(X)


class ReadColumns:
    """A batch's ``columns`` as a float64 block (1-D for ``ravel``; picklable)."""

    def __init__(self, columns, ravel=False, dtype=np.float64):
        self.columns, self.ravel, self.dtype = list(columns), bool(ravel), dtype

    def __call__(self, frame):
        block = frame[self.columns].to_numpy(dtype=self.dtype)
        return block[:, 0] if self.ravel else block


class SparkTable:
    """Rows of a Spark DataFrame as a lazily computed array (what a fit sums over).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The rows (never collected).
    read : callable
        Picklable: a pandas batch of ``df``'s rows (``read.columns`` of
        them) to a float block, row by row (e.g. the public schema's
        encoding, :class:`ReadColumns`).
    n_columns : int or None
        The block's width (``None``: 1-D blocks, e.g. labels).
    steps : tuple of callables
        Per-row maps applied to each block after ``read`` (:meth:`map`).

    ``shape`` is ``(nan, n_columns)``: the number of rows is private (only the
    privacy core reads it, :func:`~skdpx.utils._engine.exact_rows`). Tables
    made from the same ``df`` hold the same rows in the same order: a sum
    reads them together, batch by batch.
    """

    def __init__(self, df, read, n_columns, steps=()):
        self.df, self.read, self.n_columns, self.steps = df, read, n_columns, tuple(steps)

    @property
    def shape(self):
        return (float("nan"),) if self.n_columns is None else (float("nan"), self.n_columns)

    @property
    def dtype(self):
        """float64, or the label column's dtype as read (object for strings)."""
        dtype = getattr(self.read, "dtype", np.float64) if not self.steps else np.float64
        return np.dtype(object if dtype is None else dtype)

    def astype(self, dtype):
        """The same rows, converted to ``dtype`` in the executors (lazy)."""
        return self.map(np.asarray, dtype=dtype)

    @property
    def ndim(self):
        return len(self.shape)

    def block(self, frame):
        """This table's block of a pandas batch of ``df``'s rows."""
        block = self.read(frame)
        for step in self.steps:
            block = step(block)
        return block

    def map(self, func, n_columns=None, **kwargs):
        """A table of the same rows, ``func(block, **kwargs)`` applied to each block (lazy)."""
        width = self.n_columns if n_columns is None else int(n_columns)
        return SparkTable(self.df, self.read, width, self.steps + (partial(func, **kwargs),))

    def __repr__(self):
        return f"SparkTable(n_columns={self.n_columns}, steps={len(self.steps)})"

    def __getstate__(self):
        # what an executor receives has no DataFrame (the driver's handle on the rows)
        if self.df is not None:
            raise TypeError("a SparkTable refers to a Spark DataFrame of private rows held by "
                            "a Spark session: it cannot be pickled or copied.")
        return self.__dict__


def _columns(tables):
    """The union of the source columns the tables read (in ``df``'s order)."""
    wanted = set()
    for t in tables:
        wanted.update(t.read.columns)
    return [c for c in tables[0].df.columns if c in wanted]


def _quoted(columns):
    """Column names for ``select`` (backticks: a name may hold a dot or a space)."""
    return ["`" + c.replace("`", "``") + "`" for c in columns]


def _same_rows(X, row_arrays):
    for a in row_arrays:
        if not isinstance(a, SparkTable) or a.df is not X.df:
            raise TypeError("the row arrays summed with a SparkTable must be tables of the "
                            "same Spark DataFrame (the same rows, in the same order).")


def _partition_sums(func, X, row_arrays, prepare, kwargs):
    """The function each task runs: ``func``'s sum over its Arrow batches, pickled.

    One output row per partition (none for an empty one): the pickled sum.
    """
    import pandas as pd

    def run(batches):
        total = None
        for frame in batches:
            if len(frame) == 0:
                continue
            part = prepared_call(func, prepare, X.block(frame),
                                 *[a.block(frame) for a in row_arrays], **kwargs)
            total = add_sums(total, part)
        if total is not None:
            yield pd.DataFrame({"part": [pickle.dumps(total, protocol=pickle.HIGHEST_PROTOCOL)]})

    return run


def _unpickle(row):
    return pickle.loads(row.part)


def spark_partition_sum(func, X, *row_arrays, prepare=None, depth=2, **kwargs):
    """:func:`~skdpx.utils._engine.partition_sum` on a :class:`SparkTable`.

    Every task sums ``func`` over the batches of its partition; one pickled
    partial sum per partition leaves an executor, and they are added in a
    tree of ``depth`` (``treeAggregate``). Returns the total, as numpy, in
    the driver (for a DataFrame without rows, ``func`` on empty blocks: the
    statistic of no row).
    """
    _same_rows(X, row_arrays)
    tables = (X, *row_arrays)
    # the tables are shipped inside the function (cloudpickle), without their DataFrame
    light = [SparkTable(None, t.read, t.n_columns, t.steps) for t in tables]
    parts = (X.df.select(*_quoted(_columns(tables)))
             .mapInPandas(_partition_sums(func, light[0], light[1:], prepare, kwargs),
                          schema="part binary")
             .rdd.map(_unpickle))
    total = parts.treeAggregate(None, add_sums, add_sums, depth=depth)
    if total is None:
        # no row: the statistic of no row (zeros of its shape), as in memory, so that
        # a fit on an empty DataFrame releases as one on rows does (never a failure
        # after the spend that says n = 0)
        import pandas as pd

        empty = pd.DataFrame({c: pd.Series([], dtype=object) for c in X.df.columns})
        total = prepared_call(func, prepare, X.block(empty),
                              *[a.block(empty) for a in row_arrays], **kwargs)
    return total


def _persisted_blocks(tables, names):
    """The function of the persisting pass: every table's block, as named double columns."""
    import pandas as pd

    def run(batches):
        for frame in batches:
            if len(frame) == 0:  # (an empty batch: nothing to keep)
                continue
            out = {}
            for t, cols in zip(tables, names):
                block = np.asarray(t.block(frame), dtype=np.float64).reshape(len(frame), -1)
                out.update({c: block[:, j] for j, c in enumerate(cols)})
            yield pd.DataFrame(out, columns=[c for cols in names for c in cols])

    return run


def spark_persist(*tables):
    """The tables (of one DataFrame) computed in one pass into a cached DataFrame.

    The blocks (e.g. the scaled rows and the black box's labels) are
    written as double columns of a new DataFrame, cached by Spark in the
    executors (memory, spilled to disk) and materialized now (a "noop"
    write: nothing reaches the driver), so that an error in a task (the
    black box failing on a partition) is raised here. Returns tables
    reading those columns.
    """
    X = tables[0]
    _same_rows(X, tables[1:])
    tag = next(_PERSISTED)
    names = [[f"_p{tag}_{i}_{j}" for j in range(1 if t.n_columns is None else t.n_columns)]
             for i, t in enumerate(tables)]
    light = [SparkTable(None, t.read, t.n_columns, t.steps) for t in tables]
    schema = ", ".join(f"{c} double" for cols in names for c in cols)
    df = X.df.select(*_quoted(_columns(tables))).mapInPandas(_persisted_blocks(light, names),
                                                             schema)
    df = df.persist()
    try:
        df.write.format("noop").mode("overwrite").save()
    except BaseException:  # (an interrupt too) nothing stays cached from a failed pass
        _unpersist(df)
        raise
    out = tuple(SparkTable(df, ReadColumns(cols, ravel=t.n_columns is None), t.n_columns)
                for t, cols in zip(tables, names))
    # the cache is dropped from the executors once no table reads it (a refit, del)
    weakref.finalize(out[0], _unpersist, df)
    return out


def _unpersist(df):
    try:
        df.unpersist()
    except Exception:  # the session is stopped already: nothing is cached
        pass


# -- the rows as they came, and the rows' numbers -------------------------------


class FrameColumns:
    """A batch's ``columns`` as a pandas DataFrame (picklable).

    The black box of a global explanation sees a DataFrame's rows with their
    own columns (:func:`~skdpx.utils._engine.source_rows`), cast to the
    dtypes of the Spark schema (``dtypes``: a nullable integer column always
    float64, a nullable boolean always object), never to those the batch's
    own rows would give (pyspark converts each Arrow batch by its contents).
    """

    def __init__(self, columns, dtypes):
        self.columns, self.dtypes = list(columns), dict(dtypes)

    def __call__(self, frame):
        return frame[self.columns].astype(self.dtypes)


def frame_table(X):
    """The feature columns of validated ``X``'s DataFrame, as pandas blocks (lazy).

    ``X`` is the table :func:`~skdpx.utils._tables.validate_spark_table`
    made (its ``read`` names the feature columns and their batch dtypes).
    """
    columns = list(X.read.columns)
    return SparkTable(X.df, FrameColumns(columns, X.read.dtypes), len(columns))


#: the column of the rows' numbers (monotonically_increasing_id)
_ROW_ID = "_skdpx_row_id"

#: monotonically_increasing_id: the partition in the upper 31 bits, the position in
#: the partition in the lower 33
_POSITION_BITS = 33


def _partition_counts(ids, *, n_partitions):
    part = ids >> _POSITION_BITS
    if part.size and part.max() >= n_partitions:
        raise RuntimeError(f"a partition index beyond the DataFrame's {n_partitions} "
                           "partitions: its partitioning changed between two passes.")
    return np.bincount(part, minlength=n_partitions).astype(np.int64)


def _consecutive(ids, *, offsets):
    return offsets[ids >> _POSITION_BITS] + (ids & ((1 << _POSITION_BITS) - 1))


def spark_row_numbers(X, *tables):
    """:func:`~skdpx.utils._engine.row_numbers` on a :class:`SparkTable`.

    The DataFrame gets a column of ``monotonically_increasing_id`` (the
    partition and the position in it); one pass sums the partitions' row
    counts (the only value that reaches the driver: one count per
    partition), and each row's number is its partition's offset plus its
    position, mapped in the executors. Returns ``(numbers, X, *tables)``,
    tables of that DataFrame.
    """
    from pyspark.sql import functions as F

    _same_rows(X, tables)
    df = X.df.withColumn(_ROW_ID, F.monotonically_increasing_id())
    rebased = tuple(SparkTable(df, t.read, t.n_columns, t.steps) for t in (X, *tables))
    ids = SparkTable(df, ReadColumns([_ROW_ID], ravel=True, dtype=np.int64), None)
    n_partitions = max(1, int(df.rdd.getNumPartitions()))
    counts = spark_partition_sum(_partition_counts, ids, n_partitions=n_partitions)
    if counts is None:  # no row
        counts = np.zeros(n_partitions, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    return (ids.map(_consecutive, offsets=offsets), *rebased)
