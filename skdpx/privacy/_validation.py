"""Validation helpers shared by the estimators: budgets, bounds, randomness."""

from numbers import Integral, Real
import warnings

import numpy as np
from .._sklearn_compat import Interval
from ..utils._validation import (BoundsScaler, check_bounds, clip_to_bounds, fill_nonfinite,
                                 scale_to_bounds)
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
        if candidates.dtype.kind == "O":
            # a missing label (pandas' NA has no truth value: one would fail the
            # comparison of every row) compared as None, which equals no class
            candidates = np.where(_missing_labels(candidates), None, candidates)
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


