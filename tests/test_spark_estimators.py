"""DPLimeExplainer and PrivRecourse on a Spark DataFrame (local[2]): the in-memory results,
the same spend, checks before it, and no row in the driver."""

import pickle
import warnings

import numpy as np
import pytest

from skdpx.explain import DPLimeExplainer
from skdpx.privacy import PrivacyLedger, event_to_json, given_row_count
from skdpx.recourse import PrivRecourse

from ._tables import BOUNDS, CATEGORIES, N, people_and_black_box, refuse_spark_rows
from ._helpers import quiet_fit as _fit

pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def data():
    frame, _, box = people_and_black_box()
    return frame, box


def _lime(box, **kw):
    params = {"epsilon": np.inf, "epsilon_per_query": np.inf, "delta": 1e-6, "max_iter": 40,
              "bounds": None, "random_state": 0, "categories": CATEGORIES}
    params.update(kw)
    return DPLimeExplainer(box, **params)


def _recourse(box, **kw):
    params = {"epsilon": np.inf, "delta": 1e-6, "bounds": None, "random_state": 0,
              "categories": CATEGORIES, "n_clusters": 4}
    params.update(kw)
    return PrivRecourse(estimator=box, **params)


def _explain(explainer, Z, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # random_state warns at every call
        return explainer.explain(Z, **kw)


def _events(estimator):
    return [(label, event_to_json(event)) for label, event in estimator.ledger_.events]


def test_spark_gives_the_in_memory_results_at_epsilon_inf(spark, data):
    frame, box = data
    bad = frame.copy()
    bad.loc[N - 5, "hours"] = np.nan  # a missing value: the bounds' midpoint, as in memory
    bad.loc[N - 9, "job"] = "pilot"   # not a declared level: encoded as missing
    df = spark.createDataFrame(bad).repartition(3)
    queries = frame.iloc[:10]
    memory, on_spark = _fit(_lime(box), bad), _fit(_lime(box), df)
    for a, b in zip(memory.bounds_, on_spark.bounds_):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    assert list(on_spark.feature_names_in_) == list(frame.columns)
    want, got = _explain(memory, queries), _explain(on_spark, queries)
    assert np.abs(want.values).max() > 0 and len(set(want.meta["target_class"])) > 1
    np.testing.assert_allclose(got.values, want.values, rtol=1e-9, atol=1e-12)
    assert _events(on_spark) == _events(memory)
    # the cells: the anchors and the cells' sums made in passes over the executors
    cells = {"approximation": "cells", "epsilon": 50.0, "epsilon_per_query": 1.0}
    with given_row_count(N):  # one public planning count (each DP count is a fresh draw)
        memory, on_spark = _fit(_lime(box, **cells), bad), _fit(_lime(box, **cells), df)
    assert memory.approximation_ == on_spark.approximation_ == "cells"
    np.testing.assert_allclose(on_spark._cells.S2, memory._cells.S2, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(_explain(on_spark, queries).values,
                               _explain(memory, queries).values, rtol=1e-9, atol=1e-12)
    # no black box: y is the name of the label column, mapped in the executors
    numeric = bad[["age", "hours", "gain"]].assign(score=np.tanh(frame["hours"] / 40 - 1))
    plain = {"categories": None}
    memory = _fit(_lime(None, **plain), numeric.drop(columns="score"), numeric["score"])
    on_spark = _fit(_lime(None, **plain), spark.createDataFrame(numeric).repartition(2),
                    "score")
    np.testing.assert_allclose(_explain(on_spark, numeric.iloc[:5, :3]).values,
                               _explain(memory, numeric.iloc[:5, :3]).values, rtol=1e-9,
                               atol=1e-12)
    # PrivRecourse: the DP bounds, histograms and Lloyd tables summed in the executors
    r_mem, r_spark = _fit(_recourse(box), bad), _fit(_recourse(box), df)
    np.testing.assert_allclose(r_spark.cluster_centers_, r_mem.cluster_centers_, rtol=1e-9,
                               atol=1e-9)
    assert _events(r_spark) == _events(r_mem)
    # queries are answered in memory; refused on Spark (before anything is spent)
    with pytest.raises(TypeError, match="in memory"):
        on_spark.explain(spark.createDataFrame(numeric.iloc[:3, :3]))
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    with pytest.raises(TypeError, match="in memory"):
        _lime(box, epsilon=1.0, accountant=ledger).fit_transform(df)
    assert len(ledger) == 0


def test_finite_epsilon_same_spend_and_no_row_in_the_driver(spark, data, monkeypatch):
    frame, box = data
    kw = {"epsilon": 2.0, "epsilon_per_query": 1.0}
    df = spark.createDataFrame(frame).repartition(4)
    with given_row_count(N):  # one public planning count for both
        memory = _fit(_lime(box, **kw), frame)
        received = refuse_spark_rows(monkeypatch)
        on_spark = _fit(_lime(box, **kw), df)
        queries = frame.iloc[20:30]
        got = _explain(on_spark, queries)
        rec = _fit(_recourse(box, epsilon=2.0), df)
        monkeypatch.undo()
        rec_memory = _fit(_recourse(box, epsilon=2.0), frame)
    assert received  # the sums did come back through the checked route
    assert on_spark.noise_multiplier_ == memory.noise_multiplier_ > 0
    want = _explain(memory, queries)
    assert got.phase.tolist() == want.phase.tolist()
    assert _events(on_spark) == _events(memory)
    assert _events(rec) == _events(rec_memory)
    assert np.all(np.isfinite(got.values)) and np.all(np.isfinite(rec.cluster_centers_))
    # a Spark curator refuses to be pickled; its release holds DP outputs only
    with pytest.raises(TypeError, match="release"):
        pickle.dumps(on_spark)
    loaded = pickle.loads(pickle.dumps(on_spark.release()))
    again = _explain(loaded, queries.iloc[:3], target_class=got.meta["target_class"][:3])
    assert (again.phase == "reused").all()


def test_spark_refusals_before_any_spend(spark, data):
    frame, box = data
    df = spark.createDataFrame(frame.head(50))
    from skdpx.counterfactual import DPCounterfactualGenerator

    with pytest.raises(TypeError, match="does not accept Spark"):
        DPCounterfactualGenerator(box, epsilon=1.0).fit(df)
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    with pytest.raises(TypeError, match="name of its label column"):
        _lime(None, epsilon=1.0, accountant=ledger, categories=None).fit(
            df.drop("job"), np.zeros(50))
    with pytest.raises(ValueError, match="numeric"):
        _lime(None, epsilon=1.0, accountant=ledger, categories=None).fit(
            df.select("age", "hours", "job"), "job")
    with pytest.raises(ValueError, match="categor"):  # an undeclared string column
        _recourse(box, epsilon=1.0, accountant=ledger, categories=None).fit(df)
    assert len(ledger) == 0


def test_batches_cast_by_the_schema_an_empty_frame_and_a_label_column(spark, data):
    # pyspark converts each Arrow batch by its own rows: a nullable integer column is
    # int64 in a batch without a null and float64 in one with a null. What reads a
    # batch (the encoding, a global explanation's black box) sees the dtypes of the
    # Spark schema only, never ones a row of the batch decided
    from sklearn.base import BaseEstimator

    from skdpx.utils._engine import exact_rows, partition_sum, source_rows
    from skdpx.utils._tables import validate_table

    frame, box = data
    rows = [(None if i == 5 else int(a), float(h)) for i, (a, h) in
            enumerate(zip(frame["age"], frame["hours"]))]
    df = spark.createDataFrame(rows, schema="age long, hours double").repartition(2)

    class Holder(BaseEstimator):
        _accepts_distributed = True
        bounds = None

    X = validate_table(Holder(), df, reset=True)

    def dtypes(block, source):
        return np.array([len(source), len(source) * (source["age"].dtype == np.float64),
                         np.isnan(block[:, 0]).sum()])

    n, as_float, missing = partition_sum(dtypes, X, source_rows(df, X))
    assert n == as_float == N and missing == 1
    # an empty DataFrame: the statistics of no row (zeros), never a failure after the spend
    assert exact_rows(X.map(np.asarray)) == N
    empty = validate_table(Holder(), df.limit(0), reset=True)
    np.testing.assert_array_equal(partition_sum(dtypes, empty, source_rows(df, empty)),
                                  [0, 0, 0])
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    fitted = _fit(_lime(box, epsilon=2.0, epsilon_per_query=1.0, accountant=ledger,
                        bounds=BOUNDS), spark.createDataFrame(frame).limit(0))
    assert len(ledger) > 0 and np.isfinite(fitted.noise_multiplier_)
    # with a black box, y is not read: a label column named as y is refused, not taken
    # as a feature
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="does not read y"):
        _lime(box, epsilon=1.0, accountant=ledger).fit(
            spark.createDataFrame(frame.assign(label=0)), "label")
    assert len(ledger) == 0
