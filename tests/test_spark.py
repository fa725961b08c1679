"""The Spark backend of partition sums (issue 42, a start): a local[2] session."""

import numpy as np
import pytest

pyspark = pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")

from skdpx.utils._engine import partition_sum  # noqa: E402
from skdpx.utils._spark import ReadColumns, SparkTable, is_spark_dataframe  # noqa: E402


def _table(df, columns, ravel=False):
    return SparkTable(df, ReadColumns(columns, ravel=ravel), None if ravel else len(columns))


def _stats(block, labels, *, edges):
    """A histogram per column, sums and a Gram: what the estimators release."""
    hist = np.stack([np.histogram(block[:, j], bins=edges)[0] for j in range(block.shape[1])])
    return hist.astype(float), block.sum(axis=0), block.T @ block, labels @ block


def test_spark_sums_equal_the_in_memory_sums(spark):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 4))
    y = rng.uniform(-1, 1, size=5000)
    frame = pd.DataFrame(X, columns=list("abcd")).assign(label=y)
    df = spark.createDataFrame(frame).repartition(5)
    assert is_spark_dataframe(df) and not is_spark_dataframe(frame)
    edges = np.linspace(-10, 10, 9)
    got = partition_sum(_stats, _table(df, list("abcd")), _table(df, ["label"], ravel=True),
                        edges=edges)
    want = partition_sum(_stats, X, y, edges=edges)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-9)
    assert got[0].sum() == 4 * 5000  # every row counted once


def test_prepare_is_applied_to_every_block_and_no_row_gives_zeros(spark):
    X = np.arange(40.0).reshape(20, 2)
    df = spark.createDataFrame(pd.DataFrame(X, columns=["u", "v"]))
    got = partition_sum(lambda b: b.sum(axis=0), _table(df, ["u", "v"]),
                        prepare=lambda b: np.clip(b, 0, 10))
    np.testing.assert_array_equal(got, np.clip(X, 0, 10).sum(axis=0))
    # no row: the statistic of no row (zeros of its shape), as in memory
    np.testing.assert_array_equal(
        partition_sum(lambda b: b.sum(axis=0), _table(df.limit(0), ["u", "v"])), [0.0, 0.0])


def test_dp_kmeans_runs_on_spark_as_in_memory(spark):
    # the engine-neutral sums: the privacy core's k-means on a SparkTable, noiseless,
    # gives the in-memory centres (the same seeded initial draws, the same tables)
    from skdpx.privacy import Commitment, gaussian_event, noise_source
    from skdpx.privacy._kmeans import dp_lloyd
    rng = np.random.default_rng(1)
    X = np.clip(np.r_[rng.normal(0.25, 0.05, (600, 3)), rng.normal(0.7, 0.05, (600, 3))], 0, 1)
    table = _table(spark.createDataFrame(pd.DataFrame(X, columns=["a", "b", "c"]))
                   .repartition(4), ["a", "b", "c"])
    runs = []
    for rows in (X, table):
        with noise_source(0) as noise:
            commitment = Commitment(gaussian_event(1e-9, steps=4), "test")
            runs.append(dp_lloyd(rows, 3, 3, 1e-9, relation="add_or_remove", noise=noise,
                                 commitment=commitment))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(runs[1][1], runs[0][1], rtol=1e-9, atol=1e-6)
