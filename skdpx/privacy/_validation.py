"""Validation helpers shared by the estimators: budgets, bounds, randomness."""

from numbers import Integral, Real
import warnings

import numpy as np
from .._sklearn_compat import Interval
from ._exceptions import PrivacyLeakWarning
from ._random import _outside_stacklevel

__all__ = [
    "BoundsScaler",
    "DELTA_CONSTRAINT",
    "EPSILON_CONSTRAINT",
    "check_bounds",
    "check_classes",
    "clip_to_bounds",
    "scale_to_bounds",
]

#: ``epsilon`` in (0, inf]: ``np.inf`` is the non-private baseline.
EPSILON_CONSTRAINT = Interval(Real, 0, None, closed="right")
#: ``delta`` in [0, 1).
DELTA_CONSTRAINT = Interval(Real, 0, 1, closed="left")


def check_random_state(seed):
    """A ``numpy.random.RandomState`` for the empirical auditor's own trials.

    Not for privacy noise: that comes from :func:`skdpx.privacy.noise_source`.
    ``None`` gives fresh OS entropy (not numpy's global state).

    Parameters
    ----------
    seed : None, int, numpy.random.RandomState or numpy.random.Generator
        A RandomState is returned as it is (its state advances); a Generator
        seeds a new RandomState from its bit generator.

    Returns
    -------
    numpy.random.RandomState
    """
    if seed is None:
        return np.random.RandomState(np.random.MT19937(np.random.SeedSequence()))
    if isinstance(seed, np.random.RandomState):
        return seed
    if isinstance(seed, np.random.Generator):
        return np.random.RandomState(np.random.MT19937(seed.bit_generator.random_raw() & 0xFFFFFFFF))
    if isinstance(seed, (Integral, np.integer)) and not isinstance(seed, bool):
        return np.random.RandomState(int(seed))
    raise ValueError(
        f"random_state must be None, an int or a numpy RandomState, got {type(seed).__name__}."
    )


def check_bounds(bounds, n_features, *, dtype=float, allow_missing=False):
    """Validate declared ``bounds`` = (lower, upper) and broadcast them to ``n_features``.

    Bounds are never read from the data here: an estimator given
    ``bounds=None`` estimates them with a DP mechanism inside its budget
    (:class:`~skdpx.privacy.FitBounds`).

    Parameters
    ----------
    bounds : tuple (lower, upper)
        Scalars or arrays of length ``n_features``; each lower <= upper, all
        finite.
    n_features : int
    allow_missing : bool, default=False
        Allow NaN for a feature whose bounds are not declared (both bounds
        NaN): :class:`~skdpx.privacy.FitBounds` estimates them with DP.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
    """
    if bounds is None:
        raise ValueError("bounds are None: declare them, or let the estimator estimate them "
                         "with DP (skdpx.privacy.FitBounds).")
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ValueError(
            f"bounds must be a tuple (lower, upper) of scalars or arrays, got {bounds!r}."
        )
    try:
        lower = np.asarray(bounds[0], dtype=dtype)
        upper = np.asarray(bounds[1], dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bounds must be numeric, got {bounds!r}.") from exc
    if lower.ndim > 1 or upper.ndim > 1:
        raise ValueError("each bound must be a scalar or a 1-D array.")
    for name, b in (("lower", lower), ("upper", upper)):
        if b.ndim == 1 and b.shape[0] != n_features:
            raise ValueError(
                f"the {name} bound has {b.shape[0]} entries but the data have "
                f"{n_features} features."
            )
    lower = np.broadcast_to(lower, (n_features,)).copy()
    upper = np.broadcast_to(upper, (n_features,)).copy()
    missing = np.isnan(lower) | np.isnan(upper)
    if allow_missing and not np.array_equal(np.isnan(lower), np.isnan(upper)):
        raise ValueError("a feature's lower and upper bounds must both be declared or both NaN.")
    finite = np.isfinite(lower) & np.isfinite(upper)
    if not np.all(finite | (missing if allow_missing else False)):
        raise ValueError("bounds must be finite.")
    if np.any(lower[~missing] > upper[~missing]):
        raise ValueError("each lower bound must be <= its upper bound.")
    return lower, upper


def check_classes(classes, y, *, needs="the fit needs"):
    """The public label set and the rows' codes in it.

    Parameters
    ----------
    classes : array-like or None
        The declared, public label set (sorted here). ``None`` reads it from
        ``y`` with a :class:`~diffprivlib.utils.PrivacyLeakWarning`: the set
        of labels present is then a release about the rows (a label held by
        one row reveals that row), assumed public but not declared.
    y : ndarray of shape (n_samples,)
        Validated labels.
    needs : str
        Starts the error raised for fewer than two classes.

    Returns
    -------
    classes : ndarray
    codes : ndarray of int
        The index of each row's label in ``classes``.

    Raises
    ------
    ValueError
        Fewer than two classes, or a label of ``y`` not in the declared
        ``classes`` (before anything is spent).
    """
    if classes is None:
        present, codes = np.unique(y, return_inverse=True)
        if len(present) < 2:
            raise ValueError(f"{needs} at least two classes; got 1 class: {present[0]!r}.")
        warnings.warn(
            "classes=None: the label set is read from y and released as classes_ (a label "
            "held by few rows reveals them). Declare the public label set with classes=[...].",
            PrivacyLeakWarning, stacklevel=_outside_stacklevel())
        return present, codes.ravel()
    declared = np.unique(np.asarray(classes))
    if declared.ndim != 1 or len(declared) < 2:
        raise ValueError(f"{needs} at least two classes; classes={classes!r} declares "
                         f"{len(declared)}.")
    try:
        codes = np.searchsorted(declared, y)
        known = (codes < len(declared)) & (declared[np.minimum(codes, len(declared) - 1)] == y)
    except TypeError as exc:  # labels of another type than the declared ones
        raise ValueError(f"the labels in y are not comparable with classes={classes!r}.") from exc
    if not np.all(known):
        raise ValueError(f"y holds labels that are not in the declared classes={classes!r} "
                         f"(e.g. {np.asarray(y)[~known][0]!r}). Nothing was spent.")
    return declared, codes


def clip_to_bounds(X, lower, upper):
    """Clip the rows of X to [lower, upper] (a new array)."""
    return np.clip(np.asarray(X, dtype=float), lower, upper)


def scale_to_bounds(X, lower, upper, feature_range=(0.0, 1.0)):
    """Clip X to the public bounds and map [lower, upper] to ``feature_range``.

    A feature with ``lower == upper`` maps to the middle of the range. The
    scaling uses public bounds only, so it is free of privacy cost.
    """
    a, b = feature_range
    X = clip_to_bounds(X, lower, upper)  # a new array: scaled in place below
    width = upper - lower
    scale = np.where(width > 0, (b - a) / np.where(width > 0, width, 1.0), 0.0)
    X -= lower
    X *= scale
    X += np.where(width > 0, a, (a + b) / 2)
    return X


class BoundsScaler:
    """The public map between input units and the unit cube of the bounds.

    Every estimator works on rows clipped to the public bounds and scaled
    into ``[a, b]^d`` (``feature_range``, default ``[0, 1]``); this one
    object does the scaling and all its reversals, so that they agree. A
    feature with ``lower == upper`` is constant: it maps to the middle of
    the range, and back to its bound.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
    feature_range : (float, float), default=(0.0, 1.0)

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.privacy import BoundsScaler
    >>> scaler = BoundsScaler(np.array([0.0, 17.0]), np.array([1.0, 90.0]), (-1.0, 1.0))
    >>> scaler.transform([[2.0, 53.5]])
    array([[1., 0.]])
    >>> scaler.inverse_transform([[1.0, 0.0]])
    array([[ 1. , 53.5]])
    """

    def __init__(self, lower, upper, feature_range=(0.0, 1.0)):
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.feature_range = (float(feature_range[0]), float(feature_range[1]))
        self.width = self.upper - self.lower
        self.constant = self.width == 0

    @property
    def _span(self):
        a, b = self.feature_range
        return b - a

    def transform(self, X):
        """Clip X to the bounds and scale it into the feature range (a new array).

        A dask array (chunked by rows, its columns in one chunk) is scaled
        block by block in the workers: a lazy dask array.
        """
        # (imported here: skdpx.utils imports this module)
        from ..utils._dask import is_dask_collection

        if is_dask_collection(X):
            return X.rechunk({1: -1}).map_blocks(self.transform, dtype=np.float64)
        return scale_to_bounds(X, self.lower, self.upper, self.feature_range)

    def inverse_transform(self, U):
        """Rows of the feature range back in input units (clipped to the range first)."""
        a, b = self.feature_range
        U = np.clip(np.asarray(U, dtype=float), a, b)
        return self.lower + (U - a) / self._span * self.width

    def coef_to_input(self, coef):
        """Per-unit coefficients on scaled features as coefficients per input unit.

        ``coef`` (..., n_features) multiplies scaled features; the result
        multiplies input features (0 for a constant feature).
        """
        coef = np.asarray(coef, dtype=float)
        safe = np.where(self.constant, 1.0, self.width)
        return np.where(self.constant, 0.0, coef * self._span / safe)

    def intercept_to_input(self, coef, intercept):
        """The intercept, in input units, of ``coef @ transform(x) + intercept``."""
        a, _ = self.feature_range
        coef = np.asarray(coef, dtype=float)
        mid = sum(self.feature_range) / 2
        # scaled value of x: a + (x - lower) span / width, or mid for a constant
        offset = np.where(self.constant, mid, a)
        return (np.asarray(intercept, dtype=float) + coef @ offset
                - self.coef_to_input(coef) @ self.lower)
