"""The per-class table of test parameters that the common tests run over.

Each estimator of skdpx has one entry (imbalanced-learn style): the
parameters that make scikit-learn's common checks fast and meaningful, how to
fit it on a small problem, and which methods use a fitted estimator.
A DP estimator without an entry gets one derived from its class
(:func:`derived_entry`: the budget parameters that make the checks fast,
whether it needs ``y`` from its tags, its methods, whether it spends on
queries from its capabilities), so a new estimator written from
``skdpx.base.DPEstimator``'s hooks needs no entry; an entry here tunes it.
Any other estimator of the package needs one
(``test_every_estimator_has_test_parameters``).
"""

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import get_tags

from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.explain import DPLimeExplainer, DPShapExplainer
from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.model_selection import DPGridSearchCV, DPRandomSearchCV
from skdpx.preprocessing import PublicSchemaEncoder
from skdpx.base import DPEstimator
from skdpx.recourse import PrivRecourse
from skdpx.utils.discovery import all_estimators

from ._reference import DPNearestCentroid

#: What a DP estimator without an entry is checked with (its own parameters of these).
DP_TEST_PARAMS = {"epsilon": 50.0, "delta": 1e-5, "bounds": (-10.0, 10.0), "random_state": 0}

class RowMean(RegressorMixin, BaseEstimator):
    """A black box for any number of columns (the common checks vary it): the row's mean."""

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        if hasattr(X, "toarray"):  # CSR rows (a sparse fit's records)
            X = X.toarray()
        return np.asarray(X, dtype=float).mean(axis=1)


#: The methods a fitted estimator is asked, when it has them.
FITTED_METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function",
                  "transform", "explain")


def derived_entry(cls):
    """The test entry of a DP estimator class that has none, from the class alone."""
    if not (isinstance(cls, type) and issubclass(cls, DPEstimator)):
        raise KeyError(cls)
    names = cls().get_params(deep=False)
    return {"params": {k: v for k, v in DP_TEST_PARAMS.items() if k in names},
            "supervised": get_tags(cls()).target_tags.required,
            "methods": [m for m in FITTED_METHODS if callable(getattr(cls, m, None))],
            "spends_on_query": cls._dp_capabilities.answers_queries}


class _Table(dict):
    """class -> entry; a DP estimator without one gets :func:`derived_entry`."""

    def __missing__(self, cls):
        return derived_entry(cls)


# class -> {"params": constructor parameters for the checks,
#           "supervised": whether fit needs y,
#           "methods": methods to call on fitted estimators,
#           "spends_on_query": (optional) the budget is spent by the methods, not fit}
TEST_TABLE = _Table({
    DPCounterfactualGenerator: {
        "params": {"epsilon": 50.0, "delta": 1e-5, "latent_dim": 1, "max_iter": 20,
                   "bounds": (-10.0, 10.0), "random_state": 0},
        "supervised": True,
        "methods": ["transform", "explain"],
    },
    DPLimeExplainer: {
        "params": {"epsilon": 1e3, "delta": 1e-5, "epsilon_per_query": 0.5, "max_iter": 20,
                   "bounds": (-10.0, 10.0), "random_state": 0},
        "supervised": True,
        "methods": ["transform", "explain"],
        "spends_on_query": True,
    },
    # batch_size above every check's row count: full-batch DP-SGD (sample rate 1),
    # calibrated exactly; a subsampled plan costs a PLD calibration (seconds) for
    # each row count the checks fit on
    DPLocallyLinearClassifier: {
        "params": {"n_maps": 2, "epsilon": 5.0, "delta": 1e-5, "bounds": (-10.0, 10.0),
                   "batch_size": 1000, "epochs": 30, "random_state": 0},
        "supervised": True,
        "methods": ["predict", "predict_proba", "predict_log_proba", "decision_function",
                    "explain"],
    },
    PrivRecourse: {
        "params": {"n_clusters": 8, "epsilon": 50.0, "delta": 1e-5, "bounds": (-10.0, 10.0),
                   "random_state": 0},
        "supervised": True,
        "methods": ["transform", "explain"],
    },
    # a black box that takes any number of columns; few points and coalitions: fast
    DPShapExplainer: {
        "params": {"estimator": RowMean(), "n_background": 3, "n_coalitions": 16,
                   "epsilon": 5000.0, "delta": 1e-5, "bounds": (-10.0, 10.0), "random_state": 0},
        "supervised": False,
        "methods": ["explain"],
    },
    PublicSchemaEncoder: {
        "params": {"bounds": (-10.0, 10.0)},
        "supervised": False,
        "methods": ["transform"],
    },
    # the private searches, over the classifier above (full batch: fast plans)
    DPGridSearchCV: {
        "params": {"estimator": DPLocallyLinearClassifier(bounds=(-10.0, 10.0), batch_size=1000,
                                                          epochs=30),
                   "param_grid": {"n_maps": [1, 2]}, "epsilon": 10.0, "delta": 1e-5,
                   "cv": 0.1, "random_state": 0},
        "supervised": True,
        "methods": ["predict", "predict_proba", "decision_function"],
    },
    DPRandomSearchCV: {
        "params": {"estimator": DPLocallyLinearClassifier(bounds=(-10.0, 10.0), batch_size=1000,
                                                          epochs=30),
                   "param_distributions": {"learning_rate": [0.3, 1.0]}, "n_iter": 2,
                   "epsilon": 10.0, "delta": 1e-5, "cv": 0.1, "random_state": 0},
        "supervised": True,
        "methods": ["predict", "predict_proba", "decision_function"],
    },
    DPNearestCentroid: {
        "params": {"epsilon": 50.0, "delta": 1e-5, "bounds": (-10.0, 10.0), "random_state": 0},
        "supervised": True,
        "methods": ["predict", "decision_function"],
    },
})


def estimator_classes(dp_only=False):
    """The package's estimators, then the test-only reference estimator.

    ``dp_only``: only those that spend a privacy budget (DPEstimator's).
    """
    classes = [cls for _, cls in all_estimators()] + [DPNearestCentroid]
    return [c for c in classes if issubclass(c, DPEstimator)] if dp_only else classes


def make_estimator(cls, **overrides):
    params = dict(TEST_TABLE[cls]["params"])
    params.update(overrides)
    return cls(**params)


def small_problem(n_samples=60, n_features=4, seed=0):
    """A small, well-separated binary problem inside the test bounds."""
    rng = np.random.RandomState(seed)
    y = np.arange(n_samples) % 2
    X = rng.normal(size=(n_samples, n_features)) + 3.0 * y[:, None]
    return X, y


def fit(estimator, X, y):
    if TEST_TABLE[type(estimator)]["supervised"]:
        return estimator.fit(X, y)
    return estimator.fit(X)
