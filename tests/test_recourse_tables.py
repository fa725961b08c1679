"""PrivRecourse on DataFrames: column names, categorical immutables, valid records out."""

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdpx import PrivRecourse
from skdpx.privacy import PrivacyLedger

pd = pytest.importorskip("pandas")

CATEGORIES = {"sex": ["F", "M"], "race": ["A", "B", "C"], "job": ["x", "y", "z", "w"]}
BOUNDS = {"age": (18, 80), "hours": (1.0, 99.0)}


def _table(n, seed):
    rng = np.random.RandomState(seed)
    frame = pd.DataFrame({
        "age": rng.randint(18, 81, n),
        "sex": pd.Categorical(rng.choice(["F", "M"], n), categories=CATEGORIES["sex"]),
        "hours": rng.uniform(1, 99, n).round(1),
        "race": rng.choice(["A", "B", "C"], n, p=[0.6, 0.3, 0.1]),
        "job": rng.choice(["x", "y", "z", "w"], n),
    })
    score = (frame["age"] - 18) / 62 + frame["hours"] / 99 + 0.3 * (frame["sex"] == "M")
    return frame, (score + rng.normal(0, 0.1, n) > 1.1).astype(int).to_numpy()


@pytest.fixture(scope="module")
def table():
    X, y = _table(4000, 0)
    Xb, yb = _table(2000, 1)  # the black box's own rows, disjoint
    box = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), ["sex", "race", "job"]),
                           ("num", "passthrough", ["age", "hours"])]),
        LogisticRegression(max_iter=500)).fit(Xb, yb)
    return X, y, box


def _rec(box, **kw):
    params = dict(epsilon=4.0, n_clusters=40, bounds=BOUNDS, categories=CATEGORIES,
                  immutable_features=["sex", "race"], increasing_features=["age"],
                  decreasing_features=["hours"], random_state=0)
    params.update(kw)
    return PrivRecourse(box, **params)


@pytest.fixture(scope="module")
def fitted(table):
    X, _, box = table
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names.*")
        return _rec(box).fit(X)


def test_names_resolve_to_encoded_columns(fitted):
    names = list(fitted.schema_.feature_names_out)
    assert [names[i] for i in fitted._held] == [n for n in names if n.startswith(("sex", "race"))]
    assert [names[i] for i in fitted._increasing] == ["age"]
    assert [names[i] for i in fitted._decreasing] == ["hours"]
    assert len(fitted._blocks) == 2 and fitted._immutable == []


def test_end_points_are_valid_records_holding_the_constraints(fitted, table):
    X, _, box = table
    Q = X.iloc[:300]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names.*")
        out = fitted.transform(Q)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(X.columns)
    assert out.index.equals(Q.index)
    ok = out.notna().all(axis=1).to_numpy()
    res = fitted.explain(Q)
    np.testing.assert_array_equal(ok, res.success)
    assert 0.5 < ok.mean() < 1.0  # some fail: their rows are missing, never a non-flip
    good, q = out[ok], Q[ok]
    assert np.all(box.predict(good.astype(X.dtypes.to_dict())) == 1)
    for column, levels in CATEGORIES.items():
        assert set(good[column]) <= set(levels)
    for column, (lo, hi) in BOUNDS.items():
        assert good[column].between(lo, hi).all()
    assert np.all(good["age"].to_numpy() == np.rint(good["age"].to_numpy()))
    assert (good["sex"].astype(str) == q["sex"].astype(str)).all()
    assert (good["race"] == q["race"]).all()
    assert (good["age"] >= q["age"]).all() and (good["hours"] <= q["hours"]).all()
    # the rows the search failed are missing as a whole, the integers nullable
    assert out[~ok].isna().all(axis=None) and str(out["age"].dtype) == "Int64"


def test_every_point_of_a_path_holds_the_constraints(fitted, table):
    X, _, _ = table
    Q = X.iloc[:300]
    res = fitted.explain(Q)
    assert res.feature_names == list(fitted.schema_.feature_names_out)
    Z = fitted.schema_.encode(Q)
    for i in np.flatnonzero(res.success):
        path = res.paths[i]
        assert np.all(path[1:, fitted._held] == Z[i, fitted._held])
        assert np.all(np.diff(path[:, fitted._increasing], axis=0) >= 0)
        assert np.all(np.diff(path[:, fitted._decreasing], axis=0) <= 0)
        for _, block in fitted.schema_.groups:  # valid one-hot blocks
            if fitted.schema_.categorical[block].all():
                assert np.all(np.sort(path[1:, block], axis=1)[:, -1] == 1)
                assert np.all(path[1:, block].sum(axis=1) == 1)


def test_explain_carries_the_records(fitted, table):
    X, _, _ = table
    Q = X.iloc[:100]
    res = fitted.explain(Q)
    out = fitted.transform(Q)
    records = res.counterfactual_records
    assert list(records.columns) == list(X.columns)
    pd.testing.assert_frame_equal(records, out.reset_index(drop=True))
    pd.testing.assert_frame_equal(res.query_records, Q.reset_index(drop=True))
    changes = res.changes() if hasattr(res, "changes") else None
    assert changes is None or len(changes)
    alt = fitted.alternatives(Q, n_paths=2)[0]
    np.testing.assert_array_equal(alt.counterfactual_records.notna().all(axis=1), alt.success)


def test_the_default_black_box_takes_the_frame(table):
    X, y, _ = table
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names.*")
        # epsilon=inf: the same pipeline as the DP-SGD model's, without its calibration
        rec = _rec(None, epsilon=np.inf, classes=[0, 1]).fit(X, y)
        out = rec.transform(X.iloc[:100])
        assert rec.estimator_.predict(X.iloc[:5]).shape == (5,)
    ok = out.notna().all(axis=1)
    assert ok.any()
    assert np.all(rec.estimator_.predict(out[ok].astype(X.dtypes.to_dict())) == 1)


@pytest.mark.parametrize("param, features, match", [
    ("increasing_features", ["sex"], "categorical"),
    ("immutable_features", ["colour"], "unknown feature"),
    ("immutable_features", ["sex", 1], "twice"),
])
def test_bad_constraints_spend_nothing(table, param, features, match):
    X, _, box = table
    ledger = PrivacyLedger(epsilon=10.0)
    kw = {"immutable_features": None, "increasing_features": None, param: features}
    with pytest.raises(ValueError, match=match):
        _rec(box, accountant=ledger, **kw).fit(X)
    assert ledger.epsilon_spent == 0.0


def test_column_positions_work_as_names(fitted, table):
    X, _, box = table
    by_position = _rec(box, immutable_features=[1, 3], increasing_features=[0],
                       decreasing_features=[2]).fit(X)
    np.testing.assert_array_equal(by_position._held, fitted._held)
    pd.testing.assert_frame_equal(by_position.transform(X.iloc[:50]),
                                  fitted.transform(X.iloc[:50]))


class _CsrBox(ClassifierMixin, BaseEstimator):
    """A black box that takes CSR rows only: favourable when x0 + x1 > 1."""

    def fit(self, X, y=None):
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        if not sparse.issparse(X):
            raise TypeError("CSR rows expected")
        X = X.toarray()
        return (X[:, 0] + X[:, 1] > 1.0).astype(int)


def test_csr_rows_reach_the_black_box_as_csr():
    rng = np.random.RandomState(0)
    dense = np.hstack([rng.uniform(size=(3000, 2)), np.eye(2)[rng.randint(0, 2, 3000)]])
    X = sparse.csr_matrix(dense)
    rec = PrivRecourse(_CsrBox().fit(X), epsilon=4.0, n_clusters=20, bounds=(0.0, 1.0),
                       increasing_features=[0], immutable_features=[2, 3],
                       random_state=0).fit(X)
    out = rec.transform(X[:200])
    ok = ~np.isnan(out).any(axis=1)
    assert 0.3 < ok.mean() and np.all(out[ok][:, 0] >= dense[:200][ok, 0])
    assert np.all(out[ok][:, 2:] == dense[:200][ok, 2:])
    assert np.all(_CsrBox().predict(sparse.csr_matrix(out[ok])) == 1)
