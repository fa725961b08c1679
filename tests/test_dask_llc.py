"""DPLocallyLinearClassifier on Dask and Spark: full-batch DP gradient descent, one pass
over the partitions per step; the in-memory full-batch fit, the same spend, refusals
before it, no row gathered."""

import numpy as np
import pytest

from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.privacy import PrivacyLedger, event_to_json

from ._tables import BOUNDS, CATEGORIES, N, people, refuse_gathering_rows, refuse_spark_rows
from ._helpers import quiet_fit as _fit

pd = pytest.importorskip("pandas")

CLASSES = ["high", "low", "mid"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    frame = people(rng)
    score = ((frame["age"] - 40) / 10 * ((frame["hours"] - 40) / 10)
             + (frame["job"] == "manager") + rng.normal(scale=0.3, size=N))
    y = np.array(CLASSES, dtype=object)[np.digitize(score, [-0.5, 1.0])]
    # values of private rows that are neutralised, never refused: a missing cell (the
    # bounds' midpoint), labels that are not a declared class (the row is dropped)
    frame.loc[N - 5, "hours"] = np.nan
    y[3], y[N - 2] = None, "unknown"
    return frame, y


def _llc(**kw):
    params = {"epsilon": np.inf, "n_maps": 2, "beta": 2.0, "batch_size": None, "epochs": 4,
              "learning_rate": 0.5, "classes": CLASSES, "categories": CATEGORIES,
              "bounds": None, "random_state": 0}
    params.update(kw)
    return DPLocallyLinearClassifier(**params)


def _events(clf):
    return [(label, event_to_json(event)) for label, event in clf.ledger_.events]


def _same(memory, engine):
    """The same model (to floating-point summation order) and the same spend."""
    assert engine.n_steps_ == memory.n_steps_ and engine.sample_rate_ == memory.sample_rate_ == 1
    assert engine.noise_multiplier_ == memory.noise_multiplier_
    for got, want in zip(engine.bounds_, memory.bounds_):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(engine.center_, memory.center_, rtol=1e-9, atol=1e-9)
    scale = np.abs(memory.coef_).max()
    # trained: the maps (per unit of the bounds' range) moved from their N(0, 0.01) start
    assert np.abs(memory.coef_ * (memory.bounds_[1] - memory.bounds_[0])).max() > 0.08
    np.testing.assert_allclose(engine.coef_, memory.coef_, rtol=1e-4, atol=1e-5 * scale)
    np.testing.assert_allclose(engine.intercept_, memory.intercept_, rtol=1e-4,
                               atol=1e-5 * np.abs(memory.intercept_).max())
    assert _events(engine) == _events(memory)
    assert engine.epsilon_spent_ == memory.epsilon_spent_
    assert list(engine.classes_) == CLASSES


def test_dask_full_batch_is_the_in_memory_fit(dask_client, data, monkeypatch):
    dd = pytest.importorskip("dask.dataframe")
    frame, y = data
    X = dd.from_pandas(frame, npartitions=3)
    labels = dd.from_pandas(pd.Series(y), npartitions=3)
    # epsilon inf, DP bounds (exact at inf) and a categorical: the non-private baseline
    _same(_fit(_llc(), frame, y), _fit(_llc(), X, labels))
    # a finite epsilon, seeded: the same draws (count, bounds, means, every step's
    # noise) in the same order, so the same model; declared bounds, projected maps
    kw = {"epsilon": 3.0, "bounds": BOUNDS, "projection_dim": 3}
    memory = _fit(_llc(**kw), frame, y)
    assert memory.noise_multiplier_ > 0 and len(_events(memory)) == 2  # count, the rest
    # the rows (or their labels) never come back whole: only sums and counts
    refuse_gathering_rows(monkeypatch, type(X))
    on_dask = _fit(_llc(**kw), X, labels)
    monkeypatch.undo()
    _same(memory, on_dask)
    assert all(np.ndim(v) == 0 or len(v) < N // 4 for v in vars(on_dask).values()
               if isinstance(v, np.ndarray))


def test_what_the_engines_cannot_do_is_refused_before_any_spend(dask_client, data):
    da = pytest.importorskip("dask.array")
    frame, y = data
    numeric = frame[["age", "hours", "gain"]].to_numpy()
    X = da.from_array(numeric, chunks=700)
    codes = da.from_array((frame["age"].to_numpy() > 50).astype(int), chunks=700)
    bounds = ([17, 1, 0], [90, 99, 1e5])
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    kw = {"epsilon": 1.0, "categories": None, "bounds": bounds, "classes": [0, 1],
          "accountant": ledger}
    with pytest.raises(ValueError, match="batch_size=None.*Nothing was spent"):
        _fit(_llc(batch_size=256, **kw), X, codes)
    with pytest.raises(ValueError, match="classes=.*Nothing was spent"):
        _fit(_llc(**{**kw, "classes": None}), X, codes)
    with pytest.raises(TypeError, match="y is a Dask collection but X is not"):
        _fit(_llc(**kw), numeric, codes)
    assert len(ledger) == 0
    clf = _fit(_llc(**kw), X, codes)  # the labels 0/1 given as a dask array
    assert len(ledger) == 2 and clf.score(numeric[:50], codes[:50].compute()) > 0
    with pytest.raises(TypeError, match="in memory"):  # queries are answered in memory
        clf.predict(X)


def test_spark_full_batch_is_the_in_memory_fit(spark, data, monkeypatch):
    pytest.importorskip("pyarrow")
    frame, y = data
    df = spark.createDataFrame(frame.assign(label=y)).repartition(3)
    cached = spark.sparkContext._jsc.getPersistentRDDs().size()
    # y is the name of the label column; the string labels read batch by batch. A
    # finite epsilon, seeded: the same draws in the same order, so the same model; and
    # no row, label or array of rows reaches the driver (only the steps' sums)
    kw = {"epsilon": 3.0, "bounds": BOUNDS, "epochs": 3, "max_grad_norm": 0.2,  # clipped
          "learning_rate": 2.0}
    received = refuse_spark_rows(monkeypatch)
    on_spark = _fit(_llc(**kw), df, "label")
    monkeypatch.undo()
    assert received
    _same(_fit(_llc(**kw), frame, y), on_spark)
    assert list(on_spark.feature_names_in_) == list(frame.columns)
    # the rows the steps read were cached for the fit, and freed after it
    assert spark.sparkContext._jsc.getPersistentRDDs().size() == cached
