"""Rules a person can declare (issue 39 item 1), shared by DPC and PrivRecourse.

Ordered categorical columns held monotone, linked columns, a feasibility
callable, DiCE's ``features_to_vary`` and ``permitted_range``, per-column
``costs``: every returned record holds them relative to its query; bad
rules are refused at fit, naming the column, before anything is spent.
"""

import warnings

import numpy as np
import pytest

from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.privacy import PrivacyLedger
from skdpx.recourse import PrivRecourse
from skdpx.recourse._graph import recourse_graph

from ._helpers import quiet_fit as _fit

pd = pytest.importorskip("pandas")

LEVELS = ["low", "mid", "high"]  # the declared order
NUMBER = {"low": 1, "mid": 2, "high": 3}
SCHEMA = dict(bounds={"age": (17, 90), "edu_num": (1, 3)},
              categories={"edu": LEVELS, "sex": ["Female", "Male"],
                          "rel": ["Husband", "Wife", "Unmarried"]})


def _not_female_husband(df):
    return ~((df["sex"] == "Female") & (df["rel"] == "Husband"))


RULES = dict(immutable_features=["sex"], increasing_features=["age", "edu"],
             linked_features=[("edu", "edu_num", NUMBER)], feasibility=_not_female_husband)


def _frame(n, seed):
    rng = np.random.RandomState(seed)
    edu = rng.choice(LEVELS, n, p=[0.5, 0.3, 0.2])
    sex = rng.choice(["Female", "Male"], n)
    rel = np.where(sex == "Female", rng.choice(["Wife", "Unmarried"], n),
                   rng.choice(["Husband", "Unmarried"], n))
    return pd.DataFrame({
        "age": rng.randint(17, 91, n),
        "edu": pd.Categorical(edu, categories=LEVELS, ordered=True),
        "edu_num": np.array([NUMBER[e] for e in edu]),
        "sex": pd.Categorical(sex, categories=["Female", "Male"]),
        "rel": pd.Categorical(rel, categories=["Husband", "Wife", "Unmarried"]),
    })


@pytest.fixture(scope="module")
def problem():
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    X = _frame(3000, 0)
    score = (1.5 * (X["edu_num"] - 2) + (X["age"] - 45) / 12 + (X["rel"] == "Husband")
             + np.random.RandomState(1).normal(0, 0.3, len(X)))
    y = (score > 0).astype(int).to_numpy()
    onehot = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"),
                                 ["edu", "sex", "rel"])], remainder="passthrough")
    model = make_pipeline(onehot, LogisticRegression(max_iter=1000)).fit(X, y)
    queries = X[model.predict(X) == 0].iloc[:40]
    return X, y, model, queries


def _broken(queries, records):
    """Per record (NaN rows: none), whether it breaks a rule relative to its query."""
    q, r = queries.reset_index(drop=True), records.reset_index(drop=True)
    there = r["age"].notna().to_numpy()
    rank = {lv: i for i, lv in enumerate(LEVELS)}
    edu_q = q["edu"].astype(object).map(rank).to_numpy()
    edu_r = r["edu"].astype(object).map(rank).to_numpy()
    number = r["edu"].astype(object).map(NUMBER).to_numpy()
    broken = ((r["sex"].astype(object) != q["sex"].astype(object)).to_numpy()
              | (r["age"].to_numpy(dtype=float) < q["age"].to_numpy())
              | (edu_r < edu_q)
              | (np.where(edu_r == edu_q, q["edu_num"], number)
                 != r["edu_num"].to_numpy(dtype=float))
              | ~_not_female_husband(r).to_numpy(dtype=bool))
    return there & broken


def _dpc(model, **params):
    defaults = dict(epsilon=4.0, delta=1e-5, latent_dim=3, max_iter=30, random_state=0,
                    ae_method="functional", **SCHEMA)
    defaults.update(params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPCounterfactualGenerator(model, **defaults)


def _rec(model, **params):
    defaults = dict(epsilon=4.0, delta=1e-5, n_clusters=40, random_state=0, **SCHEMA)
    defaults.update(params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PrivRecourse(model, **defaults)


def test_dpc_records_hold_every_rule(problem):
    X, _, model, queries = problem
    free = _fit(_dpc(model, immutable_features=["sex"]), X).explain(queries)
    # without the rules, records break them (the check below can fail)
    assert _broken(queries, free.counterfactual_records).sum() > 0
    result = _fit(_dpc(model, **RULES), X).explain(queries)
    records = result.counterfactual_records
    assert result.valid.mean() >= 0.5
    assert not _broken(queries, records).any()
    np.testing.assert_array_equal(model.predict(records[result.valid]), 1)


def test_recourse_paths_hold_every_rule(problem):
    X, _, model, queries = problem
    rec = _fit(_rec(model, **RULES), X)
    paths = rec.explain(queries)
    assert paths.success.mean() >= 0.5
    for i in np.flatnonzero(paths.success):
        points = paths.paths[i][1:]
        records = rec.schema_.records(points, *rec.bounds_)
        assert not _broken(queries.iloc[[i] * len(points)], records).any()
    # without the rules some end point breaks one
    free = _fit(_rec(model, immutable_features=["sex"]), X).explain(queries)
    assert _broken(queries, free.counterfactual_records).sum() > 0


def test_features_to_vary_and_permitted_range(problem):
    X, _, model, queries = problem
    for make in (_dpc, _rec):
        est = _fit(make(model, features_to_vary=["age", "edu", "edu_num"],
                        permitted_range={"age": (17, 60), "edu": ["low", "mid"]}), X)
        records = est.transform(queries)
        ok = records["age"].notna().to_numpy()
        assert ok.any()
        for column in ("sex", "rel"):
            np.testing.assert_array_equal(records[column][ok].astype(object),
                                          queries[column][ok].astype(object))
        assert (records["age"][ok] <= 60).all()
        moved = records["edu"][ok].astype(object) != queries["edu"][ok].astype(object)
        assert (records["edu"][ok][moved].astype(object) != "high").all()


def test_permitted_change_relative_to_the_query(problem):
    """``{"change": (down, up)}``: within reach of each query's own value (a
    numeric column in its units, an ordered level in steps of its order),
    with an absolute ``"range"`` beside it."""
    X, _, model, queries = problem
    rank = {lv: i for i, lv in enumerate(LEVELS)}
    rule = {"age": {"change": (0, 4), "range": (17, 70)}, "edu": {"change": (0, 1)}}
    for make in (_dpc, _rec):
        free = make(model, immutable_features=["sex"])
        held = make(model, immutable_features=["sex"], permitted_range=rule)
        moves = []
        for est in (free, held):
            records = _fit(est, X).transform(queries)
            ok = records["age"].notna().to_numpy()
            age = records["age"].to_numpy(dtype=float)[ok] - queries["age"].to_numpy()[ok]
            steps = (records["edu"][ok].astype(object).map(rank).to_numpy()
                     - queries["edu"][ok].astype(object).map(rank).to_numpy())
            moves.append((ok.sum(), age, steps, records["age"].to_numpy(dtype=float)[ok]))
        (n_free, age_free, edu_free, _), (n, age, steps, ages) = moves
        # without the rule, records leave it (the check below can fail)
        assert ((age_free < 0) | (age_free > 4)).any() or (edu_free > 1).any()
        assert n >= 10
        assert ((age >= -1e-9) & (age <= 4 + 1e-9)).all()
        assert (ages <= 70).all()
        assert ((steps >= 0) & (steps <= 1)).all()
    # on an integer column a fractional change is clipped inwards (rounding then
    # keeps it within): age (integer) up by at most 4.5 is up by at most 4
    est = _fit(_dpc(model, permitted_range={"age": {"change": (0, 4.5)}}), X)
    Q = est.schema_.encode(queries.iloc[:5])
    age = [c for c, _ in est.schema_.groups].index("age")
    Z = Q.copy()
    Z[:, age] += 10
    np.testing.assert_array_equal(est.rules_.repair(Z, Q)[:, age], Q[:, age] + 4)


def test_costs_weigh_the_graph_and_the_counterfactual_choice(problem):
    nodes = np.random.RandomState(0).uniform(size=(12, 3))
    plain = recourse_graph(nodes, distance_threshold=0.6)
    dear = recourse_graph(nodes, distance_threshold=0.6, costs=[1.0, 1.0, 3.0])
    free = recourse_graph(nodes, distance_threshold=0.6, costs=[1.0, 1.0, 0.0])
    length = lambda c: np.linalg.norm((nodes[:, None] - nodes[None]) * c, axis=2)  # noqa: E731
    for graph, c in ((plain, 1.0), (dear, np.array([1.0, 1.0, 3.0])),
                     (free, np.array([1.0, 1.0, 0.0]))):
        i, j = graph.nonzero()
        np.testing.assert_array_equal(length(c)[i, j] < 0.6, True)
        assert graph.nnz == int(np.sum(length(c) < 0.6) - len(nodes))
    assert dear.nnz < plain.nnz < free.nnz
    X, _, model, queries = problem
    # DPC's choice among candidates (here its search along fixed directions, which
    # keeps the closest flipping point): a dear age moves age less
    plain = _fit(_dpc(model, immutable_features=["sex"]), X)
    costed = _fit(_dpc(model, immutable_features=["sex"], costs={"age": 20.0}), X)
    w = costed.rules_.weights
    assert w.max() == 20.0 and np.sum(w == 20.0) == 1
    Q = plain.schema_.encode(queries)
    target = np.ones(len(Q), dtype=int)
    age = [c for c, _ in plain.schema_.groups].index("age")
    moved = [np.abs(est._direction_search(Q, target)[:, age] - Q[:, age])
             for est in (plain, costed)]
    both = np.isfinite(moved[0]) & np.isfinite(moved[1])
    assert both.sum() >= 20
    assert moved[1][both].mean() < 0.8 * moved[0][both].mean()


def test_bad_rules_are_refused_at_fit_naming_the_column(problem):
    X, _, model, _ = problem
    unordered = X.assign(edu=X["edu"].cat.as_unordered())
    bad = [
        (unordered, dict(increasing_features=["edu"]), "'edu' is an unordered"),
        (X, dict(linked_features=[("edu", "edu_num", {"low": 1, "mid": 2})]),
         r"missing \['high'\]"),
        (X, dict(linked_features=[("edu", "edu_num", {**NUMBER, "phd": 4})]),
         r"undeclared \['phd'\]"),
        (X, dict(linked_features=[("edu", "edu_num", {"low": 1, "mid": 2, "high": 9})]),
         "bounds of 'edu_num'"),
        (X, dict(increasing_features=["edu"],
                 linked_features=[("edu", "edu_num", {"low": 3, "mid": 2, "high": 1})]),
         "go down along its declared order"),
        (X, dict(linked_features=[("age", "edu_num", NUMBER)]), "'age' must be a categorical"),
        (X, dict(linked_features=[("edu", "nope", NUMBER)]), "unknown feature 'nope'"),
        (X, dict(feasibility=lambda df: np.ones(2, bool)), "boolean mask"),
        (X, dict(feasibility=lambda df: df["nope"] > 0), "feasibility raised KeyError"),
        (X, dict(permitted_range={"edu": ["phd"]}), r"permitted_range\['edu'\]"),
        (X, dict(permitted_range={"age": (60, 20)}), r"permitted_range\['age'\]"),
        (X, dict(permitted_range={"nope": (0, 1)}), "unknown feature 'nope'"),
        (X, dict(permitted_range={"age": {"change": (1, 5)}}), "must allow no change"),
        (X, dict(permitted_range={"age": {"delta": (0, 5)}}), "keys 'range'"),
        (X, dict(permitted_range={"edu": {"change": (0, 0.5)}}), "whole numbers"),
        (unordered, dict(permitted_range={"edu": {"change": (0, 1)}}), "'edu' is an unordered"),
        (X, dict(costs={"age": -1.0}), r"costs\['age'\]"),
        (X, dict(costs={"nope": 1.0}), "unknown feature 'nope'"),
        (X, dict(features_to_vary=["age"], increasing_features=["edu"]),
         r"\['edu'\] are in increasing_features but not in features_to_vary"),
        (X, dict(features_to_vary=["age"], immutable_features=["age"]),
         "both features_to_vary and immutable_features"),
    ]
    for make in (_dpc, _rec):
        ledger = PrivacyLedger(epsilon=100.0, delta=1e-3)
        for data, params, message in bad:
            with pytest.raises(ValueError, match=message):
                _fit(make(model, accountant=ledger, **params), data)
        assert len(ledger.events) == 0


def test_the_order_is_the_dtypes_or_the_declared_levels(problem):
    X, _, model, _ = problem
    from skdpx._rules import level_order

    # the encoder's levels in another order than the ordered dtype: the dtype's wins
    shuffled = dict(SCHEMA, categories=dict(SCHEMA["categories"], edu=["high", "low", "mid"]))
    est = _fit(_dpc(model, **dict(shuffled, increasing_features=["edu"])), X)
    position = [c for c, _ in est.schema_.groups].index("edu")
    np.testing.assert_array_equal(level_order(est.schema_, position, "x"), [2, 0, 1])
    # a column of strings: the order of its levels in categories
    strings = X.assign(edu=X["edu"].astype(str))
    est = _fit(_dpc(model, **dict(shuffled, increasing_features=["edu"])), strings)
    np.testing.assert_array_equal(level_order(est.schema_, position, "x"), [0, 1, 2])
