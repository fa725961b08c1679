"""Spark DataFrames in ``fit``: exact statistics as sums over partitions (issue 42, a start).

The same contract as :func:`skdpx.utils._dask.partition_sum`: ``func`` is the
function the in-memory path applies to a block of rows; each Spark task
applies it to the Arrow batches of its partition (``mapInPandas``), the
partial results are added in a tree (``treeReduce``), and only the exact
total reaches the driver, where the privacy core adds the noise. No row is
collected to the driver; no noise is drawn in an executor.

pyspark is optional (the ``spark`` extra): nothing here imports it unless
the caller passed a Spark DataFrame. The executors must run a Python with
skdpx, numpy and pandas (``PYSPARK_PYTHON``).
"""

import pickle
import sys

import numpy as np

__all__ = ["SparkTable", "is_spark_dataframe", "spark_partition_sum"]


def is_spark_dataframe(X):
    """Whether ``X`` is a Spark DataFrame (never imports pyspark)."""
    if "pyspark" not in sys.modules:
        return False
    from pyspark.sql import DataFrame

    return isinstance(X, DataFrame)


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b))
    return a + b


def _partition_sums(func, columns, row_columns, prepare, kwargs):
    """The function each task runs: ``func``'s sum over its Arrow batches, pickled.

    One output row per partition (none for an empty one): the pickled sum,
    a few kilobytes whatever the partition's size.
    """
    import pandas as pd

    def run(batches):
        total = None
        for frame in batches:
            block = frame[columns].to_numpy(dtype=np.float64)
            if prepare is not None:
                block = prepare(block)
            others = [frame[c].to_numpy() for c in row_columns]
            total = _add(total, func(block, *others, **kwargs))
        if total is not None:
            yield pd.DataFrame({"part": [pickle.dumps(total, protocol=pickle.HIGHEST_PROTOCOL)]})

    return run


def spark_partition_sum(func, df, *, columns, row_columns=(), prepare=None, depth=2,
                        **kwargs):
    """``func`` summed over the rows of a Spark DataFrame (numeric ``columns``).

    ``func(block, *row_blocks, **kwargs)``: ``block`` a (b, len(columns))
    float64 array of a batch of rows (after ``prepare``), ``row_blocks``
    the same rows of ``row_columns`` (e.g. the labels); it must return an
    array (or a tuple of arrays) whose sum over any split of the rows is
    its value on all rows. Returns that total, as numpy, in the driver:
    only one pickled partial sum per partition leaves an executor, and they
    are added in a tree of ``depth``. Exact, not private: the caller releases
    the total through the privacy core. ``None`` for a DataFrame without
    rows.
    """
    columns, row_columns = list(columns), list(row_columns)
    parts = (df.select(*columns, *row_columns)
             .mapInPandas(_partition_sums(func, columns, row_columns, prepare, kwargs),
                          schema="part binary")
             .rdd.map(lambda row: pickle.loads(row.part)))
    if parts.isEmpty():
        return None
    return parts.treeReduce(_add, depth=depth)


class SparkTable:
    """The private rows of a fit as a Spark DataFrame: its feature ``columns`` (numeric,
    in this order) and the columns that go with each row (``row_columns``, e.g. labels).

    What the engine-neutral sums take (:func:`skdpx.utils._dask.partition_sum`
    dispatches on it): ``shape`` is ``(nan, len(columns))``, the number of rows
    being private (counted, then released, by the privacy core only).
    """

    def __init__(self, df, columns, row_columns=()):
        self.df, self.columns, self.row_columns = df, list(columns), list(row_columns)

    @property
    def shape(self):
        return (float("nan"), len(self.columns))

    def partition_sum(self, func, *row_arrays, prepare=None, **kwargs):
        """``func`` summed over the rows; ``row_arrays``: names of ``row_columns``."""
        for name in row_arrays:
            if name not in self.row_columns:
                raise TypeError(f"a row array of a SparkTable is one of its row_columns "
                                f"{self.row_columns}, got {name!r}.")
        return spark_partition_sum(func, self.df, columns=self.columns,
                                   row_columns=list(row_arrays), prepare=prepare, **kwargs)
