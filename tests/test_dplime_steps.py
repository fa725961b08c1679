"""DPLimeExplainer's number of steps from public facts, and its low-utility check
(issue 38, item 3: defaults that beat answering nothing, or say so first)."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdpx.explain import DPLimeExplainer, default_n_iter, gradient_sensitivity
from skdpx.explain._dplime import MAX_DEFAULT_STEPS
from skdpx.privacy import PrivacyLedger, UtilityWarning, calibrate_noise


def _bound(T, d, eps, delta, sens):
    s1 = calibrate_noise(eps, delta, steps=1) * sens
    return 1 / (2 * T) + T * s1**2 * d / 2  # L = c / radius = 1, r = 1


@pytest.mark.parametrize("d, eps, m", [(8, 0.01, 20_000), (8, 0.1, 2_000), (30, 1.0, 300),
                                       (100, 0.1, 30_000), (4, 10.0, 500)])
def test_the_rule_is_the_bounds_minimum(d, eps, m):
    sens = gradient_sensitivity(m)
    T = default_n_iter(d, eps, 1e-5, sens)
    grid = np.arange(1, MAX_DEFAULT_STEPS + 1)
    best = grid[np.argmin([_bound(t, d, eps, 1e-5, sens) for t in grid])]
    assert T == best


def test_the_rule_grows_with_the_rows_and_is_capped_without_noise():
    t = [default_n_iter(8, 0.1, 1e-5, gradient_sensitivity(m)) for m in (1_000, 2_000, 4_000)]
    # T* ~ m: twice the rows, twice the steps
    assert 1.9 < t[1] / t[0] < 2.1 and 1.9 < t[2] / t[1] < 2.1, t
    assert default_n_iter(8, np.inf, 1e-5, gradient_sensitivity(1_000)) == MAX_DEFAULT_STEPS


def _problem(m, d=8, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, (m, d))
    y = (X @ rng.normal(size=d) + 0.3 * rng.normal(size=m) > 0).astype(int)
    return X, LogisticRegression().fit(X, y), rng.uniform(-1, 1, (20, d))


def _excess_over_zero(explainer, Q):
    """Mean local loss of the last answers minus that of answering zero (< 0: better)."""
    Z = explainer._scaler().transform(Q)
    columns, offsets, _ = explainer._query_targets(Q, None)
    H, g = (np.asarray(f) for f in explainer._forms(Z, columns, offsets))
    phi = np.array(explainer.history_["explanations"][-len(Q):])
    return float(np.mean(np.einsum("qi,qij,qj->q", phi, H, phi) - 2 * np.einsum("qi,qi->q", g, phi)))


def test_the_default_beats_answering_zero_and_the_old_fixed_steps():
    X, black_box, Q = _problem(2_000)
    losses = {}
    for max_iter in (None, 100):
        runs = []
        for seed in range(3):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lime = DPLimeExplainer(black_box, epsilon=1e9, delta=1e-5, epsilon_per_query=0.1,
                                       max_iter=max_iter, bounds=(-1.0, 1.0),
                                       random_state=seed).fit(X)
                lime.explain(Q)
            runs.append(_excess_over_zero(lime, Q))
        losses[max_iter] = np.mean(runs)
    # measured: -0.038 with the rule's 7 steps, -0.029 with 100
    assert losses[None] < 0 and losses[None] < losses[100], losses
    assert lime.n_iter_ == 100


def _small(relation="add_or_remove", d=30, **kw):
    X, black_box, _ = _problem(300, d=d)
    ledger = PrivacyLedger(delta=1e-5, relation=relation)
    params = dict(epsilon=10.0, delta=1e-5, epsilon_per_query=0.1, bounds=(-1.0, 1.0),
                  accountant=ledger, random_state=0)
    params.update(kw)
    return DPLimeExplainer(black_box, **params), X, ledger


def test_low_utility_warns_before_any_query_and_says_what_would_clear_it():
    lime, X, ledger = _small("replace_one")  # the number of rows is public: no count
    with pytest.warns(UtilityWarning, match="answering zero") as record:
        lime.fit(X)
    message = str(next(w.message for w in record if "answering zero" in str(w.message)))
    assert len(ledger) == 0  # nothing spent yet: the queries spend when asked
    # what it says would clear it does
    eps = float(message.split("epsilon_per_query >= ")[1].split(",")[0])
    features = int(message.split("at most ")[1].split(" features")[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        _small("replace_one", epsilon_per_query=eps * 1.01)[0].fit(X)
        lime, X_d, _ = _small("replace_one", d=features)
        lime.fit(X_d)
    lime, X_d, _ = _small("replace_one", d=features + 1)
    with pytest.warns(UtilityWarning, match="answering zero"):
        lime.fit(X_d)


def test_low_utility_raise_refuses_after_only_the_count():
    lime, X, ledger = _small(on_low_utility="raise")
    with pytest.raises(ValueError, match="DP row count .* was spent; nothing else was"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lime.fit(X)
    # only the count: 5% of epsilon_per_query
    assert len(ledger) == 1 and ledger.epsilon_spent == pytest.approx(0.005, rel=1e-6)
    lime, X, ledger = _small("replace_one", on_low_utility="raise")
    with pytest.raises(ValueError, match="Nothing was spent"):
        lime.fit(X)
    assert len(ledger) == 0
