"""Dask collections in fit: exact sums over partitions equal the in-memory statistics."""

import numpy as np
import pytest

from skdpx.privacy._kmeans import histograms, lloyd_table
from skdpx.utils._dask import is_dask_collection
from skdpx.utils._engine import partition_sum

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")


@pytest.mark.slow
def test_partition_sum_equals_the_in_memory_statistic(dask_client):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(5000, 4))
    centers = rng.uniform(size=(3, 4))
    dX = da.from_array(X, chunks=(700, 2))  # uneven row chunks, split columns
    np.testing.assert_allclose(partition_sum(lloyd_table, dX, centers01=centers),
                               lloyd_table(X, centers), rtol=1e-12, atol=1e-9)
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=4)
    np.testing.assert_array_equal(partition_sum(histograms, frame), histograms(X))
    y = rng.normal(size=5000)

    def stats(block, labels):
        return block.T @ labels, labels.sum()

    for labels in (y, da.from_array(y, chunks=1000)):  # numpy split to match, or rechunked
        xy, total = partition_sum(stats, dX, labels)
        np.testing.assert_allclose(xy, X.T @ y, rtol=1e-10)
        assert total == pytest.approx(y.sum())
    assert is_dask_collection(dX) and not is_dask_collection(X)


def test_estimators_without_dask_support_refuse_before_spending():
    # (DPLocallyLinearClassifier's refusals on Dask: tests/test_dask_llc.py)
    from sklearn.linear_model import LogisticRegression

    from skdpx import DPCounterfactualGenerator
    from skdpx.privacy import PrivacyLedger

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(400, 3))
    y = (X[:, 0] > 0.5).astype(int)
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-5)
    box = LogisticRegression().fit(X, y)
    est = DPCounterfactualGenerator(box, bounds=(0, 1), accountant=ledger)
    dX, dy = da.from_array(X, chunks=(100, 3)), da.from_array(y, chunks=100)
    # (a black box's explainer ignores y: only the dask X is refused there)
    with pytest.raises(TypeError, match="Dask"):
        est.fit(dX, dy)
    assert len(ledger) == 0


def _graph_keys():
    """A scheduler plugin that records the keys of every graph a client submits."""
    from distributed.diagnostics.plugin import SchedulerPlugin

    class GraphKeys(SchedulerPlugin):
        name = "skdpx-test-graph-keys"

        def __init__(self):
            self.graphs = []

        def update_graph(self, scheduler, *, tasks, **kwargs):
            self.graphs.append({str(k) for k in tasks})

    return GraphKeys()


def test_every_call_submits_tasks_under_keys_of_its_own(dask_client):
    # issue 42, item 5 (dask issue 9888): Dask names a task after a hash of its inputs,
    # so the same step twice on one collection made the same keys, and a held key sent
    # again in a graph optimised differently is two different tasks under one key. The
    # engine layer names every task it makes for the call: the same calls twice (sums,
    # a lazy map persisted, the validation's encoding of a DataFrame) share only the
    # keys of the caller's own collections
    from sklearn.base import BaseEstimator

    from skdpx.utils._engine import map_blocks, persist, rows_like
    from skdpx.utils._tables import validate_dask_table

    rng = np.random.default_rng(1)
    X = rng.uniform(size=(900, 3))
    dX = da.from_array(X, chunks=(200, 3))
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abc")), npartitions=3)
    def weighted(block, labels):
        return block.T @ labels

    scheduler = dask_client.cluster.scheduler
    rounds = []
    for _ in range(2):
        seen = _graph_keys()
        scheduler.add_plugin(seen)
        try:
            partition_sum(histograms, dX)
            partition_sum(weighted, dX, rows_like(X[:, 0], dX))
            held = persist(map_blocks(np.square, dX), map_blocks(np.sqrt, dX))
            partition_sum(lloyd_table, held[0], centers01=X[:2])
            Z = validate_dask_table(BaseEstimator(), frame, reset=True)
            persist(Z)
        finally:
            scheduler.remove_plugin(name=seen.name)
        assert len(seen.graphs) >= 5
        rounds.append(set().union(*seen.graphs))
    from dask.core import flatten

    own = {str(k) for c in (dX, frame, frame.optimize()) for k in flatten(c.__dask_keys__())}
    shared = sorted((rounds[0] & rounds[1]) - own)
    assert not shared, shared[:5]


def test_columns_read_from_parquet_files_keep_their_rows(tmp_path):
    # dask may fuse the partitions of a few columns read from Parquet files (one
    # label column), and to_dask_array(lengths=True) then refused its own lengths
    pytest.importorskip("pyarrow")
    from skdpx.utils._dask import as_dask_array

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=4000), "b": rng.normal(size=4000),
                          "label": rng.integers(0, 2, 4000)})
    for i in range(2):
        frame.iloc[2000 * i:2000 * (i + 1)].to_parquet(tmp_path / f"part-{i}.parquet")
    table = dd.read_parquet(sorted(str(p) for p in tmp_path.glob("*.parquet")))
    X, y = as_dask_array(table[["a", "b"]]), table["label"]
    assert X.shape == (4000, 2) and as_dask_array(y, dtype=None).shape == (4000, 1)
    xy, total = partition_sum(lambda block, labels: (block.T @ labels, labels.sum()), X, y)
    np.testing.assert_allclose(xy, frame[["a", "b"]].to_numpy().T @ frame["label"].to_numpy())
    assert total == frame["label"].sum()
