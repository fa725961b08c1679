"""DPLimeExplainer on Dask: the in-memory answers, the same spend, checks before it, no gather."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdpx.explain import DPLimeExplainer
from skdpx.privacy import PrivacyLedger, event_to_json, given_row_count

from ._tables import CATEGORIES, N, people_and_black_box, refuse_gathering_rows
from ._helpers import quiet_fit as _fit

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def data():
    # three classes: a batch of queries explains several label columns (the predicted class)
    frame, y, box = people_and_black_box()
    numeric = frame[["age", "hours", "gain"]].to_numpy()
    binary = LogisticRegression().fit(numeric, y > 0)
    return frame, box, numeric, binary


def _lime(box, **kw):
    params = {"epsilon": np.inf, "epsilon_per_query": np.inf, "delta": 1e-6, "max_iter": 40,
              "bounds": None, "random_state": 0}
    params.update(kw)
    return DPLimeExplainer(box, **params)


def _explain(explainer, Z, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # random_state warns at every call
        return explainer.explain(Z, **kw)


def _events(explainer):
    return [(label, event_to_json(event)) for label, event in explainer.ledger_.events]


def _same(a, b, Z):
    """Two explainers' calibration and answers at the queries ``Z`` agree."""
    for x, y in zip(a.bounds_, b.bounds_):
        np.testing.assert_allclose(x, y, rtol=1e-12)
    assert a.sensitivity_ == b.sensitivity_ and a.noise_multiplier_ == b.noise_multiplier_
    got, want = _explain(b, Z), _explain(a, Z)
    assert np.abs(want.values).max() > 0
    np.testing.assert_allclose(got.values, want.values, rtol=1e-9, atol=1e-12)
    assert got.phase.tolist() == want.phase.tolist()
    assert got.meta["target_class"] == want.meta["target_class"]
    assert _events(b) == _events(a)
    return got


def test_dask_path_gives_the_in_memory_answers_at_epsilon_inf(dask_client, data):
    frame, box, numeric, binary = data
    queries = frame.iloc[:12]
    # a DataFrame with a declared categorical, DP bounds for its numeric columns
    memory = _fit(_lime(box, categories=CATEGORIES), frame)
    on_dask = _fit(_lime(box, categories=CATEGORIES), dd.from_pandas(frame, npartitions=3))
    answer = _same(memory, on_dask, queries)
    assert len(set(answer.meta["target_class"])) > 1  # several class columns in one pass
    assert list(on_dask.feature_names_in_) == list(frame.columns)
    # a dask array, declared bounds and DP bounds
    for bounds in [(np.zeros(3), np.array([90.0, 99.0, 1e5])), None]:
        _same(_fit(_lime(binary, bounds=bounds), numeric),
              _fit(_lime(binary, bounds=bounds), da.from_array(numeric, chunks=(700, 2))),
              numeric[:8])
    # no black box: the labels given to fit as a dask array, mapped in the workers
    labels = np.tanh(numeric[:, 1] / 40 - 1)
    _same(_fit(_lime(None, bounds=None), numeric, labels),
          _fit(_lime(None, bounds=None), da.from_array(numeric, chunks=600),
               da.from_array(labels, chunks=600)), numeric[:5])
    with pytest.raises(TypeError, match="in memory"):
        on_dask.explain(dd.from_pandas(queries, npartitions=1))
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    with pytest.raises(TypeError, match="in memory"):  # refused before the DP bounds' spend
        _lime(binary, epsilon=1.0, accountant=ledger).fit_transform(da.from_array(numeric))
    assert len(ledger) == 0


def test_finite_epsilon_makes_the_same_spend(dask_client, data):
    frame, box, _, _ = data
    kw = {"epsilon": 2.0, "epsilon_per_query": 1.0, "categories": CATEGORIES}
    # one public planning count for both (each fit's own DP count is a fresh draw)
    with given_row_count(N):
        memory = _fit(_lime(box, **kw), frame)
        # n_jobs: the Dask workers already split the rows; the explainer is never pickled
        on_dask = _fit(_lime(box, n_jobs=2, **kw), dd.from_pandas(frame, npartitions=4))
    assert on_dask.sensitivity_ == memory.sensitivity_ == 1 / N
    assert on_dask.noise_multiplier_ == memory.noise_multiplier_ > 0
    queries = frame.iloc[20:30]
    want, got = _explain(memory, queries), _explain(on_dask, queries)
    assert got.phase.tolist() == want.phase.tolist()
    assert "interactive" in got.phase and "noninteractive" in got.phase
    assert _events(on_dask) == _events(memory) and len(_events(memory)) == 2  # bounds, queries
    assert on_dask.epsilon_spent_ == pytest.approx(memory.epsilon_spent_)
    # sane: finite, inside the ball, and not the exact answers (the noise was drawn)
    assert np.all(np.isfinite(got.values))
    scaled = np.asarray(on_dask.history_["explanations"])
    assert np.all(np.linalg.norm(scaled, axis=1) <= on_dask.radius + 1e-9)
    exact = _explain(_fit(_lime(box, categories=CATEGORIES), frame), queries)
    assert not np.allclose(got.values, exact.values)


def test_a_bad_value_is_neutralised_in_the_workers_as_in_memory(dask_client, data):
    # a missing or infinite value of a private row is never refused (a refusal would
    # be a release about it: doc/privacy.rst): the workers set it to the bounds'
    # midpoint and give a missing label the neutral label 0, as in memory
    frame, box, numeric, binary = data
    bad = frame.copy()
    bad.loc[N - 5, "hours"] = np.nan  # in the last partition only
    _same(_fit(_lime(box, categories=CATEGORIES), bad),
          _fit(_lime(box, categories=CATEGORIES), dd.from_pandas(bad, npartitions=4)),
          frame.iloc[:6])
    bad_array = numeric.copy()
    bad_array[N - 3, 1] = np.inf
    _same(_fit(_lime(binary), bad_array),
          _fit(_lime(binary), da.from_array(bad_array, chunks=500)), numeric[:6])
    labels = np.tanh(numeric[:, 1] / 40 - 1)
    labels[7] = np.nan
    memory = _fit(_lime(None), numeric, labels)
    assert memory._labels[7, 0] == 0.0
    _same(memory, _fit(_lime(None), da.from_array(numeric, chunks=500),
                       da.from_array(labels, chunks=500)), numeric[:5])


def test_the_client_never_gathers_the_rows(dask_client, data, monkeypatch):
    frame, box, _, _ = data

    X = dd.from_pandas(frame, npartitions=3)
    # the rows (or their labels) never come back whole: only sums and counts
    refuse_gathering_rows(monkeypatch, type(X))
    explainer = _fit(_lime(box, epsilon=3.0, epsilon_per_query=1.0, categories=CATEGORIES), X)
    answer = _explain(explainer, frame.iloc[:3])
    monkeypatch.undo()
    assert (answer.phase == "interactive").all()
    held = [v for v in vars(explainer).values() if isinstance(v, np.ndarray)]
    held += [np.asarray(v) for v in explainer.history_.values()]
    assert held and all(v.ndim == 0 or len(v) < N for v in held)
    assert isinstance(explainer._X, da.Array) and isinstance(explainer._labels, da.Array)
    # a Dask curator refuses to be pickled; its release holds DP outputs only
    with pytest.raises(TypeError, match="release"):
        pickle.dumps(explainer)
    released = explainer.release()
    assert not any(isinstance(v, (da.Array, dd.DataFrame)) for v in vars(released).values())
    loaded = pickle.loads(pickle.dumps(released))
    again = _explain(loaded, frame.iloc[:3], target_class=answer.meta["target_class"])
    assert (again.phase == "reused").all()
    np.testing.assert_array_equal(again.values, answer.values)


def test_cells_on_dask_give_the_in_memory_answers(dask_client, data):
    # the anchors (the same seeded release) and the cells' sums made in one pass over
    # the workers at fit; the queries then read no row: the in-memory answers, several
    # class columns in one batch, at epsilon inf and at a finite epsilon (seeded noise)
    frame, box, numeric, binary = data
    queries = frame.iloc[:12]
    for params in ({}, {"epsilon": 50.0, "epsilon_per_query": 1.0}):
        with given_row_count(N):  # one public planning count (each DP count is a fresh draw)
            memory = _fit(_lime(box, categories=CATEGORIES, approximation="cells", **params),
                          frame)
            on_dask = _fit(_lime(box, categories=CATEGORIES, approximation="cells", **params),
                           dd.from_pandas(frame, npartitions=3))
        assert memory.approximation_ == on_dask.approximation_ == "cells"
        np.testing.assert_allclose(on_dask._cells.S2, memory._cells.S2, rtol=1e-9, atol=1e-9)
        _same(memory, on_dask, queries)


def test_two_fits_on_one_collection_share_no_key(dask_client, data):
    # dask issue 9888 (issue 42, item 5): Dask names a task after its inputs, so two fits
    # with the same bounds on one array made the same keys for the scaled rows; the first
    # fit's were held (persisted) and, with no black box, fused with the fill step, while
    # the second graph sent them unfused: two different tasks under one key (the
    # scheduler's warning, an error here through the dask_client fixture). The engine
    # layer names every task of its own for the call.
    _, _, numeric, binary = data
    labels = binary.predict_proba(numeric)[:, 1]
    X = da.from_array(numeric, chunks=(400, 3))
    bounds = (np.zeros(3), np.array([90.0, 99.0, 1e5]))
    given = _fit(_lime(None, bounds=bounds), X, da.from_array(labels, chunks=400))
    boxed = _fit(_lime(binary, bounds=bounds), X)
    again = _fit(_lime(binary, bounds=bounds), X)
    keys = [{str(k) for a in (e._X, e._labels) for k in a.__dask_keys__()}
            for e in (given, boxed, again)]
    assert not (keys[0] & keys[1]) and not (keys[1] & keys[2]) and not (keys[0] & keys[2])
    _same(again, boxed, numeric[:4])  # the same rows and answers all the same
