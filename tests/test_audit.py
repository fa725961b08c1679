"""Tests for the empirical privacy auditor ``skdpx.privacy._audit``.

The mechanisms are plain numpy, calibrated by the textbook formulas, on a
counting query (values in [0, 1], sensitivity 1) over two datasets that
differ by one row (the neighbour has the row of value 1 removed).
"""

import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdpx.privacy._audit import audit_epsilon

from ._helpers import randomized_response

DATA = np.array([1.0, 0.0, 0.3, 1.0, 0.7, 1.0])
NEIGHBOUR = DATA[1:]  # remove one row: the count changes by 1


def laplace_count(epsilon, noise_factor=1.0):
    """Batched Laplace mechanism on a sum query, scale 1/epsilon."""
    scale = noise_factor / epsilon

    def release(dataset, random_state, n):
        return np.sum(dataset) + random_state.laplace(scale=scale, size=n)

    return release


def laplace_count_single(epsilon, noise_factor=1.0):
    """Same mechanism, one output per call."""
    scale = noise_factor / epsilon

    def release(dataset, random_state):
        return np.sum(dataset) + random_state.laplace(scale=scale)

    return release


def gaussian_count(epsilon, delta, noise_factor=1.0):
    """Batched analytic Gaussian mechanism on a sum query (sensitivity 1)."""
    sigma = noise_factor * dp_accounting.get_sigma_gaussian(epsilon, delta)

    def release(dataset, random_state, n):
        return np.sum(dataset) + random_state.normal(scale=sigma, size=n)

    return release


def max_bound(n_trials, confidence, delta=0.0):
    """Largest bound the audit can return (perfectly separated outputs)."""
    m = n_trials - n_trials // 2
    p_lower = ((1.0 - confidence) / 2.0) ** (1.0 / m)
    if p_lower - delta <= 0.0:
        return 0.0
    return max(0.0, math.log((p_lower - delta) / (1.0 - p_lower)))


# --- sound mechanisms: the bound stays below the claim ---------------------


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_laplace_bound_below_claim(epsilon):
    eps_lb = audit_epsilon(
        laplace_count(epsilon),
        DATA,
        NEIGHBOUR,
        n_trials=20_000,
        batched=True,
        random_state=0,
    )
    assert 0.0 < eps_lb < epsilon
    # the audit has power: the Laplace mechanism is nearly tight
    assert eps_lb > 0.5 * epsilon


def test_laplace_bound_power_at_epsilon_2():
    eps_lb = audit_epsilon(
        laplace_count(2.0),
        DATA,
        NEIGHBOUR,
        n_trials=100_000,
        batched=True,
        random_state=1,
    )
    assert 1.5 < eps_lb < 2.0


def test_gaussian_bound_below_claim():
    epsilon, delta = 1.0, 1e-5
    eps_lb = audit_epsilon(
        gaussian_count(epsilon, delta),
        DATA,
        NEIGHBOUR,
        n_trials=20_000,
        delta=delta,
        batched=True,
        random_state=0,
    )
    assert 0.0 <= eps_lb < epsilon


def test_neighbour_direction_is_also_audited():
    # swapping the two datasets must still find the distinguishing test
    eps_lb = audit_epsilon(
        laplace_count(1.0, noise_factor=0.1),
        NEIGHBOUR,
        DATA,
        n_trials=2_000,
        batched=True,
        random_state=0,
    )
    assert eps_lb > 1.0


def test_asymmetric_mechanism_is_audited_in_both_directions():
    # Bernoulli outputs with P[1] = 0.05 on one dataset and 0.5 on the other:
    # the privacy loss is log(0.5 / 0.05) = 2.3 for the set {1} with the
    # roles of the datasets swapped, but only log(0.95 / 0.5) = 0.64 for the
    # best set the other way round; the audit must find 2.3 in either order.
    def release(dataset, random_state, n):
        return (random_state.random_sample(n) < dataset[0]).astype(float)

    low, high = np.array([0.05]), np.array([0.5])
    for data, neighbour in ((low, high), (high, low)):
        eps_lb = audit_epsilon(release, data, neighbour, n_trials=2_000,
                               batched=True, random_state=0)
        assert 1.5 < eps_lb < math.log(10.0)


def test_identical_datasets_give_zero_or_tiny_bound():
    eps_lb = audit_epsilon(
        laplace_count(1.0),
        DATA,
        DATA.copy(),
        n_trials=20_000,
        batched=True,
        random_state=0,
    )
    assert eps_lb < 0.1


def test_coverage_of_randomized_response():
    # Randomized response is tight: the test {o = 1} has likelihood ratio
    # exactly e^epsilon, so the bound is close to the claim and the audit's
    # confidence is really exercised. At confidence 0.95 at most 5% of the
    # audits may exceed the true epsilon (a naive, unsplit or point-estimate
    # audit would exceed it about half the time).
    epsilon = 1.0
    bounds = np.array(
        [
            audit_epsilon(
                randomized_response(epsilon),
                np.array([1.0]),
                np.array([0.0]),
                n_trials=2_000,
                batched=True,
                random_state=seed,
            )
            for seed in range(300)
        ]
    )
    assert np.mean(bounds > epsilon) <= 0.05
    assert np.mean(bounds) > 0.7  # and the bounds are not trivially small


def test_coverage_under_the_null():
    # Identical datasets: the true epsilon is 0, so any positive bound is a
    # false claim, which may happen with probability at most 1 - confidence.
    # Choosing among thousands of thresholds on the same outputs that are
    # then used for the bounds (no split) exceeds that rate.
    confidence = 0.8

    def release(dataset, random_state, n):
        return np.sum(dataset) + random_state.laplace(size=n)

    bounds = np.array(
        [
            audit_epsilon(release, DATA, DATA.copy(), n_trials=1_000,
                          confidence=confidence, batched=True,
                          random_state=seed)
            for seed in range(300)
        ]
    )
    assert np.mean(bounds > 0.0) <= 1.0 - confidence


def test_randomized_response_bound_approaches_epsilon():
    eps_lb = audit_epsilon(
        randomized_response(1.0),
        np.array([1.0]),
        np.array([0.0]),
        n_trials=200_000,
        batched=True,
        random_state=0,
    )
    assert 0.95 < eps_lb < 1.0


# --- broken mechanisms: the bound exceeds the claim ------------------------


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_broken_laplace_is_caught(epsilon):
    eps_lb = audit_epsilon(
        laplace_count(epsilon, noise_factor=0.1),
        DATA,
        NEIGHBOUR,
        n_trials=20_000,
        batched=True,
        random_state=0,
    )
    assert eps_lb > epsilon


def test_broken_gaussian_is_caught():
    epsilon, delta = 1.0, 1e-5
    eps_lb = audit_epsilon(
        gaussian_count(epsilon, delta, noise_factor=0.1),
        DATA,
        NEIGHBOUR,
        n_trials=20_000,
        delta=delta,
        batched=True,
        random_state=0,
    )
    assert eps_lb > epsilon


def test_mildly_broken_randomized_response_is_caught():
    # claims epsilon 1 but flips with the probability of epsilon 1.5
    eps_lb = audit_epsilon(
        randomized_response(1.5),
        np.array([1.0]),
        np.array([0.0]),
        n_trials=20_000,
        batched=True,
        random_state=0,
    )
    assert eps_lb > 1.0


def test_bound_is_capped_by_the_number_of_trials():
    # a deterministic (non-private) release reaches the cap exactly
    def release(dataset, random_state, n):
        return np.full(n, np.sum(dataset))

    for n_trials in (10, 11, 1_000):
        for delta in (0.0, 0.1, 0.5):
            eps_lb = audit_epsilon(
                release, DATA, NEIGHBOUR, n_trials=n_trials, delta=delta,
                batched=True, random_state=0,
            )
            assert eps_lb == pytest.approx(max_bound(n_trials, 0.95, delta))
    # delta is subtracted from the probability under the first dataset
    assert max_bound(1_000, 0.95, 0.5) < max_bound(1_000, 0.95)
    assert max_bound(1_000, 0.95) < math.log(1_000)


# --- batched and unbatched paths, statistics -------------------------------


def test_batched_and_unbatched_paths_agree():
    # legacy RandomState draws the same stream one by one or vectorised,
    # so both paths see the same outputs and return the same bound
    for noise_factor in (1.0, 0.1):
        looped = audit_epsilon(
            laplace_count_single(1.0, noise_factor),
            DATA,
            NEIGHBOUR,
            n_trials=2_000,
            random_state=3,
        )
        batched = audit_epsilon(
            laplace_count(1.0, noise_factor),
            DATA,
            NEIGHBOUR,
            n_trials=2_000,
            batched=True,
            random_state=3,
        )
        assert looped == pytest.approx(batched)


def test_batched_and_unbatched_paths_agree_in_distribution():
    # a mechanism whose two paths consume the random stream differently
    def single(dataset, random_state):
        random_state.random_sample()  # an extra draw per call
        return np.sum(dataset) + random_state.laplace()

    def broken_single(dataset, random_state):
        random_state.random_sample()
        return np.sum(dataset) + random_state.laplace(scale=0.1)

    sound = [
        audit_epsilon(single, DATA, NEIGHBOUR, n_trials=2_000, random_state=s)
        for s in range(3)
    ]
    broken = [
        audit_epsilon(
            broken_single, DATA, NEIGHBOUR, n_trials=2_000, random_state=s
        )
        for s in range(3)
    ]
    sound_batched = [
        audit_epsilon(
            laplace_count(1.0), DATA, NEIGHBOUR, n_trials=2_000, batched=True,
            random_state=s,
        )
        for s in range(3)
    ]
    assert max(sound) < 1.0 and max(sound_batched) < 1.0
    assert min(sound) > 0.3 and min(sound_batched) > 0.3
    assert min(broken) > 1.0


def test_array_outputs_and_statistic():
    def release(dataset, random_state):
        noisy = np.sum(dataset) + random_state.laplace(scale=0.1)
        return np.array([[noisy, 0.0]])

    # default statistic: first element of the raveled output
    default = audit_epsilon(
        release, DATA, NEIGHBOUR, n_trials=500, random_state=0
    )
    assert default > 1.0
    # a useless statistic (a constant) cannot distinguish anything
    useless = audit_epsilon(
        release, DATA, NEIGHBOUR, n_trials=500, random_state=0,
        statistic=lambda out: out[0, 1],
    )
    assert useless == 0.0


def test_batched_array_outputs_and_statistic():
    def release(dataset, random_state, n):
        noisy = np.sum(dataset) + random_state.laplace(scale=0.1, size=n)
        return np.column_stack([noisy, np.zeros(n)])

    default = audit_epsilon(
        release, DATA, NEIGHBOUR, n_trials=500, batched=True, random_state=0
    )
    with_statistic = audit_epsilon(
        release, DATA, NEIGHBOUR, n_trials=500, batched=True, random_state=0,
        statistic=lambda out: -out[0],
    )
    assert default > 1.0 and with_statistic > 1.0


# --- reproducibility --------------------------------------------------------


def test_reproducible_for_a_seed():
    kwargs = dict(n_trials=1_000, batched=True)
    first = audit_epsilon(laplace_count(1.0), DATA, NEIGHBOUR,
                          random_state=42, **kwargs)
    second = audit_epsilon(laplace_count(1.0), DATA, NEIGHBOUR,
                           random_state=42, **kwargs)
    from_state = audit_epsilon(laplace_count(1.0), DATA, NEIGHBOUR,
                               random_state=np.random.RandomState(42),
                               **kwargs)
    assert first == second == from_state
    others = {
        audit_epsilon(laplace_count(1.0), DATA, NEIGHBOUR, random_state=s,
                      **kwargs)
        for s in range(5)
    }
    assert len(others) > 1


def test_generator_and_none_random_states():
    kwargs = dict(n_trials=1_000, batched=True)
    from_generator = [
        audit_epsilon(laplace_count(1.0), DATA, NEIGHBOUR,
                      random_state=np.random.default_rng(5), **kwargs)
        for _ in range(2)
    ]
    assert from_generator[0] == from_generator[1]
    fresh = audit_epsilon(laplace_count(1.0), DATA, NEIGHBOUR,
                          random_state=None, **kwargs)
    assert 0.0 <= fresh <= max_bound(1_000, 0.95)  # not seeded: no tighter check
    with pytest.raises(ValueError, match="random_state"):
        audit_epsilon(laplace_count(1.0), DATA, NEIGHBOUR,
                      random_state="seed", **kwargs)


def test_unbatched_reproducible_for_a_seed():
    runs = [
        audit_epsilon(laplace_count_single(1.0), DATA, NEIGHBOUR,
                      n_trials=200, random_state=7)
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


# --- argument validation ----------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_trials=9), "at least 10"),
        (dict(n_trials=0), "at least 10"),
        (dict(n_trials=100.0), "integer"),
        (dict(n_trials=True), "integer"),
        (dict(n_trials="100"), "integer"),
        (dict(n_trials=100, confidence=0.0), "confidence"),
        (dict(n_trials=100, confidence=1.0), "confidence"),
        (dict(n_trials=100, confidence=-0.5), "confidence"),
        (dict(n_trials=100, confidence="high"), "confidence"),
        (dict(n_trials=100, delta=-0.1), "delta"),
        (dict(n_trials=100, delta=1.0), "delta"),
        (dict(n_trials=100, delta=None), "delta"),
        (dict(n_trials=100, statistic="mean"), "statistic"),
    ],
)
def test_argument_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        audit_epsilon(laplace_count_single(1.0), DATA, NEIGHBOUR, **kwargs)


def test_numpy_integer_n_trials_is_accepted():
    eps_lb = audit_epsilon(laplace_count_single(1.0), DATA, NEIGHBOUR,
                           n_trials=np.int64(50), random_state=0)
    assert eps_lb >= 0.0


def test_release_must_be_callable():
    with pytest.raises(ValueError, match="release"):
        audit_epsilon("laplace", DATA, NEIGHBOUR, n_trials=100)


def test_bad_outputs_are_rejected():
    def wrong_count(dataset, random_state, n):
        return random_state.laplace(size=n - 1)

    def nan_output(dataset, random_state):
        return np.nan

    def empty_output(dataset, random_state):
        return np.array([])

    def release(dataset, random_state):
        return random_state.laplace(size=3)

    with pytest.raises(ValueError, match="outputs"):
        audit_epsilon(wrong_count, DATA, NEIGHBOUR, n_trials=100,
                      batched=True)
    with pytest.raises(ValueError, match="NaN"):
        audit_epsilon(nan_output, DATA, NEIGHBOUR, n_trials=100)
    with pytest.raises(ValueError, match="empty"):
        audit_epsilon(empty_output, DATA, NEIGHBOUR, n_trials=100)
    with pytest.raises(ValueError, match="scalar"):
        audit_epsilon(release, DATA, NEIGHBOUR, n_trials=100,
                      statistic=lambda out: out[:2])


# --- properties -------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    n_trials=st.integers(min_value=10, max_value=400),
    confidence=st.floats(min_value=0.5, max_value=0.999),
    delta=st.floats(min_value=0.0, max_value=0.5),
    shift=st.floats(min_value=-5.0, max_value=5.0),
    scale=st.sampled_from([0.0, 0.01, 0.5, 3.0]),
    noise=st.sampled_from(["laplace", "normal", "integers"]),
    seed=st.integers(min_value=0, max_value=2**31 - 1),
)
def test_bound_is_within_zero_and_the_cap(
    n_trials, confidence, delta, shift, scale, noise, seed
):
    # Whatever the mechanism, even a non-private one, the bound lies in
    # [0, cap], where the cap depends only on n_trials, confidence and delta;
    # outputs that are perfectly separated reach it.
    def release(dataset, random_state, n):
        if noise == "integers":
            draws = random_state.randint(-3, 4, size=n).astype(float)
        else:
            draws = getattr(random_state, noise)(size=n)
        return shift * dataset[0] + scale * draws

    cap = max_bound(n_trials, confidence, delta)
    eps_lb = audit_epsilon(
        release, np.array([1.0]), np.array([0.0]), n_trials=n_trials,
        confidence=confidence, delta=delta, batched=True, random_state=seed,
    )
    assert 0.0 <= eps_lb <= cap + 1e-9
    if scale == 0.0 and shift != 0.0:
        # selection on the first half can only miss the cap if even a
        # perfect test on it cannot beat delta
        n_select = n_trials // 2
        alpha = (1.0 - confidence) / 2.0
        if alpha ** (1.0 / n_select) > delta:
            assert eps_lb == pytest.approx(cap)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**31 - 1),
    n_trials=st.integers(min_value=10, max_value=300),
    slope=st.integers(min_value=1, max_value=8),
    offset=st.integers(min_value=-10, max_value=10),
)
def test_bound_is_invariant_to_increasing_statistics(
    seed, n_trials, slope, offset
):
    # The threshold tests only use the order of the outputs, so an
    # increasing post-processing of the statistic leaves the audit unchanged
    # (integer-valued outputs keep the transform exact in floating point).
    def release(dataset, random_state):
        return dataset[0] + random_state.randint(-2, 3)

    kwargs = dict(n_trials=n_trials, random_state=seed)
    plain = audit_epsilon(release, np.array([1.0]), np.array([0.0]), **kwargs)
    transformed = audit_epsilon(
        release, np.array([1.0]), np.array([0.0]),
        statistic=lambda o: slope * o**3 + offset, **kwargs,
    )
    assert plain == transformed
