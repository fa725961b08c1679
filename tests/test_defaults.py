"""Defaults that work (issue 18, item 6).

scikit-learn's common checks on the four estimators with their default
parameters (only ``random_state`` set; tests/test_common.py runs them with
the per-class test parameters instead), and PrivRecourse on data too small
for a graph: it never raises after spending, it answers ``success=False``.
"""

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdpx import (DPCounterfactualGenerator, DPLimeExplainer, DPLocallyLinearClassifier,
                   PrivRecourse)
from skdpx.privacy import PrivacyLedger, PrivacyLeakWarning, UtilityWarning

pytestmark = [
    pytest.mark.filterwarnings("ignore::skdpx.privacy.PrivacyLeakWarning"),  # bounds=None
    pytest.mark.filterwarnings("ignore:PrivRecourse.*cannot fill a graph node"),
]

DEFAULTS = [cls(random_state=0) for cls in (DPLocallyLinearClassifier, DPLimeExplainer,
                                            DPCounterfactualGenerator, PrivRecourse)]


@parametrize_with_checks(DEFAULTS)
def test_sklearn_checks_with_defaults(estimator, check):
    check(estimator)


def _uniform(n_rows, seed):
    """Uniform rows in [0, 1]^5 (no cluster structure), favourable: a noisy sum above 2.7."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n_rows, 5))
    y = (X.sum(axis=1) + 0.3 * rng.normal(size=n_rows) > 2.7).astype(int)
    return X, y


@pytest.mark.parametrize("seed", [1, 3, 4])
def test_recourse_defaults_on_1000_rows(seed):
    # with the former fixed n_clusters=100 these seeds kept no node and explain raised
    # IndexError; the clusters are now chosen so that a cluster can reach a node's count
    X, y = _uniform(1500, seed)
    X, Xq, y = X[:1000], X[1000:], y[:1000]
    rec = PrivRecourse(bounds=(0.0, 1.0), random_state=seed).fit(X, y)
    assert rec.epsilon_spent_ == pytest.approx(1.0, abs=1e-4)
    assert len(rec.cluster_centers_) > 0
    denied = rec.estimator_.predict(Xq) != rec.favorable_class_
    paths = rec.explain(Xq[denied])
    assert paths.success.mean() > 0.5
    ends = rec.transform(Xq[denied])
    ok = ~np.isnan(ends).any(axis=1)
    np.testing.assert_array_equal(ok, paths.success)
    assert np.all(rec.estimator_.predict(ends[ok]) == rec.favorable_class_)


def test_n_clusters_auto_is_planned_from_public_facts():
    X, y = _uniform(1000, 0)
    fits = [PrivRecourse(bounds=(0.0, 1.0), random_state=s).fit(Z, y)
            for s, Z in [(0, X), (1, 1.0 - X)]]  # other values, same shape
    need = fits[0].count_threshold * fits[0].count_noise_std_
    for fit in fits:  # from the fit's DP count of the rows, never the private 1,000
        assert fit.n_clusters_ == int(fit.n_rows_ // need)
        assert f"{fit.n_clusters_} clusters" in fit.ledger_.events[1][0]
    # no noise (epsilon=inf): a node needs 1 row, so n clusters, at most 100
    exact = PrivRecourse(bounds=(0.0, 1.0), epsilon=np.inf)
    assert exact.fit(X, y).n_clusters_ == 100
    assert exact.fit(X[:40], y[:40]).n_clusters_ == 40
    assert PrivRecourse(n_clusters=7, bounds=(0.0, 1.0), random_state=0).fit(
        X, y).n_clusters_ == 7


def test_recourse_with_no_node_answers_success_false():
    # 100 clusters of 1,000 uniform rows, and a node needs 50 noise stds (~570 rows):
    # the fit spends and keeps no node; every answer says so, none raises
    X, y = _uniform(1000, 0)
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    rec = PrivRecourse(n_clusters=100, count_threshold=50.0, bounds=(0.0, 1.0),
                       accountant=ledger, random_state=0).fit(X, y)
    assert len(rec.cluster_centers_) == 0 and len(rec.candidates_) == 0
    assert rec.epsilon_spent_ == pytest.approx(1.0, abs=1e-4)  # spent, as committed
    assert ledger.epsilon_spent == pytest.approx(rec.epsilon_spent_)
    favourable = rec.estimator_.predict(X[:200]) == rec.favorable_class_
    assert 0 < favourable.sum() < 200
    paths = rec.explain(X[:200])
    np.testing.assert_array_equal(paths.success, favourable)
    assert np.all(np.isinf(paths.cost[~favourable])) and np.all(paths.cost[favourable] == 0)
    assert all(len(p) == 1 for p in paths.paths)
    ends = rec.transform(X[:200])
    assert np.isnan(ends[~favourable]).all()
    np.testing.assert_array_equal(ends[favourable], X[:200][favourable])
    first, second = rec.alternatives(X[:200], n_paths=2)
    np.testing.assert_array_equal(first.success, favourable)
    assert not second.success.any()
    assert ledger.epsilon_spent == pytest.approx(rec.epsilon_spent_)  # queries are free


def test_recourse_warns_before_spending_when_rows_cannot_fill_a_node():
    X, y = _uniform(1000, 0)
    X, y = X[:40], y[:40]
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.simplefilter("error", UserWarning)  # stops the fit where it warns
        # the number of rows is private: the fit says so from its DP count, having
        # spent that count's 5% of epsilon and nothing else
        with pytest.raises(UtilityWarning, match="the DP count of the rows is"):
            PrivRecourse(bounds=(0.0, 1.0), accountant=ledger, random_state=0).fit(X, y)
    assert [label for label, _ in ledger.events] == ["PrivRecourse: row count (Laplace)"]
    assert ledger.epsilon_spent == pytest.approx(0.05)
    with pytest.warns(UserWarning, match="cannot fill a graph node"):
        rec = PrivRecourse(bounds=(0.0, 1.0), accountant=ledger, random_state=0).fit(X, y)
    assert rec.n_clusters_ == 1 and ledger.epsilon_spent == pytest.approx(1.05, abs=1e-4)
    denied = rec.estimator_.predict(X) != rec.favorable_class_
    assert denied.any() and not rec.explain(X[denied]).success.any()
    assert np.isnan(rec.transform(X[denied])).all()
