"""Releases: the only code in skdpx that adds privacy noise.

Two layers:

* the release functions an estimator calls inside a planned, committed
  spend (:meth:`EstimatorLedger.commit` returns the :class:`Commitment`):
  :func:`gaussian_release` (low-dimensional: counts, sums, centres, means;
  floating-point safe), :func:`noisy_gradient` (high-dimensional: DP-SGD and
  DP gradient descent; float64 from the secure generator),
  :func:`laplace_release` and :func:`exponential_release`. Each draws its
  own event from the commitment first, so a release outside the plan raises
  before any noise is drawn;
* the stand-alone mechanisms :func:`gaussian_mechanism`,
  :func:`laplace_mechanism` and :func:`exponential_mechanism`, which
  calibrate, commit the spend to a ledger and release in one call.

The randomness comes from a :class:`~skdpx.privacy.NoiseSource` (see
:func:`~skdpx.privacy.noise_source`): cryptographically secure by default.
"""

import math
from numbers import Real

from dp_accounting import GaussianDpEvent, NonPrivateDpEvent, SelfComposedDpEvent
import numpy as np

from ._calibration import analytic_gaussian_sigma, gaussian_to_pure
from ._events import PureDpEvent, fixed_loss_event, gaussian_event, laplace_event, pure_event
from ._budget import Commitment, EstimatorLedger, warn_uncapped
from ._ledger import PrivacyLedger
from ._random import NoiseSource, noise_source, validate_random_state

__all__ = [
    "count_release", "exponential_mechanism", "exponential_release", "gaussian_mechanism", "gaussian_release",
    "laplace_mechanism", "laplace_release", "noisy_gradient",
]


def _finite_array(value):
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError("the value to release must be finite.")
    return arr


def _check_budget(epsilon, sensitivity):
    # written so that NaN is refused: NaN noise would release the exact value. A bool is
    # no budget (True would pass as 1). A sensitivity of 0 would release the exact value
    # and record nothing: a value that no row can change needs no mechanism, and one
    # computed from the private rows must not go out unnoised on a caller's slip
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, Real) or \
            not epsilon > 0:
        raise ValueError(f"epsilon must be a number > 0, got {epsilon!r}.")
    if isinstance(sensitivity, (bool, np.bool_)) or not isinstance(sensitivity, Real) or \
            not 0 < sensitivity < math.inf:
        raise ValueError(
            f"sensitivity must be a finite number > 0, got {sensitivity!r}. A value that no "
            "row can change (sensitivity 0) is public: release it without a mechanism.")


def _check_monotonic(monotonic):
    if not isinstance(monotonic, (bool, np.bool_)):
        raise ValueError(f"monotonic must be True or False, got {monotonic!r}.")


def _check_release(noise_multiplier, sensitivity, noise, commitment):
    if not isinstance(noise_multiplier, Real) or not 0 <= noise_multiplier < math.inf:
        raise ValueError(f"noise_multiplier must be a finite number >= 0, got {noise_multiplier!r}.")
    if not isinstance(sensitivity, Real) or not 0 < sensitivity < math.inf:
        raise ValueError(f"sensitivity must be a finite number > 0, got {sensitivity!r}.")
    if not isinstance(noise, NoiseSource):
        raise TypeError(f"noise must be a NoiseSource, got {type(noise).__name__}.")
    if not isinstance(commitment, Commitment):
        raise TypeError(
            f"commitment must be the Commitment of a committed spend, got {type(commitment).__name__}."
        )


def _out(arr, noisy):
    return float(noisy) if arr.ndim == 0 else noisy


# --------------------------------------------------------------------------
# Releases inside a committed spend
# --------------------------------------------------------------------------
def gaussian_release(value, *, noise_multiplier, sensitivity, noise, commitment):
    """One Gaussian release of a low-dimensional value, paid by ``commitment``.

    Parameters
    ----------
    value : array-like
        The exact value computed from the private data (the whole array is
        one release).
    noise_multiplier : float >= 0
        Noise standard deviation over ``sensitivity`` (0: the non-private
        baseline, allowed only by a non-private commitment).
    sensitivity : float > 0
        The L2 sensitivity of ``value`` under the ledger's relation.
    noise : NoiseSource
    commitment : Commitment
        Must hold ``gaussian_event(noise_multiplier)``.

    Returns
    -------
    ndarray
        ``value`` plus the noise: from OpenDP's exact sampler when ``noise``
        is secure (floating-point safe), else from the seeded generator.
    """
    return _single_release(value, gaussian_event, "gaussian", noise_multiplier, sensitivity,
                           noise, commitment)


def _single_release(value, make_event, sampler, noise_multiplier, sensitivity, noise, commitment):
    """Draw the release's event from the commitment, then the noise from ``noise.<sampler>``."""
    _check_release(noise_multiplier, sensitivity, noise, commitment)
    commitment.draw(make_event(noise_multiplier))
    arr = _finite_array(value)
    if noise_multiplier == 0:
        return arr.copy()
    return getattr(noise, sampler)(arr, noise_multiplier * sensitivity, sensitivity=sensitivity)


def noisy_gradient(grad, *, noise_multiplier, sensitivity, noise, commitment, sample_rate=1.0,
                   releases=1):
    """Gaussian noise on a high-dimensional vector (DP-SGD, DP gradient descent).

    float64 noise from the secure generator, drawn in one vectorised call;
    not floating-point hardened (see the privacy page for where the line is).

    Parameters
    ----------
    grad : array-like
        The clipped gradient (sum), or a stack of ``releases`` independent
        releases along the first axis (e.g. one gradient per query).
    noise_multiplier, sensitivity : float
        As for :func:`gaussian_release`.
    noise : NoiseSource
    commitment : Commitment
        Must hold ``releases`` copies of ``gaussian_event(noise_multiplier,
        sample_rate=sample_rate)``.
    sample_rate : float, default=1.0
        The Poisson sampling rate the batch was drawn with.
    releases : int, default=1

    Returns
    -------
    ndarray of float64
    """
    _check_release(noise_multiplier, sensitivity, noise, commitment)
    commitment.draw(gaussian_event(noise_multiplier, sample_rate=sample_rate), releases)
    grad = np.asarray(grad, dtype=np.float64)
    if noise_multiplier == 0:
        return grad.copy()
    return grad + (noise_multiplier * sensitivity) * noise.standard_normal(grad.shape)


#: Below this sampling rate a Poisson sample is drawn as its size and a subset
#: (:func:`poisson_sample`): about ``rate * n`` draws instead of ``n``. Public (a
#: constant), so which way a sample is drawn says nothing about the rows.
SPARSE_SAMPLE_RATE = 1 / 16


def poisson_sample(n_samples, sample_rate, *, noise):
    """A Poisson sample of ``range(n_samples)``: each row in with probability ``sample_rate``.

    Drawn from the noise source: the privacy amplification by subsampling
    holds only if nobody can predict the batches. Below
    ``SPARSE_SAMPLE_RATE`` (DP-SGD's usual batches) the sample is drawn as
    its size, Binomial(``n_samples``, ``sample_rate``), then a uniformly
    random subset of that size: the same distribution as one Bernoulli draw
    per row (every subset ``S`` has probability ``q^|S| (1 - q)^(n - |S|)``),
    with about ``sample_rate * n_samples`` draws instead of ``n_samples``
    (a quarter of a DP-SGD step's time on Adult went to the per-row draws).
    Above it, one uniform draw per row (a subset that large costs more).
    The indices come in increasing order.
    """
    if not isinstance(noise, NoiseSource):
        raise TypeError(f"noise must be a NoiseSource, got {type(noise).__name__}.")
    if sample_rate >= 1:
        return np.arange(n_samples)
    if sample_rate < SPARSE_SAMPLE_RATE:
        return noise.subset(n_samples, noise.binomial(n_samples, sample_rate))
    return np.flatnonzero(noise.uniform(n_samples) < sample_rate)


def laplace_release(value, *, noise_multiplier, sensitivity, noise, commitment):
    """One Laplace release (L1 ``sensitivity``), floating-point safe when secure."""
    return _single_release(value, laplace_event, "laplace", noise_multiplier, sensitivity,
                           noise, commitment)


def count_release(n_rows, *, epsilon, noise, commitment):
    """A DP count of rows: ``n_rows`` plus Laplace noise of scale ``1 / epsilon``.

    L1 sensitivity 1 under add-or-remove (one row more or less), so the
    release is ``epsilon``-DP; it is accounted as
    ``FixedLossDpEvent(epsilon)`` (basic composition), because what a fit
    does next is planned from it (see :class:`~skdpx.privacy.FitCount`).
    Floating-point safe when ``noise`` is secure (OpenDP's exact sampler).

    Parameters
    ----------
    n_rows : int
        The exact number of rows (private).
    epsilon : float > 0
    noise : NoiseSource
    commitment : Commitment
        Must hold ``fixed_loss_event(epsilon)``.

    Returns
    -------
    float
        The noisy count (may be below 0 for tiny data).
    """
    _check_budget(epsilon, 1.0)
    if math.isinf(epsilon):
        raise ValueError("a count at epsilon = inf is the exact number of rows: no release.")
    _check_release(1.0 / epsilon, 1.0, noise, commitment)
    commitment.draw(fixed_loss_event(epsilon))
    return float(noise.laplace(_finite_array(float(n_rows)), 1.0 / epsilon, sensitivity=1.0))


def exponential_release(utility, *, epsilon, sensitivity, noise, commitment, monotonic=False,
                        event=None):
    """Exponential-mechanism choices (Gumbel-max), one per row of ``utility``.

    Parameters
    ----------
    utility : array-like of shape (n_candidates,) or (n_choices, n_candidates)
    epsilon, sensitivity : float > 0
        Per choice; probabilities proportional to exp(epsilon u / (2 sensitivity))
        (``sensitivity`` without the 2 when ``monotonic``).
    noise : NoiseSource
    commitment : Commitment
        Must hold one ``event`` per choice.
    event : DpEvent, optional
        What one choice is accounted as (default ``pure_event(epsilon)``; a
        Gaussian event that dominates it is also sound, see
        :func:`~skdpx.privacy.gaussian_to_pure`).

    Returns
    -------
    int or ndarray of int
    """
    _check_budget(epsilon, sensitivity)
    _check_monotonic(monotonic)
    if not isinstance(noise, NoiseSource):
        raise TypeError(f"noise must be a NoiseSource, got {type(noise).__name__}.")
    u = _finite_array(utility)
    if u.ndim not in (1, 2) or u.shape[-1] == 0:
        raise ValueError("utility must be a non-empty 1-D or 2-D array.")
    n_choices = 1 if u.ndim == 1 else u.shape[0]
    if event is None:
        event = pure_event(epsilon)
    elif not _dominates(event, epsilon):
        raise ValueError(
            f"the event {event!r} does not cover an epsilon={epsilon!r} exponential mechanism: "
            "account it as pure_event(epsilon), or as a Gaussian event whose gaussian_to_pure "
            "is at least epsilon."
        )
    commitment.draw(event, n_choices)
    if math.isinf(epsilon):  # the non-private baseline: the best candidate
        choice = np.argmax(u, axis=-1)
        return int(choice) if u.ndim == 1 else choice
    scale = epsilon / (sensitivity if monotonic else 2 * sensitivity)
    choice = np.argmax(u * scale + noise.gumbel(u.shape), axis=-1)
    return int(choice) if u.ndim == 1 else choice


def _dominates(event, epsilon):
    """Whether ``event`` accounts for an ``epsilon``-DP choice soundly."""
    if isinstance(event, PureDpEvent):
        return epsilon <= event.epsilon
    if isinstance(event, GaussianDpEvent):
        return epsilon <= gaussian_to_pure(event.noise_multiplier)
    return isinstance(event, NonPrivateDpEvent)


# --------------------------------------------------------------------------
# Stand-alone mechanisms: calibrate, commit, release
# --------------------------------------------------------------------------
def _commit(ledger, event, label, delta=None):
    """Commit ``event`` to ``ledger`` (if any) and return the Commitment.

    Without a ledger the release is recorded nowhere: an
    :class:`~skdpx.privacy.UncappedBudgetWarning` says so, as a fit with
    ``accountant=None`` does.
    """
    if ledger is None:
        warn_uncapped("release")
        return Commitment(event, label)
    if isinstance(ledger, EstimatorLedger):
        return ledger.commit(event, label, delta=delta)
    if isinstance(ledger, PrivacyLedger):
        ledger.spend(event, label, delta=delta)
        return Commitment(event, label)
    raise TypeError(
        f"ledger must be a PrivacyLedger, an EstimatorLedger or None, got {type(ledger).__name__}."
    )


def _nonempty(arr):
    if arr.size == 0:
        raise ValueError("there is nothing to release: the value is empty.")
    return arr


def gaussian_mechanism(
    value, *, epsilon, delta, sensitivity, random_state=None, ledger=None, label="gaussian"
):
    """Release ``value`` with analytic Gaussian noise (Balle & Wang 2018).

    Parameters
    ----------
    value : float or array-like
        The exact value computed from the private data.
    epsilon : float > 0
    delta : float in (0, 1)
    sensitivity : float > 0
        The L2 sensitivity of ``value`` (for the whole array). 0 is refused:
        a value that no row can change is public and needs no mechanism.
    random_state : None, int, RandomState or Generator
        None (default): secure, floating-point-safe noise. A seed makes the
        noise reproducible, with a PrivacyLeakWarning.
    ledger : PrivacyLedger or EstimatorLedger, optional
        Where the spend is committed, before the noise is drawn; a failure
        afterwards never refunds it. None: the release is recorded nowhere,
        with an :class:`~skdpx.privacy.UncappedBudgetWarning`.
    label : str

    Returns
    -------
    noisy : float or ndarray

    Examples
    --------
    >>> from skdpx.privacy import PrivacyLedger, gaussian_mechanism
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    >>> noisy = gaussian_mechanism([10.0, 20.0], epsilon=1.0, delta=1e-5, sensitivity=1.0,
    ...                            ledger=ledger, label="two sums")
    >>> noisy.shape, round(ledger.epsilon_spent, 6) <= 1.0
    ((2,), True)
    """
    _check_budget(epsilon, sensitivity)
    if not isinstance(delta, Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    arr = _nonempty(_finite_array(value))
    # the noise multiplier (sigma over the L2 sensitivity) of the analytic
    # Gaussian mechanism: the smallest one that is (epsilon, delta)-DP
    z = analytic_gaussian_sigma(epsilon, delta)
    validate_random_state(random_state)  # refused before the spend, nothing drawn
    commitment = _commit(ledger, gaussian_event(z), label, delta)
    with noise_source(random_state) as noise:  # closed (its key wiped) when the release ends
        return _out(arr, gaussian_release(arr, noise_multiplier=z, sensitivity=sensitivity,
                                          noise=noise, commitment=commitment))


def laplace_mechanism(value, *, epsilon, sensitivity, random_state=None, ledger=None, label="laplace"):
    """Release ``value`` with Laplace noise of scale ``sensitivity / epsilon``.

    ``sensitivity`` is the L1 sensitivity of the whole array; the release is
    ``epsilon``-DP (pure); ``sensitivity`` must be > 0, as for
    :func:`gaussian_mechanism`. ``random_state``, ``ledger`` and ``label`` are as
    for :func:`gaussian_mechanism` (``ledger=None``: recorded nowhere, with
    an :class:`~skdpx.privacy.UncappedBudgetWarning`).

    Examples
    --------
    >>> from skdpx.privacy import PrivacyLedger, laplace_mechanism
    >>> ledger = PrivacyLedger(epsilon=1.0)
    >>> noisy = laplace_mechanism(100.0, epsilon=1.0, sensitivity=1.0, ledger=ledger)
    >>> 50 < noisy < 150  # the noise's scale is 1; this fails with probability e^-50
    True
    """
    _check_budget(epsilon, sensitivity)
    arr = _nonempty(_finite_array(value))
    b = 1.0 / epsilon  # the noise multiplier: scale sensitivity / epsilon (0 at epsilon = inf)
    validate_random_state(random_state)  # refused before the spend, nothing drawn
    commitment = _commit(ledger, laplace_event(b), label)
    with noise_source(random_state) as noise:
        return _out(arr, laplace_release(arr, noise_multiplier=b, sensitivity=sensitivity,
                                         noise=noise, commitment=commitment))


def exponential_mechanism(
    utility, *, epsilon, sensitivity, monotonic=False, random_state=None, ledger=None,
    label="exponential",
):
    """Choose an index with probability proportional to exp(epsilon u / (2 sensitivity)).

    Parameters
    ----------
    utility : array-like of shape (n_candidates,) or (n_queries, n_candidates)
        Utility of each candidate; higher is better. A 2-D array makes one
        independent choice per row (one epsilon-DP release per row).
    epsilon : float > 0
        Per choice.
    sensitivity : float > 0
        How much one row of the private data can change a utility.
    monotonic : bool, default=False
        Utilities move in one direction between neighbours (then
        exp(epsilon u / sensitivity) suffices).
    random_state, ledger, label
        As for :func:`gaussian_mechanism` (``ledger=None``: recorded
        nowhere, with an :class:`~skdpx.privacy.UncappedBudgetWarning`).

    Returns
    -------
    index : int or ndarray of int (one per row)

    Notes
    -----
    The choice is the Gumbel-max trick, which samples exactly the
    exponential mechanism's distribution (argmax of ``epsilon u / (2
    sensitivity) + Gumbel noise``), with Gumbel draws from the secure
    generator by default.

    Examples
    --------
    >>> from skdpx.privacy import PrivacyLedger, exponential_mechanism
    >>> ledger = PrivacyLedger(epsilon=1.0)
    >>> int(exponential_mechanism([0.0, 0.0, 50.0], epsilon=1.0, sensitivity=1.0, ledger=ledger))
    2
    """
    _check_budget(epsilon, sensitivity)
    _check_monotonic(monotonic)
    u = _finite_array(utility)
    if u.ndim not in (1, 2) or u.shape[-1] == 0:
        raise ValueError("utility must be a non-empty 1-D or 2-D array.")
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be > 0, got {sensitivity!r}.")
    n_releases = 1 if u.ndim == 1 else u.shape[0]
    event = pure_event(epsilon)
    if n_releases > 1:
        event = SelfComposedDpEvent(event, n_releases)
    validate_random_state(random_state)  # refused before the spend, nothing drawn
    commitment = _commit(ledger, event, label)
    with noise_source(random_state) as noise:
        return exponential_release(u, epsilon=epsilon, sensitivity=sensitivity, noise=noise,
                                   commitment=commitment, monotonic=monotonic)
