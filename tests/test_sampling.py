"""Tests for the floating-point safe samplers of ``skdpx.privacy._sampling``.

The test with power is Mironov's least-significant-bits attack (CCS 2012) in
simple form. numpy's Laplace sampler returns ``-b * log((2 - u) - u)`` or
``b * log(u + u)`` for ``u`` a multiple of ``2**-53``, so the doubles that
``x + noise`` can take form a sparse, ``x``-dependent set. Knowing the
sampler (not its seed), the attacker replays it: an output ``o`` is
*consistent* with a candidate input ``x`` when some ``u`` gives
``x + noise(u) == o`` exactly (found by bisection, since ``noise`` is
monotone in ``u``). The distinguisher answers the one candidate an output is
consistent with, and flips a fair coin (scored 1/2) when it is consistent
with both or neither. It reads nothing but the low bits: at a noise scale
where differential privacy caps any test's accuracy at
``e**eps / (1 + e**eps)``, it is right about nine times in ten on naive
numpy output and at chance on :func:`exact_laplace`'s.
"""

import math

import numpy as np
import pytest
from scipy import stats

from skdpx.privacy import _sampling
from skdpx.privacy._sampling import exact_gaussian, exact_laplace

from ._helpers import run_python

_2_TO_M53 = 2.0**-53
_Z = 4.0  # width of the binomial bands, in standard errors


# --------------------------------------------------------------------------
# Mironov's attack: replaying numpy's Laplace sampler
# --------------------------------------------------------------------------
def _first_at_least(target, lo, hi, f):
    """Smallest ``i`` in ``[lo, hi]`` with ``f(i) >= target`` (``f`` non-decreasing), or None."""
    if f(hi) < target:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if f(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _numpy_laplace_consistent(o, x, b):
    """Whether ``o == x + rng.laplace(0.0, b)`` for some draw of numpy's sampler.

    numpy's ``Generator.laplace(loc, scale)`` takes ``u = j * 2**-53`` and returns
    ``loc - scale * log(2.0 - u - u)`` for ``u >= 0.5`` and
    ``loc + scale * log(u + u)`` for ``0 < u < 0.5``; both are non-decreasing in ``j``.
    """

    def upper(j):  # u in [0.5, 1): noise >= 0
        u = j * _2_TO_M53
        return x + (0.0 - b * math.log(2.0 - u - u))

    def lower(j):  # u in (0, 0.5): noise < 0
        u = j * _2_TO_M53
        return x + (0.0 + b * math.log(u + u))

    for lo, hi, f in ((2**52, 2**53 - 1, upper), (1, 2**52 - 1, lower)):
        j = _first_at_least(o, lo, hi, f)
        if j is not None and f(j) == o:
            return True
    return False


def _distinguish(outputs, x0, x1, b):
    """Guesses (1.0 for ``x1``, 0.0 for ``x0``, 0.5 for a coin) from the low bits alone."""
    guesses = np.empty(len(outputs))
    for n, o in enumerate(np.asarray(outputs, dtype=float).tolist()):
        c0 = _numpy_laplace_consistent(o, x0, b)
        c1 = _numpy_laplace_consistent(o, x1, b)
        guesses[n] = 0.5 if c0 == c1 else float(c1)
    return guesses


def _accuracy(guesses, secret):
    """Expected accuracy, a tie counting 1/2 (a fair coin's expected score)."""
    return float(np.mean(np.where(secret == 1, guesses, 1.0 - guesses)))


# The scale of the attack: sensitivity 1, Laplace scale 100, so epsilon = 0.01
# and no test can be right more often than e**0.01 / (1 + e**0.01) = 0.5025.
_B = 100.0
_EPS = 1.0 / _B
_DP_BOUND = math.exp(_EPS) / (1.0 + math.exp(_EPS))
_N_TRIALS = 4000


def _band(n):
    return _Z * math.sqrt(0.25 / n)


@pytest.mark.parametrize("x0, x1", [(0.0, 1.0), (0.1, 1.1)])
def test_low_bits_distinguisher_breaks_naive_laplace_not_exact(x0, x1):
    # the neighbouring inputs are at distance 1 (<= the sensitivity)
    assert abs(x1 - x0) <= 1.0
    rng = np.random.default_rng(20120101)
    secret = rng.integers(0, 2, size=_N_TRIALS)
    x = np.where(secret == 1, x1, x0)

    # naive float noise: one scalar release per trial
    naive = x + rng.laplace(0.0, _B, size=_N_TRIALS)
    guesses = _distinguish(naive, x0, x1, _B)
    acc_naive = _accuracy(guesses, secret)
    decided = guesses != 0.5
    # the replay is exact: the true input is always consistent, so every decision is right
    assert np.all(guesses[decided] == secret[decided])
    assert decided.mean() > 0.7
    assert acc_naive > 0.85 > _DP_BOUND + _band(_N_TRIALS)

    # the same attack on OpenDP's output, released one scalar at a time
    exact = np.array([exact_laplace(v, _B, sensitivity=1.0) for v in x.tolist()])
    acc_exact = _accuracy(_distinguish(exact, x0, x1, _B), secret)
    assert abs(acc_exact - 0.5) <= _band(_N_TRIALS)
    assert acc_exact <= _DP_BOUND + _band(_N_TRIALS)


def test_replay_recognises_every_naive_draw():
    # the attack's model of numpy's sampler is bit-exact, on both sides of the median
    rng = np.random.default_rng(7)
    for b in (_B, 1.0, 0.37):
        noise = rng.laplace(0.0, b, size=300)
        for x in (0.0, 1.0, 0.1):
            o = (x + noise).tolist()
            assert all(_numpy_laplace_consistent(v, x, b) for v in o)


# --------------------------------------------------------------------------
# The grid: exact outputs are multiples of 2**k whatever the input
# --------------------------------------------------------------------------
def _expected_k(scale, sensitivity, spread):
    """The documented grid: the largest 2**k <= min(scale 2**-30, sensitivity 2**-32 / spread)."""
    bound = min(scale * 2.0**-30, sensitivity * 2.0**-32 / spread)
    return max(math.frexp(bound)[1] - 1, -1074)


_AWKWARD = [0.0, 1.0, 0.1, 1.0 / 3.0, math.pi * 100, -7.123456789e-3, 2.0**-40, 1e-300,
            123.456789012345, -999.999]


def _on_grid(o, k):
    scaled = np.ldexp(np.asarray(o, dtype=float), -k)  # exact: a power-of-two scaling
    return scaled == np.round(scaled)


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_exact_outputs_lie_on_the_power_of_two_grid(kind):
    scale, reps = 1.0, 200
    x = np.repeat(np.array(_AWKWARD), reps)
    n = x.size
    if kind == "gaussian":
        out = exact_gaussian(x, scale, sensitivity=1.0)
        naive = x + np.random.default_rng(3).normal(0.0, scale, size=n)
        k = _expected_k(scale, 1.0, math.sqrt(n))
    else:
        out = exact_laplace(x, scale, sensitivity=1.0)
        naive = x + np.random.default_rng(3).laplace(0.0, scale, size=n)
        k = _expected_k(scale, 1.0, float(n))
    # the conversion to double is exact below 2**(k + 53): every output is then on the grid
    assert np.all(np.abs(out) < 2.0 ** (k + 53))
    assert np.all(_on_grid(out, k)), "an exact output is off the grid"
    # one scalar release per input value too (a coarser grid: n = 1)
    k1 = _expected_k(scale, 1.0, 1.0)
    single = exact_gaussian if kind == "gaussian" else exact_laplace
    assert all(_on_grid(single(v, scale, sensitivity=1.0), k1) for v in _AWKWARD)
    # the test has power: naive float noise is off the grid (where the grid is finer
    # than the doubles' spacing, so not around 123 or 999, whose ulp is 2**-46 or 2**-43)
    small = np.abs(x) <= 1.0
    assert np.mean(_on_grid(naive[small], k)) < 0.05


def test_grid_reaches_opendp_default_when_sensitivity_is_zero():
    assert _sampling._grid_exponent(1.0, 0.0, 1.0) == -1074
    out = exact_gaussian([0.1, 2.0], 1.0, sensitivity=0.0)
    assert out.shape == (2,) and np.all(np.isfinite(out))


def test_grid_exponent_follows_the_documented_rule():
    for scale in (1e-3, 1.0, 2.0, 50.0, 1e6):
        for sensitivity in (1e-3, 1.0, 7.0):
            for n in (1, 10, 1000, 10_000):
                assert _sampling._grid_exponent(scale, sensitivity, math.sqrt(n)) == _expected_k(
                    scale, sensitivity, math.sqrt(n)
                )
                assert _sampling._grid_exponent(scale, sensitivity, float(n)) == _expected_k(
                    scale, sensitivity, float(n)
                )


# --------------------------------------------------------------------------
# The privacy-map check
# --------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 10, 1000, 10_000])
@pytest.mark.parametrize("scale, sensitivity", [(1.0, 1.0), (50.0, 1.0), (1e-3, 1.0), (1e6, 1e-3)])
def test_opendp_map_matches_the_continuous_mechanism(n, scale, sensitivity):
    mg = _sampling._checked_gaussian(scale, sensitivity, n)
    ml = _sampling._checked_laplace(scale, sensitivity, n)
    rho, eps = mg.map(sensitivity), ml.map(sensitivity)
    rho_c, eps_c = (sensitivity / scale) ** 2 / 2, sensitivity / scale
    # OpenDP charges for the grid rounding, but only a hair, and the 2**-28 extra
    # noise pays for it: never above the continuous loss the ledger records, and
    # within 1e-8 of it
    assert rho_c * (1 - 1e-8) <= rho <= rho_c
    assert eps_c * (1 - 1e-8) <= eps <= eps_c


class _Spy:
    """Wraps an OpenDP measurement, counting the draws."""

    def __init__(self, measurement):
        self.measurement, self.draws = measurement, 0

    def map(self, d_in):
        return self.measurement.map(d_in)

    def __call__(self, arg):
        self.draws += 1
        return self.measurement(arg)


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_a_map_worse_than_continuous_raises_before_sampling(kind, monkeypatch):
    spies = []
    name = f"_{kind}_measurement"
    build = getattr(_sampling, name)

    def spy_build(scale, k, size):
        spies.append(_Spy(build(scale, k, size)))
        return spies[-1]

    release = exact_gaussian if kind == "gaussian" else exact_laplace
    monkeypatch.setattr(_sampling, name, spy_build)
    _sampling._checked_gaussian.cache_clear()
    _sampling._checked_laplace.cache_clear()
    try:
        # the documented grid passes and samples
        release([1.0, 2.0, 3.0], 0.731, sensitivity=1.0)
        assert spies[-1].draws == 1
        # a grid as coarse as the noise: OpenDP's map charges sqrt(n) or n grid steps
        monkeypatch.setattr(_sampling, "_grid_exponent", lambda *args: 0)
        _sampling._checked_gaussian.cache_clear()
        _sampling._checked_laplace.cache_clear()
        with pytest.raises(RuntimeError, match="refusing to release"):
            release([1.0, 2.0, 3.0], 0.731, sensitivity=1.0)
        assert spies[-1].draws == 0
    finally:
        _sampling._checked_gaussian.cache_clear()
        _sampling._checked_laplace.cache_clear()


# --------------------------------------------------------------------------
# Distribution, shapes and errors
# --------------------------------------------------------------------------
_N_STAT = 20_000


@pytest.mark.parametrize("sigma, x", [(2.0, 3.7), (1e-3, -12.5), (1e3, 0.1)])
def test_exact_gaussian_mean_and_variance(sigma, x):
    out = exact_gaussian(np.full(_N_STAT, x), sigma, sensitivity=1.0)
    noise = (out - x) / sigma
    assert abs(noise.mean()) < _Z / math.sqrt(_N_STAT)
    assert abs(noise.var() - 1.0) < _Z * math.sqrt(2.0 / _N_STAT)
    assert stats.kstest(noise, "norm").pvalue > 1e-4


@pytest.mark.parametrize("scale, x", [(2.0, 3.7), (1e-3, -12.5), (1e3, 0.1)])
def test_exact_laplace_mean_and_variance(scale, x):
    out = exact_laplace(np.full(_N_STAT, x), scale, sensitivity=1.0)
    noise = (out - x) / scale
    # Laplace(1): variance 2, fourth central moment 24
    assert abs(noise.mean()) < _Z * math.sqrt(2.0 / _N_STAT)
    assert abs(noise.var() - 2.0) < _Z * math.sqrt((24.0 - 4.0) / _N_STAT)
    assert stats.kstest(noise, "laplace").pvalue > 1e-4


@pytest.mark.parametrize("release", [exact_gaussian, exact_laplace])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 4), (2, 3, 2), (0,), (0, 3)])
def test_shapes_preserved(release, shape):
    values = np.arange(math.prod(shape), dtype=float).reshape(shape)
    out = release(values, 0.5, sensitivity=1.0)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == shape
    assert np.all(np.abs(out - values) < 0.5 * 40)


@pytest.mark.parametrize("release", [exact_gaussian, exact_laplace])
def test_inputs_other_than_float_arrays(release):
    assert release(3, 1.0, sensitivity=1.0).shape == ()
    assert release([1, 2, 3], 1.0, sensitivity=1.0).shape == (3,)
    assert release([[True, False]], 1.0, sensitivity=1.0).shape == (1, 2)
    assert release(np.float32(1.5), np.float32(1.0), sensitivity=np.float64(1.0)).shape == ()
    big = release([1e300, -1e300], 1.0, sensitivity=1.0)
    assert np.all(np.isfinite(big))


@pytest.mark.parametrize("release", [exact_gaussian, exact_laplace])
def test_fresh_noise_every_call_and_every_entry(release):
    a = release(np.zeros(100), 1.0, sensitivity=1.0)
    b = release(np.zeros(100), 1.0, sensitivity=1.0)
    assert np.unique(a).size == 100 and not np.array_equal(a, b)


@pytest.mark.parametrize("release", [exact_gaussian, exact_laplace])
@pytest.mark.parametrize("bad", [0, 0.0, -1.0, math.nan, math.inf, -math.inf, True, None, "1"])
def test_bad_noise_scale_raises(release, bad):
    with pytest.raises(ValueError):
        release([1.0], bad, sensitivity=1.0)


@pytest.mark.parametrize("release", [exact_gaussian, exact_laplace])
@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, None, "1"])
def test_bad_sensitivity_raises(release, bad):
    with pytest.raises(ValueError):
        release([1.0], 1.0, sensitivity=bad)


@pytest.mark.parametrize("release", [exact_gaussian, exact_laplace])
@pytest.mark.parametrize("bad", [[1.0, math.nan], [math.inf], [[0.0], [-math.inf]], math.nan])
def test_non_finite_values_raise(release, bad):
    with pytest.raises(ValueError, match="finite"):
        release(bad, 1.0, sensitivity=1.0)


@pytest.mark.parametrize("release", [exact_gaussian, exact_laplace])
@pytest.mark.parametrize("bad", [[1 + 2j], ["a"], [object()]])
def test_non_real_values_raise(release, bad):
    with pytest.raises(TypeError):
        release(bad, 1.0, sensitivity=1.0)


def test_sensitivity_is_keyword_only():
    with pytest.raises(TypeError):
        exact_gaussian([1.0], 1.0, 1.0)
    with pytest.raises(TypeError):
        exact_laplace([1.0], 1.0, 1.0)


@pytest.mark.parametrize("release", [exact_gaussian, exact_laplace])
@pytest.mark.parametrize(
    "scale, sensitivity",
    [(1e-200, 1e200), (1e300, 1.0), (1e-300, 1e-300), (5e-324, 5e-324), (1e300, 1e300)],
)
def test_extreme_scales_release_finite_values(release, scale, sensitivity):
    # the map's losses over- or underflow float64 here; the check must not misfire
    out = release([5.0, -3.0], scale, sensitivity=sensitivity)
    assert out.shape == (2,) and np.all(np.isfinite(out))


def test_first_secure_release_imports_nothing_heavy():
    # issue 41: OpenDP's modules come with the privacy core (not opendp.prelude,
    # which also imports OpenDP's extras and scikit-learn's decomposition), its
    # converters' opendp._data too, so a fresh process's first secure releases
    # import nothing; importing skdpx does not enable OpenDP's features
    out = run_python(
        "import sys\n"
        "import skdpx\n"
        "from opendp.mod import GLOBAL_FEATURES\n"
        "from skdpx.privacy._sampling import exact_gaussian, exact_laplace\n"
        "print(sorted(GLOBAL_FEATURES))\n"
        "before = set(sys.modules)\n"
        "exact_gaussian([1.0, 2.0], 1.0, sensitivity=1.0)\n"
        "exact_laplace([1.0], 1.0, sensitivity=1.0)\n"
        "print(sorted(GLOBAL_FEATURES))\n"
        "print(sorted(set(sys.modules) - before))\n")
    features_before, features_after, new = out.strip().splitlines()
    assert features_before == "[]" and "contrib" in features_after
    assert eval(new) == [], new


def test_measurements_share_the_atoms_and_distances_made_at_import(monkeypatch):
    # issue 41: every measurement is built on the privacy core's float atoms and
    # L1 / L2 distances, made once on import (the first call into OpenDP's
    # library is paid there, not in a process's first fit); none is rebuilt
    def refuse(*args, **kwargs):
        raise AssertionError("rebuilt for a release")

    monkeypatch.setattr(_sampling._domains, "atom_domain", refuse)
    monkeypatch.setattr(_sampling._metrics, "l1_distance", refuse)
    monkeypatch.setattr(_sampling._metrics, "l2_distance", refuse)
    # keys no other test uses: built here, not taken from the caches
    laplace = _sampling._laplace_measurement(3.0 + 2.0**-20, -40, 7)
    gaussian = _sampling._gaussian_measurement(3.0 + 2.0**-20, -40, 7)
    assert len(laplace([0.0] * 7)) == 7 and len(gaussian([0.0] * 7)) == 7
