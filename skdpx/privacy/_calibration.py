"""Calibration: the least noise whose release meets a target (epsilon, delta).

:func:`calibrate_noise` (Gaussian, optionally Poisson-subsampled, composed,
after other releases), :func:`calibrate_laplace` and
:func:`analytic_gaussian_sigma` invert :mod:`._composition`'s epsilon, the very
function every ledger reports with, so a noise calibrated for a target is
never reported above it. Every search for a noise goes through one monotone
root finder, :func:`_smallest_noise`: the noise it returns meets the target
as computed, never just above it. The one exception is a DP-SGD calibration
after Gaussian releases (or none), whose noise is first sought from the
central-limit Gaussian model of its steps (:meth:`_NoiseSearch.model_root`):
it returns only a noise that meets the target on the ledger's grid as
computed, a little above the root finder's (at most 3.6e-5, relative), and
leaves every other case to the root finder.
"""

from collections import Counter
from functools import lru_cache
import itertools
import math
from numbers import Real

import dp_accounting
from dp_accounting import dp_event as _dp_event
import numpy as np
import scipy.optimize
import scipy.special

from ._composition import (
    VALUE_DISCRETIZATION_INTERVAL,
    _epsilon_of_leaves,
    _gaussian_epsilon_exact,
    _gaussian_sigma_start,
    _log_delta_gaussian,
    compute_epsilon,
    leaf_counts,
)
from ._events import (
    FixedLossDpEvent,
    _check_noise,
    _check_steps_rate,
    compose_events,
    event_from_json,
    event_to_json,
    gaussian_event,
    laplace_event,
)

__all__ = [
    "analytic_gaussian_sigma",
    "calibrate_laplace",
    "calibrate_noise",
    "gaussian_to_pure",
    "pure_to_gaussian",
]

#: The coarsest grid on which a calibration searches for its noise before the
#: answer is checked on the ledger's grid (``VALUE_DISCRETIZATION_INTERVAL``),
#: relative to the target epsilon: ``min(1e-3, 1e-3 * epsilon)``, never finer
#: than the ledger's (so for epsilon <= 0.1 the search is on the ledger's
#: grid, as before, with no gain). At 1e-3 a
#: PLD is built about 8 times faster; both grids are pessimistic (each bounds
#: epsilon from above), and the coarse one's excess grows as the grid
#: interval over epsilon, hence the relative cap.
SEARCH_DISCRETIZATION_INTERVAL = 1e-3
#: The grid of the calibration's first, rough root, relative to epsilon
#: (never finer than ``SEARCH_DISCRETIZATION_INTERVAL``).
HINT_DISCRETIZATION_INTERVAL = 1e-2
#: Where a calibration from the Gaussian model (:meth:`_NoiseSearch.model_root`)
#: puts its noise: at least ``MODEL_MARGIN`` above the ledger grid's root on
#: log z (as judged by the slope; the hint's route keeps within 1e-5 of the
#: root, so at least its noise), and its epsilon at most ``MODEL_WIDTH`` (times
#: the slope where it is below 1) further below the target: within 3.6e-5 of
#: the root on log z, and within ``1.1e-5 * slope + 2.5e-5`` of the target
#: (slope: -d epsilon / d log z).
MODEL_MARGIN, MODEL_WIDTH = 1.1e-5, 2.5e-5


# --------------------------------------------------------------------------
# The one root finder: the least noise that meets a target
# --------------------------------------------------------------------------
#: |log(epsilon / target)| used for an epsilon of 0 or infinity in the root search
_LOG_RATIO_CAP = 50.0
#: The noise multipliers a search brackets within: above the largest no noise
#: meets the target (an error), below the smallest the answer is not refined
_MAX_NOISE, _MIN_NOISE = 1e12, 1e-12


def _safe_noise(epsilon_of, target, z, rate):
    """The first of ``z``, ``z (1 + rate)``, ``z (1 + rate)^2``, ... with ``epsilon_of <= target``.

    The last step of every noise search: a root found to a tolerance (or a
    product of exact roots) can land a rounding error above the target, and
    the noise returned must meet it as computed, with the very function the
    ledgers report with. ``epsilon_of`` is non-increasing in the noise, so
    this ends after a step or two. A NaN epsilon is refused, never taken as
    "within the target".
    """
    while True:
        value = epsilon_of(z)
        if value <= target:
            return z
        if math.isnan(value):
            raise ValueError(f"the epsilon of noise multiplier {z!r} is NaN.")
        z *= 1 + rate


def _smallest_noise(epsilon_of, target, start, step=math.log(2.0), xtol=1e-7, reuse=False):
    """The smallest noise multiplier z with ``epsilon_of(z) <= target``: the one root finder.

    Every search for a noise in skdpx goes through it (or, when a root is
    already known to rounding, through its last step, :func:`_safe_noise`),
    but for the Gaussian model's route of :meth:`_NoiseSearch.model_root`.

    Parameters
    ----------
    epsilon_of : callable
        ``z -> epsilon`` (> 0 target units), non-increasing in z (up to
        floating point in the last bits). NaN counts as over the target.
    target : float > 0
    start : float > 0
        Where the bracket starts (a guess of the root).
    step : float, default=log(2)
        The first bracketing steps on log z: ``step``, ``step``, then
        doubling, so that a far root is reached in a few; downwards the
        doubling stops at 25% (or at ``step`` if larger).
    xtol : float, default=1e-7
        Brent's tolerance on log z; the answer is at most about ``xtol``
        (relative) above the root.
    reuse : bool, default=False
        For a rough root (wide ``xtol``): the smallest noise already found
        within the target, if it is at most the root plus ``xtol``, is the
        answer (no evaluation just to step above the root). Without it the
        answer keeps its margin of ``xtol`` above the root, which a search on
        a proxy of the epsilon that matters (the search grid's, less an
        extrapolated excess) needs to absorb the proxy's error.

    Returns
    -------
    z : float
        ``epsilon_of(z) <= target`` as computed, always (never just above
        it): the root plus ``xtol``, then :func:`_safe_noise` in steps of
        1e-6. Below a noise of 1e-12 the bracket's lowest noise within the
        target.

    Raises
    ------
    ValueError
        No noise up to 1e12 meets the target.

    Notes
    -----
    The root is found on log epsilon against log z, where the curve is
    nearly straight (epsilon falls roughly as a power of the noise): Brent's
    interpolation lands within a fraction of a percent of the root from a
    bracket twice as wide, so each calibration takes a few evaluations of
    the PLD fewer than on epsilon itself. The sign, so the bracket and the
    answer's side of the target, is the same.
    """
    within = []  # the log noises evaluated within the target

    def g(t):
        value = epsilon_of(math.exp(t))
        if math.isnan(value):
            return _LOG_RATIO_CAP
        if not value > 0:  # zero (or the coarse search's shifted value below it)
            within.append(t)
            return -_LOG_RATIO_CAP
        ratio = min(math.log(value / target), _LOG_RATIO_CAP)  # inf past the cap
        if ratio <= 0:
            within.append(t)
        return ratio

    def steps(cap):
        return (min(step * 2 ** max(k - 1, 0), max(step, cap)) for k in itertools.count())

    hi, lo = math.log(start), None  # lo: a log noise known to be over the target
    up = steps(math.inf)
    while g(hi) > 0:
        if hi >= math.log(_MAX_NOISE):
            raise ValueError(f"no finite noise reaches epsilon = {target}.")
        # the cap itself is tried before refusing (a doubling step may pass over a
        # root just below it)
        lo, hi = hi, min(hi + next(up), math.log(_MAX_NOISE))
    if lo is None:
        # downwards the steps grow to 25% at most: a PLD far below the root
        # (tiny noise over many steps) can take minutes
        down = steps(math.log(1.25))
        lo = hi - next(down)
        while g(lo) <= 0:
            hi, lo = lo, lo - next(down)
            if lo < math.log(_MIN_NOISE):
                return math.exp(hi)
    root = scipy.optimize.brentq(g, lo, hi, xtol=xtol, rtol=4 * np.finfo(float).eps)
    t = min(root + xtol, hi)
    if reuse:
        t = min([u for u in within if u <= t], default=t)
    return _safe_noise(epsilon_of, target, math.exp(t), 1e-6)


# --------------------------------------------------------------------------
# Gaussian noise
# --------------------------------------------------------------------------
def _check_target(epsilon, delta, *, need_delta):
    if not isinstance(epsilon, Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    if not isinstance(delta, Real) or not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}.")
    if need_delta and delta == 0 and not math.isinf(epsilon):
        raise ValueError(
            "the Gaussian mechanism needs delta > 0; use a Laplace mechanism for delta = 0."
        )


def calibrate_noise(epsilon, delta, *, steps=1, sample_rate=1.0, accounting="pld", prior=None):
    """The smallest Gaussian noise multiplier meeting (epsilon, delta).

    For ``steps`` compositions of a Gaussian mechanism, Poisson-subsampled at
    ``sample_rate`` when it is below 1. The noise standard deviation is the
    returned multiplier times the L2 sensitivity (``max_grad_norm`` in
    DP-SGD).

    Parameters
    ----------
    epsilon : float > 0
        Target epsilon; ``np.inf`` gives 0 (no noise).
    delta : float in (0, 1)
    steps : int, default=1
    sample_rate : float in (0, 1], default=1.0
    accounting : {"pld", "rdp"}, default="pld"
    prior : dp_accounting.DpEvent, optional
        Other releases of the same data (e.g. a DP mean computed before
        training): the noise is calibrated so that ``prior`` composed with
        the Gaussian steps meets (epsilon, delta).

    Returns
    -------
    noise_multiplier : float

    Examples
    --------
    >>> from skdpx.privacy import calibrate_noise, gaussian_epsilon
    >>> z = calibrate_noise(1.0, 1e-5)
    >>> round(z, 3)
    3.731
    >>> gaussian_epsilon(z, 1e-5) <= 1.0
    True
    """
    _check_target(epsilon, delta, need_delta=True)
    _check_steps_rate(steps, sample_rate)
    if math.isinf(epsilon):
        return 0.0
    if prior is not None and isinstance(prior, _dp_event.NoOpDpEvent):
        prior = None
    if prior is not None:
        # fixed losses (FixedLossDpEvent) shift the target exactly: the rest is
        # calibrated at epsilon less their sum (the same sum the ledgers add)
        prior, shift = _split_fixed_loss(prior)
        epsilon = epsilon - shift
        if not epsilon > 0:
            raise ValueError(
                f"the prior releases alone already reach epsilon = {epsilon + shift} "
                f"(fixed losses of {shift:g}).")
    # a pure function of its arguments: memoised (estimators refit with the
    # same budget in cross-validation, audits and grid searches)
    return _calibrate_noise(float(epsilon), float(delta), int(steps), float(sample_rate),
                            accounting, None if prior is None else event_to_json(prior))


def _split_fixed_loss(event):
    """(the event without its FixedLossDpEvent leaves or None, the sum of their epsilons)."""
    leaves = [(event_from_json(j), c) for j, c in leaf_counts(event_to_json(event))]
    shift = float(sum(e.epsilon * c for e, c in leaves if isinstance(e, FixedLossDpEvent)))
    if shift == 0:
        return event, 0.0
    rest = [e if c == 1 else _dp_event.SelfComposedDpEvent(e, int(c))
            for e, c in leaves if not isinstance(e, FixedLossDpEvent)]
    return compose_events(*rest), shift


@lru_cache(maxsize=1024)
def _calibrate_noise(epsilon, delta, steps, sample_rate, accounting, prior_json):
    if sample_rate == 1 and prior_json is None:
        return _composed_gaussian_noise(epsilon, delta, steps)
    prior = None if prior_json is None else event_from_json(prior_json)
    if prior is not None and compute_epsilon(prior, delta, accounting=accounting) >= epsilon:
        raise ValueError(
            f"the prior releases alone already reach epsilon = {epsilon} at delta = {delta}."
        )
    search = _NoiseSearch(epsilon, delta, steps, sample_rate, accounting, prior_json)
    if accounting == "pld" and search.vdi != VALUE_DISCRETIZATION_INTERVAL:
        z = search.model_root()
        if z is not None:
            return z
        # the model's route did not settle: the hint's, from a fresh search
        search = _NoiseSearch(epsilon, delta, steps, sample_rate, accounting, prior_json)
    hint, step, xtol = _pld_hint(epsilon, delta, steps, sample_rate, accounting, prior_json)
    if accounting != "pld" or search.vdi == VALUE_DISCRETIZATION_INTERVAL:
        # Renyi DP, or epsilon <= 0.1 (the search is on the ledger's grid)
        return _smallest_noise(search.epsilon_at, epsilon, hint, step, xtol)
    return search.two_grid_root(hint, step, xtol)


def _composed_gaussian_noise(epsilon, delta, steps):
    """``steps`` plain Gaussian releases, exactly: T Gaussians with multiplier z are
    one Gaussian with z / sqrt(T)."""
    sigma = _smallest_noise(
        lambda z: _gaussian_epsilon_exact(z, delta),
        epsilon,
        _gaussian_sigma_start(epsilon, delta),
    )
    # the product can land a rounding error above the target: step up
    return _safe_noise(lambda z: compute_epsilon(gaussian_event(z, steps=steps), delta),
                       epsilon, sigma * math.sqrt(steps), 1e-12)


class _NoiseSearch:
    """The epsilon of ``prior`` and Gaussian steps at noise z, on the ledger's grid
    and on a coarser search grid, and the two-grid root (:meth:`two_grid_root`).

    One calibration (``epsilon`` is its target); it remembers the search grid's
    epsilons (``seen``) for the slopes it steps along.
    """

    def __init__(self, epsilon, delta, steps, sample_rate, accounting, prior_json):
        self.epsilon, self.delta, self.accounting = epsilon, delta, accounting
        self.steps, self.sample_rate, self.prior_json = steps, sample_rate, prior_json
        self.prior_leaves = () if prior_json is None else leaf_counts(prior_json)
        # the search grid: SEARCH_DISCRETIZATION_INTERVAL relative to epsilon,
        # never finer than the ledger's
        self.vdi = max(VALUE_DISCRETIZATION_INTERVAL,
                       min(SEARCH_DISCRETIZATION_INTERVAL, SEARCH_DISCRETIZATION_INTERVAL * epsilon))
        self.seen = {}  # the search grid's epsilons so far, by noise

    def epsilon_at(self, z, vdi=VALUE_DISCRETIZATION_INTERVAL):
        """The epsilon at noise z on grid ``vdi`` (default: the ledger's)."""
        leaves = _calibration_leaves(z, self.steps, self.sample_rate, self.prior_leaves)
        if vdi == VALUE_DISCRETIZATION_INTERVAL:  # the ledger's call, so its cache key
            return _epsilon_of_leaves(leaves, self.delta, self.accounting)
        return _epsilon_of_leaves(leaves, self.delta, self.accounting, vdi)

    def coarse(self, z):
        """The epsilon at z on the search grid (remembered)."""
        self.seen[z] = self.epsilon_at(z, self.vdi)
        return self.seen[z]

    def slope(self, z):
        """-d epsilon / d log z on the search grid near z: the chord between
        the noise evaluated nearest z and the next nearest at least 0.1% from
        it, both within 2% of z (the search's points); else a chord from z to
        0.1% below it. (The search grid's epsilon is rough on shorter scales:
        chords of 0.001% were seen from -0.9 to 9.8 against 4.9.)"""
        seen = self.seen
        near = sorted((u for u in seen if abs(math.log(u / z)) <= 0.02),
                      key=lambda u: abs(math.log(u / z)))
        for a in near[:1]:
            for b in near[1:]:
                if abs(math.log(a / b)) >= 1e-3:
                    return (seen[b] - seen[a]) / math.log(a / b)
        return (self.coarse(z * (1 - 1e-3)) - self.coarse(z)) / 1e-3

    def excess(self, z):
        """The search grid's excess over the ledger's at z, extrapolated."""
        return max(0.0, (self.epsilon_at(z, 2 * self.vdi) - self.coarse(z)) / 3
                   * (1 - (VALUE_DISCRETIZATION_INTERVAL / self.vdi) ** 2))

    def step_to_root(self, z, value):
        """The noise at which an epsilon of ``value`` at z meets the target,
        along the search grid's slope, plus the searches' margin (1e-6 on log
        z); None where the slope is no guide (flat, or a step over 0.1%)."""
        slope = self.slope(z)
        if not slope > 0 or not abs(value - self.epsilon) <= 1e-3 * slope:
            return None
        return z * math.exp((value - self.epsilon) / slope + 1e-6)

    def root_less(self, excess, start, step=math.log(1.01)):
        """The root of the search grid's epsilon less ``excess``, searched from ``start``."""
        return _smallest_noise(lambda t: self.coarse(t) - excess, self.epsilon, start, step,
                               xtol=1e-6)

    def model_root(self):
        """The noise found from the Gaussian model, or None where it does not apply
        or does not settle (the caller then takes :meth:`two_grid_root`'s route).

        For Poisson-subsampled steps after a prior of plain Gaussians (or
        none). The model's noise at the target (:class:`_GaussianModel`, no
        PLD) is the first point on the search grid; the second is the model's
        noise at the target scaled by the search grid's ratio to the model
        there; then secant steps on log epsilon against log z (the chord to
        the nearest earlier point at least 0.02% away: the search grid is
        rough on shorter scales, chords of 0.01% differ by 1%) until a step
        is below 1e-5. The search grid's excess over the ledger's
        (:meth:`excess`) at the last point, along the last chord's slope,
        gives the ledger grid's root, and the noise aimed at is the middle of
        the band (``MODEL_MARGIN``, ``MODEL_WIDTH``) above it. It is kept if
        the ledger's grid puts it within the target and in the band; else a
        step along the slope to the band's middle and another check (at most
        5; the slope is then the ledger grid's own chord).

        About 4-6 search-grid evaluations and 1 on the ledger's grid, where
        the hint's route takes 6 on its coarse grid, 8-14 on the search grid
        and 1-2 on the ledger's (0.06-0.33 s against 0.2-0.53 s a DP-SGD
        calibration of a search on Adult). Every answer meets the target on
        the ledger's grid as computed, and lies at least ``MODEL_MARGIN``
        above its root (as judged by the slope): at least the noise of the
        hint's route (which keeps within 1e-5 of the root), at most about
        3.6e-5 (relative) more.
        """
        if self.sample_rate == 1:
            return None
        prior = _gaussian_precision(self.prior_leaves)
        if prior is None:
            return None
        model = _GaussianModel(self.delta, self.steps, self.sample_rate, prior)
        epsilon = self.epsilon

        def band(slope):  # the epsilons below the target a noise is kept at, and the aim
            low = MODEL_MARGIN * slope
            high = low + MODEL_WIDTH * min(1.0, slope)
            return low, high, (low + high) / 2
        try:
            z = model.noise(epsilon)
            if z is None or not _MIN_NOISE < z < _MAX_NOISE:
                return None
            points = []  # (log z, log(search grid's epsilon / target))
            for k in range(8):
                value = self.coarse(z)
                if not 0 < value < math.inf:
                    return None
                t, g = math.log(z), math.log(value / epsilon)
                points.append((t, g))
                if k == 0:  # the model, scaled by the search grid's ratio to it
                    z = model.noise(epsilon * model.epsilon(z) / value)
                    if z is None or not _MIN_NOISE < z < _MAX_NOISE:
                        return None
                    continue
                earlier = sorted(points[:-1], key=lambda p: abs(p[0] - t))
                u, h = next((p for p in earlier if abs(p[0] - t) >= 2e-4), earlier[0])
                slope = (g - h) / (t - u)
                if not slope < 0:
                    return None
                step = -g / slope
                if abs(step) > 0.5:
                    return None
                if abs(step) <= 1e-5:  # the search grid is rough below ~1e-5
                    break
                z = math.exp(t + step)
            else:
                return None
            # the ledger grid's root: the search grid's root less its excess (measured
            # at the last noise evaluated), along the chord's slope (-d epsilon / d log z)
            search_slope = -slope * epsilon
            excess = self.excess(math.exp(t))
            z = math.exp(t + step + (band(search_slope)[2] - excess) / search_slope)
            fines = []  # (log z, the ledger grid's epsilon)
            for attempt in range(5):
                t, fine = math.log(z), self.epsilon_at(z)
                if math.isnan(fine):
                    return None
                # the slope: the ledger grid's own chord to the nearest noise checked
                # at least 0.01% away (where the search grid's excess is far from
                # second order, 1e5 steps, its slope is 25% off), else the search grid's
                near = [p for p in fines if abs(p[0] - t) >= 1e-4]
                if near:
                    u, h = min(near, key=lambda p: abs(p[0] - t))
                    slope = (h - fine) / (t - u)
                else:
                    slope = search_slope
                if not slope > 0:
                    return None
                fines.append((t, fine))
                gap, (low, high, aim) = epsilon - fine, band(slope)
                if fine <= epsilon and low <= gap <= high:
                    return z
                z = math.exp(t + (aim - gap) / slope)
        except (OverflowError, ZeroDivisionError, FloatingPointError, ValueError):
            return None
        return None  # not settled: the hint's route

    def two_grid_root(self, hint, step, xtol):
        """The ledger's root, found mostly with search-grid evaluations.

        A pessimistic connect-the-dots grid overstates epsilon by about
        c * interval^2 (it is second order): the search grid's excess over the
        ledger's is extrapolated from the search grid and one twice as coarse
        (at the root, to within 3% in four DP-SGD settings; 21% in one where
        the excess is tiny, 7e-7), and the root of the search grid's epsilon
        less that excess is the ledger's root, found with search-grid
        evaluations only. The excess is measured at the hint, and again at
        that root if it lies more than 1% from the hint (the excess changes
        with the noise: the hint's grid can overstate hundreds of
        compositions by 20%), with a step along the search grid's slope to the
        new root. That noise is checked on the ledger's grid (whose PLD the
        ledger reuses when the release is spent) and kept if it meets the
        target with the noise within about 1e-5 of the root (judged by the
        search grid's slope). Else the ledger's epsilon there, with the same
        slope, gives the next noise to check; and if that does not settle it
        either (a prior that dominates the target, where the slope is flat),
        the root is found on the ledger's grid itself, bracketed by the noises
        already checked. Every answer comes from :func:`_smallest_noise` or
        meets the target on the ledger's grid as computed.
        """
        epsilon = self.epsilon
        if self.prior_json is not None and _epsilon_of_leaves(
                self.prior_leaves, self.delta, self.accounting, self.vdi) >= epsilon:
            # the search grid overstates the prior past the target (the ledger's
            # does not): search the ledger's grid
            return _smallest_noise(self.epsilon_at, epsilon, hint, math.log(2.0), xtol)
        excess = self.excess(hint)
        z = self.root_less(excess, hint, step)
        if abs(math.log(z / hint)) > 1e-2:
            excess = self.excess(z)
            z = self.step_to_root(z, self.coarse(z) - excess) or self.root_less(excess, z)
        below, above = None, None  # the largest noise over, the smallest within target
        for attempt in range(2):
            fine = self.epsilon_at(z)
            if fine <= epsilon:
                above = z if above is None else min(above, z)
                if epsilon - fine <= 1e-5 * self.slope(z):
                    return z
            else:
                below = z if below is None else max(below, z)
            if attempt == 0:
                z = self.step_to_root(z, fine) or self.root_less(self.coarse(z) - fine, z)
        if below is not None and above is not None and below < above:
            return _smallest_noise(self.epsilon_at, epsilon, above, math.log(above / below), xtol)
        # one side only: the root is usually near (a slope step just missed it)
        start = above if above is not None else below
        return _smallest_noise(self.epsilon_at, epsilon, start, math.log(1.001), xtol)


def _gaussian_precision(leaves):
    """``sum(count / z^2)`` over (leaf JSON, count) pairs if every leaf is a plain
    Gaussian (no leaf: 0), else None."""
    total = 0.0
    for text, count in leaves:
        event = event_from_json(text)
        if not isinstance(event, dp_accounting.GaussianDpEvent):
            return None
        total += count / event.noise_multiplier / event.noise_multiplier
    return total


class _GaussianModel:
    """The central-limit model of Poisson-subsampled Gaussian steps after a Gaussian prior.

    ``steps`` Gaussian releases with noise multiplier z, each Poisson-subsampled
    at q, behave for many steps like one Gaussian release with
    ``mu^2 = q^2 steps (e^(1/z^2) - 1)`` (Bu, Dong, Long & Su 2020); a prior of
    plain Gaussians adds its precision to ``mu^2``; epsilon is the analytic
    Gaussian's (Balle & Wang 2018). Public arithmetic, microseconds a call. It
    is not an accountant: it understates epsilon (its noise was 1-25% below
    the PLD's in the settings tried, 2-8% in most); it serves as a curve that
    moves with z nearly as the PLD's, to step towards the PLD's root.
    """

    def __init__(self, delta, steps, sample_rate, prior_precision):
        self.delta, self.prior_precision = delta, prior_precision
        self.scale = sample_rate * sample_rate * steps

    def epsilon(self, z):
        mu2 = self.scale * math.expm1(1.0 / (z * z)) + self.prior_precision
        return _gaussian_epsilon_exact(mu2**-0.5, self.delta)

    def noise(self, epsilon):
        """The model's noise multiplier at ``epsilon``; None if the prior alone reaches it."""
        mu = 1.0 / _analytic_gaussian_sigma(epsilon, self.delta)
        rest = mu * mu - self.prior_precision
        if not rest > 0:
            return None
        return 1.0 / math.sqrt(math.log1p(rest / self.scale))


def _calibration_leaves(z, steps, sample_rate, prior_leaves):
    """The (leaf, count) key of the prior's leaves composed with the Gaussian steps at noise z.

    The key :func:`leaf_counts` gives the composed event, built from the
    prior's (memoised) leaves and the one Gaussian leaf: the prior is not
    serialised again at every step of a search.
    """
    leaf = gaussian_event(z, sample_rate=sample_rate)  # a Gaussian, or Poisson-sampled one
    leaves = Counter(dict(prior_leaves))
    if not isinstance(leaf, _dp_event.NoOpDpEvent):  # infinite noise: no leaf
        leaves[event_to_json(leaf)] += steps
    return tuple(sorted(leaves.items()))


def _pld_hint(epsilon, delta, steps, sample_rate, accounting, prior_json):
    """(hint, step, xtol) for the PLD search: a root on a very coarse grid, a bracket below it.

    The hint is the root, to 1%, on a PLD grid 10 times coarser than the
    search's (``HINT_DISCRETIZATION_INTERVAL``, relative to epsilon): a few
    evaluations of 2-40 ms each. A coarser pessimistic grid overstates
    epsilon, so its noise is (nearly always) enough on the finer grids: by
    a fraction of a percent for a hundred compositions, by 20% for 2,400
    (the grid's error grows with the compositions). The search brackets in
    steps of 5% below it.
    The search stops at the PLD root to about 1e-5 wherever it starts (the
    last digits of the answer can depend on the hint). (The hint was the
    Renyi DP answer, 0-15% above the PLD one and slower to find.)
    """
    if accounting != "pld":
        return 1.0, math.log(2.0), 1e-7
    return _coarse_hint(epsilon, delta, steps, sample_rate, prior_json)


@lru_cache(maxsize=1024)
def _coarse_hint(epsilon, delta, steps, sample_rate, prior_json):
    prior_leaves = () if prior_json is None else leaf_counts(prior_json)
    vdi = max(SEARCH_DISCRETIZATION_INTERVAL, HINT_DISCRETIZATION_INTERVAL * epsilon)

    def rough(z):
        return _epsilon_of_leaves(_calibration_leaves(z, steps, sample_rate, prior_leaves), delta,
                                  "pld", vdi)

    try:
        if prior_json is not None and _epsilon_of_leaves(
                prior_leaves, delta, "pld", vdi) >= epsilon:
            raise ValueError
        z_rough = _smallest_noise(rough, epsilon, 1.0, math.log(2.0), xtol=1e-2, reuse=True)
    except ValueError:
        # the coarse grid overstates the prior past the target, where the
        # ledger's grid does not: no hint, a wide bracket
        return 1.0, math.log(2.0), 1e-5
    return z_rough, math.log(1.05), 1e-5  # slow PLD: the noise to 0.001% is enough


def analytic_gaussian_sigma(epsilon, delta):
    """The smallest noise multiplier of one (epsilon, delta)-DP Gaussian release.

    The analytic Gaussian mechanism (Balle & Wang 2018): dp_accounting's
    ``get_sigma_gaussian`` (its search, run on ``scipy.special``: the same
    double, faster) finds the root of ``delta(epsilon; sigma) =
    delta`` to 1e-12; the answer is then stepped up, if need be, until
    ``delta(epsilon; sigma) <= delta`` holds exactly as computed (a root
    search can land a rounding error on the wrong side). The noise standard
    deviation is the multiplier times the L2 sensitivity.

    Parameters
    ----------
    epsilon : float > 0
        ``np.inf`` gives 0 (no noise).
    delta : float in (0, 1)

    Returns
    -------
    float
    """
    if not isinstance(epsilon, Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    if not isinstance(delta, Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    if math.isinf(epsilon):
        return 0.0
    return _analytic_gaussian_sigma(float(epsilon), float(delta))


@lru_cache(maxsize=1024)
def _analytic_gaussian_sigma(epsilon, delta):
    return _safe_noise(lambda sigma: _log_delta_gaussian(sigma, epsilon), math.log(delta),
                       float(_gaussian_sigma_start(epsilon, delta)), 1e-12)


# --------------------------------------------------------------------------
# Laplace noise
# --------------------------------------------------------------------------
def calibrate_laplace(epsilon, delta=0.0, *, steps=1):
    """The smallest Laplace noise multiplier (scale / L1 sensitivity) meeting (epsilon, delta).

    With ``delta = 0`` the answer is exact, ``steps / epsilon``; with
    ``delta > 0`` and several steps, PLD composition gives less noise.

    Examples
    --------
    >>> from skdpx.privacy import calibrate_laplace
    >>> calibrate_laplace(0.5)
    2.0
    """
    _check_target(epsilon, delta, need_delta=False)
    _check_steps_rate(steps, 1.0)
    if math.isinf(epsilon):
        return 0.0
    basic = steps / epsilon
    if delta == 0 or steps == 1:
        return basic
    z = _smallest_noise(
        lambda b: compute_epsilon(laplace_event(b, steps=steps), delta), epsilon, basic
    )
    return min(z, basic)


# --------------------------------------------------------------------------
# Pure DP as a Gaussian release, and back
# --------------------------------------------------------------------------
def pure_to_gaussian(epsilon):
    """The noise multiplier of a Gaussian mechanism that dominates every ``epsilon``-DP one.

    An ``epsilon``-DP mechanism's trade-off function is at least that of
    randomized response, ``f(a) = max(0, 1 - e^eps a, e^-eps (1 - a))``
    (Kairouz, Oh & Viswanath 2015), piecewise linear with its kink at
    ``a* = 1 / (1 + e^eps)``. The Gaussian trade-off ``G_mu`` is convex with
    ``G_mu(0) = f(0)`` and ``G_mu(1) = f(1)``, so it lies below ``f``
    everywhere as soon as it does at the kink: ``G_mu(a*) <= a*``, that is

        mu >= 2 Phi^-1(e^eps / (1 + e^eps))

    (Dong, Roth & Su 2022 for the trade-off view). So every ``epsilon``-DP
    mechanism is ``mu``-GDP with that ``mu`` (tight: randomized response
    attains it), and is accounted as a Gaussian release with noise
    multiplier ``1 / mu``. A ledger made only of Gaussians then composes
    exactly, and stays valid when each release's parameters are chosen from
    earlier outputs (the Gaussian privacy filter of Smith & Thakurta 2022).
    For small epsilon, ``mu ~ 1.2533 epsilon``.

    Parameters
    ----------
    epsilon : float > 0

    Returns
    -------
    noise_multiplier : float (0 for epsilon = inf)

    Examples
    --------
    >>> from skdpx.privacy import pure_to_gaussian
    >>> round(1 / pure_to_gaussian(0.01), 5)  # mu
    0.01253
    """
    if not isinstance(epsilon, Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    if math.isinf(epsilon):
        return 0.0
    # e^eps / (1 + e^eps) = 1 - 1 / (1 + e^eps): isf keeps the precision for small eps
    mu = 2.0 * float(scipy.special.ndtri(scipy.special.expit(epsilon)))
    return 1.0 / mu


def gaussian_to_pure(noise_multiplier):
    """The largest epsilon whose every epsilon-DP mechanism one Gaussian release dominates.

    The reverse of :func:`pure_to_gaussian`: ``epsilon = logit(Phi(mu / 2))``
    with ``mu = 1 / noise_multiplier``. Used to give an exponential mechanism
    the privacy cost of one Gaussian release of a given noise multiplier.
    """
    _check_noise(noise_multiplier)
    if noise_multiplier == 0:
        return math.inf
    epsilon = float(scipy.special.logit(scipy.special.ndtr(0.5 / noise_multiplier)))
    return epsilon * (1.0 - 1e-12)  # never above the exact value through rounding
