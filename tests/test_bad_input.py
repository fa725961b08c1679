"""Bad input gets a plain error and never spends budget (every estimator joins)."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from skdpx.privacy import PrivacyLedger

from ._estimators import TEST_TABLE, estimator_classes, fit, make_estimator, small_problem

CLASSES = estimator_classes()


def _bad_fit_inputs():
    X, y = small_problem()
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    X_inf = X.copy()
    X_inf[5, 0] = np.inf
    X_str = X.astype(str).astype(object)
    X_str[0, 0] = "high"
    return {
        "nan": (X_nan, y, ValueError, "NaN"),
        "inf": (X_inf, y, ValueError, "infinity"),
        "empty": (X[:0], y[:0], ValueError, "0 sample"),
        "1-D X": (X[:, 0], y, ValueError, "2D array"),
        "strings": (X_str, y, ValueError, "string"),
        "too few rows for y": (X[:-1], y, ValueError, "inconsistent"),
    }


BAD_FIT = _bad_fit_inputs()


BAD_FIT_CASES = [
    pytest.param(cls, case, id=f"{cls.__name__}-{case}")
    for cls in CLASSES
    for case in BAD_FIT
    # an unsupervised estimator takes no y, so y cannot disagree with X
    if TEST_TABLE[cls]["supervised"] or case != "too few rows for y"
]


@pytest.mark.parametrize("cls, case", BAD_FIT_CASES)
def test_bad_data_raises_and_spends_nothing(cls, case):
    X, y, error, message = BAD_FIT[case]
    ledger = PrivacyLedger()
    est = make_estimator(cls, accountant=ledger)
    with pytest.raises(error, match=message):
        fit(est, X, y)
    assert len(ledger) == 0 and ledger.epsilon_spent == 0
    assert not hasattr(est, "epsilon_spent_")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "params",
    [{"epsilon": 0.0}, {"epsilon": -1.0}, {"delta": 1.0}, {"delta": -0.1}, {"epsilon": "high"}],
    ids=str,
)
def test_bad_budget_raises_and_spends_nothing(cls, params):
    X, y = small_problem()
    ledger = PrivacyLedger()
    est = make_estimator(cls, accountant=ledger, **params)
    with pytest.raises(InvalidParameterError, match=next(iter(params))):
        fit(est, X, y)
    assert isinstance(InvalidParameterError("x"), (ValueError, TypeError))
    assert len(ledger) == 0


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_unfitted_use_raises_not_fitted(cls):
    X, _ = small_problem()
    est = make_estimator(cls)
    for method in TEST_TABLE[cls]["methods"]:
        with pytest.raises(NotFittedError, match="not fitted"):
            getattr(est, method)(X)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_wrong_n_features_after_fit(cls):
    X, y = small_problem()
    ledger = PrivacyLedger()
    est = fit(make_estimator(cls, accountant=ledger), X, y)
    spent = ledger.epsilon_spent
    n_events = len(ledger)
    for method in TEST_TABLE[cls]["methods"]:
        with pytest.raises(ValueError, match="features"):
            getattr(est, method)(X[:, :-1])
        with pytest.raises(ValueError, match="NaN"):
            bad = X.copy()
            bad[0, 0] = np.nan
            getattr(est, method)(bad)
    # a refused query never spends: no new events, same total
    assert len(ledger) == n_events and ledger.epsilon_spent == spent


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_budget_spent_is_recorded_and_within_cap(cls):
    X, y = small_problem()
    ledger = PrivacyLedger()
    est = fit(make_estimator(cls, accountant=ledger, epsilon=1.0, delta=1e-5), X, y)
    if TEST_TABLE[cls].get("spends_on_query"):  # an explainer spends per query, not at fit
        assert len(ledger) == 0
        getattr(est, TEST_TABLE[cls]["methods"][0])(X[:5])
    assert len(ledger) >= 1
    assert 0 < est.epsilon_spent_ <= 1.0
    assert est.delta_spent_ <= 1e-5
