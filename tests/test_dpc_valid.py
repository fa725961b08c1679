"""DPCounterfactualGenerator: constraints from the query, verified counterfactuals, any model.

Issue 19 (items 4, 5, 6): every returned counterfactual keeps the
constraints relative to its own query and is put in the desired class by the
black box itself; what cannot be found is a NaN row with ``valid=False``;
black boxes with only ``decision_function`` or only ``predict`` work; a
DataFrame fit passes DataFrames to the black box.
"""

import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.privacy import PrivacyLedger

from ._helpers import quiet_fit as _fit


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(600, 4))
    y = (X[:, 0] + X[:, 1] - X[:, 2] > 0.5).astype(int)
    return X, y, LogisticRegression().fit(X, y)


def _dpc(model, **params):
    # perturbations of the query allowed: these tests check every stage's records
    defaults = dict(epsilon=2.0, delta=1e-5, latent_dim=2, bounds=(0, 1), max_iter=30,
                    random_state=0, ae_method="functional", allow_perturbations=True)
    defaults.update(params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPCounterfactualGenerator(model, **defaults)


class _PredictOnly:
    """A black box with only ``predict`` (and its classes)."""

    def __init__(self, model):
        self.model, self.classes_ = model, model.classes_

    def predict(self, X):
        return self.model.predict(X)


def _check_verified(model, result):
    """Returned rows flip the black box; the others are NaN and not valid."""
    ok = result.valid
    np.testing.assert_array_equal(model.predict(result.counterfactuals[ok]),
                                  result.desired_class[ok])
    assert np.all(np.isnan(result.counterfactuals[~ok]))


def test_constraints_hold_relative_to_each_query(problem):
    X, _, model = problem
    Q = X[:60]
    dpc = _fit(_dpc(model, immutable_features=[2], increasing_features=[0],
                    decreasing_features=[1]), X)
    result = dpc.explain(Q)
    cf, ok = result.counterfactuals[result.valid], result.valid
    np.testing.assert_array_equal(cf[:, 2], Q[ok, 2])  # exactly the query's value
    assert np.all(cf[:, 0] >= Q[ok, 0]) and np.all(cf[:, 1] <= Q[ok, 1])
    _check_verified(model, result)
    # the model is about x0 + x1 - x2 > 0.5 and x0 may only go up, x1 only
    # down, x2 not at all: 0 -> 1 may raise x0, 1 -> 0 may lower x1. Reachable:
    # the allowed corner of the box (x3 at 0 or 1) is in the desired class
    up = result.desired_class == 1
    corner = Q.copy()
    corner[up, 0], corner[~up, 1] = 1.0, 0.0
    reachable = np.zeros(len(Q), bool)
    for x3 in (0.0, 1.0):
        corner[:, 3] = x3
        reachable |= model.predict(corner) == result.desired_class
    assert 0 < reachable.sum() < len(Q)
    assert result.valid[reachable].mean() >= 0.9 and not result.valid[~reachable].any()


def test_a_class_out_of_reach_under_the_constraints_is_nan_never_a_non_flip():
    # the model reads feature 2 only, and feature 2 is immutable: no counterfactual exists
    rng = np.random.RandomState(1)
    X = rng.uniform(0, 1, size=(600, 3))
    y = (X[:, 2] > 0.5).astype(int)
    model = LogisticRegression().fit(X, y)
    dpc = _fit(_dpc(model, immutable_features=[2]), X)
    result = dpc.explain(X[:30])
    assert not result.valid.any()
    assert np.all(np.isnan(result.counterfactuals))
    np.testing.assert_array_equal(result.predicted_class, model.predict(X[:30]))
    # without the constraint, the same queries are served
    free = _fit(_dpc(model), X).explain(X[:30])
    assert free.valid.mean() >= 0.9
    _check_verified(model, free)


def test_constraint_names_and_bad_constraints_are_refused_before_any_spend(problem):
    pd = pytest.importorskip("pandas")
    X, _, model = problem
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    named_model = LogisticRegression().fit(frame, model.predict(X))
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-4)
    bad = [
        (frame, dict(immutable_features=["sex"]), "unknown feature 'sex'"),
        (X, dict(immutable_features=["a"]), "unknown feature 'a'"),
        (X, dict(increasing_features=[4]), "outside"),
        (X, dict(immutable_features=[1], decreasing_features=[1]), "both"),
    ]
    for data, params, message in bad:
        with pytest.raises(ValueError, match=message):
            _fit(_dpc(named_model if data is frame else model, accountant=ledger, **params), data)
    assert len(ledger.events) == 0
    dpc = _fit(_dpc(named_model, immutable_features=["c"], increasing_features=["a"]), frame)
    np.testing.assert_array_equal(dpc.immutable_features_, [2])
    np.testing.assert_array_equal(dpc.increasing_features_, [0])


def test_when_the_latent_search_fails_the_segment_search_continues(problem):
    X, _, model = problem
    # start at the query's own code, one step, no pull to the class: the
    # latent search alone mostly fails
    params = dict(max_iter=1, alpha=0.0, init_blend=1.0)
    alone = _fit(_dpc(model, line_steps=0, **params), X).explain(X[:40])
    assert alone.valid.mean() < 0.5
    result = _fit(_dpc(model, **params), X).explain(X[:40])
    assert result.valid.mean() >= 0.9
    _check_verified(model, result)


def _degenerate(dpc):
    """Every code of ``dpc`` decodes to (0, 0, 1, 0.5), deep in class 0, and
    every prototype is class 0's (as a DP decoder on a few hundred rows can be)."""
    zero = np.flatnonzero(dpc.classes_ == 0)[0]
    dpc.prototypes_ = np.repeat(dpc.prototypes_[[zero]], 2, axis=0)
    dpc.autoencoder_.center = np.array([-1.0, -1.0, 1.0, 0.0])
    dpc.autoencoder_.components = np.zeros_like(dpc.autoencoder_.components)
    return dpc


@pytest.mark.parametrize("predict_only", [False, True])
def test_when_the_decoder_misses_the_class_the_input_search_finds_it(problem, predict_only):
    X, _, model = problem
    # predict only: the prototypes' surrogate is flat too, so only the search
    # along fixed directions is left
    black_box = _PredictOnly(model) if predict_only else model
    dpc = _degenerate(_fit(_dpc(black_box, max_iter=5), X))
    assert np.all(model.predict(dpc._scaler().inverse_transform(
        dpc.autoencoder_.decode(dpc.prototypes_))) == 0)
    Q = X[model.predict(X) == 0][:30]
    result = dpc.explain(Q, desired_class=1)
    assert result.valid.mean() >= 0.9
    _check_verified(model, result)
    stage = "direction" if predict_only else "score"
    assert result.meta["found_by"][stage] == result.valid.sum()
    assert set(result.found_by[result.valid]) == {stage}
    assert result.meta["flip_ratio"][stage] == result.valid.mean()
    # not asked for: the same queries get no counterfactual, and are told why
    dpc.set_params(allow_perturbations=False)
    withheld = dpc.explain(Q, desired_class=1)
    assert not withheld.valid.any() and np.isnan(withheld.counterfactuals).all()
    assert all(f is None for f in withheld.found_by)
    assert np.isnan(withheld.plausibility).all()
    assert set(withheld.reason) == {"only a perturbation of the query found "
                                    "(allow_perturbations=True returns it)"}
    assert withheld.meta["withheld"] == result.valid.sum()
    assert withheld.meta["flip_ratio"][stage] == result.meta["flip_ratio"][stage]
    assert withheld.meta["flip_ratio"]["returned"] == 0.0


def test_black_boxes_with_only_decision_function_or_only_predict(problem):
    X, y, model = problem
    svm = LinearSVC().fit(X, y)
    assert not hasattr(svm, "predict_proba")
    for black_box, signal in [(svm, "decision_function"), (_PredictOnly(model), "prototypes")]:
        result = _fit(_dpc(black_box), X).explain(X[:40])
        assert result.meta["signal"] == signal
        np.testing.assert_array_equal(result.desired_class, 1 - black_box.predict(X[:40]))
        assert result.valid.mean() >= 0.9
        _check_verified(black_box, result)


def test_a_multiclass_decision_function_black_box():
    rng = np.random.RandomState(2)
    X = rng.uniform(0, 1, size=(900, 3))
    y = np.digitize(X[:, 0] + X[:, 1], [0.7, 1.3])
    svm = LinearSVC().fit(X, y)
    dpc = _fit(_dpc(svm, epsilon=4.0), X)
    margins = svm.decision_function(X[:30])
    runner_up = np.argsort(margins, axis=1)[:, -2]
    result = dpc.explain(X[:30])
    np.testing.assert_array_equal(result.desired_class, runner_up)
    assert result.valid.mean() >= 0.9
    _check_verified(svm, result)


def test_a_dataframe_fit_gives_the_black_box_dataframes(problem):
    pd = pytest.importorskip("pandas")
    X, y, _ = problem
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    # a Pipeline that selects its columns by name: it fails on an ndarray
    model = make_pipeline(ColumnTransformer([("keep", "passthrough", ["a", "b", "c"])]),
                          LogisticRegression()).fit(frame, y)
    dpc = _fit(_dpc(model, immutable_features=["c"]), frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warning, no error
        result = dpc.explain(frame.iloc[:30])
        out = dpc.transform(frame.iloc[:5])
    assert result.valid.mean() >= 0.9
    assert list(out.columns) == ["a", "b", "c", "d"]
    ok = result.valid
    np.testing.assert_array_equal(
        model.predict(pd.DataFrame(result.counterfactuals[ok], columns=frame.columns)),
        result.desired_class[ok])


def _mixed_table(n, seed):
    """A raw table: an integer column, a float column and two categorical ones."""
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(seed)
    frame = pd.DataFrame({
        "age": rng.randint(18, 70, size=n),
        "hours": rng.uniform(0, 60, size=n),
        "job": rng.choice(["clerk", "manager", "farmer"], size=n),
        "group": rng.choice(["a", "b"], size=n),
    })
    score = ((frame["age"] - 40) / 10 + (frame["hours"] - 30) / 10
             + 2.0 * (frame["job"] == "manager"))
    return frame, (score + rng.normal(scale=0.5, size=n) > 0.5).astype(int).to_numpy()


_SCHEMA = dict(bounds={"age": (18, 70), "hours": (0, 60)},
               categories={"job": ["clerk", "manager", "farmer"], "group": ["a", "b"]})


def test_a_raw_table_gives_valid_records_that_flip_a_column_selecting_pipeline():
    from sklearn.preprocessing import OneHotEncoder

    frame, y = _mixed_table(600, 0)
    other, y_other = _mixed_table(600, 1)  # the black box's own rows
    model = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(), ["job", "group"]),
                           ("num", "passthrough", ["age", "hours"])]),
        LogisticRegression(max_iter=1000)).fit(other, y_other)
    dpc = _fit(_dpc(model, immutable_features=["group"], increasing_features=["age"],
                    latent_dim=3, max_iter=15, **_SCHEMA), frame)
    queries = frame.iloc[:40]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warning, no error
        result = dpc.explain(queries)
        records = dpc.transform(queries)
    assert result.valid.mean() >= 0.9
    ok = result.valid
    assert list(records.columns) == list(frame.columns)
    kept = records[ok]
    # valid records: declared levels, integers, bounds; the constraints from the query
    assert kept["job"].isin(_SCHEMA["categories"]["job"]).all()
    assert np.all(kept["age"].to_numpy(dtype=float) % 1 == 0)
    assert kept["age"].between(18, 70).all() and kept["hours"].between(0, 60).all()
    assert (kept["group"] == queries["group"][ok]).all()
    assert np.all(kept["age"].to_numpy(dtype=float) >= queries["age"][ok].to_numpy())
    assert records[~ok].isna().all(axis=None)
    # the black box, given the records themselves, puts them in the desired class
    np.testing.assert_array_equal(model.predict(kept.astype(frame.dtypes.to_dict())),
                                  result.desired_class[ok])
    np.testing.assert_array_equal(result.counterfactual_records[ok]["job"], kept["job"])
    # one-hot blocks of the encoded counterfactuals: exactly one level
    encoded = result.counterfactuals[ok]
    for _, block in dpc.schema_.groups[2:]:
        np.testing.assert_array_equal(encoded[:, block].sum(axis=1), 1.0)
        assert set(np.unique(encoded[:, block])) <= {0.0, 1.0}


def test_a_categorical_column_cannot_be_monotone():
    frame, y = _mixed_table(100, 0)
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-4)
    model = LogisticRegression().fit(frame[["age", "hours"]], y)
    with pytest.raises(ValueError, match="categorical"):
        _fit(_dpc(model, increasing_features=["job"], accountant=ledger, **_SCHEMA), frame)
    assert len(ledger.events) == 0
