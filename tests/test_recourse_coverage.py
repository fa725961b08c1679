"""PrivRecourse's coverage (issue 39, item 4): the per-query relaxation of the
tolerance, reported per query; monotone columns held from one step to the next;
a warning before the clustering's spend when the rows cannot support a graph."""

import warnings

import numpy as np
import pytest

from skdpx import RecoursePaths
from skdpx.exceptions import UtilityWarning
from skdpx.privacy import PrivacyLedger, PrivacyLeakWarning
from skdpx.recourse import PrivRecourse

from .test_rules import LEVELS, NUMBER, RULES
from .test_rules import _rec as _rules_rec
from .test_rules import problem  # noqa: F401  (the module fixture)

pd = pytest.importorskip("pandas")


class _SumBox:
    """Favourable when x0 + x2 > 1 (a public rule, no training)."""

    classes_ = np.array([0, 1])

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        return (X[:, 0] + X[:, 2] > 1.0).astype(int)


def _sum_rec(**kw):
    X = np.random.RandomState(0).uniform(0, 1, size=(4000, 3))
    params = dict(n_clusters=30, epsilon=4.0, bounds=(0.0, 1.0), immutable_features=[1],
                  tolerance=0.0, random_state=0)
    params.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return X, PrivRecourse(_SumBox(), **params).fit(X)


# ---------------------------------------------------------------- relaxation

def test_the_tolerance_is_relaxed_per_query_and_reported():
    # x1 immutable at tolerance 0: no noisy centre has a query's x1 exactly, so no
    # query gets a path without the relaxation; with it, every one that fails at
    # 0 is searched again at 0.1, 0.2, ... and says which tolerance its path needed
    X, strict = _sum_rec(max_tolerance=None)
    queries = X[X[:, 0] + X[:, 2] <= 1.0][:60]
    res0 = strict.explain(queries)
    assert strict.tolerance_levels_ == (0.0,)
    assert not res0.success.any() and np.isnan(res0.tolerance).all()
    _, relaxed = _sum_rec(max_tolerance=0.5)
    assert relaxed.tolerance_levels_ == (0.0, 0.1, 0.2, 0.3, 0.5)
    res = relaxed.explain(queries)
    assert res.success.mean() > 0.9
    assert set(res.tolerance[res.success]) <= {0.1, 0.2, 0.3, 0.5}
    assert np.isnan(res.tolerance[~res.success]).all()
    # a path's centres are within its tolerance of the query's x1; every point shown
    # has the query's x1 exactly, and the end point flips
    for i in np.flatnonzero(res.success):
        assert np.all(res.paths[i][:, 1] == queries[i, 1])
    assert np.all(_SumBox().predict(res.counterfactuals[res.success]) == 1)
    # a query that fails says up to which tolerance it was tried
    assert all("relaxed from 0" in r for r in res.reason[~res.success])
    # an already favourable query needed none
    fav = relaxed.explain([[0.9, 0.5, 0.9]])
    assert fav.success[0] and fav.tolerance[0] == 0.0
    # reported everywhere a query's path is: steps(), JSON, row selection, alternatives
    i = int(np.flatnonzero(res.success)[0])
    assert res.steps(i).attrs["tolerance"] == res.tolerance[i]
    assert RecoursePaths.from_json(res.to_json()) == res
    np.testing.assert_array_equal(res[[i]].tolerance, res.tolerance[[i]])
    first = relaxed.alternatives(queries, n_paths=2)[0]
    np.testing.assert_array_equal(first.tolerance[first.success],
                                  res.tolerance[first.success])


def test_each_query_is_searched_at_the_smallest_tolerance_that_serves_it():
    X, rec = _sum_rec(tolerance=0.05, max_tolerance=0.3)
    queries = X[X[:, 0] + X[:, 2] <= 1.0][:80]
    res = rec.explain(queries)
    for t in (0.05, 0.1, 0.2):
        # the queries served at a tolerance are exactly those the relaxation left
        # there: a rec whose largest tolerance is t serves them all
        _, upto = _sum_rec(tolerance=0.05, max_tolerance=t)
        served = upto.explain(queries).success
        np.testing.assert_array_equal(served, res.success & (res.tolerance <= t + 1e-12))


# ---------------------------------------------------------------- step by step

def test_a_step_moves_a_monotone_column_only_the_way_its_rule_allows(problem):  # noqa: F811
    X, _, model, queries = problem
    rec = _rules_rec(model, **RULES).fit(X)
    # a path whose centres go down from one point to the next, on age and on the
    # ordered level (each point still at or above the query's): held step by step
    query = queries.iloc[[0]].assign(age=30, edu=pd.Categorical(["low"], categories=LEVELS,
                                                                 ordered=True), edu_num=1)
    Q = rec.schema_.encode(query)
    Q = np.asarray(Q.toarray() if hasattr(Q, "toarray") else Q, dtype=float)
    steps = pd.concat([query] * 3, ignore_index=True).assign(
        age=[60, 40, 50], edu=pd.Categorical(["high", "mid", "low"], categories=LEVELS,
                                             ordered=True))
    Z = rec.schema_.encode(steps)
    Z = np.asarray(Z.toarray() if hasattr(Z, "toarray") else Z, dtype=float)
    Z = rec.rules_.repair(Z, np.repeat(Q, 3, axis=0))
    points, held = rec._step_by_step(Z.copy(), np.array([3]), np.repeat(Q, 3, axis=0))
    records = rec.schema_.records(points, *rec.bounds_)
    assert records["age"].tolist() == [60, 60, 60]
    assert records["edu"].astype(str).tolist() == ["high", "high", "high"]
    assert records["edu_num"].tolist() == [3, 3, 3]  # the link set again from the level
    assert held.all()
    # a decreasing column: a running minimum
    rec_dec = _rules_rec(model, immutable_features=["sex"], decreasing_features=["age"]).fit(X)
    Zd = rec_dec.schema_.encode(steps.assign(edu=query["edu"].iloc[0]))
    Zd = np.asarray(Zd.toarray() if hasattr(Zd, "toarray") else Zd, dtype=float)
    pts, _ = rec_dec._step_by_step(Zd.copy(), np.array([3]), np.repeat(Q, 3, axis=0))
    assert rec_dec.schema_.records(pts, *rec_dec.bounds_)["age"].tolist() == [60, 40, 40]


def test_returned_paths_never_step_back_on_a_monotone_column(problem):  # noqa: F811
    X, _, model, queries = problem
    rec = _rules_rec(model, **RULES).fit(X)
    res = rec.explain(queries)
    assert res.success.mean() >= 0.5
    rank = {lv: i for i, lv in enumerate(LEVELS)}
    frame = res.to_frame()
    for _, path in frame[frame["success"]].groupby("query"):
        assert np.all(np.diff(path["age"].to_numpy(dtype=float)) >= 0)
        levels = path["edu"].astype(object).map(rank).to_numpy()
        assert np.all(np.diff(levels) >= 0)
        number = path["edu"].astype(object).map(NUMBER).to_numpy(dtype=float)
        same = levels == levels[0]
        assert np.all(path["edu_num"].to_numpy(dtype=float)[~same] == number[~same])


# ---------------------------------------------------------------- small data

def _small(n_rows, n_features, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n_rows, n_features))
    return X, (X.sum(axis=1) > n_features / 2).astype(int)


def test_rows_that_cannot_support_a_graph_warn_before_the_clustering_is_spent():
    # 300 rows of 30 features at epsilon 1 (breast cancer's size): the DP count says
    # a node needs a noisy count of about 5 x 15 rows, so even spread evenly the rows
    # fill fewer than 10 nodes. The warning is raised as an error: the fit stops
    # there, having spent only the DP row count
    X, y = _small(300, 30)
    box = _SumBox()
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.simplefilter("error", UtilityWarning)
        with pytest.raises(UtilityWarning, match="cannot support a useful graph"):
            PrivRecourse(box, bounds=(0.0, 1.0), accountant=ledger, random_state=0).fit(X)
    assert [label for label, _ in ledger.events] == ["PrivRecourse: row count (Laplace)"]
    # the same rows in 5 features fill more nodes (less noise per count): no warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        PrivRecourse(box, bounds=(0.0, 1.0), random_state=0).fit(np.tile(X[:, :3], (10, 1)))
    assert not [w for w in caught if "cannot support a useful graph" in str(w.message)]
