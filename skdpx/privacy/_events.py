"""DP events: what a release costs, described before any noise is drawn.

dp_accounting's ``DpEvent`` vocabulary plus skdpx's own leaves
(:class:`PureDpEvent`, :class:`ApproxDpEvent`, :class:`FixedLossDpEvent`,
:class:`MixtureDpEvent`, :class:`WorstOfDpEvent`), the constructors every
estimator plans its spends with (:func:`gaussian_event`, :func:`laplace_event`,
:func:`pure_event`, ...), and the canonical JSON of an event that the
file-backed ledger stores (:func:`event_to_json`, :func:`event_from_json`).

Nothing here composes or calibrates: :mod:`._composition` computes the
epsilon of events, :mod:`._calibration` the noise that meets a target.
Imports run one way: events <- composition <- calibration.
"""

import json
import math
from numbers import Integral, Real

import attr
import dp_accounting
from dp_accounting import dp_event as _dp_event
import numpy as np

__all__ = [
    "ApproxDpEvent",
    "FixedLossDpEvent",
    "MixtureDpEvent",
    "PureDpEvent",
    "WorstOfDpEvent",
    "approx_event",
    "compose_events",
    "event_from_json",
    "event_to_json",
    "fixed_loss_event",
    "gaussian_event",
    "laplace_event",
    "pure_event",
]


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
    return _epsilon_event(FixedLossDpEvent, epsilon)


def _epsilon_event(cls, epsilon):
    """``cls(epsilon)`` for a finite epsilon > 0, a non-private event for inf."""
    if not isinstance(epsilon, Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    if math.isinf(epsilon):
        return dp_accounting.NonPrivateDpEvent()
    return cls(float(epsilon))


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
    return _noise_event(dp_accounting.GaussianDpEvent, noise_multiplier, steps, sample_rate)


def laplace_event(noise_multiplier, *, steps=1):
    """The DpEvent of ``steps`` Laplace releases with scale/sensitivity ``noise_multiplier``."""
    return _noise_event(dp_accounting.LaplaceDpEvent, noise_multiplier, steps, 1.0)


def _noise_event(cls, noise_multiplier, steps, sample_rate):
    """``steps`` releases of ``cls(noise_multiplier)``, Poisson-sampled below a rate of 1."""
    _check_steps_rate(steps, sample_rate)
    _check_noise(noise_multiplier)
    if noise_multiplier == 0:
        return dp_accounting.NonPrivateDpEvent()
    if math.isinf(noise_multiplier):  # infinite noise releases nothing
        return dp_accounting.NoOpDpEvent()
    event = cls(float(noise_multiplier))
    if sample_rate < 1:
        event = dp_accounting.PoissonSampledDpEvent(float(sample_rate), event)
    return event if steps == 1 else dp_accounting.SelfComposedDpEvent(event, int(steps))


def compose_events(*events):
    """The composition of the given events, skipping None and no-ops (None if nothing is left)."""
    kept = [e for e in events if e is not None and not isinstance(e, dp_accounting.NoOpDpEvent)]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else dp_accounting.ComposedDpEvent(kept)


def pure_event(epsilon):
    """The DpEvent of one ``epsilon``-DP release (e.g. an exponential mechanism)."""
    return _epsilon_event(PureDpEvent, epsilon)


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
    return _scalar(value)


def _scalar(value):
    """A field of an event as its JSON holds it (a bool, int, float, string or None)."""
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


def event_key(event):
    """A hashable key of a DpEvent: events with equal JSON (:func:`event_to_json`) get equal keys.

    The event itself (events are frozen attrs classes, hashable) when it is
    made of numbers and events of numbers, as every leaf a release draws is
    (a Gaussian, Laplace, Poisson-sampled Gaussian or pure event); else (an
    event holding lists or tuples of events, which may not be hashable, and
    whose JSON does not tell a list from a tuple) a nested tuple of its
    type's name and fields, numbers normalised as in its JSON. Computed
    without serialising.
    """
    if not isinstance(event, _dp_event.DpEvent):
        raise TypeError(f"expected a dp_accounting DpEvent, got {type(event).__name__}.")
    return event if _is_plain(event) else _frozen(event)


def _is_plain(value):
    """Whether ``value`` is a number, None, a string, or an event of such (recursively)."""
    if isinstance(value, _dp_event.DpEvent):
        return all(_is_plain(getattr(value, field.name)) for field in attr.fields(type(value)))
    if isinstance(value, (bool, np.bool_)):
        return False
    return value is None or isinstance(value, (Real, str))


def _frozen(value):
    if isinstance(value, _dp_event.DpEvent):
        return (type(value).__name__,) + tuple(
            (field.name, _frozen(getattr(value, field.name))) for field in attr.fields(type(value)))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_frozen(v) for v in value))
    return _scalar(value)


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

