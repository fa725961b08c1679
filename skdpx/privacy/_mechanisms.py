"""Single releases through diffprivlib's mechanisms, recorded in a ledger.

diffprivlib's mechanisms calibrate and validate (epsilon, delta,
sensitivity); the noise for an array is drawn in one vectorised call with the
scale that the mechanism reports, from the caller's RandomState.
"""

from contextlib import nullcontext
import math
from numbers import Real

from diffprivlib.mechanisms import Exponential, GaussianAnalytic, Laplace
from dp_accounting import SelfComposedDpEvent
import numpy as np

from ._accounting import gaussian_event, laplace_event, pure_event
from ._validation import check_random_state

__all__ = ["exponential_mechanism", "gaussian_mechanism", "laplace_mechanism"]


def _finite_array(value):
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError("the value to release must be finite.")
    return arr


def _reserve(ledger, event, label, delta=None):
    return nullcontext() if ledger is None else ledger.reserve(event, label, delta=delta)


def _check_budget(epsilon, sensitivity):
    # diffprivlib's own checks let NaN through; NaN noise would release the exact value
    if not isinstance(epsilon, Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    if not isinstance(sensitivity, Real) or not 0 <= sensitivity < math.inf:
        raise ValueError(f"sensitivity must be a finite number >= 0, got {sensitivity!r}.")


def _out(arr, noisy):
    return float(noisy) if arr.ndim == 0 else noisy


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
    sensitivity : float
        The L2 sensitivity of ``value`` (for the whole array).
    random_state : None, int or RandomState
    ledger : PrivacyLedger or EstimatorBudget, optional
        Where the release is recorded; checked before noise is drawn.
    label : str

    Returns
    -------
    noisy : float or ndarray

    Examples
    --------
    >>> from skdpx.privacy import PrivacyLedger, gaussian_mechanism
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    >>> noisy = gaussian_mechanism([10.0, 20.0], epsilon=1.0, delta=1e-5, sensitivity=1.0,
    ...                            random_state=0, ledger=ledger, label="two sums")
    >>> noisy.shape, round(ledger.epsilon_spent, 6) <= 1.0
    ((2,), True)
    """
    _check_budget(epsilon, sensitivity)
    mech = GaussianAnalytic(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    sigma = math.sqrt(mech.variance(0.0))
    arr = _finite_array(value)
    event = gaussian_event(sigma / sensitivity) if sensitivity > 0 else None
    rng = check_random_state(random_state)
    with nullcontext() if event is None else _reserve(ledger, event, label, delta):
        noisy = arr + rng.normal(0.0, sigma, size=arr.shape)
    return _out(arr, noisy)


def laplace_mechanism(value, *, epsilon, sensitivity, random_state=None, ledger=None, label="laplace"):
    """Release ``value`` with Laplace noise of scale ``sensitivity / epsilon``.

    ``sensitivity`` is the L1 sensitivity of the whole array; the release is
    ``epsilon``-DP (pure).

    Examples
    --------
    >>> from skdpx.privacy import laplace_mechanism
    >>> round(laplace_mechanism(100.0, epsilon=1.0, sensitivity=1.0, random_state=0), 2)
    100.1
    """
    _check_budget(epsilon, sensitivity)
    mech = Laplace(epsilon=epsilon, delta=0.0, sensitivity=sensitivity)
    scale = math.sqrt(mech.variance(0.0) / 2.0)
    arr = _finite_array(value)
    event = laplace_event(scale / sensitivity) if sensitivity > 0 else None
    rng = check_random_state(random_state)
    with nullcontext() if event is None else _reserve(ledger, event, label):
        noisy = arr + rng.laplace(0.0, scale, size=arr.shape) if scale > 0 else arr.copy()
    return _out(arr, noisy)


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

    Returns
    -------
    index : int or ndarray of int (one per row)

    Notes
    -----
    One choice goes through diffprivlib's ``Exponential``; a batch of rows
    uses the Gumbel-max trick, which samples exactly the same distribution
    (argmax of ``epsilon u / (2 sensitivity) + Gumbel noise``).

    Examples
    --------
    >>> from skdpx.privacy import exponential_mechanism
    >>> int(exponential_mechanism([0.0, 0.0, 50.0], epsilon=1.0, sensitivity=1.0, random_state=0))
    2
    """
    _check_budget(epsilon, sensitivity)
    u = _finite_array(utility)
    if u.ndim not in (1, 2) or u.shape[-1] == 0:
        raise ValueError("utility must be a non-empty 1-D or 2-D array.")
    rng = check_random_state(random_state)
    n_releases = 1 if u.ndim == 1 else u.shape[0]
    event = pure_event(epsilon)
    if n_releases > 1:
        event = SelfComposedDpEvent(event, n_releases)
    with _reserve(ledger, event, label):
        if u.ndim == 1:
            mech = Exponential(
                epsilon=epsilon,
                sensitivity=sensitivity,
                utility=list(u),
                monotonic=monotonic,
                random_state=rng,
            )
            return int(mech.randomise())
        # validate the parameters exactly as the scalar path does
        Exponential(epsilon=epsilon, sensitivity=sensitivity, utility=[0.0], monotonic=monotonic)
        scale = epsilon / (sensitivity if monotonic else 2 * sensitivity)
        return np.argmax(u * scale + rng.gumbel(size=u.shape), axis=1)
