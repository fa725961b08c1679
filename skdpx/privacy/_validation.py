"""Validation helpers shared by the estimators: budgets, bounds, randomness."""

from numbers import Integral, Real
import warnings

from diffprivlib.utils import PrivacyLeakWarning
import numpy as np
from sklearn.utils._param_validation import Interval

__all__ = [
    "DELTA_CONSTRAINT",
    "EPSILON_CONSTRAINT",
    "check_bounds",
    "check_random_state",
    "clip_to_bounds",
    "scale_to_bounds",
]

#: ``epsilon`` in (0, inf]: ``np.inf`` is the non-private baseline.
EPSILON_CONSTRAINT = Interval(Real, 0, None, closed="right")
#: ``delta`` in [0, 1).
DELTA_CONSTRAINT = Interval(Real, 0, 1, closed="left")


def check_random_state(seed):
    """A ``numpy.random.RandomState`` for ``seed``, fresh OS entropy for None.

    Unlike :func:`sklearn.utils.check_random_state`, ``None`` does not return
    numpy's global RandomState: noise drawn from a global state that anyone
    can seed (``np.random.seed(0)``) would be predictable. The same integer
    seed always gives the same noise.

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


def check_bounds(bounds, n_features, *, X=None, dtype=float):
    """Validate ``bounds`` = (lower, upper) and broadcast them to ``n_features``.

    Parameters
    ----------
    bounds : tuple (lower, upper) or None
        Scalars or arrays of length ``n_features``; each lower <= upper, all
        finite. ``None`` reads the bounds from ``X`` and raises a
        :class:`~diffprivlib.utils.PrivacyLeakWarning`: bounds taken from
        private data are themselves a release that is not differentially
        private.
    n_features : int
    X : array-like of shape (n_samples, n_features), optional
        Only used when ``bounds`` is None.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
    """
    if bounds is None:
        if X is None:
            raise ValueError("bounds is None and there is no data to read them from.")
        warnings.warn(
            "Bounds have not been specified and will be calculated on the data provided. "
            "This will result in additional privacy leakage. To ensure differential privacy "
            "and no additional privacy leakage, specify bounds for each dimension.",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        X = np.asarray(X, dtype=dtype)
        return np.min(X, axis=0).astype(dtype), np.max(X, axis=0).astype(dtype)
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
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError("bounds must be finite.")
    if np.any(lower > upper):
        raise ValueError("each lower bound must be <= its upper bound.")
    return lower, upper


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
