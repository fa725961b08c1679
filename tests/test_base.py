"""skdpx.base: a fifth estimator written from the hooks alone.

``_DPClassMeans`` is defined here and nowhere else (no table, no list, no
registration): the common checks, a private search over one of its
parameters and the pricing all take it as they take the four. It is the
example of doc/contributing.rst.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks
from sklearn.utils.validation import check_is_fitted

from skdpx.base import DPCapabilities, DPEstimator, FitData
from skdpx.model_selection import DPGridSearchCV, get_dp_scorer, price_search
from skdpx.model_selection._scorers import DPAccuracy, DPCounterfactualScore
from skdpx.privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    PrivacyLedger,
    SpendPlan,
    calibrate_noise,
    check_classes,
    clip_to_bounds,
    fill_nonfinite,
    gaussian_event,
    gaussian_release,
)
from skdpx.utils._tables import validate_table

from ._estimators import TEST_TABLE, make_estimator, small_problem
from .test_common import _expected_failed_checks

pytestmark = pytest.mark.filterwarnings("ignore::skdpx.privacy.PrivacyLeakWarning")


# --- the fifth estimator: the three hooks, and its own methods -------------------------
class _DPClassMeans(ClassifierMixin, DPEstimator):
    """Nearest DP class mean: the per-class sums of the clipped rows and the counts,
    released as one Gaussian vector; ``shrink`` pulls the means to the bounds' centre
    (post-processing, so a search may tune it for free)."""

    _parameter_constraints = {**BUDGET_PARAMETER_CONSTRAINTS, "shrink": [float, int]}

    def __init__(self, shrink=0.0, epsilon=1.0, delta=1e-5, bounds=None, accountant=None,
                 random_state=None):
        self.shrink = shrink
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.accountant = accountant
        self.random_state = random_state

    def _validate_fit(self, X, y):
        X, y = validate_table(self, X, y, reset=True, accept_sparse=False)
        with warnings.catch_warnings():  # the label set read from y (public here)
            warnings.simplefilter("ignore")
            classes, codes = check_classes(None, y)
        return FitData(X, codes, classes)

    def _plan_spend(self, data, relation, bounds, count):
        z = calibrate_noise(self.epsilon, self.delta, prior=count.prior(bounds.event))
        return SpendPlan(gaussian_event(z), "class sums and counts", noise_multiplier=z)

    def _private_fit(self, data, plan, commitment, noise):
        lower, upper = plan.bounds.release(data.X, noise=noise, commitment=commitment)
        X = clip_to_bounds(fill_nonfinite(data.X, lower, upper), lower, upper)
        # one row moves its class's sum by at most its norm, and its count by 1
        # (add-or-remove); it moves out of one class and into another (replace-one)
        radius = float(np.linalg.norm(np.maximum(np.abs(lower), np.abs(upper))))
        factor = math.sqrt(2) if plan.bounds.relation == "replace_one" else 1.0
        onehot = np.eye(len(data.classes))[data.y] * (data.y >= 0)[:, None]
        stats = gaussian_release(np.hstack([onehot.T @ X, onehot.sum(axis=0)[:, None]]),
                                 noise_multiplier=plan.noise_multiplier,
                                 sensitivity=factor * math.sqrt(radius**2 + 1.0),
                                 noise=noise, commitment=commitment)
        means = stats[:, :-1] / np.maximum(stats[:, -1:], 1.0)
        centre = (lower + upper) / 2
        self.classes_, self.bounds_ = data.classes, (lower, upper)
        self.means_ = clip_to_bounds(centre + (1 - self.shrink) * (means - centre), lower, upper)

    def decision_function(self, X):
        check_is_fitted(self)
        X = fill_nonfinite(validate_table(self, X, reset=False, accept_sparse=False),
                           *self.bounds_)
        scores = -((X[:, None, :] - self.means_[None]) ** 2).sum(axis=2)
        return scores[:, 1] - scores[:, 0] if len(self.classes_) == 2 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value: the bounds' midpoint
        tags.input_tags.string = True  # a cell that is not a number: missing
        return tags


# --- scikit-learn's common checks, as tests/test_common.py runs them on the four --------
@parametrize_with_checks([make_estimator(_DPClassMeans)],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_check_param_validation():
    check_param_validation("_DPClassMeans", make_estimator(_DPClassMeans))


def test_its_test_entry_is_derived_from_the_class():
    entry = TEST_TABLE[_DPClassMeans]
    assert entry["supervised"] and not entry["spends_on_query"]
    assert entry["methods"] == ["predict", "decision_function"]
    assert entry["params"] == {"epsilon": 50.0, "delta": 1e-5, "bounds": (-10.0, 10.0),
                               "random_state": 0}
    with pytest.raises(KeyError):
        TEST_TABLE[BaseEstimator]  # only a DP estimator's entry can be derived


# --- the private search, its price, and scikit-learn's searches priced -------------------
def test_a_private_search_tunes_it_within_its_budget():
    X, y = small_problem(n_samples=400)
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    search = DPGridSearchCV(_DPClassMeans(bounds=(-10.0, 10.0)), {"shrink": [0.0, 0.5]},
                            epsilon=2.0, delta=1e-5, cv=0.25, accountant=ledger,
                            random_state=0)
    plan = search.price(X, y, n_rows=400)  # a public estimate of the count
    assert 0 < plan.epsilon <= 2.0
    search.fit(X, y)
    assert search.best_params_["shrink"] in (0.0, 0.5)
    assert isinstance(search.best_estimator_, _DPClassMeans)
    assert ledger.epsilon_spent <= 2.0 + 1e-9
    assert search.score(X, y) > 0.8  # the classes are 3 standard deviations apart
    # the default scorer of a classifier: DP accuracy
    assert isinstance(get_dp_scorer(None, _DPClassMeans()), DPAccuracy)


def test_its_fits_are_priced_exactly_where_the_rows_are_public():
    X, y = small_problem(n_samples=100)
    ledger = PrivacyLedger(epsilon=50.0, delta=1e-3, relation="replace_one")
    search = GridSearchCV(_DPClassMeans(bounds=(-10.0, 10.0), epsilon=1.0,
                                        accountant=ledger), {"shrink": [0.0, 0.5]}, cv=2)
    price = price_search(search, X, y)
    assert all(fit.exact for fit in price.fits)  # the default capability: exact_price
    assert price.epsilon > 1.0  # 2 candidates x 2 folds + a refit, composed


# --- what the base enforces ---------------------------------------------------------------
def test_a_subclass_missing_a_hook_fails_at_instantiation():
    class _NoFit(ClassifierMixin, DPEstimator):
        def _validate_fit(self, X, y):
            return FitData(X)

        def _plan_spend(self, data, relation, bounds, count):
            return SpendPlan(gaussian_event(1.0), "one release")

    with pytest.raises(TypeError, match="_private_fit"):
        _NoFit()


def test_validate_fit_must_return_fit_data():
    class _Tuple(_DPClassMeans):
        def _validate_fit(self, X, y):
            return tuple(vars(super()._validate_fit(X, y)).values())

    X, y = small_problem()
    with pytest.raises(TypeError, match="must return a skdpx.base.FitData"):
        _Tuple(bounds=(-10.0, 10.0)).fit(X, y)


def test_a_plan_not_all_drawn_is_an_internal_error():
    class _Skips(_DPClassMeans):
        def _private_fit(self, data, plan, commitment, noise):
            plan.bounds.release(data.X, noise=noise, commitment=commitment)
            self.classes_ = data.classes  # the planned release is never made

    X, y = small_problem()
    ledger = PrivacyLedger()
    with pytest.raises(RuntimeError, match="class sums and counts.*never made"):
        _Skips(bounds=(-10.0, 10.0), accountant=ledger).fit(X, y)
    assert ledger.epsilon_spent > 0  # committed before: nothing is refunded


def test_capabilities_are_declared_and_checked_at_class_creation():
    with pytest.raises(TypeError, match="_plan_queries"):
        class _Answers(_DPClassMeans):
            _dp_capabilities = DPCapabilities(answers_queries=True)

    with pytest.raises(TypeError, match="release"):
        class _Keeps(_DPClassMeans):
            _dp_capabilities = DPCapabilities(holds_private_rows=True)

    with pytest.raises(TypeError, match="DPCapabilities"):
        class _Loose(_DPClassMeans):
            _dp_capabilities = {"exact_price": True}

    class _Counterfactuals(_DPClassMeans):
        _dp_capabilities = DPCapabilities(default_scoring="counterfactual")

    assert isinstance(get_dp_scorer(None, _Counterfactuals()), DPCounterfactualScore)


def test_the_four_declare_their_capabilities():
    from skdpx import (DPCounterfactualGenerator, DPLimeExplainer, DPLocallyLinearClassifier,
                       PrivRecourse)

    caps = {cls.__name__: cls._dp_capabilities for cls in (
        DPCounterfactualGenerator, DPLimeExplainer, DPLocallyLinearClassifier, PrivRecourse)}
    assert [name for name, c in caps.items() if c.exact_price] == [
        "DPCounterfactualGenerator", "DPLocallyLinearClassifier", "PrivRecourse"]
    assert [name for name, c in caps.items() if c.answers_queries] == ["DPLimeExplainer"]
    assert [name for name, c in caps.items() if c.holds_private_rows] == ["DPLimeExplainer"]
    assert caps["DPCounterfactualGenerator"].default_scoring == "counterfactual"
    assert caps["PrivRecourse"].default_scoring == "recourse"
    with pytest.raises(ValueError, match="DPLimeExplainer has no default DP scoring"):
        get_dp_scorer(None, DPLimeExplainer())
