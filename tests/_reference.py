"""A small DP estimator built only from the privacy core, for the tests.

It exercises what every skdpx estimator must do (validation before any
spend, the spend planned and committed before the data are read, a ledger
inside a shared one, public bounds, noise only from the core) and so lets the
common harness and the ledger tests run on the smallest possible estimator.
It is not part of the package.
"""


import math
import warnings

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from skdpx.base import DPEstimator, FitData
from skdpx.privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    SpendPlan,
    calibrate_noise,
    check_classes,
    clip_to_bounds,
    fill_nonfinite,
    gaussian_event,
    gaussian_release,
)
from skdpx.utils._tables import validate_table


class SmallDP(DPEstimator):
    """The base of the tests' small DP estimators: the five budget parameters and, unless
    overridden, a fit that takes the rows as floats as they are (no schema, no labels).

    A subclass lists its own parameters first, then these five, in its own
    ``__init__`` (scikit-learn reads the parameters from its signature) and
    passes these five on; it writes the plan and the private fit.
    """

    def __init__(self, epsilon=1.0, delta=1e-5, bounds=(0.0, 1.0), accountant=None,
                 random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.accountant = accountant
        self.random_state = random_state

    def _validate_fit(self, X, y):
        X = np.asarray(X, dtype=float)
        self.n_features_in_ = X.shape[1]
        return FitData(X)


class DPNearestCentroid(ClassifierMixin, SmallDP):
    """Nearest class centroid, the centroids released with one Gaussian mechanism.

    The class labels are treated as public (read from y, as diffprivlib's
    GaussianNB does when no classes are given). As every skdpx estimator, it
    refuses a private row for no value of it: a missing cell is the bounds'
    midpoint, a row without a usable label is dropped. Released: the per-class sums
    of the clipped rows and the per-class counts, as one vector. One row
    moves it by at most ``sqrt(R^2 + 1)`` in L2 (R the largest row norm the
    bounds allow) under add-or-remove, and by ``sqrt(2 (R^2 + 1))`` under
    replace-one (it leaves one class and joins another).
    """

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, epsilon=1.0, delta=1e-5, bounds=None, accountant=None, random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, bounds=bounds, accountant=accountant,
                         random_state=random_state)

    def _validate_fit(self, X, y):
        X, y = validate_table(self, X, y, reset=True, accept_sparse=False)
        with warnings.catch_warnings():  # (the label set read from y: documented above)
            warnings.simplefilter("ignore")
            classes, codes = check_classes(None, y)
        return FitData(X, codes, classes)

    def _plan_spend(self, data, relation, bounds, count):
        z = calibrate_noise(self.epsilon, self.delta, prior=count.prior(bounds.event))
        return SpendPlan(gaussian_event(z), "class sums and counts", noise_multiplier=z,
                         relation=relation)

    def _private_fit(self, data, plan, commitment, noise):
        X, codes, classes = data.X, data.y, data.classes
        lower, upper = plan.bounds.release(X, noise=noise, commitment=commitment)
        # the sensitivity from the bounds (the event does not depend on it)
        radius = float(np.linalg.norm(np.maximum(np.abs(lower), np.abs(upper))))
        sensitivity = math.sqrt(radius**2 + 1.0) * (
            math.sqrt(2) if plan.relation == "replace_one" else 1)
        X = clip_to_bounds(fill_nonfinite(X, lower, upper), lower, upper)
        onehot = np.eye(len(classes))[codes] * (codes >= 0)[:, None]  # -1: dropped
        stats = np.hstack([onehot.T @ X, onehot.sum(axis=0)[:, None]])
        stats = gaussian_release(stats, noise_multiplier=plan.noise_multiplier,
                                 sensitivity=sensitivity, noise=noise, commitment=commitment)
        sums, counts = stats[:, :-1], np.maximum(stats[:, -1:], 1.0)
        self.classes_ = classes
        self.bounds_ = (lower, upper)
        self.noise_multiplier_ = plan.noise_multiplier
        self.centroids_ = clip_to_bounds(sums / counts, lower, upper)

    def decision_function(self, X):
        check_is_fitted(self)
        X = fill_nonfinite(validate_table(self, X, reset=False, accept_sparse=False),
                            *self.bounds_)
        d = ((X[:, None, :] - self.centroids_[None, :, :]) ** 2).sum(axis=2)
        scores = -d
        return scores[:, 1] - scores[:, 0] if len(self.classes_) == 2 else scores

    def predict(self, X):
        check_is_fitted(self)
        X = fill_nonfinite(validate_table(self, X, reset=False, accept_sparse=False),
                            *self.bounds_)
        d = ((X[:, None, :] - self.centroids_[None, :, :]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(d, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value: the bounds' midpoint
        tags.input_tags.string = True  # a private cell that is not a number: missing
        return tags
