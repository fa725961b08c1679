"""PrivRecourse: accounting, the clustering audit, graph constraints, paths and queries."""

import dp_accounting
import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skdpx import PrivRecourse
from skdpx.privacy import (
    BudgetError,
    EstimatorBudget,
    PrivacyLedger,
    audit_epsilon,
    calibrate_noise,
    compute_epsilon,
    gaussian_event,
    pure_event,
)
from skdpx.recourse import RecourseGraph, recourse_graph
from skdpx.recourse import _clustering


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(20000, 3))
    y = (X[:, 0] + X[:, 1] > 1.2).astype(int)
    return X, y


def _rec(**kw):
    params = dict(n_clusters=40, epsilon=2.0, delta=1e-5, bounds=(0.0, 1.0), random_state=0)
    params.update(kw)
    return PrivRecourse(**params)


@pytest.fixture(scope="module")
def fitted(problem):
    X, y = problem
    return _rec(increasing_features=[0], decreasing_features=[2]).fit(X, y)


# ---------------------------------------------------------------- accounting

def test_model_and_clustering_compose_to_exactly_epsilon(fitted):
    rec = fitted
    assert rec.epsilon_spent_ == pytest.approx(2.0, abs=2e-3) and rec.epsilon_spent_ <= 2.0
    # recomputable from the fitted attributes
    event = dp_accounting.ComposedDpEvent([
        pure_event(rec.model_epsilon_),
        gaussian_event(rec.noise_multiplier_, steps=rec.max_iter + 1)])
    assert compute_epsilon(event, 1e-5) == pytest.approx(rec.epsilon_spent_, rel=1e-6)
    labels = [label for label, _ in rec.budget_.events]
    assert labels[0].startswith("black box: DP logistic regression")
    assert sum("Lloyd iteration" in s for s in labels) == rec.max_iter
    assert sum("initial centres" in s for s in labels) == 1


def test_a_given_black_box_leaves_the_whole_budget_to_the_clustering(problem):
    X, y = problem
    model = LogisticRegression().fit(X, y)
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    rec = _rec(estimator=model, epsilon=1.0, max_iter=2, accountant=ledger).fit(X)
    assert rec.estimator_ is model and rec.model_epsilon_ == 0.0
    assert rec.noise_multiplier_ == pytest.approx(calibrate_noise(1.0, 1e-5, steps=3))
    assert ledger.epsilon_spent == pytest.approx(rec.epsilon_spent_)
    assert all("PrivRecourse: " in label for label, _ in ledger.events)


def test_queries_are_free(fitted, problem):
    X, _ = problem
    before = len(fitted.budget_.events)
    fitted.explain(X[:50])
    fitted.transform(X[:50])
    fitted.alternatives(X[:5], n_paths=2)
    assert len(fitted.budget_.events) == before


def test_bad_input_spends_nothing(problem):
    X, y = problem
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-5)
    bad = [
        (dict(favorable_class=7), "favorable_class"),
        (dict(increasing_features=[0], immutable_features=[0]), "both"),
        (dict(increasing_features=["age"]), "unknown feature"),
        (dict(decreasing_features=[5]), "not a feature index"),
        (dict(delta=0.0), "delta > 0"),
    ]
    for params, match in bad:
        with pytest.raises(ValueError, match=match):
            _rec(accountant=ledger, **params).fit(X, y)
    with pytest.raises(ValueError):
        _rec(accountant=ledger).fit(np.c_[X[:, :2], np.full(len(X), np.nan)], y)
    assert ledger.epsilon_spent == 0 and not ledger.events


def test_a_shared_ledger_that_is_spent_stops_the_fit(problem):
    X, y = problem
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    ledger.spend(pure_event(0.9), "earlier release")
    with pytest.raises(BudgetError):
        _rec(epsilon=2.0, accountant=ledger).fit(X, y)
    assert [label for label, _ in ledger.events] == ["earlier release"]


def test_a_ledger_that_affords_the_model_but_not_the_clustering_spends_nothing(problem):
    X, y = problem
    ledger = PrivacyLedger(epsilon=3.0, delta=1e-5)
    ledger.spend(pure_event(1.5), "earlier release")  # room for the model (1), not for all
    with pytest.raises(BudgetError):
        _rec(epsilon=2.0, accountant=ledger).fit(X, y)
    assert [label for label, _ in ledger.events] == ["earlier release"]


def test_same_seed_same_centres(problem):
    X, y = problem
    a, b = _rec().fit(X, y), _rec().fit(X, y)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    c = _rec(random_state=1).fit(X, y)
    assert a.cluster_centers_.shape != c.cluster_centers_.shape or not np.allclose(
        a.cluster_centers_, c.cluster_centers_)


# ---------------------------------------------------------------- the audit

# One Lloyd release on fixed centres: the neighbour moves one row from the
# corner (1, 1, 1) of cluster 1 to the corner (0, 0, 0) of cluster 0, which
# changes the table by exactly its sensitivity.
_D = 3
_CENTERS = np.array([[0.25] * _D, [0.75] * _D])
_DATA = np.r_[np.full((30, _D), 0.2), np.full((29, _D), 0.8), np.ones((1, _D))]
_NEIGHBOUR = np.r_[_DATA[:-1], np.zeros((1, _D))]
_DIRECTION = np.r_[[np.r_[np.full(_D, 0.5), -1.0]], [np.r_[np.full(_D, 0.5), 1.0]]]


def _lloyd_release(data, random_state):
    budget = EstimatorBudget(np.inf, 1e-5)
    return _clustering.lloyd_step(data, _CENTERS, calibrate_noise(1.0, 1e-5), random_state,
                                  budget, "audit")


def _statistic(table):
    return float((table * _DIRECTION).sum())  # the optimal test: along the change


def test_audit_of_a_lloyd_release_stays_below_its_epsilon():
    bound = audit_epsilon(_lloyd_release, _DATA, _NEIGHBOUR, n_trials=6_000, delta=1e-5,
                          statistic=_statistic, random_state=0)
    assert bound < 1.0


def test_lloyd_audit_catches_too_small_a_sensitivity(monkeypatch):
    real = _clustering.table_sensitivity
    monkeypatch.setattr(_clustering, "table_sensitivity", lambda d: real(d) / 8)
    bound = audit_epsilon(_lloyd_release, _DATA, _NEIGHBOUR, n_trials=6_000, delta=1e-5,
                          statistic=_statistic, random_state=0)
    assert bound > 1.0


def _histogram_release(data, random_state):
    return _clustering.marginal_histograms(data, calibrate_noise(1.0, 1e-5), random_state,
                                           EstimatorBudget(np.inf, 1e-5))


def _histogram_statistic(hist):
    return float(hist[:, -1].sum() - hist[:, 0].sum())  # the moved row: bin 0 -> last bin


def test_audit_of_the_initial_histograms_stays_below_its_epsilon():
    bound = audit_epsilon(_histogram_release, _DATA, _NEIGHBOUR, n_trials=6_000, delta=1e-5,
                          statistic=_histogram_statistic, random_state=0)
    assert bound < 1.0


def test_histogram_audit_catches_too_small_a_sensitivity(monkeypatch):
    real = _clustering.init_sensitivity
    monkeypatch.setattr(_clustering, "init_sensitivity", lambda d: real(d) / 8)
    bound = audit_epsilon(_histogram_release, _DATA, _NEIGHBOUR, n_trials=6_000, delta=1e-5,
                          statistic=_histogram_statistic, random_state=0)
    assert bound > 1.0


def test_the_table_sensitivity_is_the_worst_replacement():
    rng = np.random.RandomState(0)
    budget = EstimatorBudget(np.inf, 1e-5)
    a = _clustering.lloyd_step(_DATA, _CENTERS, 0.0, rng, budget, "exact")
    b = _clustering.lloyd_step(_NEIGHBOUR, _CENTERS, 0.0, rng, budget, "exact")
    assert np.linalg.norm(a - b) == pytest.approx(_clustering.table_sensitivity(_D))


# ---------------------------------------------------------------- graph and paths

def test_paths_respect_the_constraints_and_end_favourable(fitted, problem):
    X, _ = problem
    rec = fitted
    res = rec.explain(X[:300])
    assert res.success.mean() > 0.9
    for path, ok in zip(res.paths, res.success):
        if ok and len(path) > 2:
            steps = np.diff(path[1:], axis=0)  # node to node (the first hop is free)
            assert np.all(steps[:, 0] >= 0) and np.all(steps[:, 2] <= 0)
    good = res.success
    assert np.all(rec.estimator_.predict(res.counterfactuals[good]) == 1)
    # the graph's own edges obey the constraints too
    i, j = rec.graph_.nonzero()
    C = rec.cluster_centers_
    assert np.all(C[j, 0] >= C[i, 0]) and np.all(C[j, 2] <= C[i, 2])


def test_precomputed_paths_are_the_shortest(fitted, problem):
    X, _ = problem
    rec = fitted
    res = rec.explain(X[:200])
    starts = rec._routes.start_nodes((X[:200] - 0.0) / 1.0)
    for q in np.flatnonzero(res.success & (starts >= 0) & (res.cost > 0))[:60]:
        dist = dijkstra(rec.graph_, directed=True, indices=starts[q])
        assert res.cost[q] == pytest.approx(dist[rec.candidates_].min(), rel=1e-9)
        # the path's edge weights add up to its cost
        nodes = [np.flatnonzero((rec.cluster_centers_ == p).all(axis=1))[0]
                 for p in res.paths[q][1:]]
        assert sum(rec.graph_[a, b] for a, b in zip(nodes, nodes[1:])) == pytest.approx(
            res.cost[q])


def test_transform_is_explains_end_points(fitted, problem):
    X, _ = problem
    np.testing.assert_array_equal(fitted.transform(X[:100]),
                                  fitted.explain(X[:100]).counterfactuals)


def test_a_favourable_query_is_its_own_counterfactual(fitted):
    q = np.array([[0.95, 0.95, 0.5], [1.5, 0.95, 0.5]])  # the second is out of bounds
    res = fitted.explain(q)
    assert res.success.all() and np.all(res.cost == 0) and all(len(p) == 1 for p in res.paths)
    np.testing.assert_array_equal(res.counterfactuals, q)
    np.testing.assert_array_equal(fitted.transform(q), q)


def test_unreachable_candidates_fail_with_nan():
    nodes = np.array([[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]])
    graph = recourse_graph(nodes, distance_threshold=0.6, increasing=[0])
    routes = RecourseGraph(nodes, graph, candidates=[0])  # only reachable by going down
    assert np.isinf(routes.cost[1]) and np.isinf(routes.cost[2])
    routes = RecourseGraph(nodes, graph, candidates=[2])
    np.testing.assert_allclose(routes.cost[0], graph[0, 1] + graph[1, 2])
    lengths, flat = routes.walk([0, 1, -1])
    assert lengths.tolist() == [3, 2, 0] and flat.tolist() == [0, 1, 2, 1, 2]


def test_a_query_with_no_reachable_candidate_fails(problem):
    X, y = problem
    rec = _rec(increasing_features=[0, 1], distance_threshold=0.05).fit(X, y)
    res = rec.explain(X[:300])
    assert not res.success.all()
    failed = ~res.success
    assert np.all(np.isnan(res.counterfactuals[failed])) and np.all(np.isinf(res.cost[failed]))
    assert all(len(p) == 1 for p in np.array(res.paths, dtype=object)[failed])
    assert np.all(np.isnan(rec.transform(X[:300])[failed]))


def test_immutable_features_stay_within_tolerance(problem):
    X, y = problem
    rec = _rec(immutable_features=[2], tolerance=0.1).fit(X, y)
    res = rec.explain(X[:200])
    assert res.success.mean() > 0.5
    for q, path, ok in zip(X[:200], res.paths, res.success):
        if ok and len(path) > 1:
            assert np.all(np.abs(path[1:, 2] - q[2]) <= 0.1 * (len(path) - 1) + 1e-12)
            assert abs(path[1, 2] - q[2]) <= 0.1 + 1e-12  # the start node too


def test_alternatives_are_ranked_paths_to_distinct_candidates(fitted, problem):
    X, _ = problem
    q = X[:30]
    first = fitted.explain(q)
    alts = fitted.alternatives(q, n_paths=3)
    assert len(alts) == 3
    np.testing.assert_allclose(alts[0].cost, first.cost)
    for i in range(len(q)):
        ok = [a.success[i] for a in alts]
        costs = [a.cost[i] for a in alts if a.success[i]]
        assert costs == sorted(costs)
        ends = [tuple(a.counterfactuals[i]) for a in alts if a.success[i]]
        if first.cost[i] > 0:
            assert len(set(ends)) == len(ends) and ok[0]
            for a in alts:  # a path ends at the first favourable centre it reaches
                if a.success[i]:
                    inner = fitted.estimator_.predict(a.paths[i][1:-1])
                    assert np.all(inner != 1)
    with pytest.raises(ValueError, match="n_paths"):
        fitted.alternatives(q, n_paths=0)


def test_feature_names_from_a_dataframe(problem):
    pd = pytest.importorskip("pandas")
    X, y = problem
    df = pd.DataFrame(X, columns=["age", "edu", "hours"])
    rec = _rec(increasing_features=["age"]).fit(df, y)
    res = rec.explain(df.iloc[:20])
    assert res.feature_names == ["age", "edu", "hours"]
    frame = res.to_frame()
    assert {"query", "step", "age", "cost", "success"} <= set(frame.columns)


def test_in_a_pipeline(problem):
    X, y = problem
    pipe = make_pipeline(_rec()).fit(X, y)
    out = pipe.transform(X[:20])
    assert out.shape == (20, 3)


def test_more_noise_keeps_fewer_centres(problem):
    X, y = problem
    tight = _rec(epsilon=20.0, n_clusters=400).fit(X, y)
    loose = _rec(epsilon=0.5, n_clusters=400).fit(X, y)
    assert len(loose.cluster_centers_) < len(tight.cluster_centers_)
    assert np.all(loose.cluster_counts_ >= loose.count_threshold * loose.noise_multiplier_
                  * _clustering.table_sensitivity(3))


def test_grid_search_sweeps_epsilon_with_a_recourse_score(problem):
    from sklearn.model_selection import GridSearchCV

    X, y = problem

    def success(est, X_val, y_val=None):
        return float(est.explain(X_val[:200]).success.mean())

    search = GridSearchCV(_rec(n_clusters=30, accountant=PrivacyLedger()),
                          {"epsilon": [1.0, 4.0]}, scoring=success, cv=2).fit(X, y)
    assert set(search.cv_results_["param_epsilon"]) == {1.0, 4.0}
    assert 0.5 <= search.best_score_ <= 1.0
