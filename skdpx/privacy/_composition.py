"""Composition: the epsilon of a set of releases, tightly composed.

Every epsilon that skdpx reports is computed here, from dp_accounting
``DpEvent`` objects (:mod:`._events`):

* compositions of plain Gaussian mechanisms are exact (the composition of
  Gaussians with noise multipliers ``z_i`` is one Gaussian with
  ``z = (sum z_i^-2)^-1/2``, converted with the analytic Gaussian mechanism of
  Balle & Wang 2018);
* pure epsilon-DP compositions at ``delta = 0`` are exact (epsilons add up);
* everything else (Laplace, Poisson-subsampled mechanisms, mixtures) goes
  through privacy loss distributions (PLD, pessimistic estimates), with the
  Renyi DP accountant as a fallback for events PLD does not support.

An event is flattened into its leaves (canonical JSON, with their counts):
equal leaves are composed once, in one canonical order, so the same spends
give the same epsilon to the last bit whatever order they came in, and the
composed PLDs of a ledger's first leaves are memoised (a spend composes only
what it adds). :mod:`._calibration` inverts the very same function, so a
noise level calibrated for a target (epsilon, delta) is never reported above
that target by a ledger.

Poisson-subsampled events are accounted for the add-or-remove-one
neighbouring relation (dp_accounting's default). A plain Gaussian or Laplace
event holds for whichever relation its sensitivity was computed under: each
estimator names its relation (see the privacy core's page).
"""

from collections import Counter, OrderedDict
from contextlib import contextmanager
from functools import lru_cache
import logging
import math
import threading

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

from ._events import (
    ApproxDpEvent,
    FixedLossDpEvent,
    MixtureDpEvent,
    PureDpEvent,
    WorstOfDpEvent,
    event_from_json,
    event_to_json,
    gaussian_event,
    laplace_event,
)

__all__ = [
    "RDP_ORDERS",
    "compute_epsilon",
    "epsilon_of_spends",
    "gaussian_epsilon",
    "gaussian_pld",
    "is_pure",
    "laplace_epsilon",
    "leaf_counts",
    "rdp_curve",
]

#: Discretisation of privacy loss distributions (dp_accounting's default):
#: a smaller interval is tighter and slower. PLD estimates are pessimistic, so
#: the interval only ever makes a reported epsilon larger, never smaller.
VALUE_DISCRETIZATION_INTERVAL = 1e-4

_ACCOUNTINGS = ("pld", "rdp")

# --------------------------------------------------------------------------
# Composition
# --------------------------------------------------------------------------
def _leaves(event, count, out, key=event_to_json):
    """Flatten ``event`` into ``out``: a Counter of ``key(leaf)`` (its JSON) -> count.

    The leaves are the events that are neither compositions nor no-ops.
    """
    if isinstance(event, _dp_event.NoOpDpEvent):
        return
    if isinstance(event, _dp_event.SelfComposedDpEvent):
        _leaves(event.event, count * event.count, out, key)
    elif isinstance(event, _dp_event.ComposedDpEvent):
        for sub in event.events:
            _leaves(sub, count, out, key)
    else:
        out[key(event)] += count


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
    if not isinstance(event, _dp_event.DpEvent):
        raise TypeError(f"expected a dp_accounting DpEvent, got {type(event).__name__}.")
    pure = Counter()  # walked as events: True / False -> how many leaves
    _leaves(event, 1, pure, key=lambda leaf: _pure_epsilon(leaf) is not None)
    return not pure[False]


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


def _gaussian_sigma_start(epsilon, delta):
    """A root of ``delta(epsilon; sigma) = delta`` for one Gaussian release.

    The analytic Gaussian mechanism (Balle & Wang 2018, eq. 6, as
    :func:`_log_delta_gaussian` computes it): ``log delta`` decreases in
    sigma, so a bracket grown by factors of 2 from the classic Gaussian
    mechanism's ``sqrt(2 log(1.25 / delta)) / epsilon`` and Brent's method
    find the root to about 1e-12. It is the starting point of the analytic
    Gaussian calibrations (:func:`~skdpx.privacy.analytic_gaussian_sigma`, a
    fit's row-count plan; :func:`~skdpx.privacy.calibrate_noise` without a
    prior), which then step it up until ``delta`` holds exactly as computed:
    so only its closeness matters. On ``scipy.special.log_ndtr``, about 0.1
    ms, where dp_accounting's ``get_sigma_gaussian`` (on
    ``scipy.stats.norm.logcdf``) takes 1 to 2 ms, which a fresh process pays
    in its first fit (issue 41). For epsilon > 0 and 0 < delta < 1 (the
    callers check).
    """
    target = math.log(delta)

    def excess(sigma):  # > 0 below the root, < 0 above it (-inf: far above)
        return _log_delta_gaussian(sigma, epsilon) - target

    hi = max(math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon, 1e-6)
    lo = hi / 2.0
    while excess(hi) > 0:
        lo, hi = hi, 2.0 * hi
    while excess(lo) <= 0:
        lo, hi = lo / 2.0, lo
    while excess(hi) == -math.inf:  # brentq needs finite values at the ends
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    return scipy.optimize.brentq(excess, lo, hi, xtol=1e-12 * hi, rtol=4 * np.finfo(float).eps)


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
        pld = _gaussian_leaf_pld(gaussian_precision**-0.5, vdi)
        total = pld if total is None else total.compose(pld)
    return total


@lru_cache(maxsize=16)  # a fine-grid Gaussian PLD can be about 1 MB
def _gaussian_leaf_pld(noise_multiplier, vdi):
    """The PLD of the Gaussian leaves of a composition (:func:`gaussian_pld`), memoised.

    A calibration against a Gaussian prior (DP-SGD after its centring
    release) composes the same prior at every noise it tries. dp_accounting's
    ``compose`` returns a new PLD and never changes its operands, so sharing
    one is safe.
    """
    return gaussian_pld(noise_multiplier, vdi=vdi)


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
    return _rdp_leaf_curve(event_to_json(event))


@lru_cache(maxsize=512)
def _rdp_leaf_curve(event_json):
    """The Renyi curve of one event by dp_accounting's accountant (read-only), memoised.

    A search's mixture holds every candidate's fit, and candidates that
    differ only in what the accounting ignores (a learning rate) hold the
    same Poisson-subsampled Gaussian: its curve, the slow part (dp_accounting
    sums its series in Python), is computed once per distinct leaf.
    """
    orders = np.asarray(RDP_ORDERS)
    accountant = RdpAccountant(list(orders))
    event = event_from_json(event_json)
    if not accountant.supports(event):
        curve = np.full_like(orders, np.inf)
    else:
        accountant.compose(event)
        curve = np.array(accountant.rdp, dtype=float)
    curve.setflags(write=False)  # shared by every caller: never changed in place
    return curve


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


def laplace_epsilon(noise_multiplier, delta=0.0, *, steps=1):
    """The epsilon at ``delta`` of ``steps`` Laplace releases; the reverse of :func:`calibrate_laplace`."""
    if not noise_multiplier >= 0:
        raise ValueError(f"noise_multiplier must be >= 0, got {noise_multiplier!r}.")
    return compute_epsilon(laplace_event(noise_multiplier, steps=steps), delta)
