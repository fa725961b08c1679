"""Privacy accounting: events, tight composition and noise calibration.

Every epsilon that skdpx reports is computed here, from dp_accounting
``DpEvent`` objects:

* compositions of plain Gaussian mechanisms are exact (the composition of
  Gaussians with noise multipliers ``z_i`` is one Gaussian with
  ``z = (sum z_i^-2)^-1/2``, converted with the analytic Gaussian mechanism of
  Balle & Wang 2018);
* pure epsilon-DP compositions at ``delta = 0`` are exact (epsilons add up);
* everything else (Laplace, Poisson-subsampled mechanisms, mixtures) goes
  through privacy loss distributions (PLD, pessimistic estimates), with the
  Renyi DP accountant as a fallback for events PLD does not support.

Calibration inverts the very same function, so a noise level calibrated for a
target (epsilon, delta) is never reported above that target by a ledger.

Poisson-subsampled events are accounted for the add-or-remove-one
neighbouring relation (dp_accounting's default). A plain Gaussian or Laplace
event holds for whichever relation its sensitivity was computed under: each
estimator names its relation (see the privacy core's page).
"""

from collections import Counter, OrderedDict
from contextlib import contextmanager
from functools import lru_cache
import itertools
import json
import logging
import math
from numbers import Integral, Real
import threading

import attr
import dp_accounting
from dp_accounting import dp_event as _dp_event
from dp_accounting.pld import common as _pld_common
from dp_accounting.pld import pld_pmf as _pld_pmf
from dp_accounting.pld import privacy_loss_distribution as _pld
from dp_accounting.pld import privacy_loss_mechanism as _plm
from dp_accounting.rdp import RdpAccountant
from dp_accounting.rdp import rdp_privacy_accountant as _rdp
import numpy as np
import scipy.optimize
import scipy.special

__all__ = [
    "ApproxDpEvent",
    "FixedLossDpEvent",
    "MixtureDpEvent",
    "PureDpEvent",
    "WorstOfDpEvent",
    "calibrate_laplace",
    "calibrate_noise",
    "compose_events",
    "approx_event",
    "compute_epsilon",
    "event_from_json",
    "event_to_json",
    "gaussian_epsilon",
    "gaussian_event",
    "is_pure",
    "laplace_epsilon",
    "laplace_event",
    "pure_event",
    "pure_to_gaussian",
    "gaussian_to_pure",
]

#: Discretisation of privacy loss distributions (dp_accounting's default):
#: a smaller interval is tighter and slower. PLD estimates are pessimistic, so
#: the interval only ever makes a reported epsilon larger, never smaller.
VALUE_DISCRETIZATION_INTERVAL = 1e-4
#: The coarsest grid on which a calibration searches for its noise before the
#: answer is checked on the ledger's grid (``VALUE_DISCRETIZATION_INTERVAL``),
#: relative to the target epsilon: ``min(1e-3, 1e-3 * epsilon)``, never finer
#: than the ledger's (so for epsilon <= 0.1 the search is on the ledger's
#: grid, as before, with no gain). At 1e-3 a
#: PLD is built about 8 times faster; both grids are pessimistic (each bounds
#: epsilon from above), and the coarse one's excess grows as the grid
#: interval over epsilon, hence the relative cap.
SEARCH_DISCRETIZATION_INTERVAL = 1e-3

_ACCOUNTINGS = ("pld", "rdp")


@attr.define(frozen=True)
class PureDpEvent(_dp_event.DpEvent):
    """A mechanism that is ``epsilon``-DP with ``delta = 0``, nothing more known.

    Used for the exponential mechanism. Its privacy loss distribution is the
    worst case of all ``epsilon``-DP mechanisms (binary randomized response,
    Kairouz, Oh & Viswanath 2015), so composing it is tight and sound.
    """

    epsilon: float


@attr.define(frozen=True)
class ApproxDpEvent(_dp_event.DpEvent):
    """A mechanism that is (``epsilon``, ``delta``)-DP with ``delta > 0``, nothing more known.

    What an estimator's own cap guarantees about one of its fits before the
    fit is planned (``skdpx.model_selection.price_search``). Its privacy
    loss distribution is the worst case of all (``epsilon``, ``delta``)-DP
    mechanisms (Kairouz, Oh & Viswanath 2015; dp_accounting's
    ``from_privacy_parameters``: loss ``+inf`` with probability ``delta``,
    ``+-epsilon`` otherwise), so composing these is the optimal composition
    theorem for such mechanisms: about the sum of the epsilons at the sum of
    the deltas, and well below it at a larger delta when there are many
    small epsilons. A delta below the sum of the deltas has no finite
    epsilon. It is a price, never a release: no mechanism draws it.
    """

    epsilon: float
    delta: float


@attr.define(frozen=True)
class FixedLossDpEvent(_dp_event.DpEvent):
    """An ``epsilon``-DP release accounted as if its privacy loss were ``epsilon`` always.

    The accounting for a release whose output later releases depend on, such
    as the DP row count a fit plans with (:class:`~skdpx.privacy.FitCount`):
    a DP-SGD run planned from the count (its sampling rate and number of
    steps) is a different mechanism for each value of the count, so the tight
    composition of the count with the mechanism that happened to be chosen is
    not a bound on the whole fit.

    Its privacy loss distribution is a point mass at ``+epsilon`` (for both
    orders of the neighbouring pair). That pair's trade-off function,
    ``e^-epsilon (1 - a)``, lies below every ``epsilon``-DP mechanism's, so it
    is a sound (pessimistic) account of any of them, and composing it with
    anything shifts that thing's privacy profile by ``epsilon``:
    ``delta(eps) = delta_rest(eps - epsilon)``, which is basic composition.
    Basic composition holds whatever follows is chosen from this release's
    output: if every choice ``M_c`` of what follows is (eps - epsilon,
    delta)-DP, the pair is (eps, delta)-DP, since its privacy loss is the
    count's, at most epsilon, plus ``M_c``'s
    (``delta(eps) = E_c[delta_c(eps - L_count(c))] <= sup_c delta_c(eps - epsilon)``).
    Calibrating the rest with this event as ``prior`` (:func:`calibrate_noise`)
    gives exactly that: the rest is calibrated at ``eps - epsilon``.

    Renyi DP: ``epsilon`` at every order (the pair's divergence), which
    converts to basic composition as well.
    """

    epsilon: float


def fixed_loss_event(epsilon):
    """The :class:`FixedLossDpEvent` of an ``epsilon``-DP release (non-private for inf)."""
    if not isinstance(epsilon, Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    if math.isinf(epsilon):
        return dp_accounting.NonPrivateDpEvent()
    return FixedLossDpEvent(float(epsilon))


def _event_tuple(events):
    events = tuple(events)
    if not events or not all(isinstance(e, _dp_event.DpEvent) for e in events):
        raise ValueError("events must be a non-empty sequence of DpEvents.")
    return events


@attr.define(frozen=True)
class MixtureDpEvent(_dp_event.DpEvent):
    """One of ``events``, drawn uniformly at random (independently of the data) and named.

    A private search's run: it draws a candidate from a public pool and
    releases which one it drew. Its Renyi divergence at order ``a`` is the
    exact ``1/(a-1) log mean_c exp((a-1) eps_c(a))`` of the candidates'
    curves ``eps_c`` (the label is revealed, so the mixture is a
    disjoint one), never above their maximum. Accounted with Renyi DP only.
    """

    events: tuple = attr.field(converter=_event_tuple)


@attr.define(frozen=True)
class WorstOfDpEvent(_dp_event.DpEvent):
    """One of ``events``, chosen in a way that may depend on earlier releases.

    The refit of a private search (its candidate is the one selected), or
    the part of a holdout split that holds the protected row (drawn
    independently of the data, not revealed). Renyi divergence is jointly
    quasi-convex, and an adaptive choice composes with the worst option, so
    at every order it is the maximum of the options' curves. Accounted with
    Renyi DP only.
    """

    events: tuple = attr.field(converter=_event_tuple)


# --------------------------------------------------------------------------
# Event constructors
# --------------------------------------------------------------------------
def gaussian_event(noise_multiplier, *, steps=1, sample_rate=1.0):
    """The DpEvent of ``steps`` Gaussian releases (optionally Poisson-sampled).

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation divided by the L2 sensitivity.
    steps : int, default=1
        Number of compositions.
    sample_rate : float, default=1.0
        Poisson sampling rate of each step; 1.0 means no subsampling.

    Returns
    -------
    event : dp_accounting.DpEvent
    """
    _check_steps_rate(steps, sample_rate)
    _check_noise(noise_multiplier)
    if noise_multiplier == 0:
        return dp_accounting.NonPrivateDpEvent()
    if math.isinf(noise_multiplier):  # infinite noise releases nothing
        return dp_accounting.NoOpDpEvent()
    event = dp_accounting.GaussianDpEvent(float(noise_multiplier))
    if sample_rate < 1:
        event = dp_accounting.PoissonSampledDpEvent(float(sample_rate), event)
    return event if steps == 1 else dp_accounting.SelfComposedDpEvent(event, int(steps))


def laplace_event(noise_multiplier, *, steps=1):
    """The DpEvent of ``steps`` Laplace releases with scale/sensitivity ``noise_multiplier``."""
    _check_steps_rate(steps, 1.0)
    _check_noise(noise_multiplier)
    if noise_multiplier == 0:
        return dp_accounting.NonPrivateDpEvent()
    if math.isinf(noise_multiplier):  # infinite noise releases nothing
        return dp_accounting.NoOpDpEvent()
    event = dp_accounting.LaplaceDpEvent(float(noise_multiplier))
    return event if steps == 1 else dp_accounting.SelfComposedDpEvent(event, int(steps))


def compose_events(*events):
    """The composition of the given events, skipping None and no-ops (None if nothing is left)."""
    kept = [e for e in events if e is not None and not isinstance(e, dp_accounting.NoOpDpEvent)]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else dp_accounting.ComposedDpEvent(kept)


def pure_event(epsilon):
    """The DpEvent of one ``epsilon``-DP release (e.g. an exponential mechanism)."""
    if not isinstance(epsilon, Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    if math.isinf(epsilon):
        return dp_accounting.NonPrivateDpEvent()
    return PureDpEvent(float(epsilon))


def approx_event(epsilon, delta):
    """The DpEvent of a mechanism known only to be (``epsilon``, ``delta``)-DP.

    ``delta = 0`` gives :func:`pure_event`, ``epsilon = inf`` a non-private
    event; otherwise an :class:`ApproxDpEvent`.
    """
    if not isinstance(delta, Real) or not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}.")
    if delta == 0 or (isinstance(epsilon, Real) and math.isinf(epsilon)):
        return pure_event(epsilon)
    if not isinstance(epsilon, Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    return ApproxDpEvent(float(epsilon), float(delta))


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


def _check_noise(noise_multiplier):
    if not isinstance(noise_multiplier, Real) or not noise_multiplier >= 0:
        raise ValueError(f"noise_multiplier must be a number >= 0, got {noise_multiplier!r}.")


def _check_steps_rate(steps, sample_rate):
    if not isinstance(steps, Integral) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}.")
    if not isinstance(sample_rate, Real) or not 0 < sample_rate <= 1:
        raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}.")


# --------------------------------------------------------------------------
# Serialisation (for the file-backed ledger and for grouping equal events)
# --------------------------------------------------------------------------
def _event_classes():
    classes = {
        name: obj
        for name, obj in vars(_dp_event).items()
        if isinstance(obj, type) and issubclass(obj, _dp_event.DpEvent)
    }
    classes["PureDpEvent"] = PureDpEvent
    classes["ApproxDpEvent"] = ApproxDpEvent
    classes["FixedLossDpEvent"] = FixedLossDpEvent
    classes["MixtureDpEvent"] = MixtureDpEvent
    classes["WorstOfDpEvent"] = WorstOfDpEvent
    return classes


_EVENT_CLASSES = _event_classes()


def _to_obj(value):
    if isinstance(value, _dp_event.DpEvent):
        obj = {"type": type(value).__name__}
        for field in attr.fields(type(value)):
            obj[field.name] = _to_obj(getattr(value, field.name))
        return obj
    if isinstance(value, (list, tuple)):
        return [_to_obj(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot serialise {type(value).__name__} inside a DpEvent.")


def _from_obj(obj):
    if isinstance(obj, dict):
        kind = obj.get("type")
        if kind not in _EVENT_CLASSES:
            raise ValueError(f"unknown DpEvent type {kind!r}.")
        fields = {k: _from_obj(v) for k, v in obj.items() if k != "type"}
        return _EVENT_CLASSES[kind](**fields)
    if isinstance(obj, list):
        return [_from_obj(v) for v in obj]
    return obj


def event_to_json(event):
    """A canonical JSON string of a DpEvent (equal events give equal strings)."""
    if not isinstance(event, _dp_event.DpEvent):
        raise TypeError(f"expected a dp_accounting DpEvent, got {type(event).__name__}.")
    return json.dumps(_to_obj(event), sort_keys=True, separators=(",", ":"))


def event_from_json(text):
    """The DpEvent of :func:`event_to_json`'s string."""
    event = _from_obj(json.loads(text))
    if not isinstance(event, _dp_event.DpEvent):
        raise ValueError("the JSON text does not describe a DpEvent.")
    return event


# --------------------------------------------------------------------------
# Composition
# --------------------------------------------------------------------------
def _leaves(event, count, out):
    """Flatten ``event`` into ``out``: a Counter of (leaf JSON) -> count."""
    if isinstance(event, _dp_event.NoOpDpEvent):
        return
    if isinstance(event, _dp_event.SelfComposedDpEvent):
        _leaves(event.event, count * event.count, out)
    elif isinstance(event, _dp_event.ComposedDpEvent):
        for sub in event.events:
            _leaves(sub, count, out)
    else:
        out[event_to_json(event)] += count


@lru_cache(maxsize=4096)
def leaf_counts(event_json):
    """The leaves of a serialised event with their counts: a sorted tuple."""
    leaves = Counter()
    _leaves(event_from_json(event_json), 1, leaves)
    return tuple(sorted(leaves.items()))


@lru_cache(maxsize=4096)
def _leaf_is_pure(leaf_json):
    return _pure_epsilon(event_from_json(leaf_json)) is not None


def is_pure(event):
    """Whether ``event`` is a composition of pure (delta = 0) mechanisms."""
    return all(_leaf_is_pure(j) for j, _ in leaf_counts(event_to_json(event)))


def epsilon_of_spends(event_jsons, delta, *, accounting="pld"):
    """The epsilon at ``delta`` of the composition of serialised events."""
    leaves = Counter()
    for text, times in Counter(event_jsons).items():  # equal spends are counted once
        for leaf, count in leaf_counts(text):
            leaves[leaf] += count * times
    key = tuple(sorted(leaves.items()))
    return _epsilon_of_leaves(key, float(delta), accounting), all(_leaf_is_pure(j) for j, _ in key)


def _pure_epsilon(leaf):
    if isinstance(leaf, (PureDpEvent, FixedLossDpEvent)):
        return leaf.epsilon
    if isinstance(leaf, dp_accounting.LaplaceDpEvent) and leaf.noise_multiplier > 0:
        return 1.0 / leaf.noise_multiplier
    return None


def compute_epsilon(event, delta, *, accounting="pld"):
    """The epsilon of ``event`` at ``delta``, tightly composed.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        What was released (possibly a composition).
    delta : float in [0, 1]
    accounting : {"pld", "rdp"}, default="pld"
        Privacy loss distributions (tight) or Renyi DP. PLD falls back to
        RDP for events it does not support.

    Returns
    -------
    epsilon : float
        ``np.inf`` when the event contains a non-private release, or a
        mechanism that needs ``delta > 0`` and ``delta`` is 0.
    """
    if accounting not in _ACCOUNTINGS:
        raise ValueError(f"accounting must be one of {_ACCOUNTINGS}, got {accounting!r}.")
    if not 0 <= delta <= 1:
        raise ValueError(f"delta must be in [0, 1], got {delta!r}.")
    return _epsilon_of_leaves(leaf_counts(event_to_json(event)), float(delta), accounting)


@contextmanager
def _quiet_dp_accounting():
    """Hold back dp_accounting's absl warnings while it computes.

    They print the sampling rate and noise of the event being accounted
    (so the number of rows) into the user's log; the numbers they warn about
    are handled here (an RDP order that fails is excluded, as they say).
    """
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@lru_cache(maxsize=1024)
def _epsilon_of_leaves(leaves, delta, accounting, vdi=VALUE_DISCRETIZATION_INTERVAL):
    with _quiet_dp_accounting():
        return _epsilon_of_leaves_loud(leaves, delta, accounting, vdi)


def _epsilon_of_leaves_loud(leaves, delta, accounting, vdi=VALUE_DISCRETIZATION_INTERVAL):
    if not leaves:
        return 0.0
    events = [(event_from_json(j), c) for j, c in leaves]
    fixed = [(e, c) for e, c in events if isinstance(e, FixedLossDpEvent)]
    if fixed:
        # a fixed loss shifts the rest's privacy profile: its epsilon adds up,
        # exactly, at every delta (FixedLossDpEvent)
        rest = tuple((j, c) for j, c in leaves
                     if not isinstance(event_from_json(j), FixedLossDpEvent))
        shift = float(sum(e.epsilon * c for e, c in fixed))
        return _epsilon_of_leaves_loud(rest, delta, accounting, vdi) + shift
    if any(isinstance(e, _dp_event.NonPrivateDpEvent) for e, _ in events):
        return math.inf
    if delta >= 1:
        return 0.0
    pure = [_pure_epsilon(e) for e, _ in events]
    if delta == 0:
        if all(p is not None for p in pure):
            return float(sum(p * c for p, (_, c) in zip(pure, events)))
        return math.inf
    if all(isinstance(e, dp_accounting.GaussianDpEvent) for e, _ in events):
        # Exact: a composition of Gaussians is one Gaussian.
        # (z -> c / z / z: 0 for z = inf, no overflow for z > 1e154)
        precision = sum(c / e.noise_multiplier / e.noise_multiplier for e, c in events)
        if precision == 0:
            return 0.0
        return _gaussian_epsilon_exact(precision**-0.5, delta)
    try:
        if accounting == "pld" and (pld := _pld_of(events, vdi)) is not None:
            eps = float(pld.get_epsilon_for_delta(delta))
        else:
            eps = _rdp_epsilon(events, delta)
    except (OverflowError, MemoryError, ZeroDivisionError, FloatingPointError):
        # noise multipliers so extreme (1e-300, 1e200 with sampling) that the
        # PLD grid or the RDP sums overflow: an upper bound instead
        eps = _epsilon_unsampled_bound(events, delta)
    if all(p is not None for p in pure):
        # the exact delta = 0 sum is valid at every delta; never report more
        eps = min(eps, float(sum(p * c for p, (_, c) in zip(pure, events))))
    return eps


def _epsilon_unsampled_bound(events, delta):
    """An upper bound on the epsilon of ``events`` at ``delta`` (0 < delta < 1)
    for when exact accounting overflows: Poisson sampling removed from every
    leaf (sampling never increases the privacy loss), Gaussian leaves composed
    exactly, anything else making the bound infinite."""
    precision = 0.0
    for event, count in events:
        if isinstance(event, dp_accounting.PoissonSampledDpEvent):
            event = event.event
        if not isinstance(event, dp_accounting.GaussianDpEvent) or event.noise_multiplier == 0:
            return math.inf
        precision += count / event.noise_multiplier / event.noise_multiplier
    if math.isinf(precision):
        return math.inf
    return 0.0 if precision == 0 else _gaussian_epsilon_exact(precision**-0.5, delta)


def _log_delta_gaussian(sigma, eps):
    """log delta(eps) of one Gaussian release (Balle & Wang 2018, eq. 6)."""
    t_star = eps * sigma + 1.0 / (2.0 * sigma)
    x = scipy.special.log_ndtr(1.0 / sigma - t_star)
    y = eps + scipy.special.log_ndtr(-t_star)
    return x + math.log1p(-math.exp(y - x)) if y < x else -math.inf


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


def _gaussian_epsilon_exact(sigma, delta, tol=1e-12):
    """dp_accounting's ``get_epsilon_gaussian``, step for step, on scipy.special.

    The same analytic Gaussian mechanism and the same root search (doubling
    bracket, Brent's method to ``tol``); ``scipy.special.log_ndtr`` in place of
    ``scipy.stats.norm.logcdf`` makes it about ten times faster, which
    matters to a ledger that recomputes its total at every spend.
    ``tests/test_calibration.py`` checks that both agree.
    """
    if delta >= 1 or sigma == math.inf:
        return 0.0
    if sigma == 0 or delta == 0:
        return math.inf
    log_delta = math.log(delta)
    if _log_delta_gaussian(sigma, 0.0) < log_delta:
        return 0.0
    eps_lo, eps_hi = 0.0, 1.0
    while _log_delta_gaussian(sigma, eps_hi) > log_delta:
        eps_lo, eps_hi = eps_hi, eps_hi * 10
    return float(scipy.optimize.brentq(
        lambda eps: _log_delta_gaussian(sigma, eps) - log_delta, eps_lo, eps_hi, xtol=tol,
    ))


#: Composed PLDs of the first leaves of recent compositions, by (vdi, leaves):
#: a ledger's next total starts from the longest prefix it shares with them
_PREFIXES = OrderedDict()
_MAX_PREFIXES = 32  # a DP-SGD-sized PLD is about 1 MB
_PREFIXES_LOCK = threading.Lock()


def _pld_of(events, vdi=VALUE_DISCRETIZATION_INTERVAL):
    """The composed PLD of (leaf, count) pairs, or None if a leaf is unsupported.

    The non-Gaussian leaves are composed left to right in their canonical
    (sorted) order, and every partial composition is memoised: the total
    of a ledger after a new spend starts from the longest run of first
    leaves it shares with a recent total (the whole previous total when the
    new leaf sorts last), so a spend composes only what changed from that
    point. The same leaves always give the same PLD, to the last bit,
    whatever was computed before. The Gaussian leaves are one Gaussian
    (their precisions add up), composed last.
    """
    pairs, gaussian_precision = [], 0.0
    for event, count in events:
        if isinstance(event, dp_accounting.GaussianDpEvent):
            gaussian_precision += count / event.noise_multiplier**2
        else:
            pairs.append((event_to_json(event), count))
    keys = [(vdi, *pairs[:i]) for i in range(len(pairs) + 1)]
    start, total = 0, None
    with _PREFIXES_LOCK:
        for i in range(len(pairs), 0, -1):
            if (found := _PREFIXES.get(keys[i])) is not None:
                start, total = i, found
                _PREFIXES.move_to_end(keys[i])
                break
    for i in range(start, len(pairs)):
        pld = _leaf_pld(*pairs[i], vdi)
        if pld is None:
            return None
        total = pld if total is None else total.compose(pld)
        with _PREFIXES_LOCK:
            _PREFIXES[keys[i + 1]] = total
            if len(_PREFIXES) > _MAX_PREFIXES:
                _PREFIXES.popitem(last=False)
    if gaussian_precision > 0:
        pld = gaussian_pld(gaussian_precision**-0.5, vdi=vdi)
        total = pld if total is None else total.compose(pld)
    return total


def gaussian_pld(noise_multiplier, sampling_prob=1.0, vdi=VALUE_DISCRETIZATION_INTERVAL):
    """dp_accounting's PLD of the (Poisson-subsampled) Gaussian mechanism, built fast.

    The same PLD as ``from_gaussian_mechanism(noise_multiplier,
    sampling_prob=sampling_prob, value_discretization_interval=vdi)`` with
    its defaults (sensitivity 1, pessimistic connect-the-dots, mass
    truncation at e^-50, add-or-remove-one), from dp_accounting's own
    pieces: the privacy loss (``GaussianPrivacyLoss``), its bounds, its
    cdfs and the pessimistic connect-the-dots PMF. The one difference is
    how the hockey-stick divergence is evaluated on the grid of losses:
    dp_accounting inverts the privacy loss point by point in Python (about
    60,000 points at the default grid for DP-SGD, 0.2-1 s per PLD,
    most of a calibration), where :func:`_inverse_loss` inverts all the grid
    at once with numpy, with the same operations. The divergences are the
    same floats (``tests/test_calibration.py`` compares them with
    dp_accounting's ``get_delta_for_epsilon`` on whole grids, to the bit,
    and the PLDs' epsilons).
    """
    pmfs, vdi = [], float(vdi)
    adjacencies = [_plm.AdjacencyType.REMOVE]
    if sampling_prob < 1:
        adjacencies.append(_plm.AdjacencyType.ADD)
    for adjacency in adjacencies:
        loss = _plm.GaussianPrivacyLoss(noise_multiplier, sampling_prob=sampling_prob,
                                        adjacency_type=adjacency)
        bounds = loss.connect_dots_bounds()
        lower = math.floor(bounds.epsilon_lower / vdi)
        upper = math.ceil(bounds.epsilon_upper / vdi)
        epsilons = np.arange(lower, upper + 1) * vdi
        with np.errstate(invalid="ignore"):
            deltas = _hockey_stick(loss, epsilons)
        if not np.isfinite(deltas).all():
            # a sampling rate within ~1e-12 of 1 (or subnormal): log(1/q - 1)
            # has lost its precision. dp_accounting's own route, which raises
            # there (or answers), rather than a NaN.
            return _pld.from_gaussian_mechanism(
                noise_multiplier, sampling_prob=sampling_prob, value_discretization_interval=vdi)
        pmfs.append(_pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(
            vdi, lower, upper, deltas))
    return _pld.PrivacyLossDistribution(*pmfs)


def _hockey_stick(loss, epsilons):
    """``loss.get_delta_for_epsilon(epsilons)``, with the inverse loss vectorised."""
    q = loss.sampling_prob
    epsilons = np.asarray(epsilons, dtype=float)
    deltas = np.zeros_like(epsilons)
    if q == 1:
        inside = np.ones(epsilons.shape, dtype=bool)
    elif loss.adjacency_type == _plm.AdjacencyType.ADD:
        inside = epsilons < -math.log1p(-q)  # beyond it, the divergence is 0
    else:
        inside = epsilons > math.log1p(-q)  # below it, 1 - e^epsilon
        deltas[~inside] = -np.expm1(epsilons[~inside])
    x = _inverse_loss(loss, epsilons[inside])
    deltas[inside] = (loss.mu_upper_cdf(x)
                      - np.exp(epsilons[inside] + loss.mu_lower_log_cdf(x)))
    return np.clip(deltas, 0, 1)


def _inverse_loss(loss, epsilons):
    """The largest x whose privacy loss is at least each epsilon (Gaussian, vectorised).

    Without subsampling the Gaussian's loss is linear in x: for "remove"
    ``L(x) = -(x + 1/2) / sigma^2``, and "add" is the same shifted by the
    sensitivity. Subsampling at q maps a loss l to the unsubsampled one:
    ``log((e^l - (1 - q)) / q)`` for remove and ``-log((e^-l - (1 - q)) / q)``
    for add, computed as log(e^a - e^b) with ``a = l - log q`` (resp. -l)
    and ``b = log(1/q - 1)``. Where l is (to 1e-9) the loss's limit
    ``-+log(1 - q)``, the inverse is -+infinity. The operations are
    dp_accounting's, in its order, so the grid's divergences are the same
    floats as its own (checked to the bit in the tests).
    """
    q, s = loss.sampling_prob, loss.sensitivity
    remove = loss.adjacency_type == _plm.AdjacencyType.REMOVE
    sign = 1.0 if remove else -1.0
    if q == 1:
        unsampled = epsilons
    else:
        a = np.log(1 / q) + sign * epsilons
        b = np.log(1 / q - 1)
        with np.errstate(divide="ignore"):
            unsampled = sign * (a + np.log1p(-np.exp(b - a)))
        # at l = 0, log(1/q + (1 - 1/q)) exactly as dp_accounting has it
        unsampled = np.where(epsilons == 0, sign * np.log(1 / q + (1 - 1 / q)), unsampled)
        edge = sign * math.log(1 - q)
        limit = np.abs(epsilons - edge) <= 1e-9 * np.maximum(np.abs(epsilons), abs(edge))
        unsampled = np.where(limit, -sign * np.inf, unsampled)
    x = -0.5 * s - unsampled * loss.standard_deviation**2 / s
    return x if remove else x + s


@lru_cache(maxsize=256)
def _leaf_pld(leaf_json, count, vdi=VALUE_DISCRETIZATION_INTERVAL):
    """The PLD of ``count`` compositions of one non-Gaussian leaf (or None), memoised.

    Calibrating a release against a prior (e.g. the clustering's noise
    against the DP-SGD steps already planned) evaluates the same prior at
    every step of the search: its PLD, the slow part, is built once.
    dp_accounting's PLDs are never modified in place (compose returns a new
    one), so sharing them is safe.
    """
    event = event_from_json(leaf_json)
    if isinstance(event, (PureDpEvent, ApproxDpEvent)):
        params = _pld_common.DifferentialPrivacyParameters(
            event.epsilon, getattr(event, "delta", 0.0))
        pld = _pld.from_privacy_parameters(params, value_discretization_interval=vdi)
    elif isinstance(event, dp_accounting.LaplaceDpEvent):
        pld = _pld.from_laplace_mechanism(event.noise_multiplier, value_discretization_interval=vdi)
    elif isinstance(event, dp_accounting.PoissonSampledDpEvent) and isinstance(
        event.event, (dp_accounting.GaussianDpEvent, dp_accounting.LaplaceDpEvent)
    ):
        q, inner = event.sampling_probability, event.event
        if inner.noise_multiplier == 0:
            return None
        if isinstance(inner, dp_accounting.GaussianDpEvent):
            pld = gaussian_pld(inner.noise_multiplier, sampling_prob=q, vdi=vdi)
        else:
            pld = _pld.from_laplace_mechanism(
                inner.noise_multiplier, sampling_prob=q, value_discretization_interval=vdi
            )
    else:
        return None
    return pld.self_compose(count) if count > 1 else pld


def _rdp_repeat_and_select(orders, rdp, mean, shape):
    """Papernot & Steinke's bound on a Renyi curve, as dp_accounting computes it.

    dp_accounting applies it inside its accountant to its own events only;
    the function it uses takes any curve (a mixture of candidates, say). It
    is the one private dp_accounting name skdpx uses: tests/test_selection.py
    checks it against the accountant on dp_accounting's own events.
    """
    transform = getattr(_rdp, "_compute_rdp_repeat_and_select", None)
    if transform is None:  # pragma: no cover - a dp_accounting that moved it
        raise RuntimeError("this dp_accounting has no _compute_rdp_repeat_and_select: private "
                           "selection cannot be accounted. Install dp-accounting 0.4.x-0.5.x.")
    return transform(orders, rdp, mean, shape)


#: The Renyi orders of every RDP computation (dp_accounting's defaults).
RDP_ORDERS = tuple(float(a) for a in RdpAccountant().orders)


def _rdp_epsilon(events, delta):
    orders = np.asarray(RDP_ORDERS)
    total = np.zeros_like(orders)
    for event, count in events:
        total = total + count * rdp_curve(event)
    if not np.isfinite(total).any():
        return math.inf
    return float(_rdp.compute_epsilon(orders, total, delta)[0])


def rdp_curve(event):
    """The Renyi DP of ``event`` at each of :data:`RDP_ORDERS` (an ndarray).

    dp_accounting's Renyi accountant for its own events, plus skdpx's:
    :class:`PureDpEvent` (``min(eps, a eps^2 / 2)``: an epsilon-DP mechanism
    is ``eps^2/2``-zCDP, Bun & Steinke 2016, and its divergence never
    exceeds ``eps``), :class:`MixtureDpEvent` (log-mean-exp of the
    candidates' curves), :class:`WorstOfDpEvent` (their maximum) and a
    ``RepeatAndSelectDpEvent`` over any of these (Papernot & Steinke 2022,
    Theorems 2 and 6, as dp_accounting computes them). An
    :class:`ApproxDpEvent` has no Renyi bound: ``inf`` at every order.
    """
    return _rdp_curve_json(event_to_json(event)).copy()


@lru_cache(maxsize=512)
def _rdp_curve_json(event_json):
    with _quiet_dp_accounting():
        return _rdp_curve_of(event_from_json(event_json))


def _rdp_curve_of(event):
    orders = np.asarray(RDP_ORDERS)
    if isinstance(event, _dp_event.NoOpDpEvent):
        return np.zeros_like(orders)
    if isinstance(event, (ApproxDpEvent, _dp_event.NonPrivateDpEvent)):
        return np.full_like(orders, np.inf)
    if isinstance(event, PureDpEvent):
        return np.minimum(event.epsilon, orders * event.epsilon**2 / 2)
    if isinstance(event, FixedLossDpEvent):
        return np.full_like(orders, event.epsilon)
    if isinstance(event, _dp_event.ComposedDpEvent):
        return sum((_rdp_curve_of(e) for e in event.events), np.zeros_like(orders))
    if isinstance(event, _dp_event.SelfComposedDpEvent):
        return event.count * _rdp_curve_of(event.event)
    if isinstance(event, WorstOfDpEvent):
        return np.max([_rdp_curve_of(e) for e in event.events], axis=0)
    if isinstance(event, MixtureDpEvent):
        curves = np.array([_rdp_curve_of(e) for e in event.events])
        with np.errstate(over="ignore"):
            logmeanexp = scipy.special.logsumexp((orders - 1) * curves, axis=0) - math.log(
                len(curves))
        return np.where(np.isinf(curves).any(axis=0), np.inf, logmeanexp / (orders - 1))
    if isinstance(event, _dp_event.RepeatAndSelectDpEvent):
        inner = _rdp_curve_of(event.event)
        if not np.isfinite(inner).any():
            return np.full_like(orders, np.inf)
        return np.asarray(_rdp_repeat_and_select(orders, inner, event.mean, event.shape),
                          dtype=float)
    accountant = RdpAccountant(list(orders))
    if not accountant.supports(event):
        return np.full_like(orders, np.inf)
    accountant.compose(event)
    return np.asarray(accountant.rdp, dtype=float)


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


def gaussian_epsilon(noise_multiplier, delta, *, steps=1, sample_rate=1.0, accounting="pld"):
    """The epsilon at ``delta`` of a (subsampled, composed) Gaussian mechanism.

    The reverse of :func:`calibrate_noise`.

    Examples
    --------
    >>> from skdpx.privacy import gaussian_epsilon
    >>> round(gaussian_epsilon(1.3, 1e-5, steps=2400, sample_rate=500 / 60000), 2)
    1.47
    """
    if not noise_multiplier >= 0:
        raise ValueError(f"noise_multiplier must be >= 0, got {noise_multiplier!r}.")
    event = gaussian_event(noise_multiplier, steps=steps, sample_rate=sample_rate)
    return compute_epsilon(event, delta, accounting=accounting)


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


def laplace_epsilon(noise_multiplier, delta=0.0, *, steps=1):
    """The epsilon at ``delta`` of ``steps`` Laplace releases; the reverse of :func:`calibrate_laplace`."""
    if not noise_multiplier >= 0:
        raise ValueError(f"noise_multiplier must be >= 0, got {noise_multiplier!r}.")
    return compute_epsilon(laplace_event(noise_multiplier, steps=steps), delta)
