"""Bad input gets a plain error and never spends budget (every estimator joins).

Only what is public can be refused: the shape, the columns, the dtypes, an
empty X, the parameters. A value of a private row (NaN, infinity, a cell that
is not a number, a label that is not a declared class) is neutralised by the
fit instead, never refused: tests/test_refusals.py.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from skdpx._sklearn_compat import InvalidParameterError

from skdpx.privacy import PrivacyLedger

from ._estimators import TEST_TABLE, estimator_classes, fit, make_estimator, small_problem

CLASSES = estimator_classes(dp_only=True)


def _bad_fit_inputs():
    X, y = small_problem()
    return {
        "empty": (X[:0], y[:0], ValueError, "0 sample"),
        "1-D X": (X[:, 0], y, ValueError, "2D array"),
        "complex": (X + 1j, y, ValueError, "Complex data"),
        "too few rows for y": (X[:-1], y, ValueError, "different numbers of rows"),
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
@pytest.mark.parametrize("n_rows", [2, 9])
def test_few_rows_are_not_refused_where_their_number_is_private(cls, n_rows):
    # issue 35: under add-or-remove the number of rows is private, and a refusal
    # of 9 rows but not of 10 would release it. The fit plans for 10 rows at
    # least (from its DP count) and warns from the DP count alone. (Issue 18
    # refused them before spending; that refusal now stands where the number
    # of rows is public: the next test.)
    X, y = small_problem()
    ledger = PrivacyLedger()
    est = make_estimator(cls, accountant=ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit(est, X[:n_rows], y[:n_rows])
    assert est.n_rows_ >= 10
    assert ledger.epsilon_spent > 0


@pytest.mark.parametrize("n_rows", [2, 9])
def test_few_rows_are_refused_before_spending_where_their_number_is_public(n_rows):
    X, y = small_problem()
    for cls in CLASSES:
        ledger = PrivacyLedger(epsilon=np.inf)
        est = make_estimator(cls, accountant=ledger, epsilon=np.inf)
        if hasattr(est, "epsilon_per_query"):
            est.set_params(epsilon_per_query=np.inf)
        with pytest.raises(ValueError, match=f"n_samples = {n_rows}"):
            fit(est, X[:n_rows], y[:n_rows])
        assert len(ledger) == 0


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
    # a refused query never spends: no new events, same total
    assert len(ledger) == n_events and ledger.epsilon_spent == spent


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_budget_spent_is_recorded_and_within_cap(cls):
    X, y = small_problem()
    ledger = PrivacyLedger()
    est = fit(make_estimator(cls, accountant=ledger, epsilon=1.0, delta=1e-5), X, y)
    if TEST_TABLE[cls].get("spends_on_query"):  # an explainer spends per query, and its
        # row count at fit
        assert [label for label, _ in ledger.events] == [f"{cls.__name__}: row count (Laplace)"]
        getattr(est, TEST_TABLE[cls]["methods"][0])(X[:5])
    assert len(ledger) >= 1
    assert 0 < est.epsilon_spent_ <= 1.0
    assert est.delta_spent_ <= 1e-5


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bounds, message", [
    ((0, 0), "lower == upper for every feature"),     # main 1dcd84e spent on these
    ((3.0, 3.0), "lower == upper for every feature"),
    ((1, 0), "lower bound must be <="),
    (([0, 0], [1, 1]), "entries but the data have"),
    ((0, np.inf), "finite"),
], ids=str)
def test_bad_bounds_are_refused_before_spending(cls, bounds, message):
    X, y = small_problem()
    ledger = PrivacyLedger()
    est = make_estimator(cls, accountant=ledger, bounds=bounds)
    with pytest.raises(ValueError, match=message):
        fit(est, X, y)
    assert len(ledger) == 0


@pytest.mark.parametrize("cls", [c for c in CLASSES if "classes" in c().get_params()],
                         ids=lambda c: c.__name__)
def test_declared_classes_are_checked_before_spending(cls):
    X, y = small_problem()
    ledger = PrivacyLedger()
    with pytest.raises(ValueError, match="at least two classes"):
        fit(make_estimator(cls, accountant=ledger, classes=[1]), X, y)
    assert len(ledger) == 0
    # a label outside them is the row's own: dropped, not refused (tests/test_refusals.py)
    fit(make_estimator(cls, accountant=ledger, classes=[0, 2]), X, y)
    # declared classes that cover y: no warning about reading them from y
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="classes=None")
        est = fit(make_estimator(cls, accountant=ledger, classes=[1, 0]), X, y)
    np.testing.assert_array_equal(est.classes_, [0, 1])


@pytest.mark.parametrize("mechanism", ["gaussian_mechanism", "laplace_mechanism"])
def test_empty_releases_are_refused_before_spending(mechanism):
    import skdpx.privacy as core

    ledger = PrivacyLedger()
    kwargs = {"delta": 1e-5} if mechanism == "gaussian_mechanism" else {}
    with pytest.raises(ValueError, match="empty"):
        getattr(core, mechanism)([], epsilon=1.0, sensitivity=1.0, ledger=ledger, **kwargs)
    assert len(ledger) == 0


def test_dplime_whose_queries_the_dp_bounds_would_starve_is_refused_before_spending():
    from skdpx.explain import DPLimeExplainer

    X, y = small_problem()
    ledger = PrivacyLedger()
    est = DPLimeExplainer(None, epsilon=1.0, epsilon_per_query=0.9, accountant=ledger)
    with pytest.raises(ValueError, match="leaves less than epsilon_per_query"):
        est.fit(X, y * 2.0 - 1)
    assert len(ledger) == 0
    # declared bounds leave it all to the queries
    DPLimeExplainer(None, epsilon=1.0, epsilon_per_query=0.9, bounds=(-5, 10),
                    accountant=ledger).fit(X, y * 2.0 - 1)
