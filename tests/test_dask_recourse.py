"""PrivRecourse on Dask: the in-memory answers, the same spend, checks before it, no gather."""


import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skdpx import PrivRecourse
from skdpx.preprocessing import PublicSchemaEncoder
from skdpx.privacy import PrivacyLedger, event_to_json, given_row_count

from ._tables import BOUNDS, CATEGORIES, N, people, refuse_gathering_rows
from ._helpers import quiet_fit as _fit

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    frame = people(rng)
    frame.loc[::97, "job"] = None  # missing: an all-zero one-hot block (pandas' NA on Dask)
    y = ((frame["age"] - 40) / 10 + (frame["hours"] - 40) / 10
         + (frame["job"] == "manager") + rng.normal(size=N) > 0.5).astype(int).to_numpy()
    box = make_pipeline(PublicSchemaEncoder(bounds=BOUNDS, categories=CATEGORIES),
                        LogisticRegression()).fit(frame, y)
    return frame, y, box


def _rec(box, **kw):
    params = {"estimator": box, "n_clusters": 8, "epsilon": np.inf, "delta": 1e-5,
              "bounds": None, "categories": CATEGORIES, "max_iter": 2, "random_state": 0,
              "immutable_features": ["job"]}
    params.update(kw)
    return PrivRecourse(**params)


def _events(rec):
    return [(label, event_to_json(event)) for label, event in rec.ledger_.events]


def _same(a, b):
    """The fitted releases and the graph of two PrivRecourse fits agree."""
    for x, y in zip(a.bounds_, b.bounds_):
        np.testing.assert_allclose(x, y, rtol=1e-12)
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(a.cluster_counts_, b.cluster_counts_, rtol=1e-12)
    np.testing.assert_allclose(a.graph_.toarray(), b.graph_.toarray(), rtol=1e-9, atol=1e-12)


def test_dask_path_gives_the_in_memory_result_at_epsilon_inf(dask_client, data):
    frame, _, box = data
    memory = _fit(_rec(box), frame)
    queries = frame.iloc[:40]
    answer = memory.explain(queries)
    assert answer.success.any()
    numeric = frame[["age", "hours", "gain"]].to_numpy()
    memory_num = _fit(_rec(LogisticRegression().fit(numeric, data[1]), categories=None,
                           immutable_features=None), numeric)
    fits = [
        (memory, _fit(_rec(box), dd.from_pandas(frame, npartitions=3))),  # declared categorical
        (memory_num, _fit(_rec(memory_num.estimator, categories=None, immutable_features=None),
                          da.from_array(numeric, chunks=(700, 2)))),  # dask array
    ]
    for in_memory, on_dask in fits:
        _same(in_memory, on_dask)
        assert on_dask.n_features_in_ == in_memory.n_features_in_
        assert list(on_dask.schema_.feature_names_out) == list(in_memory.schema_.feature_names_out)
        assert _events(on_dask) == _events(in_memory)
    on_dask = fits[0][1]
    assert list(on_dask.feature_names_in_) == list(frame.columns)
    got = on_dask.explain(queries)  # queries are answered in memory
    np.testing.assert_array_equal(got.success, answer.success)
    np.testing.assert_allclose(got.cost, answer.cost, rtol=1e-9)
    for p, q in zip(got.paths, answer.paths):
        np.testing.assert_allclose(p, q, rtol=1e-9, atol=1e-9)
    with pytest.raises(TypeError, match="in memory"):
        on_dask.explain(dd.from_pandas(queries, npartitions=1))


def test_finite_epsilon_makes_the_same_spend(dask_client, data):
    frame, _, box = data
    # n_clusters="auto": the plan depends on the row count; one public planning count
    # for both (each fit's own DP count is a fresh draw)
    with given_row_count(len(frame)):
        memory = _fit(_rec(box, epsilon=1.0, n_clusters="auto"), frame)
        on_dask = _fit(_rec(box, epsilon=1.0, n_clusters="auto"),
                       dd.from_pandas(frame, npartitions=4))
    assert _events(on_dask) == _events(memory) and len(_events(memory)) == 1
    assert on_dask.epsilon_spent_ == pytest.approx(memory.epsilon_spent_)
    assert on_dask.noise_multiplier_ == memory.noise_multiplier_ > 0
    assert on_dask.n_clusters_ == memory.n_clusters_
    # sane: bounds around the data, centres inside them, nodes with a real count
    lower, upper = on_dask.bounds_
    assert np.all(lower < upper)
    centers = on_dask.cluster_centers_
    assert len(centers) >= 1
    assert np.all((centers >= lower - 1e-9) & (centers <= upper + 1e-9))
    assert np.all(on_dask.cluster_counts_ > 0) and on_dask.cluster_counts_.sum() < 1.5 * N
    # the noise was drawn: not the exact (epsilon = inf) centres
    exact = _fit(_rec(box), frame)
    assert not np.allclose(on_dask.bounds_[0], exact.bounds_[0]) or not (
        centers.shape == exact.cluster_centers_.shape
        and np.allclose(centers, exact.cluster_centers_))


def test_a_bad_value_is_neutralised_in_the_workers_as_in_memory(dask_client, data):
    # a private row's value is never refused (a refusal would be a release about the
    # row: doc/privacy.rst): in the workers as in memory, a missing or infinite value
    # is the bounds' midpoint and an undeclared category is missing
    frame, _, box = data
    bad = frame.copy()
    bad.loc[N - 5, "hours"] = np.nan  # in the last partition only
    bad.loc[3, "job"] = "pilot"  # not a declared level
    _same(_fit(_rec(box), bad), _fit(_rec(box), dd.from_pandas(bad, npartitions=4)))
    numeric = bad[["age", "hours", "gain"]].to_numpy(dtype=float, copy=True)
    numeric[N - 3, 0] = np.inf
    model = LogisticRegression().fit(frame[["age", "hours", "gain"]].to_numpy(), data[1])
    kw = {"categories": None, "immutable_features": None}
    _same(_fit(_rec(model, **kw), numeric),
          _fit(_rec(model, **kw), da.from_array(numeric, chunks=500)))
    # no black box: DP-SGD is not run over Dask; refused before any pass or spend
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="estimator="):
        _fit(_rec(None, epsilon=1.0, accountant=ledger), dd.from_pandas(frame, npartitions=2))
    assert len(ledger) == 0


def test_the_client_never_gathers_the_rows(dask_client, data, monkeypatch):
    frame, _, box = data

    X = dd.from_pandas(frame, npartitions=3)
    # the rows as an array or DataFrame never come back whole: only sums and counts
    refuse_gathering_rows(monkeypatch, type(X))
    rec = _fit(_rec(box, epsilon=2.0), X)
    monkeypatch.undo()
    arrays = [v for v in vars(rec).values() if isinstance(v, np.ndarray)]
    assert arrays and all(len(v) < N for v in arrays)


def test_fit_transform_on_dask_refuses_before_spending(data):
    frame, y, box = data
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-5)
    with pytest.raises(TypeError, match="in memory"):
        _rec(box, epsilon=1.0, accountant=ledger).fit_transform(dd.from_pandas(frame, npartitions=2))
    assert len(ledger) == 0
