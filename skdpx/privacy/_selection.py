"""Private selection: the random draws and the event of a private hyperparameter search.

A search over a DP estimator's hyperparameters releases more than its fits:
its validation scores and the choice made from them. This module holds the
parts of a private search that the guarantee depends on (the search itself,
:class:`skdpx.model_selection.DPRandomSearchCV`, calls them):

* the **split** (:func:`draw_split`): every row is put in the validation
  part (or in one of k folds) independently of the others, with the secure
  generator, so that adding or removing one row moves no other row between
  parts, and the part that holds a given row is independent of the data;
* the **number of runs** (:func:`draw_runs`): random stopping, a truncated
  negative binomial or Poisson number of runs (Papernot & Steinke, ICLR 2022,
  "Hyperparameter tuning with Renyi differential privacy"), the geometric
  one being Liu & Talwar's (STOC 2019);
* each run's **candidate** (:func:`draw_candidates`), uniformly from a
  public pool;
* each run's **DP score** (:func:`release_score`): Gaussian noise on the
  column sums of the validation rows' contributions;
* the **event** (:func:`search_event`) that the whole search is accounted
  as: ``RepeatAndSelect(run) + WorstOf(refits)``, with one run
  ``Mixture(candidates' fits)`` and the score composed (k folds) or, for a
  holdout, the worse of the two (one row is in one part only).

Only the best run's output (its candidate, model and noisy score) may be
released: Papernot & Steinke's bound covers the best of the runs, not the
others' scores, nor the number of runs or the candidates the runs drew.
These do not depend on the data, yet they must stay hidden: given the
number of runs ``K``, the best of ``K`` runs is the selection over a fixed
number of runs, whose privacy loss grows with ``K`` (an empirical audit,
``tests/test_audit_search.py``, finds epsilon >= 2.86 at delta 1e-3 where the
event accounts 2.63, when ``K`` is released with the best score).
"""

import math
from numbers import Integral, Real

import numpy as np
import scipy.optimize
from dp_accounting.dp_event import GaussianDpEvent, RepeatAndSelectDpEvent, SelfComposedDpEvent

from ._calibration import calibrate_noise
from ._composition import RDP_ORDERS, leaf_counts, rdp_curve
from ._events import (
    MixtureDpEvent,
    WorstOfDpEvent,
    compose_events,
    event_from_json,
    event_to_json,
    gaussian_event,
)
from ._budget import Commitment
from ._mechanisms import gaussian_release
from ._random import NoiseSource

__all__ = [
    "SELECTIONS",
    "score_releases",
    "commit_sweep",
    "dominated_noise_multiplier",
    "draw_candidates",
    "draw_runs",
    "draw_split",
    "free_score_noise",
    "gaussian_equivalent",
    "holdout_event",
    "release_score",
    "run_distribution",
    "search_event",
]

#: The distributions of the number of runs: the name and its shape parameter
#: in dp_accounting's ``RepeatAndSelectDpEvent`` (None: the ``eta`` given).
SELECTIONS = {"negative_binomial": None, "poisson": math.inf, "geometric": 1.0}


def _check_noise(noise):
    if not isinstance(noise, NoiseSource):
        raise TypeError(f"noise must be a NoiseSource, got {type(noise).__name__}.")


def run_distribution(selection, mean, eta=0.0):
    """``(shape, gamma)`` of the number of runs.

    Parameters
    ----------
    selection : {"negative_binomial", "poisson", "geometric"}
        Papernot & Steinke's truncated negative binomial (shape ``eta``;
        ``eta = 0`` is the logarithmic distribution), their Poisson, or the
        geometric number of runs of Liu & Talwar (the negative binomial with
        ``eta = 1``).
    mean : float >= 1
        The expected number of runs.
    eta : float >= 0, default=0.0

    Returns
    -------
    shape : float
        dp_accounting's ``shape`` (``inf`` for Poisson).
    gamma : float or None
        The stopping probability of the truncated negative binomial
        (Definition 1 of Papernot & Steinke), None for Poisson.
    """
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {sorted(SELECTIONS)}, got {selection!r}.")
    if not isinstance(mean, Real) or not math.isfinite(mean) or mean < 1:
        raise ValueError(f"the mean number of runs must be a finite number >= 1, got {mean!r}.")
    shape = SELECTIONS[selection]
    if shape is None:
        if not isinstance(eta, Real) or not 0 <= eta < math.inf:
            raise ValueError(f"eta must be a finite number >= 0, got {eta!r}.")
        shape = float(eta)
    if math.isinf(shape):
        return shape, None
    if mean == 1:
        return shape, 1.0
    return shape, _gamma_of_mean(float(mean), shape)


def _tnb_mean(gamma, shape):
    """The mean of Papernot & Steinke's truncated negative binomial (their Definition 1)."""
    if shape == 0:  # logarithmic: P[K=k] proportional to (1-gamma)^k / k
        return (1 - gamma) / (gamma * -math.log(gamma))
    if shape == 1:
        return 1 / gamma
    return shape * (1 - gamma) / (gamma * (1 - gamma**shape))


def _gamma_of_mean(mean, shape):
    # the mean decreases from +inf (gamma -> 0) to 1 (gamma -> 1)
    return scipy.optimize.brentq(lambda g: _tnb_mean(g, shape) - mean, 1e-12, 1 - 1e-12,
                                 xtol=1e-14, rtol=1e-13)


def draw_runs(selection, mean, *, noise, eta=0.0):
    """The number of runs of a private search: one draw, independent of the data.

    Negative binomial: ``P[K = k]`` proportional to
    ``binom(k + eta - 1, k) (1 - gamma)^k`` for ``k >= 1`` (drawn as a
    negative binomial conditioned on ``k >= 1``; ``eta = 0``: the
    logarithmic distribution). Poisson: ``K ~ Poisson(mean)``, which may be
    0 (probability ``exp(-mean)``): the search then selects nothing.

    Parameters
    ----------
    selection, mean, eta
        As :func:`run_distribution`.
    noise : NoiseSource

    Returns
    -------
    int
    """
    _check_noise(noise)
    shape, gamma = run_distribution(selection, mean, eta)
    gen = noise._live()  # RuntimeError if the source was closed
    if math.isinf(shape):
        return int(gen.poisson(float(mean)))
    if gamma == 1.0:
        return 1
    if shape == 0:
        return int(gen.logseries(1 - gamma))
    if shape == 1:
        return int(gen.geometric(gamma))
    while True:  # P[K = 0] = gamma^eta < 1: rejection ends
        k = int(gen.negative_binomial(shape, gamma))
        if k >= 1:
            return k


def draw_split(n_samples, cv, *, noise):
    """Each row's part, drawn independently of the other rows and of the data.

    Parameters
    ----------
    n_samples : int
    cv : float in (0, 1) or int >= 2
        A float: a holdout split, each row in the validation part with
        probability ``cv``. An int: ``cv`` folds, each row in a uniformly
        drawn fold.
    noise : NoiseSource

    Returns
    -------
    ndarray of int of shape (n_samples,)
        Holdout: 1 for a validation row, 0 for a training row. Folds: the
        fold of each row.
    """
    _check_noise(noise)
    u = noise.uniform(int(n_samples))
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        return np.minimum((u * int(cv)).astype(np.intp), int(cv) - 1)
    return (u < float(cv)).astype(np.intp)


def draw_candidates(n_candidates, n_runs, *, noise):
    """Each run's candidate, uniformly from ``range(n_candidates)``, independently."""
    _check_noise(noise)
    u = noise.uniform(int(n_runs))
    return np.minimum((u * int(n_candidates)).astype(np.intp), int(n_candidates) - 1)


def release_score(contributions, *, noise_multiplier, sensitivity, noise, commitment):
    """The noisy column sums of the validation rows' contributions: one Gaussian release.

    Parameters
    ----------
    contributions : array-like of shape (n_rows, n_stats)
        Each validation row's exact contribution (a scorer's
        ``contributions``), clipped so that the L2 sensitivity of the column
        sums under the ledger's relation is ``sensitivity``.
    noise_multiplier : float
    sensitivity : float > 0
    noise : NoiseSource
    commitment : Commitment
        Must hold ``gaussian_event(noise_multiplier)``.

    Returns
    -------
    ndarray of shape (n_stats,)
    """
    c = np.asarray(contributions, dtype=float)
    if c.ndim == 1:
        c = c[:, None]
    if c.ndim != 2:
        raise ValueError("contributions must be a 2-D array (one row per validation row).")
    return gaussian_release(c.sum(axis=0), noise_multiplier=noise_multiplier,
                            sensitivity=sensitivity, noise=noise, commitment=commitment)


def search_event(fit_events, score_event, *, n_folds, mean, shape, refit_events=None):
    """The event a private search is accounted as.

    Parameters
    ----------
    fit_events : list of DpEvent
        One per candidate of the pool (a run draws one uniformly): what its
        fit on the training part spends.
    score_event : DpEvent or None
        One run's score release (None: the score reads no private row).
    n_folds : int
        1 for a holdout split (a row is either in the training part or in
        the validation part: a run is the worse of its fit and its score for
        that row); k >= 2 for k folds (a row is in k - 1 training parts and
        in one validation part: the fits compose k - 1 times, with the
        score).
    mean, shape : float
        The number of runs (dp_accounting's ``RepeatAndSelectDpEvent``).
    refit_events : list of DpEvent, optional
        The refit of each candidate on all rows (the one selected is used).

    Returns
    -------
    DpEvent
    """
    def mixture(events):
        return MixtureDpEvent(events) if len(events) > 1 else events[0]

    if n_folds == 1:
        fits = mixture(list(fit_events))
        run = fits if score_event is None else WorstOfDpEvent([fits, score_event])
    else:
        # one run trains its candidate on each of the k training parts
        run = compose_events(
            mixture([SelfComposedDpEvent(e, int(n_folds) - 1) for e in fit_events]), score_event)
    event = RepeatAndSelectDpEvent(run, float(mean), float(shape))
    if refit_events:
        refit = WorstOfDpEvent(refit_events) if len(refit_events) > 1 else refit_events[0]
        return compose_events(event, refit)
    return event


def score_releases(label, *, score_noise_multiplier, n_runs):
    """What pays for a search's ``n_runs`` score releases, once its event is committed.

    The search's event (:func:`search_event`) is committed for good before
    any private row is read, and before the hidden number of runs is drawn.
    The returned :class:`Commitment` holds the ``n_runs`` score releases
    that the committed event accounts for (None when the scorer reads no
    private row): a release beyond them raises before any noise is drawn.

    Parameters
    ----------
    label : str
    score_noise_multiplier : float or None
    n_runs : int

    Returns
    -------
    Commitment or None
    """
    if score_noise_multiplier is None or n_runs < 1:
        return None
    return Commitment(gaussian_event(score_noise_multiplier, steps=int(n_runs)), label)


def gaussian_equivalent(event):
    """The noise multiplier of the one Gaussian mechanism that ``event`` is, or None.

    A composition of Gaussian releases with multipliers ``z_i`` (each at
    its own sensitivity) is exactly one Gaussian release with ``z = (sum
    z_i^-2)^(-1/2)``: a full-batch DP-SGD fit, say. Any other mechanism in
    ``event`` (Poisson subsampling, Laplace, a pure release...) gives None.
    """
    precision = 0.0
    for leaf, count in leaf_counts(event_to_json(event)):
        leaf = event_from_json(leaf)
        if not isinstance(leaf, GaussianDpEvent) or not leaf.noise_multiplier > 0:
            return None
        precision += count / leaf.noise_multiplier**2
    return precision**-0.5 if precision > 0 else None


def holdout_event(fit_event, score_noise_multiplier):
    """The event of a fit on a holdout split's training part and its DP score on the other part.

    Each row is in one part only, drawn independently of the data and not
    revealed: for one row, the output is a mixture of "the row is in the
    training part" (the fit depends on it; the score is post-processing of
    the model and of other rows) and "the row is in the validation part"
    (only the score's sums depend on it). Hockey-stick divergences are
    jointly convex and Renyi divergences jointly quasi-convex, so the
    mixture is bounded by the worse of the two, at every epsilon and every
    order, under either relation.

    When the fit is one Gaussian mechanism (:func:`gaussian_equivalent`,
    multiplier ``z_fit``) and the score's multiplier is at least ``z_fit``,
    the score's Gaussian is dominated by the fit's (Gaussian mechanisms are
    ordered by their multiplier, at every epsilon), so the fit's own event
    bounds the pair: it is returned as it is, and composes exactly (PLD).
    Otherwise ``WorstOfDpEvent([fit, score])`` (Renyi DP).

    Parameters
    ----------
    fit_event : DpEvent
    score_noise_multiplier : float > 0
        The score's one Gaussian release (:func:`release_score`).

    Returns
    -------
    DpEvent
    """
    if not score_noise_multiplier > 0:
        raise ValueError(f"the score's noise multiplier must be > 0, got {score_noise_multiplier!r}.")
    z_fit = gaussian_equivalent(fit_event)
    if z_fit is not None and score_noise_multiplier >= z_fit:
        return fit_event
    return WorstOfDpEvent([fit_event, gaussian_event(score_noise_multiplier)])


def commit_sweep(ledger, events, labels, *, delta, score_noise_multipliers=None):
    """Record several planned spends in ``ledger``, each as its own entry, all before any
    private row is read; return what pays for each one's score release.

    A privacy-utility curve (``skdpx.model_selection.privacy_utility_curve``)
    is such a sweep: one point per epsilon, each a fit and, without public
    validation data, its DP score. The composition of all the ``events`` is
    checked against the ledger first, so that a ledger that cannot pay for
    the whole sweep refuses it (``BudgetError``) with nothing recorded; then
    each event is recorded, for good (nothing is ever refunded). Only a
    concurrent spend by another user of a shared ledger, between the check
    and the records, could refuse a later point after earlier ones were
    recorded: still before any private row is read.

    Parameters
    ----------
    ledger : PrivacyLedger
    events : list of DpEvent
        One per point: what it may spend (its fit, its score).
    labels : list of str
        One per point, for the record.
    delta : float in (0, 1)
        The delta each point is calibrated for; the sweep declares
        ``len(events) * delta`` (which must be < 1).
    score_noise_multipliers : list of (float or None), optional
        Each point's score release (:func:`release_score`, one Gaussian
        release), or None for a point whose score reads no private row.

    Returns
    -------
    list of (Commitment or None)
        One per point: the commitment of its one score release (None
        without one), drawn by :func:`release_score`.
    """
    from dp_accounting import ComposedDpEvent

    from ._ledger import PrivacyLedger

    if not isinstance(ledger, PrivacyLedger):
        raise TypeError(f"ledger must be a PrivacyLedger, got {type(ledger).__name__}.")
    events, labels = list(events), list(labels)
    if not events or len(events) != len(labels):
        raise ValueError("give one label per event, and at least one event.")
    zs = [None] * len(events) if score_noise_multipliers is None else \
        list(score_noise_multipliers)
    if len(zs) != len(events):
        raise ValueError("give one score noise multiplier (or None) per event.")
    if not isinstance(delta, Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    total_delta = len(events) * float(delta)
    if total_delta >= 1:
        raise ValueError(f"{len(events)} spends at delta={delta:g} declare a total delta "
                         f"{total_delta:g} >= 1: no guarantee is left.")
    whole = events[0] if len(events) == 1 else ComposedDpEvent(events)
    ledger.check(whole, delta=total_delta)  # the whole sweep, before anything is recorded
    for event, label in zip(events, labels):
        ledger.spend(event, label, delta=float(delta))
    return [None if z is None else Commitment(gaussian_event(z), label)
            for z, label in zip(zs, labels)]


def dominated_noise_multiplier(event):
    """The least Gaussian noise multiplier whose Renyi curve lies below ``event``'s.

    A holdout run costs the worse of its fit and its score at each order:
    a score with this much noise (or more) costs nothing on top of the fit
    (``WorstOf(fit, score)`` is the fit). The Gaussian mechanism's Renyi
    divergence at order ``a`` is ``a / (2 z^2)``, so ``z`` is the largest
    ``sqrt(a / (2 eps(a)))`` over the accountant's orders.

    Returns
    -------
    float
        ``inf`` when ``event`` is free at some order (nothing lies below it).
    """
    curve = rdp_curve(event)
    orders = np.asarray(RDP_ORDERS)
    if (curve <= 0).any():
        return math.inf
    return float(np.sqrt(np.max(orders / (2 * curve))))


def free_score_noise(fit_event, epsilon, delta):
    """The least score noise that costs nothing on top of a holdout fit, else a calibrated one.

    A holdout row pays for its fit or for its score, never both, so a score
    whose Gaussian is dominated by the fit adds nothing: the fit's own
    multiplier when the fit is one Gaussian mechanism
    (:func:`gaussian_equivalent`), else :func:`dominated_noise_multiplier`
    (its Renyi curve below the fit's). When the fit is free at some order
    (nothing lies below it), the noise calibrated to ``(epsilon, delta)``.
    """
    exact = gaussian_equivalent(fit_event)
    if exact is not None:
        return exact
    free = dominated_noise_multiplier(fit_event)
    return free if math.isfinite(free) else calibrate_noise(epsilon, delta)


def score_event(noise_multiplier):
    """The event of one score release (:func:`release_score`)."""
    return gaussian_event(noise_multiplier)
