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
    "fill_nonfinite",
    "label_codes",
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


def _missing_labels(y):
    """Rows whose label is missing: None, NaN (or pandas' NA / NaT), by a rule on each row alone."""
    y = np.asarray(y)
    if y.dtype.kind in "fc":
        return np.isnan(y)
    if y.dtype.kind != "O":
        return np.zeros(y.shape, dtype=bool)
    from ..preprocessing._schema import _missing  # (the schema module imports nothing of ours)

    return _missing(y)


def label_codes(classes, y):
    """Index of each label of ``y`` in ``classes``; -1 for a label that is not one of them.

    A rule on each row alone: a missing label (None, NaN), a label of another
    type than the classes' or any other value outside ``classes`` gets -1,
    and nothing is raised. A loop over the (few, public) classes, vectorised
    over the rows.

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
    y : array-like of shape (n_samples,)

    Returns
    -------
    ndarray of int of shape (n_samples,)
    """
    y = np.asarray(y)
    codes = np.full(y.shape[0], -1, dtype=np.intp)
    if y.dtype.kind in "fc":  # NaN equals no class
        candidates = y
    else:
        candidates = y.astype(object) if y.dtype.kind not in "biuUSO" else y
    for j, label in enumerate(np.asarray(classes, dtype=object).tolist()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (numpy's elementwise-comparison notices)
            try:
                hit = np.asarray(candidates == label, dtype=bool)
            except (TypeError, ValueError):  # labels that cannot be compared: none is it
                continue
        if hit.shape != codes.shape:  # a comparison numpy could not make elementwise
            continue
        codes[hit & (codes < 0)] = j
    return codes


def check_classes(classes, y, *, needs="the fit needs"):
    """The public label set and the rows' codes in it.

    Whether a fit raises, and what it says, depend on public facts only (the
    declared ``classes``): a row whose label is not one of them (a missing
    label, NaN, a typo) is not refused, it gets the code -1, and the
    estimator drops it (its contributions are zero). Nothing reports how many
    rows were dropped: that count is private.

    Parameters
    ----------
    classes : array-like or None
        The declared, public label set (sorted here). ``None`` reads it from
        ``y`` with a :class:`~diffprivlib.utils.PrivacyLeakWarning`: the set
        of labels present is then a release about the rows (a label held by
        one row reveals that row), assumed public but not declared; missing
        labels (None, NaN) are left out of it and their rows dropped, and
        scikit-learn's check that the labels are classes (not continuous)
        applies to the others.
    y : ndarray of shape (n_samples,)
        Validated labels (any values: none is refused with declared
        ``classes``).
    needs : str
        Starts the error raised for fewer than two classes.

    Returns
    -------
    classes : ndarray
    codes : ndarray of int
        The index of each row's label in ``classes``; -1 for a row whose
        label is not in ``classes`` (the row is dropped).

    Raises
    ------
    ValueError
        Fewer than two declared classes (public); with ``classes=None``,
        fewer than two classes present or labels that are not classes. No
        message shows a label of ``y``.
    """
    y = np.asarray(y)
    if classes is None:
        from sklearn.utils.multiclass import check_classification_targets

        labels = y[~_missing_labels(y)]
        try:
            check_classification_targets(labels)
            present = np.unique(labels)
        except TypeError:  # e.g. strings and numbers mixed (the labels are not shown)
            raise ValueError("the labels in y are of mixed types that cannot be ordered; "
                             "declare the public label set with classes=[...].") from None
        if len(present) < 2:
            raise ValueError(f"{needs} at least two classes; y holds {len(present)} "
                             f"class{'' if len(present) == 1 else 'es'}. Declare the public "
                             "label set with classes=[...].")
        warnings.warn(
            "classes=None: the label set is read from y and released as classes_ (a label "
            "held by few rows reveals them). Declare the public label set with classes=[...].",
            PrivacyLeakWarning, stacklevel=_outside_stacklevel())
        return present, label_codes(present, y)
    try:
        declared = np.unique(np.asarray(classes))
    except TypeError:
        raise ValueError(f"classes={classes!r} mixes labels that cannot be ordered.") from None
    if declared.ndim != 1 or len(declared) < 2:
        raise ValueError(f"{needs} at least two classes; classes={classes!r} declares "
                         f"{len(declared)}.")
    return declared, label_codes(declared, y)


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
    # (imported here: skdpx.utils imports this module)
    from ..utils._dask import is_dask_collection

    mid = (np.asarray(lower, dtype=float) + np.asarray(upper, dtype=float)) / 2.0
    if is_dask_collection(X):
        lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        return X.rechunk({1: -1}).map_blocks(fill_nonfinite, lower=lower, upper=upper,
                                             dtype=np.float64)
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
