"""DPCounterfactualGenerator: privacy accounting, the audit of the prototypes, the search."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdpx import CounterfactualSet
from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.counterfactual._functional import FunctionalAutoencoder, functional_sensitivity
from skdpx.privacy import EstimatorBudget, PrivacyLedger, audit_epsilon, calibrate_noise


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(3000, 5))
    y = (X[:, 0] + X[:, 1] - X[:, 2] > 0.5).astype(int)
    return X, y, LogisticRegression().fit(X, y)


def _dpc(model, **params):
    defaults = dict(epsilon=1.0, delta=1e-5, latent_dim=3, bounds=(0, 1), random_state=0,
                    ae_method="functional")
    defaults.update(params)
    return DPCounterfactualGenerator(model, **defaults)


def test_counterfactuals_flip_the_black_box(problem):
    X, _, model = problem
    dpc = _dpc(model).fit(X)
    result = dpc.explain(X[:50])
    assert isinstance(result, CounterfactualSet)
    assert result.valid.mean() >= 0.9
    # valid is re-checked with the model, not assumed
    ok = result.valid
    np.testing.assert_array_equal(model.predict(result.counterfactuals[ok]),
                                  result.desired_class[ok])
    np.testing.assert_array_equal(result.desired_class, 1 - model.predict(X[:50]))
    lower, upper = dpc.bounds_
    assert np.all((result.counterfactuals[ok] >= lower) & (result.counterfactuals[ok] <= upper))
    np.testing.assert_array_equal(dpc.transform(X[:50]), result.counterfactuals)


def test_spends_are_recorded_and_within_the_cap(problem):
    X, _, model = problem
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    dpc = _dpc(model, accountant=ledger).fit(X)
    labels = [label for label, _ in ledger.events]
    assert any("functional mechanism" in s for s in labels)
    assert any("class prototypes" in s for s in labels)
    # the prototypes get what the autoencoder left: the whole budget is used
    assert dpc.epsilon_spent_ == pytest.approx(1.0, rel=1e-3) and dpc.epsilon_spent_ <= 1.0
    assert ledger.epsilon_spent == pytest.approx(dpc.epsilon_spent_, rel=1e-9)
    spent = dpc.epsilon_spent_
    dpc.explain(X[:10])  # the search is post-processing: free
    assert dpc.epsilon_spent_ == spent and len(ledger.events) == 2


def test_non_private_fit_says_so():
    rng = np.random.RandomState(1)
    X = rng.uniform(0, 1, size=(500, 3))
    y = (X[:, 0] > 0.5).astype(int)
    dpc = DPCounterfactualGenerator(None, epsilon=np.inf, latent_dim=2, bounds=(0, 1),
                                    ae_method="functional").fit(X, y)
    assert dpc.epsilon_spent_ == np.inf


def test_without_a_black_box_the_prototypes_classify(problem):
    X, y, _ = problem
    dpc = _dpc(None, epsilon=4.0).fit(X, y)
    result = dpc.explain(X[:30])
    assert result.valid.mean() >= 0.8
    assert set(np.unique(result.predicted_class[result.valid])) <= {0, 1}


def test_multiclass_opposite_is_the_runner_up_and_a_named_class_works():
    rng = np.random.RandomState(2)
    X = rng.uniform(0, 1, size=(2000, 4))
    y = np.digitize(X[:, 0] + X[:, 1], [0.7, 1.3])
    model = LogisticRegression().fit(X, y)
    dpc = _dpc(model, epsilon=4.0).fit(X)
    proba = model.predict_proba(X[:20])
    runner_up = np.argsort(proba, axis=1)[:, -2]
    np.testing.assert_array_equal(dpc.explain(X[:20]).desired_class, runner_up)
    with pytest.raises(ValueError, match="one of"):
        dpc.explain(X[:3], desired_class=7)
    result = dpc.explain(X[:20], desired_class=2)
    assert np.all(result.desired_class == 2) and result.valid.mean() >= 0.8


def test_bad_input_spends_nothing(problem):
    X, _, model = problem
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    bad = X[:100].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        _dpc(model, accountant=ledger).fit(bad)
    with pytest.raises(ValueError, match="latent_dim"):
        _dpc(model, latent_dim=9, accountant=ledger).fit(X)
    assert len(ledger.events) == 0


def test_functional_sensitivity_bounds_the_worst_neighbours():
    d = 6
    upper = np.triu_indices(d)

    def coefficients(x):
        return np.concatenate([np.outer(x, x)[upper], x])

    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * d)).reshape(d, -1).T
    worst = max(np.abs(coefficients(a) - coefficients(b)).sum() for a in signs for b in signs)
    assert worst <= functional_sensitivity(d)
    assert worst >= 0.4 * functional_sensitivity(d)  # and not loose by much


def test_functional_autoencoder_recovers_a_subspace_without_noise():
    rng = np.random.RandomState(3)
    basis = np.linalg.qr(rng.normal(size=(6, 2)))[0]
    X = np.clip(rng.normal(scale=0.3, size=(4000, 2)) @ basis.T, -1, 1)
    ae = FunctionalAutoencoder.fit(X, 2, epsilon=np.inf, random_state=rng)
    overlap = np.linalg.svd(ae.components.T @ basis, compute_uv=False)
    assert overlap.min() > 0.99


# Audit of the prototype release: two classes, codes in (0, 1)^2; the neighbour
# moves one row whose code is at the corner (1, 1) from class 0 to class 1.
_K = 2
_CODES = np.full((50, _K), 0.5)
_CODES[-1] = 1.0
_LABELS = np.r_[np.zeros(25, int), np.ones(24, int), 0]
_NEIGHBOUR_LABELS = np.r_[_LABELS[:-1], 1]


def _table_release(labels, random_state, sensitivity_scale=1.0):
    dpc = DPCounterfactualGenerator(epsilon=1.0, delta=1e-5)
    dpc.classes_ = np.array([0, 1])
    dpc.budget_ = EstimatorBudget(np.inf, 1e-5)
    return dpc._noisy_table(_CODES, labels, calibrate_noise(1.0, 1e-5), random_state)


def _statistic(table):
    return table[1].sum() - table[0].sum()


def test_audit_of_the_prototype_release_stays_below_its_epsilon():
    bound = audit_epsilon(_table_release, _LABELS, _NEIGHBOUR_LABELS, n_trials=6_000,
                          delta=1e-5, statistic=_statistic, random_state=0)
    assert bound < 1.0


def test_prototype_audit_catches_too_small_a_sensitivity(monkeypatch):
    from skdpx.counterfactual import _dpc

    monkeypatch.setattr(_dpc, "prototype_sensitivity", lambda k: np.sqrt(2.0 * (k + 1)) / 8)
    bound = audit_epsilon(_table_release, _LABELS, _NEIGHBOUR_LABELS, n_trials=6_000,
                          delta=1e-5, statistic=_statistic, random_state=0)
    assert bound > 1.0


def test_dpsgd_autoencoder_is_accounted_and_useful(problem):
    X, _, model = problem
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    dpc = _dpc(model, ae_method="dpsgd", hidden_layer_sizes=(8,), epsilon=2.0,
               accountant=ledger).fit(X)
    labels = [label for label, _ in ledger.events]
    assert any("DP-SGD autoencoder" in s for s in labels)
    assert any("class prototypes" in s for s in labels)
    assert 0 < dpc.epsilon_spent_ <= 2.0 and dpc.delta_spent_ <= 1e-5
    assert dpc.explain(X[:30]).valid.mean() >= 0.8


def test_mlp_decoder_vjp_matches_finite_differences():
    from skdpx.counterfactual._mlp_autoencoder import MLPAutoencoder

    rng = np.random.RandomState(4)
    X = rng.uniform(-1, 1, size=(300, 5))
    ae = MLPAutoencoder.fit(X, 2, (6, 4), epsilon=np.inf, delta=1e-5, random_state=rng)
    H, G = rng.uniform(0.2, 0.8, size=(3, 2)), rng.normal(size=(3, 5))
    h = 1e-6
    numeric = np.stack([((ae.decode(H + h * e) - ae.decode(H - h * e)) * G).sum(axis=1) / (2 * h)
                        for e in np.eye(2)], axis=1)
    np.testing.assert_allclose(ae.decode_vjp(H, G), numeric, rtol=1e-5, atol=1e-8)


def test_search_can_start_near_the_query(problem):
    X, _, model = problem
    from_prototype = _dpc(model, max_iter=5).fit(X).explain(X[:40])
    from_query = _dpc(model, max_iter=5, init_blend=0.9).fit(X).explain(X[:40])
    both = from_prototype.valid & from_query.valid
    assert both.sum() >= 10
    # a start near the query ends nearer to it
    assert np.mean(from_query.distance[both]) < np.mean(from_prototype.distance[both])


def test_a_query_without_counterfactual_keeps_its_own_prediction(problem):
    X, _, model = problem
    # start at the query's own code, one step, no pull to the class: mostly no flip
    dpc = _dpc(model, max_iter=1, alpha=0.0, init_blend=1.0).fit(X)
    result = dpc.explain(X[:40])
    missing = ~result.valid
    assert missing.any()
    assert np.all(np.isnan(result.counterfactuals[missing]))
    np.testing.assert_array_equal(result.predicted_class[missing], model.predict(X[:40][missing]))


def test_bad_hidden_layer_sizes_spend_nothing_even_non_private(problem):
    X, _, model = problem
    ledger = PrivacyLedger()
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        _dpc(model, epsilon=np.inf, ae_method="dpsgd", hidden_layer_sizes=(0,),
             accountant=ledger).fit(X)
    assert len(ledger.events) == 0


@pytest.mark.parametrize("ae_method", ["functional", "dpsgd"])
def test_a_ledger_that_affords_the_autoencoder_but_not_the_prototypes_spends_nothing(
        problem, ae_method):
    from skdpx.privacy import BudgetError, pure_event

    X, _, model = problem
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    ledger.spend(pure_event(1.05), "earlier release")  # room for 90% of epsilon 1, not all
    with pytest.raises(BudgetError):
        _dpc(model, ae_method=ae_method, epsilon=1.0, accountant=ledger).fit(X)
    assert [label for label, _ in ledger.events] == ["earlier release"]
