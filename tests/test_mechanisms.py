"""Tests for the single-release mechanisms and validation helpers of ``skdpx.privacy``."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy.stats import chisquare

from skdpx.privacy import (
    BudgetError,
    PrivacyLedger,
    PureDpEvent,
    audit_epsilon,
    audit_gdp,
    check_bounds,
    clip_to_bounds,
    exponential_mechanism,
    gaussian_event,
    gaussian_mechanism,
    laplace_event,
    laplace_mechanism,
    scale_to_bounds,
)

# most of these calls test a mechanism alone, with no ledger on purpose (the warning that
# nothing records them is tested in test_noise_lifetime.py)
pytestmark = pytest.mark.filterwarnings("ignore::skdpx.privacy.UncappedBudgetWarning")


def _same_state(a, b):
    sa, sb = a.get_state(), b.get_state()
    return sa[0] == sb[0] and np.array_equal(sa[1], sb[1]) and sa[2:] == sb[2:]


# --------------------------------------------------------------------------
# Gaussian and Laplace mechanisms
# --------------------------------------------------------------------------
def _gauss(value, **kw):
    return gaussian_mechanism(value, **{"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0, **kw})


def _lap(value, **kw):
    return laplace_mechanism(value, **{"epsilon": 1.0, "sensitivity": 1.0, **kw})


@pytest.mark.parametrize("mech", [_gauss, _lap], ids=["gaussian", "laplace"])
def test_output_shape_and_type(mech):
    out = mech(3.0, random_state=0)
    assert type(out) is float and out != 3.0
    out = mech(np.float32(3.0), random_state=0)
    assert type(out) is float
    out = mech([1.0, 2.0], random_state=0)
    assert isinstance(out, np.ndarray) and out.shape == (2,) and out.dtype == float
    out = mech(np.zeros((3, 4)), random_state=0)
    assert out.shape == (3, 4)
    assert len(np.unique(out)) == 12  # independent noise per entry


@pytest.mark.parametrize("mech", [_gauss, _lap], ids=["gaussian", "laplace"])
def test_same_seed_same_noise(mech):
    np.testing.assert_array_equal(mech(np.zeros(5), random_state=7), mech(np.zeros(5), random_state=7))
    assert not np.array_equal(mech(np.zeros(5), random_state=7), mech(np.zeros(5), random_state=8))
    assert not np.array_equal(mech(np.zeros(5)), mech(np.zeros(5)))
    # a RandomState is used (and advanced), not copied
    rng = np.random.RandomState(0)
    a, b = mech(np.zeros(5), random_state=rng), mech(np.zeros(5), random_state=rng)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize(
    "epsilon, delta, sensitivity", [(1.0, 1e-5, 1.0), (0.3, 1e-6, 2.5), (4.0, 1e-3, 0.1)]
)
def test_gaussian_noise_scale(epsilon, delta, sensitivity):
    out = gaussian_mechanism(np.full(200_000, 5.0), epsilon=epsilon, delta=delta,
                             sensitivity=sensitivity, random_state=0)
    expected = dp_accounting.get_sigma_gaussian(epsilon, delta) * sensitivity
    assert abs(out.std() / expected - 1) < 0.01  # standard error ~0.16%
    assert abs(out.mean() - 5.0) < 5 * expected / math.sqrt(out.size)


@pytest.mark.parametrize("epsilon, sensitivity", [(1.0, 1.0), (0.2, 3.0), (5.0, 0.5)])
def test_laplace_noise_scale(epsilon, sensitivity):
    out = laplace_mechanism(np.full(200_000, -2.0), epsilon=epsilon, sensitivity=sensitivity,
                            random_state=0)
    expected = math.sqrt(2) * sensitivity / epsilon
    assert abs(out.std() / expected - 1) < 0.015  # standard error ~0.25%
    assert abs(out.mean() + 2.0) < 5 * expected / math.sqrt(out.size)
    # Laplace, not Gaussian: mean absolute deviation is the scale b
    np.testing.assert_allclose(np.mean(np.abs(out + 2.0)), sensitivity / epsilon, rtol=0.015)


@pytest.mark.parametrize("mech", [_gauss, _lap], ids=["gaussian", "laplace"])
@pytest.mark.parametrize("value", [np.nan, np.inf, [1.0, -np.inf], [[0.0, np.nan]]])
def test_non_finite_value_raises(mech, value):
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError):
        mech(value, random_state=0, ledger=ledger)
    assert len(ledger) == 0


@pytest.mark.parametrize("epsilon", [0.0, -1.0])
def test_invalid_epsilon_raises(epsilon):
    with pytest.raises(ValueError):
        _gauss(1.0, epsilon=epsilon)
    with pytest.raises(ValueError):
        _lap(1.0, epsilon=epsilon)
    with pytest.raises(ValueError):
        exponential_mechanism([0.0, 1.0], epsilon=epsilon, sensitivity=1.0)


@pytest.mark.parametrize("delta", [0.0, -0.1, 1.5])
def test_invalid_delta_raises(delta):
    with pytest.raises(ValueError):
        _gauss(1.0, delta=delta)


def test_negative_sensitivity_raises():
    with pytest.raises(ValueError):
        _gauss(1.0, sensitivity=-1.0)
    with pytest.raises(ValueError):
        _lap(1.0, sensitivity=-1.0)


@pytest.mark.parametrize("mech", [_gauss, _lap], ids=["gaussian", "laplace"])
def test_nan_epsilon_raises(mech):
    # Regression (when diffprivlib validated): ``epsilon < 0`` lets NaN through.
    # laplace_mechanism then released the exact value (scale NaN is not > 0),
    # and gaussian_mechanism recorded GaussianDpEvent(nan), whose epsilon is
    # 0.0, so the ledger reported nothing spent and accepted any later release.
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError):
        mech(np.array([1.0, 2.0]), epsilon=float("nan"), random_state=0)
    with pytest.raises(ValueError):
        mech(np.array([1.0, 2.0]), epsilon=float("nan"), random_state=0, ledger=ledger)
    assert len(ledger) == 0
    with pytest.raises(BudgetError):
        _gauss(1.0, epsilon=100.0, ledger=ledger)


@pytest.mark.parametrize("mech", [_gauss, _lap], ids=["gaussian", "laplace"])
def test_nan_sensitivity_raises(mech):
    # Regression (when diffprivlib validated): Laplace(sensitivity=nan) passed; the
    # scale is NaN, so laplace_mechanism released the exact value, unrecorded.
    with pytest.raises(ValueError):
        mech(np.array([1.0, 2.0]), sensitivity=float("nan"), random_state=0)


def test_zero_sensitivity_is_refused():
    # issue 36: sensitivity=0 released the exact value and recorded nothing; a value no
    # row can change is public and needs no mechanism, one from private rows must not
    # leave unnoised on a slip
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    for mech in (_gauss, _lap):
        with pytest.raises(ValueError, match="sensitivity must be a finite number > 0"):
            mech(3.0, sensitivity=0.0, ledger=ledger, random_state=0)
    assert len(ledger) == 0


def test_gaussian_release_is_recorded():
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    gaussian_mechanism([1.0, 2.0], epsilon=0.7, delta=1e-5, sensitivity=3.0, random_state=0,
                       ledger=ledger, label="two sums")
    [(label, event)] = ledger.events
    assert label == "two sums"
    assert isinstance(event, dp_accounting.GaussianDpEvent)
    np.testing.assert_allclose(
        event.noise_multiplier, dp_accounting.get_sigma_gaussian(0.7, 1e-5), rtol=1e-9
    )
    eps = ledger.epsilon_spent
    assert 0.69 < eps <= 0.7 * (1 + 1e-9)
    assert ledger.delta_spent == 1e-5


def test_gaussian_release_in_ledger_without_delta_cap():
    # Regression: gaussian_mechanism does not pass its delta to the ledger, so
    # a ledger with no delta cap (the default delta=1.0) raised
    # "this event needs a delta" on every Gaussian release.
    ledger = PrivacyLedger(epsilon=5.0)
    gaussian_mechanism(1.0, epsilon=1.0, delta=1e-6, sensitivity=1.0, random_state=0,
                       ledger=ledger)
    assert len(ledger) == 1
    assert ledger.delta_spent == 1e-6
    np.testing.assert_allclose(ledger.epsilon_spent, 1.0, rtol=1e-6)


def test_laplace_release_is_recorded():
    ledger = PrivacyLedger(epsilon=2.0)
    laplace_mechanism(np.ones(3), epsilon=0.25, sensitivity=2.0, random_state=0, ledger=ledger,
                      label="counts")
    laplace_mechanism(1.0, epsilon=0.5, sensitivity=1.0, random_state=0, ledger=ledger)
    assert ledger.events == [("counts", laplace_event(4.0)), ("laplace", laplace_event(2.0))]
    assert ledger.epsilon_spent == 0.75 and ledger.delta_spent == 0.0


@pytest.mark.parametrize("mech", [_gauss, _lap], ids=["gaussian", "laplace"])
def test_release_over_cap_raises_without_drawing(mech):
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    mech(1.0, epsilon=0.8, random_state=0, ledger=ledger, label="first")
    before = ledger.events
    rng = np.random.RandomState(3)
    reference = np.random.RandomState(3)
    with pytest.raises(BudgetError):
        mech(np.zeros(4), epsilon=0.8, random_state=rng, ledger=ledger, label="second")
    assert ledger.events == before
    assert _same_state(rng, reference)  # no noise was drawn
    # a release that fits still goes through
    mech(1.0, epsilon=0.1, random_state=0, ledger=ledger, label="third")
    assert [label for label, _ in ledger.events] == ["first", "third"]


def test_ledger_total_of_gaussian_releases_is_exact():
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-5)
    for _ in range(4):
        _gauss(0.0, epsilon=1.0, ledger=ledger, random_state=0)
    events = [event for _, event in ledger.events]
    z = events[0].noise_multiplier
    assert events == [gaussian_event(z)] * 4
    np.testing.assert_allclose(z, dp_accounting.get_sigma_gaussian(1.0, 1e-5), rtol=1e-9)
    # four Gaussians with multiplier z are one with z / 2
    np.testing.assert_allclose(
        ledger.epsilon_spent, dp_accounting.get_epsilon_gaussian(z / 2, 1e-5), rtol=1e-9
    )


# --------------------------------------------------------------------------
# Exponential mechanism
# --------------------------------------------------------------------------
def _exp_probs(u, epsilon, sensitivity, monotonic=False):
    s = epsilon * np.asarray(u) / (sensitivity if monotonic else 2 * sensitivity)
    p = np.exp(s - s.max())
    return p / p.sum()


def test_exponential_1d_returns_int():
    out = exponential_mechanism([0.0, 1.0, 2.0], epsilon=1.0, sensitivity=1.0, random_state=0)
    assert type(out) is int and 0 <= out < 3
    assert exponential_mechanism([0.0, 0.0, 50.0], epsilon=1.0, sensitivity=1.0,
                                 random_state=0) == 2
    assert exponential_mechanism([5.0], epsilon=1.0, sensitivity=1.0, random_state=0) == 0


@pytest.mark.slow
@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_1d_distribution(monotonic):
    u = np.array([0.0, 1.0, 2.0, 0.5, -1.0])
    rng = np.random.RandomState(0)
    n = 10_000
    draws = [exponential_mechanism(u, epsilon=1.2, sensitivity=1.0, monotonic=monotonic,
                                   random_state=rng) for _ in range(n)]
    counts = np.bincount(draws, minlength=len(u))
    p = _exp_probs(u, 1.2, 1.0, monotonic)
    assert np.max(np.abs(counts / n - p)) < 0.02  # standard errors <= 0.005
    assert chisquare(counts, n * p).pvalue > 1e-4


@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_2d_distribution_per_row(monotonic):
    rows = np.array([[0.0, 1.0, 2.0, 0.5], [3.0, 0.0, 0.0, 1.0]])
    n = 20_000
    u = np.repeat(rows, n, axis=0)  # n copies of row 0, then n copies of row 1
    out = exponential_mechanism(u, epsilon=0.8, sensitivity=0.5, monotonic=monotonic,
                                random_state=0)
    assert out.shape == (2 * n,) and np.issubdtype(out.dtype, np.integer)
    for r in range(2):
        counts = np.bincount(out[r * n : (r + 1) * n], minlength=4)
        p = _exp_probs(rows[r], 0.8, 0.5, monotonic)
        assert np.max(np.abs(counts / n - p)) < 0.015
        assert chisquare(counts, n * p).pvalue > 1e-4


def test_exponential_2d_seeded():
    u = np.random.RandomState(0).normal(size=(50, 6))
    a = exponential_mechanism(u, epsilon=1.0, sensitivity=1.0, random_state=3)
    b = exponential_mechanism(u, epsilon=1.0, sensitivity=1.0, random_state=3)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_rows", [1, 7])
def test_exponential_2d_ledger_records_n_pure_events(n_rows):
    ledger = PrivacyLedger(epsilon=10.0)
    u = np.zeros((n_rows, 3))
    exponential_mechanism(u, epsilon=0.5, sensitivity=1.0, random_state=0, ledger=ledger,
                          label="choices")
    [(label, event)] = ledger.events
    assert label == "choices"
    expected = PureDpEvent(0.5)
    if n_rows > 1:
        expected = dp_accounting.SelfComposedDpEvent(expected, n_rows)
    assert event == expected
    np.testing.assert_allclose(ledger.epsilon_spent, 0.5 * n_rows, rtol=1e-12)
    assert ledger.delta_spent == 0.0


def test_exponential_over_cap_raises_without_drawing():
    ledger = PrivacyLedger(epsilon=1.0)
    rng, reference = np.random.RandomState(5), np.random.RandomState(5)
    with pytest.raises(BudgetError):
        exponential_mechanism(np.zeros((3, 4)), epsilon=0.5, sensitivity=1.0, random_state=rng,
                              ledger=ledger)
    assert len(ledger) == 0
    assert _same_state(rng, reference)


@pytest.mark.parametrize("utility", [[], np.zeros((2, 0)), np.zeros((2, 2, 2)), [0.0, np.nan]])
def test_exponential_bad_utility_raises(utility):
    with pytest.raises(ValueError):
        exponential_mechanism(utility, epsilon=1.0, sensitivity=1.0)


def test_exponential_bad_sensitivity_raises():
    with pytest.raises(ValueError):
        exponential_mechanism([0.0, 1.0], epsilon=1.0, sensitivity=-1.0)
    with pytest.raises(ValueError):
        exponential_mechanism(np.zeros((2, 2)), epsilon=1.0, sensitivity=-1.0)
    # a zero sensitivity is refused before anything is spent
    ledger = PrivacyLedger(epsilon=1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        exponential_mechanism([0.0, 1.0], epsilon=0.5, sensitivity=0.0, ledger=ledger)
    assert len(ledger) == 0


# --------------------------------------------------------------------------
# Audits
# --------------------------------------------------------------------------
AUDIT_DATA = np.array([1.0, 0.0, 0.3, 1.0, 0.7, 0.5, 0.9, 0.2])
AUDIT_NEIGHBOUR = np.r_[AUDIT_DATA, 1.0]  # adds one row: the sum moves by 1


def _batched(mech, **kw):
    # n independent runs of the scalar release, drawn in one vectorised call
    def release(dataset, random_state, n):
        return mech(np.full(n, dataset.sum()), random_state=random_state, **kw)

    return release


def _secure(mech, **kw):
    # the secure path (OpenDP's exact sampler): the auditor's generator is not used
    def release(dataset, random_state, n):
        return mech(np.full(n, dataset.sum()), random_state=None, **kw)

    return release


@pytest.mark.parametrize("path", [_batched, _secure], ids=["seeded", "secure"])
def test_gaussian_mechanism_audit(path):
    claim, delta = 1.0, 1e-5
    release = path(gaussian_mechanism, epsilon=claim, delta=delta, sensitivity=1.0)
    audit = audit_gdp(release, AUDIT_DATA, AUDIT_NEIGHBOUR, n_trials=20_000, delta=delta,
                      batched=True, random_state=0)
    assert audit.epsilon < claim
    # the audit has power: understating the sensitivity 2x (half the noise) is caught
    broken = path(gaussian_mechanism, epsilon=claim, delta=delta, sensitivity=0.5)
    assert audit_gdp(broken, AUDIT_DATA, AUDIT_NEIGHBOUR, n_trials=20_000, delta=delta,
                     batched=True, random_state=0).epsilon > claim


@pytest.mark.slow
def test_laplace_mechanism_audit():
    claim = 1.0
    release = _batched(laplace_mechanism, epsilon=claim, sensitivity=1.0)
    bound = audit_epsilon(release, AUDIT_DATA, AUDIT_NEIGHBOUR, n_trials=200_000, batched=True,
                          random_state=0)
    assert bound < claim
    assert bound > 0.5  # Laplace is tight for this pair; the audit sees most of it
    broken = _batched(laplace_mechanism, epsilon=claim, sensitivity=0.25)
    assert audit_epsilon(broken, AUDIT_DATA, AUDIT_NEIGHBOUR, n_trials=200_000, batched=True,
                         random_state=0) > claim


# --------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------
def test_check_bounds_broadcasts_scalars():
    lower, upper = check_bounds((0, 1), 3)
    np.testing.assert_array_equal(lower, np.zeros(3))
    np.testing.assert_array_equal(upper, np.ones(3))
    assert lower.dtype == float and lower.shape == (3,)
    lower, upper = check_bounds(([0, -1, 2], 5.0), 3)
    np.testing.assert_array_equal(lower, [0, -1, 2])
    np.testing.assert_array_equal(upper, [5, 5, 5])
    lower, upper = check_bounds([np.array([1.0, 2.0]), np.array([1.0, 3.0])], 2)  # list, equal ok
    np.testing.assert_array_equal(upper, [1.0, 3.0])
    lower[0] = 99  # a copy, writeable
    assert check_bounds((0, 1), 3)[0][0] == 0


@pytest.mark.parametrize(
    "bounds",
    [
        ([0, 0], [1, 1, 1]),
        ([0, 0, 0, 0], 1),
        (0, [1, 1]),
        ((0, 2, 0), (1, 1, 1)),  # lower > upper
        (0, np.inf),
        (np.nan, 1),
        ([0, -np.inf, 0], 1),
        (np.zeros((3, 1)), 1),
        (0, 1, 2),
        "01",
        5.0,
        ("a", "b"),
    ],
)
def test_check_bounds_rejects(bounds):
    with pytest.raises(ValueError):
        check_bounds(bounds, 3)


def test_check_bounds_never_reads_data():
    # bounds=None is the estimators' business (a DP estimate, tests/test_bounds.py)
    with pytest.raises(ValueError, match="declare them"):
        check_bounds(None, 2)
    with pytest.raises(TypeError):
        check_bounds(None, 2, X=np.zeros((3, 2)))  # no way to read them from data


def test_clip_to_bounds():
    X = np.array([[-1.0, 0.5, 9.0], [0.2, 3.0, -9.0]])
    out = clip_to_bounds(X, np.array([0.0, 0.0, -1.0]), np.array([1.0, 2.0, 1.0]))
    np.testing.assert_array_equal(out, [[0.0, 0.5, 1.0], [0.2, 2.0, -1.0]])
    assert out is not X and X[0, 0] == -1.0  # the input is untouched
    np.testing.assert_array_equal(clip_to_bounds([[5]], 0, 1), [[1.0]])


def test_scale_to_bounds():
    lower, upper = np.array([0.0, -2.0, 3.0]), np.array([10.0, 2.0, 3.0])
    X = np.array([[0.0, -2.0, 3.0], [10.0, 2.0, 3.0], [5.0, 0.0, 7.0], [20.0, -5.0, -1.0]])
    out = scale_to_bounds(X, lower, upper)
    np.testing.assert_allclose(out, [[0, 0, 0.5], [1, 1, 0.5], [0.5, 0.5, 0.5], [1, 0, 0.5]])
    out = scale_to_bounds(X, lower, upper, feature_range=(-1.0, 3.0))
    np.testing.assert_allclose(out, [[-1, -1, 1], [3, 3, 1], [1, 1, 1], [3, -1, 1]])
    assert np.all(np.isfinite(out))


def test_exponential_release_at_infinite_epsilon_is_the_argmax():
    from skdpx.privacy import Commitment, NonPrivateDpEvent, exponential_release, noise_source

    u = np.array([[0.0, -1.0, 3.0, 2.0], [5.0, 0.0, -2.0, 1.0]])
    out = exponential_release(u, epsilon=np.inf, sensitivity=1.0, noise=noise_source(),
                              commitment=Commitment(NonPrivateDpEvent(), "baseline"))
    np.testing.assert_array_equal(out, [2, 0])


@pytest.mark.parametrize("bad", [-1, "x", 1.5, object()],
                         ids=["-1", "str", "float", "object"])
def test_a_bad_random_state_is_refused_before_the_spend(bad):
    # (the bad-input benchmark: each of the three mechanisms spent, then refused it)
    from skdpx.privacy import PrivacyLedger, exponential_mechanism, gaussian_mechanism
    from skdpx.privacy import laplace_mechanism

    calls = [
        lambda led: gaussian_mechanism(1.0, epsilon=1.0, delta=1e-5, sensitivity=1.0,
                                       random_state=bad, ledger=led),
        lambda led: laplace_mechanism(1.0, epsilon=1.0, sensitivity=1.0, random_state=bad,
                                      ledger=led),
        lambda led: exponential_mechanism([0.0, 1.0], epsilon=1.0, sensitivity=1.0,
                                          random_state=bad, ledger=led),
    ]
    for call in calls:
        ledger = PrivacyLedger()
        with pytest.raises((ValueError, TypeError)):
            call(ledger)
        assert not ledger.events
