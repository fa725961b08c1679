"""Small helpers several test files share (one copy each)."""

import math
from pathlib import Path
import subprocess
import sys
import warnings

import numpy as np

from skdpx.privacy import noise_source


def audit_gaussian(values, noise_multiplier, sensitivity, delta, n_trials=20000):
    """audit_gdp's epsilon of the privacy core's Gaussian release of the exact values
    ``values["data"]`` against ``values["neighbour"]`` (one row apart), each run
    projected on their difference (the likelihood-ratio statistic)."""
    from skdpx.privacy import Commitment, GDPAuditWarning, audit_gdp, gaussian_event
    from skdpx.privacy import gaussian_release

    direction = (values["data"] - values["neighbour"]).ravel()
    direction = direction / np.linalg.norm(direction)
    z = noise_multiplier

    def release(dataset, random_state, n):
        noise = noise_source(random_state)
        commitment = Commitment(gaussian_event(z, steps=n), "audit")
        out = np.stack([gaussian_release(values[dataset], noise_multiplier=z,
                                         sensitivity=sensitivity, noise=noise,
                                         commitment=commitment) for _ in range(n)])
        return out.reshape(n, -1) @ direction

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", GDPAuditWarning)
        return audit_gdp(release, "data", "neighbour", n_trials=n_trials, delta=delta,
                         batched=True, random_state=0).epsilon


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


def recorded_gradients(explainer, Z, labels, noise, commitment):
    """Run a fitted DPLimeExplainer's DP gradient descent on the queries ``Z``:
    ``(released, phi)``, the noisy gradients it released (one array per step, in
    order) and its answers (an audit's view of an answer's releases)."""
    from skdpx.explain import _dpgd

    released, real = [], _dpgd.noisy_gradient

    def recording(*args, **kwargs):
        released.append(real(*args, **kwargs))
        return released[-1]

    _dpgd.noisy_gradient = recording
    try:
        phi, _ = explainer._dpgd(Z, labels, noise, commitment)
    finally:
        _dpgd.noisy_gradient = real
    return np.array(released), phi


def randomized_response(epsilon):
    """Batched randomized response on a one-row dataset holding a bit (an audit's release)."""
    p_truth = math.exp(epsilon) / (1.0 + math.exp(epsilon))

    def release(dataset, random_state, n):
        keep = random_state.random_sample(n) < p_truth
        return np.where(keep, dataset[0], 1.0 - dataset[0])

    return release


class CountingEstimator:
    """Wraps a classifier and records the rows passed to predict."""

    def __init__(self, clf):
        self.clf, self.seen = clf, []

    def predict(self, X):
        self.seen.append(np.array(X))
        return self.clf.predict(X)


def run_python(code, *args, timeout=120):
    """Run ``code`` in a fresh interpreter (another process) from the project's root,
    return its stdout."""
    result = subprocess.run([sys.executable, "-c", code, *map(str, args)],
                            cwd=Path(__file__).resolve().parents[1],
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return result.stdout
