"""Small helpers several test files share (one copy each)."""

import warnings

import numpy as np

from skdpx.privacy import noise_source


def quiet_fit(estimator, X, y=None):
    """``estimator.fit(X, y)`` (``fit(X)`` when ``y`` is None) with its warnings
    (seeds, DP bounds, uncapped ledgers: on purpose in tests) not shown."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X) if y is None else estimator.fit(X, y)


def seeded(seed=0):
    """A reproducible noise source, its PrivacyLeakWarning (a known seed) not shown."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return noise_source(seed)


def uniform_problem(n=200, d=3, seed=0, slope=0.5):
    """``n`` rows uniform in [-1, 1]^d, labelled by ``x0 + slope * x1 > 0``."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    return X, (X[:, 0] + slope * X[:, 1] > 0).astype(int)
