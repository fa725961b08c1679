"""Public bounds: validating them, clipping rows to them, scaling into their unit cube.

No privacy here: bounds are public (declared, or released by the privacy core,
:mod:`skdpx.privacy._bounds`), and so is every map made from them.
:mod:`skdpx.privacy` re-exports these names.
"""

import numpy as np

from ._engine import is_distributed, map_blocks

__all__ = ["BoundsScaler", "UnitCubeRows", "check_bounds", "clip_to_bounds", "fill_nonfinite",
           "scale_to_bounds"]


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


def clip_to_bounds(X, lower, upper):
    """Clip the rows of X to [lower, upper] (a new array)."""
    return np.clip(np.asarray(X, dtype=float), lower, upper)


def fill_nonfinite(X, lower, upper):
    """X with every non-finite cell (NaN, +-inf) at the midpoint of its feature's bounds.

    How skdpx neutralises a missing or unusable numeric value of a private
    row: a rule on that cell alone, with public (declared or DP-released)
    bounds, so that the row stays one row within the bounds (the
    sensitivities that hold for bounded rows hold for it) and nothing is
    refused because of it. Finite cells are left as they are (clipping is
    the estimators' own step).

    Parameters
    ----------
    X : ndarray or row-chunked dask array of shape (n_samples, n_features)
    lower, upper : array-like of shape (n_features,)
        Finite bounds.

    Returns
    -------
    ndarray of float64 (a new array when a cell was filled, else X as
    float64), or a lazy dask array for a dask ``X``.
    """
    mid = (np.asarray(lower, dtype=float) + np.asarray(upper, dtype=float)) / 2.0
    if is_distributed(X):
        lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        return map_blocks(fill_nonfinite, X, lower=lower, upper=upper)
    X = np.asarray(X, dtype=np.float64)
    bad = ~np.isfinite(X)
    if not bad.any():
        return X
    return np.where(bad, np.broadcast_to(mid, X.shape), X)


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
        if is_distributed(X):
            return map_blocks(scale_to_bounds, X, lower=self.lower, upper=self.upper,
                              feature_range=self.feature_range)
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


class UnitCubeRows:
    """A block of encoded private rows made ready for a fit's sums (picklable, for workers).

    A missing or infinite value at the midpoint of its feature's bounds
    (:func:`fill_nonfinite`), then the rows clipped to the
    bounds and scaled into the unit cube (:class:`BoundsScaler`):
    a rule on each cell alone, so a block's result is the same block of the
    whole array's. A new array; the input is never modified.
    """

    def __init__(self, lower, upper):
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)

    def __call__(self, block):
        return BoundsScaler(self.lower, self.upper).transform(
            fill_nonfinite(block, self.lower, self.upper))
