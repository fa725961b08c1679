"""Calibration: the least noise whose release meets a target (epsilon, delta).

:func:`calibrate_noise` (Gaussian, optionally Poisson-subsampled, composed,
after other releases), :func:`calibrate_laplace` and
:func:`analytic_gaussian_sigma` invert :mod:`._composition`'s epsilon, the very
function every ledger reports with, so a noise calibrated for a target is
never reported above it. Every search for a noise goes through one monotone
root finder, :func:`_smallest_noise`: the noise it returns meets the target
as computed, never just above it.
"""

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


def analytic_gaussian_sigma(epsilon, delta):
    """The smallest noise multiplier of one (epsilon, delta)-DP Gaussian release.

    The analytic Gaussian mechanism (Balle & Wang 2018): dp_accounting's
    ``get_sigma_gaussian`` finds the root of ``delta(epsilon; sigma) =
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
    sigma = float(dp_accounting.get_sigma_gaussian(epsilon, delta))
    log_delta = math.log(delta)
    while _log_delta_gaussian(sigma, epsilon) > log_delta:
        sigma *= 1 + 1e-12
    return sigma


# --------------------------------------------------------------------------
# Calibration
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


#: |log(epsilon / target)| used for an epsilon of 0 or infinity in the root search
_LOG_RATIO_CAP = 50.0


def _smallest_noise(epsilon_of, epsilon, hint, step=math.log(2.0), xtol=1e-7, reuse=False):
    """The smallest noise multiplier z with ``epsilon_of(z) <= epsilon``.

    ``epsilon_of`` is non-increasing in z (up to floating point in the last
    bits). Bracket (from ``hint``, in steps on log z of ``step``, ``step``,
    then doubling, so that a far root is reached in a few; downwards the
    doubling stops at 25%, or at ``step`` if larger) and root-find on
    log z to ``xtol`` with one and the same function, then step just above
    the root, so the answer is never above the target.

    The root is found on log epsilon against log z, where the curve is
    nearly straight (epsilon falls roughly as a power of the noise): Brent's
    interpolation lands within a fraction of a percent of the root from a
    bracket twice as wide, so each calibration takes a few evaluations of
    the PLD fewer than on epsilon itself. The sign, so the bracket and the
    answer's side of the target, is the same.

    With ``reuse`` (for a rough root, where ``xtol`` is wide), the smallest
    noise the search has already found within target, if it is at most the
    root plus ``xtol``, is the answer: no evaluation just to step above the
    root.
    Without it the answer keeps its margin of ``xtol`` above the root, which
    a search on a proxy of the epsilon that matters (the search grid's, less
    an extrapolated excess) needs to absorb the proxy's error.
    """
    within = []  # the log noises evaluated within the target

    def g(t):
        value = epsilon_of(math.exp(t))
        if math.isnan(value):
            return _LOG_RATIO_CAP
        if not value > 0:  # zero (or the coarse search's shifted value below it)
            within.append(t)
            return -_LOG_RATIO_CAP
        ratio = min(math.log(value / epsilon), _LOG_RATIO_CAP)  # inf past the cap
        if ratio <= 0:
            within.append(t)
        return ratio

    def steps(cap):
        return (min(step * 2 ** max(k - 1, 0), max(step, cap)) for k in itertools.count())

    hi, lo = math.log(hint), None  # lo: a log noise known to be over the target
    up = steps(math.inf)
    while g(hi) > 0:
        lo, hi = hi, hi + next(up)
        if hi > math.log(1e12):
            raise ValueError(f"no finite noise reaches epsilon = {epsilon}.")
    if lo is None:
        # downwards the steps grow to 25% at most: a PLD far below the root
        # (tiny noise over many steps) can take minutes
        down = steps(math.log(1.25))
        lo = hi - next(down)
        while g(lo) <= 0:
            hi, lo = lo, lo - next(down)
            if lo < math.log(1e-12):
                return math.exp(hi)
    root = scipy.optimize.brentq(g, lo, hi, xtol=xtol, rtol=4 * np.finfo(float).eps)
    t = min(root + xtol, hi)
    if reuse:
        t = min([u for u in within if u <= t], default=t)
    z = math.exp(t)
    while epsilon_of(z) > epsilon:
        z *= 1 + 1e-6
    return z


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
        # Exact: T Gaussians with multiplier z are one Gaussian with z / sqrt(T).
        sigma = _smallest_noise(
            lambda z: _gaussian_epsilon_exact(z, delta),
            epsilon,
            dp_accounting.get_sigma_gaussian(epsilon, delta),
        )
        z = sigma * math.sqrt(steps)
        # the product can land a rounding error above the target: step up
        while compute_epsilon(gaussian_event(z, steps=steps), delta) > epsilon:
            z *= 1 + 1e-12
        return z
    prior = None if prior_json is None else event_from_json(prior_json)
    if prior is not None and compute_epsilon(prior, delta, accounting=accounting) >= epsilon:
        raise ValueError(
            f"the prior releases alone already reach epsilon = {epsilon} at delta = {delta}."
        )

    def epsilon_at(z, vdi=VALUE_DISCRETIZATION_INTERVAL):
        leaves = _calibration_leaves(z, steps, sample_rate, prior)
        if vdi == VALUE_DISCRETIZATION_INTERVAL:  # the ledger's call, so its cache key
            return _epsilon_of_leaves(leaves, delta, accounting)
        return _epsilon_of_leaves(leaves, delta, accounting, vdi)

    hint = _pld_hint(epsilon, delta, steps, sample_rate, accounting, prior_json)
    if accounting != "pld":
        return _smallest_noise(epsilon_at, epsilon, *hint)
    # PLD: the root on a coarser grid (fast), then checked on the ledger's
    # grid, which computes the epsilon every ledger and user will see
    vdi = max(VALUE_DISCRETIZATION_INTERVAL,
              min(SEARCH_DISCRETIZATION_INTERVAL, SEARCH_DISCRETIZATION_INTERVAL * epsilon))

    seen = {}  # the search grid's epsilons so far, by noise

    def coarse(z):
        seen[z] = epsilon_at(z, vdi)
        return seen[z]

    def slope_at(z):
        """-d epsilon / d log z on the search grid near z: the chord between
        the noise evaluated nearest z and the next nearest at least 0.1% from
        it, both within 2% of z (the search's points); else a chord from z to
        0.1% below it. (The search grid's epsilon is rough on shorter scales:
        chords of 0.001% were seen from -0.9 to 9.8 against 4.9.)"""
        near = sorted((u for u in seen if abs(math.log(u / z)) <= 0.02),
                      key=lambda u: abs(math.log(u / z)))
        for a in near[:1]:
            for b in near[1:]:
                if abs(math.log(a / b)) >= 1e-3:
                    return (seen[b] - seen[a]) / math.log(a / b)
        return (coarse(z * (1 - 1e-3)) - coarse(z)) / 1e-3

    def excess_at(z):
        """The search grid's excess over the ledger's at z, extrapolated."""
        return max(0.0, (epsilon_at(z, 2 * vdi) - coarse(z)) / 3
                   * (1 - (VALUE_DISCRETIZATION_INTERVAL / vdi) ** 2))

    def step_to_root(z, value):
        """The noise at which an epsilon of ``value`` at z meets the target,
        along the search grid's slope, plus the searches' margin (1e-6 on log
        z); None where the slope is no guide (flat, or a step over 0.1%)."""
        slope = slope_at(z)
        if not slope > 0 or not abs(value - epsilon) <= 1e-3 * slope:
            return None
        return z * math.exp((value - epsilon) / slope + 1e-6)

    def root_less(excess, start, step=math.log(1.01)):
        """The root of the search grid's epsilon less ``excess``, searched from ``start``."""
        return _smallest_noise(lambda t: coarse(t) - excess, epsilon, start, step, xtol=1e-6)

    hint, step, xtol = hint
    if vdi == VALUE_DISCRETIZATION_INTERVAL:  # epsilon <= 0.1: the search is on the ledger's grid
        return _smallest_noise(epsilon_at, epsilon, hint, step, xtol)
    if prior is not None and _epsilon_of_leaves(
            leaf_counts(prior_json), delta, accounting, vdi) >= epsilon:
        # the search grid overstates the prior past the target (the ledger's
        # does not): search the ledger's grid
        return _smallest_noise(epsilon_at, epsilon, hint, math.log(2.0), xtol)
    # A pessimistic connect-the-dots grid overstates epsilon by about
    # c * interval^2 (it is second order): the search grid's excess over the
    # ledger's is extrapolated from the search grid and one twice as coarse
    # (at the root, to within 3% in four DP-SGD settings; 21% in one where
    # the excess is tiny, 7e-7), and the root of the search grid's epsilon less
    # that excess is the ledger's root, found with search-grid evaluations
    # only. The excess is measured at the hint, and again at that root if it
    # lies more than 1% from the hint (the excess changes with the noise:
    # the hint's grid can overstate hundreds of compositions by 20%), with a
    # step along the search grid's slope to the new root. That noise is
    # checked on the ledger's grid (whose PLD the ledger reuses when the
    # release is spent) and kept if it meets the target with the noise
    # within about 1e-5 of the root (judged by the search grid's slope).
    # Else the ledger's epsilon there, with the same slope, gives the next
    # noise to check; and if that does not settle it either (a prior that
    # dominates the target, where the slope is flat), the root is found on
    # the ledger's grid itself, bracketed by the noises already checked.
    excess = excess_at(hint)
    z = root_less(excess, hint, step)
    if abs(math.log(z / hint)) > 1e-2:
        excess = excess_at(z)
        z = step_to_root(z, coarse(z) - excess) or root_less(excess, z)
    below, above = None, None  # the largest noise over, the smallest within target
    for attempt in range(2):
        fine = epsilon_at(z)
        if fine <= epsilon:
            above = z if above is None else min(above, z)
            if epsilon - fine <= 1e-5 * slope_at(z):
                return z
        else:
            below = z if below is None else max(below, z)
        if attempt == 0:
            z = step_to_root(z, fine) or root_less(coarse(z) - fine, z)
    if below is not None and above is not None and below < above:
        return _smallest_noise(epsilon_at, epsilon, above, math.log(above / below), xtol)
    # one side only: the root is usually near (a slope step just missed it)
    start = above if above is not None else below
    return _smallest_noise(epsilon_at, epsilon, start, math.log(1.001), xtol)


def _calibration_leaves(z, steps, sample_rate, prior):
    """The (leaf, count) key of ``prior`` composed with the Gaussian steps at noise z."""
    event = gaussian_event(z, steps=steps, sample_rate=sample_rate)
    if prior is not None:
        event = _dp_event.ComposedDpEvent([prior, event])
    return leaf_counts(event_to_json(event))


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


#: The grid of the calibration's first, rough root, relative to epsilon
#: (never finer than ``SEARCH_DISCRETIZATION_INTERVAL``).
HINT_DISCRETIZATION_INTERVAL = 1e-2


@lru_cache(maxsize=1024)
def _coarse_hint(epsilon, delta, steps, sample_rate, prior_json):
    prior = None if prior_json is None else event_from_json(prior_json)
    vdi = max(SEARCH_DISCRETIZATION_INTERVAL, HINT_DISCRETIZATION_INTERVAL * epsilon)

    def rough(z):
        return _epsilon_of_leaves(_calibration_leaves(z, steps, sample_rate, prior), delta,
                                  "pld", vdi)

    try:
        if prior is not None and _epsilon_of_leaves(
                leaf_counts(prior_json), delta, "pld", vdi) >= epsilon:
            raise ValueError
        z_rough = _smallest_noise(rough, epsilon, 1.0, math.log(2.0), xtol=1e-2, reuse=True)
    except ValueError:
        # the coarse grid overstates the prior past the target, where the
        # ledger's grid does not: no hint, a wide bracket
        return 1.0, math.log(2.0), 1e-5
    return z_rough, math.log(1.05), 1e-5  # slow PLD: the noise to 0.001% is enough


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


