"""A small DP estimator built only from the privacy core, for the tests.

It exercises what every skdpx estimator must do (validation before any
spend, an EstimatorBudget inside a shared ledger, public bounds, seeded
noise) and so lets the common harness and the ledger tests run before the
four real estimators exist. It is not part of the package.
"""


import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from skdpx.privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    EstimatorBudget,
    calibrate_noise,
    check_bounds,
    check_random_state,
    clip_to_bounds,
    gaussian_event,
)


class DPNearestCentroid(ClassifierMixin, BaseEstimator):
    """Nearest class centroid, the centroids released with one Gaussian mechanism.

    Privacy unit: one training row (add/remove-one). The class labels are
    treated as public (read from y, as diffprivlib's GaussianNB does when no
    classes are given). Released: the per-class sums of the clipped rows and
    the per-class counts, as one vector with L2 sensitivity
    sqrt(R^2 + 1), R the largest row norm the bounds allow.
    """

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, epsilon=1.0, delta=1e-5, bounds=None, accountant=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        lower, upper = check_bounds(self.bounds, X.shape[1], X=X)
        self.bounds_ = (lower, upper)
        X = clip_to_bounds(X, lower, upper)
        radius = float(np.linalg.norm(np.maximum(np.abs(lower), np.abs(upper))))
        sensitivity = np.sqrt(radius**2 + 1.0)
        z = calibrate_noise(self.epsilon, self.delta)
        self.noise_multiplier_ = z
        self.budget_ = EstimatorBudget(
            self.epsilon, self.delta, self.accountant, prefix="DPNearestCentroid: "
        )
        rng = check_random_state(self.random_state)
        k = len(self.classes_)
        with self.budget_.reserve(gaussian_event(z), "class sums and counts"):
            onehot = np.eye(k)[codes]
            stats = np.hstack([onehot.T @ X, onehot.sum(axis=0)[:, None]])
            stats = stats + rng.normal(0.0, z * sensitivity, size=stats.shape)
        sums, counts = stats[:, :-1], np.maximum(stats[:, -1:], 1.0)
        self.centroids_ = clip_to_bounds(sums / counts, lower, upper)
        self.epsilon_spent_ = self.budget_.epsilon_spent
        self.delta_spent_ = self.budget_.delta_spent
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        d = ((X[:, None, :] - self.centroids_[None, :, :]) ** 2).sum(axis=2)
        scores = -d
        return scores[:, 1] - scores[:, 0] if len(self.classes_) == 2 else scores

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        d = ((X[:, None, :] - self.centroids_[None, :, :]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(d, axis=1)]
