"""bounds=None: DP bounds inside the estimator's epsilon, never the raw extremes."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.explain import DPLimeExplainer
from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.privacy import (
    BOUNDS_SHARE,
    Commitment,
    FitBounds,
    PrivacyLeakWarning,
    PrivacyLedger,
    bounds_bins,
    calibrate_noise,
    gaussian_event,
    histogram_bounds,
    noise_source,
)
from skdpx.privacy._audit import audit_gdp
from skdpx.privacy._bounds import octave_histograms
from skdpx.recourse import PrivRecourse

from ._reference import DPNearestCentroid

X_CANCER, Y_CANCER = load_breast_cancer(return_X_y=True)
X_CANCER, Y_CANCER = X_CANCER[::2, :12], Y_CANCER[::2]  # 285 rows, 12 features: fast


def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


ESTIMATORS = [
    lambda: DPLocallyLinearClassifier(epochs=2, batch_size=1000, classes=[0, 1]),  # full batch
    lambda: PrivRecourse(n_clusters=4, classes=[0, 1]),
    lambda: DPLimeExplainer(estimator=None),
    lambda: DPCounterfactualGenerator(max_iter=5, latent_dim=2, classes=[0, 1]),
    lambda: DPNearestCentroid(),
]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_bounds_none_releases_no_raw_extreme_and_pays_inside_epsilon(make):
    est = make()
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    est.set_params(accountant=ledger, epsilon=1.0)
    y = Y_CANCER * 2.0 - 1 if isinstance(est, DPLimeExplainer) else Y_CANCER
    with pytest.warns(PrivacyLeakWarning, match="bounds=None"):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="(?!bounds=None)")
            est.fit(X_CANCER, y)
    lower, upper = est.bounds_
    # main at 223923f: every bound was the data's exact min or max
    assert not np.any(lower == X_CANCER.min(axis=0))
    assert not np.any(upper == X_CANCER.max(axis=0))
    assert np.all(np.isin(lower, bounds_bins())) and np.all(np.isin(upper, bounds_bins()))
    assert np.all(lower < upper)
    # charged to the ledger, inside the estimator's epsilon
    assert ledger.events[0][0] == f"{type(est).__name__}: row count (Laplace)"
    assert ledger.events[1][0].startswith(f"{type(est).__name__}: DP bounds")
    assert ledger.epsilon_spent <= 1.0 + 1e-6
    assert 0 < est.epsilon_spent_ <= 1.0 + 1e-6  # (at the estimator's own delta)


def test_declared_bounds_cost_nothing_and_do_not_warn():
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        est = DPNearestCentroid(bounds=(0, 3000), accountant=ledger).fit(X_CANCER, Y_CANCER)
    assert [label for label, _ in ledger.events] == ["DPNearestCentroid: row count (Laplace)",
                                                     "DPNearestCentroid: class sums and counts"]
    np.testing.assert_array_equal(est.bounds_[1], np.full(12, 3000.0))


def test_the_rest_of_the_fit_is_calibrated_against_the_bounds():
    # with bounds to estimate, the centroids get less of the same epsilon
    declared = DPNearestCentroid(bounds=(0, 3000), epsilon=1.0).fit(X_CANCER, Y_CANCER)
    ctx = _quiet()
    estimated = DPNearestCentroid(epsilon=1.0).fit(X_CANCER, Y_CANCER)
    ctx.__exit__(None, None, None)
    assert estimated.noise_multiplier_ > declared.noise_multiplier_
    assert estimated.epsilon_spent_ == pytest.approx(1.0, abs=1e-3)


def test_exact_histograms_cover_the_data():
    # noise multiplier 0 (the non-private baseline): the bins of the extremes
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(17, 90, 500), rng.normal(0, 1, 500), np.zeros(500)])
    lower, upper = histogram_bounds(X, noise_multiplier=0.0, relation="add_or_remove",
                                    noise=noise_source(),
                                    commitment=Commitment(gaussian_event(0.0), "exact"))
    assert np.all(lower <= X.min(axis=0)) and np.all(upper > X.max(axis=0))
    assert lower[0] == 16 and upper[0] == 128
    assert upper[1] / lower[1] < 0  # a sign change: the bins of both tails
    assert lower[2] == -(2.0 ** -20) and upper[2] == 2.0 ** -20  # the bin around 0


def test_bounds_find_the_bulk_of_a_large_feature():
    # Adult-like ages at epsilon 1 with many rows: the bulk's octaves
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.uniform(17, 60, 20_000), rng.uniform(0, 1, 20_000)])
    fb = FitBounds(None, 2, epsilon=1.0, delta=1e-5, relation="add_or_remove")
    lower, upper = fb.release(X, noise=noise_source(),
                              commitment=Commitment(fb.event, "bounds"))
    # the bulk's bins pass (counts in the thousands, threshold about 100); an
    # empty bin passes with probability 1%, which could only widen them
    assert lower[0] <= 16 and upper[0] >= 64 and upper[1] >= 1.0


def test_bounds_plan_spends_its_share():
    ctx = _quiet()
    fb = FitBounds(None, 7, epsilon=2.0, delta=1e-5, relation="add_or_remove")
    ctx.__exit__(None, None, None)
    assert fb.noise_multiplier == pytest.approx(calibrate_noise(BOUNDS_SHARE * 2.0, 1e-5))
    assert fb.n_varying == 7 and fb.share == BOUNDS_SHARE


@pytest.mark.parametrize("bounds", [(0, 0), (np.zeros(3), np.zeros(3)), (5.0, 5.0)])
def test_degenerate_bounds_are_refused_before_spending(bounds):
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.arange(40) % 2
    with pytest.raises(ValueError, match="lower == upper for every feature"):
        DPNearestCentroid(bounds=bounds, accountant=ledger).fit(X, y)
    assert len(ledger) == 0


def test_bounds_need_delta():
    with pytest.raises(ValueError, match="needs delta > 0"):
        FitBounds(None, 2, epsilon=1.0, delta=0.0, relation="add_or_remove")


# --------------------------------------------------------------- the audit
# One canary row added: its bins (one per feature) move by 1 each. The sum of
# the noisy counts in the canary's bins moves by d, with noise sd z sqrt(d)
# sqrt(d) = z d: a Gaussian mechanism with mu = 1 / z (add-or-remove). A
# histogram released with half the noise (sensitivity taken as sqrt(d) / 2)
# has mu = 2 / z and must be caught.
D = 4
DATA = np.tile([1.5, 3.0, -0.3, 100.0], (20, 1))
CANARY = np.array([[40.0, -7.0, 0.0, 1e6]])
Z = calibrate_noise(1.0, 1e-5)


def _canary_bins():
    edges = bounds_bins()
    return np.clip(np.searchsorted(edges, CANARY[0], side="right") - 1, 0, len(edges) - 2)


def _release(scale):
    bins = _canary_bins()

    def release(dataset, random_state):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)  # the audit's own seed
            noise = noise_source(random_state)
        z = Z * scale
        noisy = octave_histograms(dataset, noise_multiplier=z, relation="add_or_remove",
                                  noise=noise, commitment=Commitment(gaussian_event(z), "a"))
        return noisy[np.arange(D), bins].sum()

    return release


@pytest.mark.slow
def test_bounds_histograms_audit_below_the_claim():
    audit = audit_gdp(_release(1.0), np.vstack([DATA, CANARY]), DATA, n_trials=4_000,
                      delta=1e-5, random_state=0)
    assert audit.epsilon < 1.0


@pytest.mark.slow
def test_bounds_histograms_with_half_the_noise_are_caught():
    audit = audit_gdp(_release(0.5), np.vstack([DATA, CANARY]), DATA, n_trials=4_000,
                      delta=1e-5, random_state=0)
    assert audit.epsilon > 1.0
